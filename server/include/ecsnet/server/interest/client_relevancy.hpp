#pragma once

// One client's relevant set (issue 15): the ids it is told about, recomputed from the spatial grid around
// its focus, with what entered and what left since the last update.
//
// Rules of update():
// - Hysteresis: an id enters within enter_radius and leaves only beyond leave_radius (a leave radius below
//   the enter radius counts as the enter radius), so an entity pacing along the border does not flicker
//   in and out (each flicker would cost a create and a destroy on the wire).
// - always_relevant ids (the client's avatar, global state, its owner-only entities: the caller knows)
//   are members whatever their distance, and whether or not they are in the grid.
// - At most max_entering() ids enter per update, always-relevant ones first, then the nearest (ties by id):
//   after a teleport or a mass spawn the set fills over several updates, so one update's work and one
//   snapshot's creations stay bounded. The others are simply candidates again at the next update.
// - An id that left the grid (destroyed), or whose index now holds another entity (a new generation, see
//   spatial_grid.hpp), leaves with leave_reason::removed_from_grid; one merely out of range leaves with
//   leave_reason::out_of_range; the caller tells the client "destroyed" and "out of relevancy" apart by it.
// - An optional filter may_be_relevant(id) vetoes spatial relevancy (e.g. owner-only entities of other
//   clients): a vetoed id does not enter, and a vetoed member leaves with leave_reason::forced. It is not
//   asked about always-relevant ids.
// - force_out(id) removes a member at once (leave_reason::forced); it may enter again at a later update by
//   the rules above, so a lasting "not for this client" belongs in the filter.
//
// Slots: a member's slot is its position in members(), and accumulators() holds one float per slot for
// the priority selector (priority_selector.hpp): zero when the member enters, carried along when a leave
// moves the last member into the freed slot. Slots are valid until the next update() or force_out().
//
// Cost: an update is one pass over the members (marking them, with the generation each entered as, in a
// per-thread array indexed by id), one grid query at the leave radius with one array lookup per id it finds,
// one more pass over the members, a grid lookup per member that leaves or is always-relevant, and a table
// update per entry or leave: O(query results + members). Nothing is allocated once the buffers have grown to
// the largest set and candidate list seen (the per-thread array: 16 bytes per id up to the largest member
// id, shared by every client updated on the thread). Clients may be updated on several threads at once; the
// filter must not update another client itself. Always-relevant ids above spatial_grid::max_id are ignored.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "id_slot_map.hpp"
#include "spatial_grid.hpp"

namespace ecsnet::server::interest {

enum class leave_reason : std::uint8_t {
    /// Beyond the leave radius, or no longer always-relevant: tell the client "out of relevancy".
    out_of_range,
    /// Erased from the grid, or its id now holds another entity: tell the client "destroyed".
    removed_from_grid,
    /// force_out(), or vetoed by the update's filter.
    forced,
};

struct left_id {
    id_type id;
    leave_reason reason;

    friend bool operator==(const left_id&, const left_id&) = default;
};

/// What an update changed, appended to (the caller clears it): first every leave, then every entry, so a
/// caller replaying them in order never sees one id twice in the set (an id whose occupant changed leaves
/// and enters in the same update).
struct relevancy_changes {
    std::vector<left_id> left;
    std::vector<id_type> entered; // always-relevant first, then nearest first

    void clear() noexcept {
        left.clear();
        entered.clear();
    }
    [[nodiscard]] bool empty() const noexcept { return left.empty() && entered.empty(); }
};

/// The default filter: every id may be relevant.
struct every_id_may_be_relevant {
    constexpr bool operator()(id_type) const noexcept { return true; }
};

/// The default observer of the grid query: nothing to remember.
struct ignore_found {
    constexpr void operator()(id_type, float) const noexcept {}
};

class client_relevancy {
public:
    using slot_type = std::uint32_t;
    static constexpr slot_type npos = id_slot_map::npos;

    explicit client_relevancy(std::size_t max_entering = 32) noexcept
        : max_entering_{std::max<std::size_t>(1, max_entering)} {}

    /// Recomputes the set around (center_x, center_y) and appends what changed to `out` (see the rules at
    /// the top). `may_be_relevant(id) -> bool` is asked about ids in range that are not always-relevant.
    /// `found(id, distance_squared)` is told of every id the grid query finds (members and others alike),
    /// so a caller can weigh the members by distance without looking their positions up again.
    template<typename Filter = every_id_may_be_relevant, typename Found = ignore_found>
    void update(const spatial_grid& grid, float center_x, float center_y, float enter_radius,
                float leave_radius, std::span<const id_type> always_relevant, relevancy_changes& out,
                Filter&& may_be_relevant = {}, Found&& found = {}) {
        const float query_radius = std::max(enter_radius, leave_radius);
        const float enter_squared = enter_radius * enter_radius;
        candidates_.clear();
        member_marks& marks = thread_marks();
        marks.mark(ids_, generations_);

        // 1. Always-relevant ids: a member stays (unless its id now holds another entity: it leaves below and
        // the new one is a candidate), any other is a candidate ahead of every spatial one.
        for (const id_type id : always_relevant) {
            if (id > spatial_grid::max_id) {
                continue; // not an entity index (and the index table reserves the all-ones key)
            }
            const generation_type generation = grid.generation_of(id);
            member_mark* mark = marks.find(id);
            if (mark != nullptr && same_occupant(*mark, generation)) {
                mark->fate = member_fate::kept;
                continue;
            }
            candidates_.push_back({always_relevant_key, id, generation});
        }

        // 2. The grid within the leave radius: members found stay, others within the enter radius are
        // candidates. The squared distances come from the grid, so they are the ones a scan would compute.
        grid.query_circle_entries(center_x, center_y, query_radius, [&](const grid_entry& entry, float d2) {
            found(entry.id, d2);
            member_mark* mark = marks.find(entry.id);
            if (mark != nullptr && same_occupant(*mark, entry.generation)) {
                if (mark->fate == member_fate::unseen) {
                    mark->fate = may_be_relevant(entry.id) ? member_fate::kept : member_fate::vetoed;
                }
                return;
            }
            if (d2 <= enter_squared && may_be_relevant(entry.id)) {
                candidates_.push_back({d2, entry.id, entry.generation});
            }
        });

        // 3. Members not kept leave (back to front, so the member swapped into a freed slot was seen
        // already; its fate is found by its id, which the swap does not change).
        for (std::size_t slot = ids_.size(); slot-- > 0;) {
            const id_type id = ids_[slot];
            const member_fate fate = marks.find(id)->fate;
            if (fate == member_fate::kept) {
                continue;
            }
            leave_reason reason = leave_reason::forced;
            if (fate != member_fate::vetoed) {
                const generation_type entered_as = generations_[slot];
                reason = entered_as != 0 && grid.generation_of(id) != entered_as
                             ? leave_reason::removed_from_grid
                             : leave_reason::out_of_range;
            }
            out.left.push_back({id, reason});
            remove_slot(static_cast<slot_type>(slot));
        }

        // 4. Entries: each candidate once (an always-relevant one may also be in range), the first
        // max_entering_ by (key, id) enter. The table and arrays are grown first, so nothing below throws.
        const std::size_t most_entering = std::min(candidates_.size(), max_entering_);
        index_.reserve(ids_.size() + candidates_.size());
        reserve_for(ids_, most_entering);
        reserve_for(generations_, most_entering);
        reserve_for(accumulators_, most_entering);
        reserve_for(out.entered, most_entering);
        std::size_t unique = 0;
        for (const candidate& c : candidates_) {
            if (index_.insert(c.id, pending_slot)) {
                candidates_[unique++] = c;
            }
        }
        candidates_.resize(unique);
        const std::size_t entering = std::min(unique, max_entering_);
        const auto first = candidates_.begin();
        if (entering < unique) {
            std::nth_element(first, first + static_cast<std::ptrdiff_t>(entering), candidates_.end(),
                             nearer{});
        }
        std::sort(first, first + static_cast<std::ptrdiff_t>(entering), nearer{});
        for (std::size_t k = 0; k < unique; ++k) {
            const candidate& c = candidates_[k];
            if (k >= entering) {
                index_.erase(c.id);
                continue;
            }
            index_.assign(c.id, static_cast<slot_type>(ids_.size()));
            ids_.push_back(c.id);
            generations_.push_back(c.generation);
            accumulators_.push_back(0.0f);
            out.entered.push_back(c.id);
        }
    }

    /// Removes `id` from the set now, appending {id, forced} to `out`; returns whether it was a member.
    bool force_out(id_type id, relevancy_changes& out) {
        const slot_type slot = index_.find(id);
        if (slot == npos) {
            return false;
        }
        out.left.push_back({id, leave_reason::forced});
        remove_slot(slot);
        return true;
    }

    /// Empties the set without reporting anything (a client that disconnected).
    void clear() noexcept {
        index_.clear();
        ids_.clear();
        generations_.clear();
        accumulators_.clear();
    }

    [[nodiscard]] std::span<const id_type> members() const noexcept { return ids_; }
    /// One priority accumulator per slot, parallel to members().
    [[nodiscard]] std::span<float> accumulators() noexcept { return accumulators_; }
    [[nodiscard]] std::span<const float> accumulators() const noexcept { return accumulators_; }
    [[nodiscard]] bool contains(id_type id) const noexcept { return index_.contains(id); }
    /// The slot of a member, or npos.
    [[nodiscard]] slot_type slot_of(id_type id) const noexcept { return index_.find(id); }
    /// The grid generation a member was last seen with (0 for an always-relevant id not in the grid).
    [[nodiscard]] generation_type generation_at(slot_type slot) const noexcept {
        ECSNET_ASSERT(slot < generations_.size(), "slot out of range");
        return generations_[slot];
    }
    [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
    [[nodiscard]] bool empty() const noexcept { return ids_.empty(); }

    [[nodiscard]] std::size_t max_entering() const noexcept { return max_entering_; }
    /// At least 1.
    void set_max_entering(std::size_t count) noexcept { max_entering_ = std::max<std::size_t>(1, count); }

private:
    // What an update decides of a member: found and kept, found and vetoed by the filter, or not found.
    enum class member_fate : std::uint8_t { unseen, kept, vetoed };

    // A member of the client being updated, as the update reads and decides it.
    struct member_mark {
        std::uint32_t stamp;        // of the update that wrote it: the mark is current only if it matches
        slot_type slot;             // in members()
        generation_type generation; // a copy of generations_[slot]
        member_fate fate;
    };

    // id -> the mark of a member of the client being updated, in an array indexed by id: the ids a query
    // finds are looked up there rather than in the client's own table or arrays, because that array is
    // shared by every client updated on the thread and stays in cache, where a thousand clients' tables do
    // not. The marks are written by one sequential pass over the client's members (which the hardware
    // prefetches), so the query's random lookups by id, and the fates it decides, stay in that warm array
    // (the client's own generations, read at random there, were the update's largest stall).
    // Marks carry the stamp of the update that wrote them, so nothing is ever cleared.
    class member_marks {
    public:
        void mark(std::span<const id_type> members, std::span<const generation_type> generations) {
            if (++stamp_ == 0) { // wrapped: forget every old mark
                std::fill(marks_.begin(), marks_.end(), member_mark{});
                stamp_ = 1;
            }
            for (std::size_t slot = 0; slot < members.size(); ++slot) {
                const id_type id = members[slot];
                if (id >= marks_.size()) {
                    grow(id);
                }
                marks_[id] = {stamp_, static_cast<slot_type>(slot), generations[slot], member_fate::unseen};
            }
        }
        /// The mark of a member of the update, or null.
        [[nodiscard]] member_mark* find(id_type id) noexcept {
            return id < marks_.size() && marks_[id].stamp == stamp_ ? &marks_[id] : nullptr;
        }

    private:
        ECSNET_NOINLINE void grow(id_type id) {
            marks_.resize(std::max<std::size_t>(std::size_t{id} + 1, marks_.size() * 2), member_mark{});
        }
        std::vector<member_mark> marks_;
        std::uint32_t stamp_{0};
    };

    static member_marks& thread_marks() {
        thread_local member_marks marks;
        return marks;
    }

    struct candidate {
        float key; // always_relevant_key, else the squared distance
        id_type id;
        generation_type generation;
    };

    static constexpr float always_relevant_key = -1.0f;
    // Marks ids taken as candidates in the index during step 4, so that duplicates are dropped in O(1).
    static constexpr slot_type pending_slot = npos - 1;

    struct nearer {
        bool operator()(const candidate& a, const candidate& b) const noexcept {
            return a.key < b.key || (a.key == b.key && a.id < b.id);
        }
    };

    // Whether a marked member is the entity now under its id. A member that entered while not in the grid
    // (generation 0, always-relevant) adopts the generation it is first found with.
    bool same_occupant(member_mark& mark, generation_type generation) noexcept {
        if (mark.generation == 0) {
            mark.generation = generation;
            generations_[mark.slot] = generation;
            return true;
        }
        return mark.generation == generation;
    }

    void remove_slot(slot_type slot) noexcept {
        const std::size_t last = ids_.size() - 1;
        index_.erase(ids_[slot]);
        if (slot != last) {
            ids_[slot] = ids_[last];
            generations_[slot] = generations_[last];
            accumulators_[slot] = accumulators_[last];
            index_.assign(ids_[slot], slot);
        }
        ids_.pop_back();
        generations_.pop_back();
        accumulators_.pop_back();
    }

    // Room for `extra` more elements, growing geometrically (an exact reserve per update would reallocate
    // at every update while the set grows).
    template<typename Vector>
    static void reserve_for(Vector& v, std::size_t extra) {
        if (v.capacity() - v.size() < extra) {
            v.reserve(std::max(v.size() + extra, v.capacity() * 2));
        }
    }

    std::size_t max_entering_;
    id_slot_map index_;
    std::vector<id_type> ids_;
    std::vector<generation_type> generations_; // per slot: the entity the member entered as (0: not in
                                               // the grid then)
    std::vector<float> accumulators_;
    std::vector<candidate> candidates_;
};

} // namespace ecsnet::server::interest
