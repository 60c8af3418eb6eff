#pragma once

// What a client's view holds, as the server remembers it per tick sent (docs/protocol.md, "Interest-managed
// snapshots"): each entity of the view with the tick of the last value the client received for it, the tick
// of the value before (for extrapolation), the view in which it was last sent, and the checksum term of
// what the client shows. The values themselves are in the server's row_history; the client keeps them in
// its own frames (view_mirror.hpp).
//
// What a client shows for an entity at a view's tick t is the reference of its last value at t
// (entity_row.hpp: the value itself, or its linear extrapolation): the same as that value for an entity
// sent or advanced at t, a prediction for one the budget held back.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "entity_row.hpp"
#include "state.hpp"

namespace ecsnet::proto {

/// Why an entity left a client's view.
enum class removal_reason : std::uint8_t {
    none = 0,
    destroyed = 1,        // the entity is gone from the world (or its index has a new occupant)
    out_of_relevancy = 2, // the entity lives on but is no longer relevant to this client
};

// 24 bytes, for a view is walked and copied whole for each client every tick (memory, not arithmetic, is
// what that costs): the ticks before `tick` are kept as distances from it.
struct view_entry {
    std::uint32_t index{};
    std::uint32_t generation{};
    tick_type tick{};             // the tick of the last value received
    std::uint16_t previous_gap{}; // tick - (the tick of the value received before it); 0: none
    std::uint16_t sent_age{};     // tick - (the view that last carried it: entered, changed or refreshed)
    std::uint64_t term{};         // checksum term of what the client shows at the view's tick

    /// `previous` beyond max_extrapolation_ticks before `tick` is kept as none: extrapolation never uses a
    /// value so old, so what the client shows is the same. `sent` long before `tick` is kept as 65,535 ticks
    /// before it (a later view then finds the entity carried since, and sends it again: a resend, never a
    /// wrong mirror).
    static constexpr view_entry make(std::uint32_t index, std::uint32_t generation, tick_type tick,
                                     tick_type previous, tick_type sent, std::uint64_t term) noexcept {
        view_entry e;
        e.index = index;
        e.generation = generation;
        e.tick = tick;
        e.set_previous(previous);
        e.sent_age = static_cast<std::uint16_t>(std::min<tick_type>(tick - sent, 0xFFFFU));
        e.term = term;
        return e;
    }

    /// The tick of the value received before the last one, or no_tick.
    [[nodiscard]] constexpr tick_type previous() const noexcept {
        return previous_gap == 0 ? no_tick : tick - previous_gap;
    }
    constexpr void set_previous(tick_type previous) noexcept {
        previous_gap = previous == no_tick || previous >= tick || tick - previous > max_extrapolation_ticks
                           ? 0
                           : static_cast<std::uint16_t>(tick - previous);
    }
    /// The view that last carried the entity.
    [[nodiscard]] constexpr tick_type sent() const noexcept { return tick - sent_age; }
    /// The entry at a later tick, its value the reference of this one's: the value before is this one's.
    [[nodiscard]] constexpr view_entry advanced_to(tick_type later, std::uint64_t new_term) const noexcept {
        return make(index, generation, later, tick, sent(), new_term);
    }
};
static_assert(sizeof(view_entry) == 24);

struct view_frame {
    tick_type tick{};
    std::uint64_t checksum{};
    std::uint32_t tables_version{};
    std::vector<view_entry> entries; // sorted by index
};

} // namespace ecsnet::proto
