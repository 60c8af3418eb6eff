#pragma once

// Serialize once, for interest-managed views: per tick, the bits of each entity update are coded once and
// copied into every client snapshot that needs the same update (docs/protocol.md, "Interest-managed
// snapshots"). An update's bits depend only on the entity, the ticks its base and previous values are at
// in the client's base view, and the tick's tables (view_tables.hpp), so clients whose base views hold an
// entity at the same ticks share them: a client whose acks arrive one tick behind shares with every other
// such client, whatever else each of them sees.
//
// An entity moving along a line since a client's two values (row_history::on_line) needs nothing whatever
// those ticks are: update() and on_line() say so without a lookup (at 1,000 clients acking 1 to 3 ticks
// late, most of the codes it made were these, one per lag, each found exact only by coding it).
//
// begin_tick() (after row_history::update) picks the tick's tables and empties the cache; update() and
// row() code on a miss and return the cached code on a hit. The codes live in one bit arena per tick.
// Lookups are O(1) plus the few codes cached for the same entity. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bitstream.hpp"
#include "row_history.hpp"
#include "view_tables.hpp"

namespace ecsnet::proto {

struct view_encoder_options {
    /// Ticks between two choices of tables (view_table_chooser).
    std::uint32_t tables_period{30};
    /// The version of the first tables (view_table_chooser): encoders a client may move between start their
    /// versions far apart, so that a view's tables version names one encoder's tables.
    std::uint32_t first_tables_version{1};
};

/// A coded entity: `bits` bits at `offset` of the encoder's arena.
struct entity_code {
    std::uint32_t offset{};
    std::uint32_t bits{};
    /// An update whose new row equals its reference: nothing to send (bits == 0).
    bool exact{false};
    /// Exact, and the reference is the base value itself: the entity keeps its entry as it is.
    bool unchanged{false};
    /// The base value is no longer known to the server: the entity must be sent whole (row()).
    bool forgotten{false};
};

struct view_encoder_stats {
    std::uint64_t lookups{};
    std::uint64_t hits{};    // lookups answered without coding
    std::uint64_t on_line{}; // of which by row_history::on_line(), without a cached code
    std::uint64_t bits_coded{};
    std::uint64_t bits_copied{};
};

class view_encoder {
public:
    explicit view_encoder(const row_history& rows, view_encoder_options options = {});

    /// Starts the newest tick of the row history.
    void begin_tick();
    [[nodiscard]] tick_type tick() const noexcept { return tick_; }
    [[nodiscard]] const view_tables& tables() const noexcept { return chooser_.current(); }
    [[nodiscard]] std::uint32_t tables_version() const noexcept { return chooser_.version(); }
    [[nodiscard]] const row_history& rows() const noexcept { return *rows_; }

    /// Whether alive entity `index` has moved along one line since its values at `previous` and `base`
    /// (`previous` < `base`, both within extrapolation's reach of the tick): then its extrapolation is its
    /// current row, whatever ticks they are at, and its update is exact (clients acking a tick or two apart
    /// share no code, and most of their codes were these, nothing to send found by coding).
    [[nodiscard]] bool on_line(std::uint32_t index, tick_type base, tick_type previous) const noexcept {
        return rows_->layout().extrapolates(base, previous, tick_) && rows_->on_line(index, previous);
    }
    /// Counts `count` updates found exact by on_line() without update() (a lookup answered each).
    void count_on_line(std::uint64_t count) noexcept {
        stats_.lookups += count;
        stats_.hits += count;
        stats_.on_line += count;
    }

    /// The update of alive entity `index` from its value at tick `base` (and at `previous`, or no_tick) to
    /// its current value.
    entity_code update(std::uint32_t index, tick_type base, tick_type previous) {
        if (!rows_->layout().extrapolates(base, previous, tick_)) {
            previous = no_tick; // a previous value that extrapolation does not use makes no other code
        } else if (rows_->on_line(index, previous)) {
            count_on_line(1);
            return entity_code{.offset = 0, .bits = 0, .exact = true, .unchanged = false, .forgotten = false};
        }
        if (const auto* hit = find(index, base, previous)) {
            return *hit;
        }
        return code_update(index, base, previous);
    }
    /// The whole current row of alive entity `index` (with its generation).
    entity_code row(std::uint32_t index) {
        if (const auto* hit = find(index, whole_row, no_tick)) {
            return *hit;
        }
        return code_row(index);
    }
    /// About the bits row(index) takes, without coding it: the full widths of the fields of its
    /// components, and some for the generation and presence (what an entering entity is charged while it
    /// waits for the budget, maybe many ticks).
    [[nodiscard]] std::uint32_t row_bits_estimate(std::uint32_t index) const noexcept;

    [[nodiscard]] const bit_writer& arena() const noexcept { return arena_; }
    [[nodiscard]] const view_encoder_stats& stats() const noexcept { return stats_; }
    /// Counts bits copied out of the arena into snapshots (for the sharing statistics).
    void count_copied(std::uint64_t bits) noexcept { stats_.bits_copied += bits; }

private:
    static constexpr std::uint32_t none = 0xFFFFFFFFU;
    // row() is cached under a base tick no update uses.
    static constexpr tick_type whole_row = no_tick - 1;
    struct cached {
        tick_type base{};
        tick_type previous{};
        entity_code code;
        std::uint32_t next{none}; // next code cached for the same entity
    };
    // By entity index: the first code cached for the entity this tick, in the head itself, and the chain
    // of the others. A snapshot looks up the head of every entity it codes, mostly a hit on the first code
    // (clients whose acks arrive alike share one): one cache line, where a head apart from its codes was
    // two dependent misses (the head, then the code it points to). 32 bytes, so that none straddles lines.
    struct alignas(32) head {
        std::uint32_t epoch{}; // the begin_tick() it was filled in (0: never)
        tick_type base{};
        tick_type previous{};
        std::uint32_t next{none}; // the next code cached for the same entity, in cache_
        entity_code code;
    };

    // Most lookups hit (clients whose acks arrive alike share a code), so find() is inline and the coding
    // of a miss is not: the hit's path was mostly the saving and restoring of the registers a miss needs.
    const entity_code* find(std::uint32_t index, tick_type base, tick_type previous) noexcept {
        ++stats_.lookups;
        if (index >= heads_.size()) {
            return nullptr;
        }
        const auto& h = heads_[index];
        if (h.epoch != epoch_) {
            return nullptr;
        }
        if (h.base == base && h.previous == previous) {
            ++stats_.hits;
            return &h.code;
        }
        for (auto at = h.next; at != none; at = cache_[at].next) {
            const auto& c = cache_[at];
            if (c.base == base && c.previous == previous) {
                ++stats_.hits;
                return &c.code;
            }
        }
        return nullptr;
    }
    entity_code& insert(std::uint32_t index, tick_type base, tick_type previous);
    entity_code code_update(std::uint32_t index, tick_type base, tick_type previous);
    entity_code code_row(std::uint32_t index);

    const row_history* rows_;
    view_table_chooser chooser_;
    tick_type tick_{no_tick};
    std::uint32_t epoch_{}; // begin_tick() calls: heads of an older one are stale (every head is reset
                            // when it wraps)
    bit_writer arena_;
    std::vector<head> heads_; // by entity index
    std::vector<cached> cache_;
    std::vector<std::uint32_t> reference_;
    std::vector<std::uint32_t> component_bits_; // per component: its fields' full widths in the tables
    view_encoder_stats stats_;
};

} // namespace ecsnet::proto
