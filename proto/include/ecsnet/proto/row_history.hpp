#pragma once

// The server's history of each entity's row (entity_row.hpp), for interest-managed views: where
// snapshot_history keeps whole ticks in columns, this answers "what was entity i at tick t", which is what
// coding an entity against the tick a client holds it at needs: in O(1) for the current value, for one of
// the last 8 versions, and for an older value replaced at t + 1 (an entity that moves every tick, held by a
// client with a long round trip); one step per version otherwise.
//
// Per entity index: its current row, the tick it took that value (`since`), its generation and its
// checksum term; older values, when a row changes, go into a slab of the tick they were replaced at,
// chained newest first. Slabs live `depth` ticks, rounded up to a power of two (the slab of a tick is then
// found with a mask: a division was most of a lookup's time): a value replaced longer ago than that is
// forgotten (a client holding an entity at such an old tick receives it whole again). Memory: one row per
// index ever used, plus the rows replaced in the last `depth` ticks (about the moving entities x depth), plus
// a slot map of 4 bytes per index in each slab that had a change (2.6 MB for 10,000 indices at depth 64).
//
// update() runs once per tick after snapshot_history::capture, from the newest captured state: when that
// state lists its changes against the tick of the rows (the previous update), only the rows it names are
// gathered and compared; otherwise (the first update, or one after a tick was missed) every row is.
// Not thread-safe; the history and the schema must outlive it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "entity_row.hpp"
#include "history.hpp"

namespace ecsnet::proto {

class row_history {
public:
    /// `depth`: the ticks replaced values are kept for, at least 2, rounded up to a power of two.
    row_history(const schema_layout& layout, std::size_t depth = 64);

    /// Takes the newest tick of `history`.
    void update(const snapshot_history& history);

    [[nodiscard]] const row_layout& layout() const noexcept { return layout_; }
    [[nodiscard]] std::size_t depth() const noexcept { return slabs_.size(); }
    /// The newest tick taken (no_tick before the first update).
    [[nodiscard]] tick_type tick() const noexcept { return tick_; }
    /// The indices that lost their occupant at the newest tick (destroyed, or taken by a new one), sorted:
    /// a list of (index, generation) pairs alive at an earlier tick is still all alive if none of its
    /// indices is in this list at any tick since.
    [[nodiscard]] std::span<const std::uint32_t> removed() const noexcept { return removed_; }

    /// Sorted indices of the replicated entities of the newest tick.
    [[nodiscard]] std::span<const std::uint32_t> alive() const noexcept { return alive_; }
    [[nodiscard]] bool alive(std::uint32_t index) const noexcept {
        return index < since_.size() && since_[index] != no_tick;
    }
    /// The generation of the current occupant (alive indices only).
    [[nodiscard]] std::uint32_t generation(std::uint32_t index) const noexcept { return generations_[index]; }
    /// generation() of every index (for loops over many entities; meaningless where none is alive).
    [[nodiscard]] std::span<const std::uint32_t> generations() const noexcept { return generations_; }
    /// The tick the current value was taken at (alive indices only).
    [[nodiscard]] tick_type since(std::uint32_t index) const noexcept { return since_[index]; }
    /// since() of every index, no_tick where none is alive (for loops over many entities).
    [[nodiscard]] std::span<const tick_type> since_all() const noexcept { return since_; }
    /// The current row (alive indices only).
    [[nodiscard]] const std::uint32_t* current(std::uint32_t index) const noexcept {
        return rows_.data() + std::size_t{index} * layout_.width();
    }
    /// The current row's checksum term (alive indices only).
    [[nodiscard]] std::uint64_t term(std::uint32_t index) const noexcept { return records_[index].term; }
    /// Whether the current occupant of alive `index` changed at the newest tick along a line it has been
    /// on since tick `from` or earlier (row_layout::continues_line, from each tick's row to the next): then
    /// the reference() of its rows at any two ticks from `from` on, extrapolated to the newest tick within
    /// max_extrapolation_ticks, is its current row exactly, and a client holding it there needs nothing
    /// (view_encoder::update tells so without coding). Reads the record term() reads.
    [[nodiscard]] bool on_line(std::uint32_t index, tick_type from) const noexcept {
        return since_[index] == tick_ && records_[index].line_since <= from;
    }
    /// The row of the current occupant of `index` at tick `at` (at most the newest tick), or nullptr when
    /// it is forgotten, or the occupant was not replicated then.
    [[nodiscard]] const std::uint32_t* at(std::uint32_t index, tick_type at) const noexcept;

    /// Per row position: the largest value of the newest tick (for the widths of view_tables).
    [[nodiscard]] const std::vector<std::uint32_t>& max_values() const noexcept { return max_values_; }

    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    // Where an earlier value of a row is: the tick it was taken at, and the slab (by tick) and slot it was
    // filed in when a newer value replaced it.
    struct version_ref {
        tick_type since{no_tick};
        tick_type slab_tick{no_tick}; // no_tick: there is no such version
        std::uint32_t slot{};
    };
    // The record keeps the newest few versions' places itself: a reader asking for a value a few ticks old
    // (a client's base) finds it in one step, without walking the chain of versions through the slabs, a
    // cache miss per step (it was an eighth of the server's replication time). Older ones are found by the
    // chain each slab version holds.
    // Those places are kept apart from the record (`recent_`), and so is `since` (`since_`): every client's
    // snapshot reads the `since` of each entity it holds (most of them unchanged, their record not needed
    // further), from a dense array that stays in cache while a thousand clients' views stream through it.
    // Eight: a client acking 3 ticks late holds a moving entity at a base 4 ticks old and a previous value
    // 8 ticks old (its base's own base), each a version of the last ticks; with three, finding the
    // previous one walked up to five steps of the chain, a cache miss each (row_history::at was the
    // largest cost after client_view::write at 1,000 clients).
    static constexpr std::size_t recent_versions = 8;
    using recent_refs = std::array<version_ref, recent_versions>; // newest first
    struct record {
        std::uint64_t term{};
        tick_type born{}; // the tick the occupant's history starts at
        // The first tick of the line the occupant's rows are on, up to its newest change (on_line()).
        tick_type line_since{};
    };
    // A version in a slab: since, previous tick, previous slot, entity index, then the row.
    static constexpr std::size_t header_words = 4;
    struct slab {
        tick_type tick{no_tick};
        std::vector<std::uint32_t> data; // versions
        // By entity index: the slot of its version replaced at this tick. Never cleared (replaced_at()
        // checks the version's index): a client many ticks behind finds an entity that moves every tick in
        // one step here, where the chain of versions costs a cache miss per tick.
        std::vector<std::uint32_t> slot_of;
    };

    void replace(std::uint32_t index, const std::uint32_t* row, slab& into);
    /// Where each entity of `state` has its entries in the components whose ids are not the entities'.
    void locate_entries(const replicated_state& state, std::span<const std::uint32_t> entities);
    /// Which of `state`'s entities may have a row other than their current one.
    void mark_possible_changes(const replicated_state& state, std::span<const std::uint32_t> entities);
    /// The row of the entity at position p of `state` into row_.
    void gather(const replicated_state& state, std::size_t p);
    void take_max_values(const replicated_state& state);
    /// The version filed at `slot` of the slab of `slab_tick` (its header, then its row), or nullptr when
    /// that slab was reused since.
    [[nodiscard]] const std::uint32_t* filed(tick_type slab_tick, std::uint32_t slot) const noexcept;
    /// The version of `index` replaced at `tick`, if it changed then and that slab is still kept.
    [[nodiscard]] const std::uint32_t* replaced_at(tick_type tick, std::uint32_t index) const noexcept;
    void grow(std::uint32_t index);

    row_layout layout_;
    std::size_t stride_;
    tick_type tick_{no_tick};
    std::vector<std::uint32_t> removed_;
    std::vector<record> records_;
    // By index, parallel to records_: the tick the current value was taken at, no_tick when the index has no
    // replicated occupant (what alive() reads: a reader of an entity's history needs no other line).
    std::vector<tick_type> since_;
    // By index, likewise: the current occupant's generation, dense for the same reason (a client's snapshot
    // checks that the members of a set a few ticks old are still there).
    std::vector<std::uint32_t> generations_;
    std::vector<recent_refs> recent_; // likewise
    std::vector<std::uint32_t> rows_;
    std::vector<slab> slabs_; // a power of two of them: the slab of tick t is slabs_[t & slab_mask_]
    std::size_t slab_mask_{};
    std::vector<std::uint32_t> alive_;
    std::vector<std::uint32_t> max_values_;
    // Per component: whether every row of the newest tick has it (its ids were the entities'), and if not
    // its ids.
    std::vector<std::uint8_t> on_every_row_;
    std::vector<std::vector<std::uint32_t>> previous_ids_;
    // scratch
    std::vector<std::uint32_t> entities_;
    std::vector<std::vector<std::uint32_t>> ids_of_; // per component whose ids are not the entities'
    // Per component whose ids are not the entities': by entity position, its entry (or row_layout::absent);
    // by entry, its entity position.
    std::vector<std::vector<std::uint32_t>> entry_of_;
    std::vector<std::vector<std::uint32_t>> entity_of_;
    std::vector<std::uint8_t> maybe_changed_; // by entity position
    std::vector<std::uint32_t> positions_;    // per component, for gather_row
    std::vector<std::uint32_t> row_;
    std::vector<std::uint32_t> next_alive_;
};

} // namespace ecsnet::proto
