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

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "config.hpp"
#include "entity.hpp"
#include "sparse_array.hpp"

namespace ecsnet {

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

    sparse_set() {
        if constexpr (fixed) {
            packed_.reserve(Capacity::value);
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

    /// Position of an entity known to be in the set: an error in debug builds otherwise, undefined in
    /// release builds.
    [[nodiscard]] position_type index(entity e) const noexcept {
        ECSNET_ASSERT(contains(e), "the entity is not in the set (absent or stale)");
        return sparse_.lookup(to_index(e));
    }

    /// Appends `e`, which must not be in the set yet. Throws capacity_error past max_size() (or, with a
    /// fixed capacity, for an index beyond it).
    void push(entity e) {
        prepare_insert(e);
        commit_insert(e);
    }

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
    }

    void reserve(size_type count) {
        if constexpr (!fixed) {
            packed_.reserve(count);
        }
    }

    /// Pages of the sparse array in use (1 for a fixed capacity); for tests and memory accounting.
    [[nodiscard]] size_type sparse_pages() const noexcept { return sparse_.allocated_pages(); }

protected:
    /// Checks capacity and readies the sparse slot of `e`; changes nothing visible. Derived classes call
    /// it before constructing their own element so that a refusal leaves everything as it was.
    void prepare_insert(entity e) {
        ECSNET_ASSERT(e != null_entity, "null_entity cannot be inserted");
        ECSNET_ASSERT(!contains(e), "the entity is already in the set");
        if (packed_.size() >= max_size()) {
            throw capacity_error("sparse set full: capacity " + std::to_string(max_size()));
        }
        static_cast<void>(sparse_.assure(to_index(e)));
    }

    /// Second half of an insertion, after prepare_insert(e). May throw std::bad_alloc (dynamic only).
    void commit_insert(entity e) {
        packed_.push_back(e);
        sparse_.at(to_index(e)) = static_cast<position_type>(packed_.size() - 1);
    }

    virtual void swap_and_pop(position_type pos) {
        const entity last = packed_.back();
        packed_[pos] = last;
        sparse_.at(to_index(last)) = pos;
        packed_.pop_back();
    }

    virtual void swap_at(size_type lhs, size_type rhs) noexcept {
        std::swap(packed_[lhs], packed_[rhs]);
        sparse_.at(to_index(packed_[lhs])) = static_cast<position_type>(lhs);
        sparse_.at(to_index(packed_[rhs])) = static_cast<position_type>(rhs);
    }

    virtual void clear_all() noexcept { packed_.clear(); }

    std::vector<entity> packed_;
    typename detail::sparse_array_for<Capacity>::type sparse_;
};

} // namespace ecsnet
