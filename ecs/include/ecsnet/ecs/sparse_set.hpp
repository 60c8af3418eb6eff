#pragma once

// Sparse set of entities (seeds 001 "Sparse integer sets" and 004).
//
// A packed array holds the entities contiguously; a sparse array maps an entity's index to its position in
// the packed array. Membership is checked the Briggs-Torczon way: `e` is in the set iff
// `sparse[index(e)] < size() && packed[sparse[index(e)]] == e`. The packed array stores the whole
// identifier, version included, so a stale entity is never reported as present, and the sparse array never
// needs resetting: clear() is O(1) and touches no memory (seed 004).
//
// Complexity: insert, erase (swap-and-pop), contains, find and index O(1); clear O(1); iteration O(size).
// Invalidation: insert may reallocate the packed array (pointers from data() and iterators are invalidated);
// erase moves the last element into the erased position.
// Order: elements sit in insertion order until an erase swaps the last one forward; so a loop over
// positions 0..size() that inserts as it goes also visits what it inserted (see work_queue.hpp).
//
// Virtual hooks let a storage keep its component array in step with the packed array; they are called
// directly (devirtualised) when the static type is known, and through the base by the registry.
//
// Block stamps (what lets a view skip comparing pools it already found aligned, view.hpp): the positions are
// cut into blocks of block_size. A block's stamp names its content: 0 once any of its positions changed
// (insert, erase, swap, sort), else a process-wide unique number given the first time a view needs it. A
// block's partner is the stamp of another set's block found to hold the same entities at the same
// positions while this block's content stayed as it is; changing the block resets it to 0. So "the
// leader's stamp is s != 0 and my partner is s" proves both blocks unchanged since they were compared.
// Stamps and partners are written by views too, possibly from several threads reading the same pools at
// once (atomically, relaxed: the pools cannot change meanwhile, so any value read is a true statement).
//
// Sorting (seed 000_19edbd8e7898577e.txt, methods and options in sort.hpp): sort(compare) orders the set by
// compare(entity, entity), sort_as(other) orders it like another set; O(n log n) and O(other.size()).
// Through a base reference they keep a storage's components attached via the same virtual hooks;
// storage<T>::sort is the typed, faster version. Sorting rearranges positions: what data() showed before
// is stale.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "config.hpp"
#include "entity.hpp"
#include "huge_vector.hpp"
#include "sort.hpp"
#include "sparse_array.hpp"

namespace ecsnet {

namespace detail {
/// The next block stamp (sparse_set): unique in the process, never 0.
inline std::atomic<std::uint64_t> next_block_stamp{1};
} // namespace detail

template<capacity_policy Capacity = dynamic_capacity>
class sparse_set {
public:
    using capacity_type = Capacity;
    using size_type = std::size_t;
    using position_type = detail::position_type;
    using iterator = const entity*;

    /// Position reported for an entity that is not in the set.
    static constexpr position_type npos = detail::npos;
    static constexpr bool fixed = Capacity::is_fixed;
    /// Positions per block of stamps (see the header comment).
    static constexpr size_type block_size = 1024;

    sparse_set() {
        if constexpr (fixed) {
            packed_.reserve(Capacity::value);
            marks_.reserve((Capacity::value + block_size - 1) / block_size);
        }
    }
    sparse_set(const sparse_set&) = delete;
    sparse_set& operator=(const sparse_set&) = delete;
    sparse_set(sparse_set&&) noexcept = default;
    sparse_set& operator=(sparse_set&&) noexcept = default;
    virtual ~sparse_set() = default;

    [[nodiscard]] size_type size() const noexcept { return packed_.size(); }
    [[nodiscard]] bool empty() const noexcept { return packed_.empty(); }
    [[nodiscard]] size_type capacity() const noexcept { return packed_.capacity(); }
    /// The most elements the set can ever hold.
    [[nodiscard]] static constexpr size_type max_size() noexcept {
        if constexpr (fixed) {
            return Capacity::value;
        } else {
            return size_type{entity_traits::max_index} + 1;
        }
    }

    /// The packed array: data()[0..size()).
    [[nodiscard]] const entity* data() const noexcept { return packed_.data(); }
    [[nodiscard]] iterator begin() const noexcept { return packed_.data(); }
    [[nodiscard]] iterator end() const noexcept { return packed_.data() + packed_.size(); }
    [[nodiscard]] entity operator[](size_type pos) const noexcept {
        ECSNET_ASSERT(pos < packed_.size(), "position out of range");
        return packed_[pos];
    }

    /// Position of `e`, or npos if it is not in the set (stale identifiers included). O(1).
    [[nodiscard]] position_type find(entity e) const noexcept {
        const auto pos = sparse_.lookup(to_index(e));
        return (pos < packed_.size() && packed_[pos] == e) ? pos : npos;
    }

    /// find(e), trying `hint` first: when two sets hold their entities in the same order (pools filled
    /// together, or aligned by a group or sort_as), the guess is right and the sparse array is not read.
    [[nodiscard]] position_type find(entity e, size_type hint) const noexcept {
        return (hint < packed_.size() && packed_[hint] == e) ? static_cast<position_type>(hint) : find(e);
    }

    [[nodiscard]] bool contains(entity e) const noexcept { return find(e) != npos; }

    /// Whether positions [first, last) of this set hold the same entities as those of `lead`: false if
    /// either set is shorter than `last`. Where [first, last) lies in one block, a partner stamp recorded by
    /// an earlier call answers without reading the entities, and a comparison covering the whole block up
    /// to lead's size records one. Safe from several threads at once as long as neither set changes.
    [[nodiscard]] bool same_entities_as(const sparse_set& lead, size_type first,
                                        size_type last) const noexcept {
        if (size() < last || lead.size() < last) {
            return false;
        }
        if (first >= last) {
            return true;
        }
        const auto block = first / block_size;
        const bool one_block = (last - 1) / block_size == block;
        if (one_block && (lead.marks_[block].vouches_for(marks_[block]) ||
                          marks_[block].vouches_for(lead.marks_[block]))) {
            return true;
        }
        const entity* mine = packed_.data();
        const entity* theirs = lead.packed_.data();
        // A branch-free reduction, so the compiler vectorises it.
        std::uint32_t differ = 0;
        for (auto at = first; at != last; ++at) {
            differ |= to_integral(mine[at]) ^ to_integral(theirs[at]);
        }
        if (differ != 0) {
            return false;
        }
        if (one_block && first == block * block_size &&
            last == std::min((block + 1) * block_size, lead.size())) {
            // Both ways: a pool compared with several others (views led by different pools) keeps one of
            // its partners in each of them.
            std::atomic_ref{marks_[block].partner}.store(lead.stamp(block), std::memory_order_relaxed);
            std::atomic_ref{lead.marks_[block].partner}.store(stamp(block), std::memory_order_relaxed);
        }
        return true;
    }

    /// Position of an entity known to be in the set: an error in debug builds otherwise, undefined in
    /// release builds.
    [[nodiscard]] position_type index(entity e) const noexcept {
        ECSNET_ASSERT(contains(e), "the entity is not in the set (absent or stale)");
        return sparse_.existing(to_index(e));
    }

    /// Appends `e`, which must not be in the set yet. Throws capacity_error past max_size() (or, with a
    /// fixed capacity, for an index beyond it).
    void push(entity e) { commit_insert(e, prepare_insert(e)); }

    /// Appends `e` unless it is already there; returns whether it was added.
    bool insert(entity e) {
        if (contains(e)) {
            return false;
        }
        push(e);
        return true;
    }

    /// Removes an entity known to be in the set, moving the last element into its place.
    void erase(entity e) { swap_and_pop(index(e)); }

    /// Removes `e` if present; returns whether it was.
    bool remove(entity e) {
        const auto pos = find(e);
        if (pos == npos) {
            return false;
        }
        swap_and_pop(pos);
        return true;
    }

    /// Removes every element. O(1) for the set itself: the sparse array is not touched.
    void clear() noexcept { clear_all(); }

    /// Swaps the elements at two positions, keeping the sparse array in step.
    void swap_elements(size_type lhs, size_type rhs) noexcept {
        ECSNET_ASSERT(lhs < size() && rhs < size(), "position out of range");
        swap_at(lhs, rhs);
        changed(lhs);
        changed(rhs);
    }

    void reserve(size_type count) {
        if constexpr (!fixed) {
            packed_.reserve(count);
        }
    }

    /// Sorts the set by compare(entity, entity) with the method of `options` (sort.hpp). The comparator may
    /// throw: the set then stays consistent, partly sorted.
    template<typename Compare>
    void sort(Compare compare, sort_options options = {}) {
        sort_n(size(), std::move(compare), options);
    }

    /// sort() of positions [0, count) only; the elements past `count` stay where they are.
    template<typename Compare>
    void sort_n(size_type count, Compare compare, sort_options options = {}) {
        static_assert(std::is_invocable_r_v<bool, Compare&, entity, entity>,
                      "sort takes compare(entity, entity)");
        ECSNET_ASSERT(count <= size(), "sort_n past the end of the set");
        if (count < 2) {
            return;
        }
        switch (detail::resolve(options, fixed)) {
        case sort_method::in_place: {
            const auto less = [this, &compare](size_type lhs, size_type rhs) {
                return compare(packed_[lhs], packed_[rhs]);
            };
            const auto swap = [this](size_type lhs, size_type rhs) { swap_at(lhs, rhs); };
            try {
                if (options.stable) {
                    detail::stable_in_place_sort(0, count, less, swap);
                } else {
                    detail::introsort(0, count, less, swap);
                }
            } catch (...) {
                changed(0, count);
                throw;
            }
            changed(0, count);
            break;
        }
        case sort_method::permutation: {
            std::vector<position_type> order(count);
            std::iota(order.begin(), order.end(), position_type{0});
            const auto less = [this, &compare](position_type lhs, position_type rhs) {
                return compare(packed_[lhs], packed_[rhs]);
            };
            if (options.stable) {
                std::stable_sort(order.begin(), order.end(), less);
            } else {
                std::sort(order.begin(), order.end(), less);
            }
            rearrange(order);
            break;
        }
        default: {
            // Mixed: the packed entities alone (swap-only, so a throwing comparator loses nothing), then the
            // payload follows through the sparse array.
            const auto less = [this, &compare](size_type lhs, size_type rhs) {
                return compare(packed_[lhs], packed_[rhs]);
            };
            const auto swap = [this](size_type lhs, size_type rhs) { std::swap(packed_[lhs], packed_[rhs]); };
            try {
                if (options.stable) {
                    detail::stable_in_place_sort(0, count, less, swap);
                } else {
                    detail::introsort(0, count, less, swap);
                }
            } catch (...) {
                follow_sorted_entities(count);
                throw;
            }
            follow_sorted_entities(count);
            break;
        }
        }
    }

    /// Arranges the set like `other` (a range of distinct entities, typically another set): the entities
    /// both hold come first, in other's order; the others follow in an unspecified order. O(other.size())
    /// lookups and swaps, no memory.
    template<typename Other>
    void sort_as(const Other& other) {
        size_type next = 0;
        for (const entity e : other) {
            const auto at = find(e);
            if (at != npos) {
                if (at != next) {
                    swap_at(at, next);
                }
                ++next;
            }
        }
        changed(0, size()); // once, rather than two marks per exchange (sort_as: +15%)
    }

    /// Moves the element at position order[i] to position i, for every i < order.size() <= size(): the
    /// permutation step of a sort, public for groups, which move several pools by one permutation. `order`
    /// must be a permutation of 0..order.size()-1; its top bits are used while this runs, then restored.
    virtual void rearrange(std::span<position_type> order) {
        ECSNET_ASSERT(order.size() <= size(), "permutation longer than the set");
        entity held = null_entity;
        detail::apply_permutation(
            order, [&](std::size_t from) { held = packed_[from]; },
            [this](std::size_t from, std::size_t to) { place(packed_[from], to); },
            [&](std::size_t to) { place(held, to); });
    }

    /// Pages of the sparse array in use (1 for a fixed capacity); for tests and memory accounting.
    [[nodiscard]] size_type sparse_pages() const noexcept { return sparse_.allocated_pages(); }

protected:
    /// Checks capacity and returns the sparse slot of `e` (allocating its page); changes nothing visible.
    /// Derived classes call it before constructing their own element so that a refusal leaves everything
    /// as it was, then commit_insert with the slot.
    [[nodiscard]] position_type& prepare_insert(entity e) {
        ECSNET_ASSERT(e != null_entity, "null_entity cannot be inserted");
        ECSNET_ASSERT(!contains(e), "the entity is already in the set");
        if (packed_.size() >= max_size()) [[unlikely]] {
            throw_full();
        }
        return sparse_.assure(to_index(e));
    }

    /// Second half of an insertion. May throw std::bad_alloc (dynamic capacity only); then nothing changed.
    void commit_insert(entity e, position_type& slot) {
        const auto pos = packed_.size();
        // Positions below size() have marks: only the first position of a block can lack one.
        if (pos % block_size == 0 && pos / block_size == marks_.size()) [[unlikely]] {
            add_mark();
        }
        packed_.push_back(e);
        slot = static_cast<position_type>(pos);
        changed(pos);
    }

    virtual void swap_and_pop(position_type pos) {
        const entity last = packed_.back();
        packed_[pos] = last;
        sparse_.at(to_index(last)) = pos;
        changed(pos); // the last position goes: what stays in its block is unchanged
        packed_.pop_back();
    }

    // Exchanges two elements without marking their blocks changed: callers do (swap_elements at once, the
    // sorts once for the whole range when they are done).
    virtual void swap_at(size_type lhs, size_type rhs) noexcept {
        std::swap(packed_[lhs], packed_[rhs]);
        sparse_.at(to_index(packed_[lhs])) = static_cast<position_type>(lhs);
        sparse_.at(to_index(packed_[rhs])) = static_cast<position_type>(rhs);
    }

    /// Position `pos` of the packed array changed: its block has no stamp and no partner any more.
    void changed(size_type pos) noexcept { marks_[pos / block_size] = block_mark{}; }

    /// The same for positions [first, last) (a sort that wrote the packed array directly).
    void changed(size_type first, size_type last) noexcept {
        if (first < last) {
            std::fill(marks_.begin() + static_cast<std::ptrdiff_t>(first / block_size),
                      marks_.begin() + static_cast<std::ptrdiff_t>((last - 1) / block_size + 1),
                      block_mark{});
        }
    }

    virtual void clear_all() noexcept { packed_.clear(); }

    /// Exchanges what a derived set keeps beside the packed array (components) at two positions, leaving
    /// the packed and sparse arrays alone: the "adjust" step of the mixed sort.
    virtual void swap_payload(size_type lhs, size_type rhs) noexcept {
        static_cast<void>(lhs);
        static_cast<void>(rhs);
    }

    /// Writes `e` at position `pos` of the packed array and points its sparse slot there.
    void place(entity e, size_type pos) noexcept {
        packed_[pos] = e;
        sparse_.at(to_index(e)) = static_cast<position_type>(pos);
        changed(pos);
    }

    /// Points the sparse slots of positions [0, count) back at them after the packed array was reordered.
    void rebuild_sparse(size_type count) noexcept {
        changed(0, count);
        for (size_type pos = 0; pos < count; ++pos) {
            sparse_.at(to_index(packed_[pos])) = static_cast<position_type>(pos);
        }
    }

    /// The mixed sort's second half: packed positions [0, count) are sorted, while the sparse array still
    /// holds every entity's old position, which is where its payload still is. Walks each cycle of that
    /// permutation once, bringing the payload along with swap_payload, and marks a position done by
    /// pointing its entity's sparse slot at it (seed 000, "Mixing in-place sorting and permutations").
    void follow_sorted_entities(size_type count) noexcept {
        changed(0, count);
        for (size_type start = 0; start < count; ++start) {
            auto hole = start;
            auto from = sparse_.at(to_index(packed_[hole]));
            while (from != start) {
                swap_payload(hole, from);
                sparse_.at(to_index(packed_[hole])) = static_cast<position_type>(hole);
                hole = from;
                from = sparse_.at(to_index(packed_[hole]));
            }
            sparse_.at(to_index(packed_[hole])) = static_cast<position_type>(hole);
        }
    }

    detail::huge_vector<entity> packed_{max_size()};
    typename detail::sparse_array_for<Capacity>::type sparse_;

private:
    struct block_mark {
        std::uint64_t stamp{};   // 0: changed since the last stamp
        std::uint64_t partner{}; // 0: none

        // Whether `other` is this block's partner: the two were found equal and neither changed since.
        [[nodiscard]] bool vouches_for(block_mark& other) noexcept {
            const auto theirs = std::atomic_ref{other.stamp}.load(std::memory_order_relaxed);
            return theirs != 0 && std::atomic_ref{partner}.load(std::memory_order_relaxed) == theirs;
        }
    };

    // Out of line: a new block every block_size insertions.
    ECSNET_NOINLINE void add_mark() { marks_.emplace_back(); }

    [[noreturn]] ECSNET_NOINLINE static void throw_full() {
        throw capacity_error("sparse set full: capacity " + std::to_string(max_size()));
    }

    // The stamp of block `block`, given now if it has none (a CAS, as other readers may give one too).
    [[nodiscard]] std::uint64_t stamp(size_type block) const noexcept {
        std::atomic_ref current{marks_[block].stamp};
        auto stamp = current.load(std::memory_order_relaxed);
        if (stamp == 0) {
            const auto fresh = detail::next_block_stamp.fetch_add(1, std::memory_order_relaxed);
            stamp = current.compare_exchange_strong(stamp, fresh, std::memory_order_relaxed) ? fresh : stamp;
        }
        return stamp;
    }

    // One per block of positions ever used (views write stamps and partners: mutable).
    mutable std::vector<block_mark> marks_;
};

} // namespace ecsnet
