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

struct view_entry {
    std::uint32_t index{};
    std::uint32_t generation{};
    tick_type tick{};            // the tick of the last value received
    tick_type previous{no_tick}; // the tick of the value received before it, or no_tick
    tick_type sent{};            // the view that last carried the entity (entered, changed or refreshed)
    std::uint64_t term{};        // checksum term of what the client shows at the view's tick
};

struct view_frame {
    tick_type tick{};
    std::uint64_t checksum{};
    std::uint32_t tables_version{};
    std::vector<view_entry> entries; // sorted by index
};

} // namespace ecsnet::proto
