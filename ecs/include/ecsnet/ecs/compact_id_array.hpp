#pragma once

// A strictly increasing array of 32-bit ids (a sorted set) stored in about 2 bytes per id when the ids are
// dense (seed 003_9749a93fa14adb31.txt, "Data Structure Optimization of Ordinal Sequence").
//
// The replication layer keeps, per tick and per replicated component type, the sorted column of entity ids
// in one of these: what matters is bytes per id, building in order with push_back, random access,
// in-order iteration, lower_bound and copy; insert and erase in the middle are supported as the seed says.
//
// Layout (seed 003):
// - The ids are cut into groups of 256 consecutive elements: element i lives in group i / 256 at logical
//   position i % 256. Every group but the last holds exactly 256 elements; the last holds 1 to 256.
// - Each group is a circular queue over its 256 slots: logical position k sits in slot (head + k) % 256.
// - A *dense* group stores a 32-bit base in its header and one int16 delta per slot (value = base + delta).
//   It is usable while the group's values fit the window [base - 32768, base + 32767], i.e. span at most
//   65,535. The base is kept within [32768, 2^32 - 32768] so the window never wraps around 2^32: deltas
//   then sort like the values, and a search inside a dense group compares int16 deltas directly.
// - A *sparse* group stores the plain 32-bit ids.
//
// Memory: the seed keeps 1 KiB nodes on a freelist, each holding one sparse group or two dense ones. Here
// dense chunks (256 x int16 = 512 B) and sparse chunks (256 x uint32 = 1 KiB) live in two typed pools
// (two vectors), and a chunk freed in the middle of a pool is filled with the pool's last chunk, so each
// pool holds exactly as many chunks as there are groups of its kind. That is never larger than the seed's
// layout (which keeps half-empty nodes when a partner group is promoted, and free nodes on its list), it
// needs no type punning between int16 and uint32 views of the same bytes, and a copy is four memcpy's.
// Per group the array also keeps a 12-byte header and the group's first value (4 bytes, the index that
// lower_bound bisects first): 2 + 16/256 = 2.06 bytes per dense id, 4.06 per sparse id.
//
// Promotion and demotion: when a value that must enter a dense group falls outside its window, the group
// is re-based (deltas rewritten around a new base) if its values still span at most 65,535, and promoted
// to sparse otherwise. Demotion is eager: after every insert or erase, each sparse group it touched whose
// span fits 65,535 again becomes dense, so a sparse group always spans more than 65,535 (if memory runs out
// during a demotion the group simply stays sparse: still correct, just larger). Each conversion costs 256
// slot rewrites; an operation that flips groups back and forth at a cluster boundary pays that each time.
//
// Complexity (n = size(), G = n / 256 groups):
// - operator[], front, back: O(1): two dependent loads (the group's header, then its slot) and one
//   well-predicted branch on the group's kind.
// - push_back: amortised O(1); a cursor on the last group's next free slot makes the common case a window
//   check and a store. append(first, last) encodes whole groups at once: the fastest way to build.
// - lower_bound, find, contains: O(log G + 8): a binary search over the groups' first values, then one
//   over the 256 slots of the group.
// - insert, erase, erase_at: O(log n + 127 + G). Inside the target group the shorter side of the circular
//   queue moves (at most 127 elements), then one element per following group crosses into the next
//   group through the circular heads: at most 127 + G element moves (last_move_count() reports them),
//   plus 256 slot rewrites per group re-based, promoted or demoted.
// - for_each, iteration: O(n), one or two contiguous runs per group.
// - copy: O(n) bytes, four vector copies; a copy holds exactly what it needs (no spare capacity), and
//   copy-assignment into an array with enough capacity allocates nothing.
//
// Invalidation: any change (push_back included) invalidates iterators, as with std::vector: they cache a
// pointer into a chunk. for_each's callback must not modify the array.
// Exceptions: insert, push_back, reserve and copy-assignment give the strong guarantee (an insert reserves
// everything its cascade may need before it moves anything); erase and erase_at may throw std::bad_alloc
// only before changing anything (a promotion in the cascade is reserved first); append keeps the groups it
// completed before an allocation failed.
// Not thread-safe for writers; concurrent const calls are fine.

#include <algorithm>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"

namespace ecsnet {

class compact_id_array {
public:
    using value_type = std::uint32_t;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;

    static constexpr size_type npos = ~size_type{};
    /// Elements per group (seed 003).
    static constexpr size_type group_capacity = 256;

    /// A random-access iterator over the values. Dereferencing yields the value (not a reference: values
    /// are decoded on the fly), so it models std::random_access_iterator with a prvalue reference, like
    /// std::views::iota; its legacy category is random access too so that the std algorithms
    /// (std::lower_bound...) take O(1) strides. It caches the contiguous run of slots it is in, so ++ and *
    /// cost about what they cost on a plain array (a merge-walk of two columns runs at that speed); other
    /// moves re-seat it in O(1).
    class const_iterator {
    public:
        using iterator_concept = std::random_access_iterator_tag;
        using iterator_category = std::random_access_iterator_tag;
        using value_type = compact_id_array::value_type;
        using difference_type = std::ptrdiff_t;
        using reference = value_type;
        using pointer = void;

        const_iterator() noexcept = default;

        [[nodiscard]] value_type operator*() const noexcept {
            ECSNET_ASSERT(run_left_ != 0, "dereferencing an iterator out of range");
            return dense_ != nullptr ? decode(base_, dense_[slot_]) : sparse_[slot_];
        }
        [[nodiscard]] value_type operator[](difference_type n) const noexcept { return *(*this + n); }
        /// The index this iterator points at.
        [[nodiscard]] size_type index() const noexcept { return index_; }

        const_iterator& operator++() noexcept {
            ++index_;
            if (--run_left_ != 0) {
                ++slot_;
            } else {
                seat();
            }
            return *this;
        }
        const_iterator operator++(int) noexcept {
            auto copy = *this;
            ++*this;
            return copy;
        }
        const_iterator& operator--() noexcept { return *this -= 1; }
        const_iterator operator--(int) noexcept {
            auto copy = *this;
            --*this;
            return copy;
        }
        const_iterator& operator+=(difference_type n) noexcept {
            index_ += static_cast<size_type>(n);
            seat();
            return *this;
        }
        const_iterator& operator-=(difference_type n) noexcept { return *this += -n; }
        [[nodiscard]] friend const_iterator operator+(const_iterator it, difference_type n) noexcept {
            return it += n;
        }
        [[nodiscard]] friend const_iterator operator+(difference_type n, const_iterator it) noexcept {
            return it += n;
        }
        [[nodiscard]] friend const_iterator operator-(const_iterator it, difference_type n) noexcept {
            return it -= n;
        }
        [[nodiscard]] friend difference_type operator-(const const_iterator& lhs,
                                                       const const_iterator& rhs) noexcept {
            return static_cast<difference_type>(lhs.index_) - static_cast<difference_type>(rhs.index_);
        }
        [[nodiscard]] friend bool operator==(const const_iterator& lhs, const const_iterator& rhs) noexcept {
            return lhs.index_ == rhs.index_;
        }
        [[nodiscard]] friend std::strong_ordering operator<=>(const const_iterator& lhs,
                                                              const const_iterator& rhs) noexcept {
            return lhs.index_ <=> rhs.index_;
        }

    private:
        friend class compact_id_array;
        const_iterator(const compact_id_array* array, size_type index) noexcept
            : array_{array}
            , index_{index} {
            seat();
        }

        /// Points the cache at the run of contiguous slots holding index_ (nothing past the end).
        void seat() noexcept {
            if (index_ >= array_->size_) {
                dense_ = nullptr;
                sparse_ = nullptr;
                run_left_ = 0;
                return;
            }
            const size_type g = index_ / group_capacity;
            const group_header& h = array_->groups_[g];
            const size_type k = index_ & slot_mask;
            slot_ = (h.head + k) & slot_mask;
            run_left_ = std::min(array_->group_size(g) - k, group_capacity - slot_);
            if (h.sparse) {
                dense_ = nullptr;
                sparse_ = array_->sparse_.data() + chunk_offset(h);
            } else {
                dense_ = array_->dense_.data() + chunk_offset(h);
                sparse_ = nullptr;
                base_ = h.base;
            }
        }

        const compact_id_array* array_{};
        size_type index_{};
        // The run index_ is in: slots [slot_, slot_ + run_left_) of one chunk.
        const std::int16_t* dense_{};
        const value_type* sparse_{};
        size_type slot_{};
        size_type run_left_{};
        value_type base_{};
    };
    using iterator = const_iterator;

    /// What one group looks like, for tests and diagnostics.
    struct group_info {
        size_type size;   ///< elements in the group: 256, except possibly for the last group
        size_type head;   ///< slot of logical position 0 in the circular queue
        bool sparse;      ///< plain 32-bit ids (true) or base + int16 deltas (false)
        value_type base;  ///< the dense group's base (unused when sparse)
        value_type first; ///< smallest value of the group
        value_type last;  ///< largest value of the group
    };

    compact_id_array() noexcept = default;
    /// A copy holds exactly what it needs: no spare capacity.
    compact_id_array(const compact_id_array& other)
        : groups_{other.groups_}
        , firsts_{other.firsts_}
        , dense_{other.dense_}
        , sparse_{other.sparse_}
        , size_{other.size_} {}
    /// Reuses this array's memory when it is large enough (a history slot overwritten tick after tick
    /// allocates nothing). Strong guarantee: everything is reserved before anything is overwritten.
    compact_id_array& operator=(const compact_id_array& other) {
        if (this != &other) {
            groups_.reserve(other.groups_.size());
            firsts_.reserve(other.firsts_.size());
            dense_.reserve(other.dense_.size());
            sparse_.reserve(other.sparse_.size());
            forget_tail();
            groups_ = other.groups_;
            firsts_ = other.firsts_;
            dense_ = other.dense_;
            sparse_ = other.sparse_;
            size_ = other.size_;
            last_moves_ = 0;
        }
        return *this;
    }
    compact_id_array(compact_id_array&& other) noexcept
        : groups_{std::move(other.groups_)}
        , firsts_{std::move(other.firsts_)}
        , dense_{std::move(other.dense_)}
        , sparse_{std::move(other.sparse_)}
        , size_{std::exchange(other.size_, 0)}
        , last_moves_{std::exchange(other.last_moves_, 0)} {
        other.release_all();
    }
    compact_id_array& operator=(compact_id_array&& other) noexcept {
        if (this != &other) {
            forget_tail();
            groups_ = std::move(other.groups_);
            firsts_ = std::move(other.firsts_);
            dense_ = std::move(other.dense_);
            sparse_ = std::move(other.sparse_);
            size_ = std::exchange(other.size_, 0);
            last_moves_ = std::exchange(other.last_moves_, 0);
            other.release_all();
        }
        return *this;
    }
    ~compact_id_array() = default;

    // ---- size and access -------------------------------------------------------------------------

    [[nodiscard]] size_type size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

    /// The i-th smallest value. O(1). Precondition: i < size().
    [[nodiscard]] value_type operator[](size_type i) const noexcept {
        ECSNET_ASSERT(i < size_, "index out of range");
        const group_header& h = groups_[i / group_capacity];
        const size_type at = chunk_offset(h) + ((h.head + i) & slot_mask);
        return h.sparse ? sparse_[at] : decode(h.base, dense_[at]);
    }

    /// Precondition: !empty().
    [[nodiscard]] value_type front() const {
        ECSNET_ASSERT(size_ != 0, "front() of an empty array");
        return firsts_.front();
    }
    /// Precondition: !empty().
    [[nodiscard]] value_type back() const {
        ECSNET_ASSERT(size_ != 0, "back() of an empty array");
        return (*this)[size_ - 1];
    }

    [[nodiscard]] const_iterator begin() const noexcept { return {this, 0}; }
    [[nodiscard]] const_iterator end() const noexcept { return {this, size_}; }
    [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
    [[nodiscard]] const_iterator cend() const noexcept { return end(); }

    /// Calls f(value) for every value in increasing order: the fastest walk (one or two contiguous runs per
    /// group, no per-element index arithmetic). f must not modify the array.
    template<typename Func>
    void for_each(Func f) const {
        const size_type count = groups_.size();
        for (size_type g = 0; g < count; ++g) {
            const group_header& h = groups_[g];
            const size_type n = g + 1 < count ? group_capacity : size_ - g * group_capacity;
            const size_type head = h.head;
            const size_type first_run = std::min(n, group_capacity - head);
            if (!h.sparse) {
                const std::int16_t* deltas = dense_.data() + chunk_offset(h);
                const value_type base = h.base;
                for (size_type k = head; k < head + first_run; ++k) {
                    f(decode(base, deltas[k]));
                }
                for (size_type k = 0; k < n - first_run; ++k) {
                    f(decode(base, deltas[k]));
                }
            } else {
                const value_type* ids = sparse_.data() + chunk_offset(h);
                for (size_type k = head; k < head + first_run; ++k) {
                    f(ids[k]);
                }
                for (size_type k = 0; k < n - first_run; ++k) {
                    f(ids[k]);
                }
            }
        }
    }

    // ---- search ----------------------------------------------------------------------------------

    /// Index of the first value >= v, or size() if there is none. O(log G + 8).
    [[nodiscard]] size_type lower_bound(value_type v) const noexcept {
        const size_type count = groups_.size();
        if (count == 0 || v <= firsts_.front()) {
            return 0;
        }
        // The last group whose first value is <= v (branch-free bisection; firsts_[0] <= v holds).
        const value_type* first = firsts_.data();
        for (size_type n = count; n > 1;) {
            const size_type half = n / 2;
            first = first[half] <= v ? first + half : first;
            n -= half;
        }
        const auto g = static_cast<size_type>(first - firsts_.data());
        return g * group_capacity + lower_bound_in_group(g, v);
    }

    /// Index of v, or npos.
    [[nodiscard]] size_type find(value_type v) const noexcept {
        const size_type at = lower_bound(v);
        return at < size_ && (*this)[at] == v ? at : npos;
    }

    [[nodiscard]] bool contains(value_type v) const noexcept { return find(v) != npos; }

    // ---- modifiers -------------------------------------------------------------------------------

    /// Appends v. Precondition: empty() or v > back() (checked in debug builds). Amortised O(1): the way to
    /// build a column in order.
    void push_back(value_type v) {
        ECSNET_ASSERT(size_ == 0 || v > back(), "push_back of a value not above back()");
        // Fast path: a cursor on the next free slot of the last group (see refresh_tail).
        if (tail_room_ != 0 && in_window(tail_base_, v)) {
            *tail_cursor_++ = encode(tail_base_, v);
            --tail_room_;
            ++size_;
            return;
        }
        if (sparse_tail_room_ != 0) {
            *sparse_tail_cursor_++ = v;
            --sparse_tail_room_;
            ++size_;
            return;
        }
        push_back_slow(v);
    }

    /// Appends a strictly increasing range whose first value is above back(): push_back of each, but
    /// whole groups are encoded at once (one span check per group, a vectorisable loop per group), which
    /// is the fastest way to build a column. Precondition checked in debug builds only.
    template<std::input_iterator Iterator, std::sentinel_for<Iterator> Sentinel>
    void append(Iterator first, Sentinel last) {
        while ((size_ & slot_mask) != 0 && first != last) {
            push_back(static_cast<value_type>(*first));
            ++first;
        }
        value_type batch[group_capacity];
        while (first != last) {
            size_type n = 0;
            for (; n < group_capacity && first != last; ++first) {
                batch[n++] = static_cast<value_type>(*first);
            }
            append_group(batch, n);
        }
    }

    /// Inserts v at its place unless it is there already. Returns its index and whether it was inserted.
    /// O(log n + 127 + G) moves (seed 003).
    std::pair<size_type, bool> insert(value_type v) {
        if (size_ == 0 || v > back()) {
            push_back(v);
            last_moves_ = 0;
            return {size_ - 1, true};
        }
        const size_type at = lower_bound(v); // < size_, since v <= back()
        if ((*this)[at] == v) {
            return {at, false};
        }
        forget_tail();
        const size_type g = at / group_capacity;
        reserve_for_insert(g, v);
        // Nothing below allocates: the cascade cannot stop halfway.
        last_moves_ = 0;
        value_type carry{};
        bool carrying = insert_into_group(g, at & slot_mask, v, carry);
        for (size_type j = g + 1; carrying && j < groups_.size(); ++j) {
            carrying = push_front_into_group(j, carry, carry);
        }
        if (carrying) {
            append_group(carry);
            ++last_moves_;
        }
        ++size_;
        demote_fitting_groups(g);
        return {at, true};
    }

    /// Removes v if present; returns whether it was.
    bool erase(value_type v) {
        const size_type at = find(v);
        if (at == npos) {
            return false;
        }
        erase_at(at);
        return true;
    }

    /// Removes the value at index i. Precondition: i < size(). O(127 + G) moves (seed 003).
    void erase_at(size_type i) {
        ECSNET_ASSERT(i < size_, "erase_at out of range");
        forget_tail();
        const size_type g = i / group_capacity;
        const size_type last = groups_.size() - 1;
        last_moves_ = 0;
        if (g == last) {
            remove_from_last_group(i & slot_mask);
            --size_;
            demote_fitting_groups(g);
            return;
        }
        reserve_for_erase(g);
        // Group g is full: drop position i % 256, then each following group hands its first value to the
        // tail of the group before it.
        remove_and_append(g, i & slot_mask, firsts_[g + 1]);
        for (size_type j = g + 1; j < last; ++j) {
            pop_front_push_back(j, firsts_[j + 1]);
        }
        pop_front_of_last_group();
        --size_;
        demote_fitting_groups(g);
    }

    /// Removes every value; keeps the memory (see shrink_to_fit) so that rebuilding allocates nothing.
    void clear() noexcept {
        forget_tail();
        groups_.clear();
        firsts_.clear();
        dense_.clear();
        sparse_.clear();
        size_ = 0;
        last_moves_ = 0;
    }

    /// Makes room for n dense ids (the common case of a column of entity ids).
    void reserve(size_type n) {
        forget_tail(); // reallocation moves the chunks
        const size_type groups = (n + slot_mask) / group_capacity;
        groups_.reserve(groups);
        firsts_.reserve(groups);
        dense_.reserve(groups * group_capacity);
    }

    /// Releases spare capacity.
    void shrink_to_fit() {
        forget_tail();
        groups_.shrink_to_fit();
        firsts_.shrink_to_fit();
        dense_.shrink_to_fit();
        sparse_.shrink_to_fit();
    }

    // ---- accounting and diagnostics ---------------------------------------------------------------

    /// Heap bytes held: group headers, first values and both chunk pools, capacity included.
    [[nodiscard]] size_type memory_bytes() const noexcept {
        return groups_.capacity() * sizeof(group_header) + firsts_.capacity() * sizeof(value_type) +
               dense_.capacity() * sizeof(std::int16_t) + sparse_.capacity() * sizeof(value_type);
    }

    /// Bytes that groups of these kinds need, capacity excluded: what memory_bytes() of a copy returns.
    [[nodiscard]] static constexpr size_type bytes_for(size_type dense_groups,
                                                       size_type sparse_groups) noexcept {
        return (dense_groups + sparse_groups) * (sizeof(group_header) + sizeof(value_type)) +
               dense_groups * group_capacity * sizeof(std::int16_t) +
               sparse_groups * group_capacity * sizeof(value_type);
    }

    [[nodiscard]] size_type group_count() const noexcept { return groups_.size(); }
    [[nodiscard]] size_type sparse_group_count() const noexcept { return sparse_.size() / group_capacity; }
    [[nodiscard]] size_type dense_group_count() const noexcept { return dense_.size() / group_capacity; }

    /// Group g (g < group_count()).
    [[nodiscard]] group_info group(size_type g) const noexcept {
        const group_header& h = groups_[g];
        const size_type n = group_size(g);
        return {n, h.head, h.sparse, h.base, firsts_[g], value_at(g, n - 1)};
    }

    /// Elements moved by the last insert or erase, inside the target group and across the following ones
    /// (seed 003 bounds it by 127 + group_count()); re-basing and conversions are not moves.
    [[nodiscard]] size_type last_move_count() const noexcept { return last_moves_; }

    /// Checks every internal invariant; returns an empty string or what is wrong. O(n), for tests.
    [[nodiscard]] std::string validate() const {
        const size_type count = groups_.size();
        if (count != (size_ + slot_mask) / group_capacity || firsts_.size() != count) {
            return "group count does not match size";
        }
        if (dense_.size() % group_capacity != 0 || sparse_.size() % group_capacity != 0) {
            return "a chunk pool is not a whole number of chunks";
        }
        std::vector<bool> dense_used(dense_.size() / group_capacity);
        std::vector<bool> sparse_used(sparse_.size() / group_capacity);
        size_type dense_groups = 0;
        for (size_type g = 0; g < count; ++g) {
            const group_header& h = groups_[g];
            auto& used = h.sparse ? sparse_used : dense_used;
            if (h.chunk >= used.size() || used[h.chunk]) {
                return "group " + std::to_string(g) + " has a missing or shared chunk";
            }
            used[h.chunk] = true;
            dense_groups += h.sparse ? 0 : 1;
            if (!h.sparse && (h.base < min_base || h.base > max_base)) {
                return "dense group " + std::to_string(g) + " has a window that wraps";
            }
            const size_type n = group_size(g);
            if (firsts_[g] != value_at(g, 0)) {
                return "cached first value of group " + std::to_string(g) + " is stale";
            }
            value_type last = firsts_[g];
            for (size_type k = 1; k < n; ++k) {
                const value_type v = value_at(g, k);
                if (v <= last) {
                    return "group " + std::to_string(g) + " is not strictly increasing";
                }
                last = v;
            }
            if (g + 1 < count && last >= firsts_[g + 1]) {
                return "groups " + std::to_string(g) + " and " + std::to_string(g + 1) + " overlap";
            }
            if (h.sparse && last - firsts_[g] <= max_span) {
                return "sparse group " + std::to_string(g) + " would fit a dense one";
            }
        }
        if (dense_groups != dense_group_count() || count - dense_groups != sparse_group_count()) {
            return "chunk pools hold chunks no group owns";
        }
        if (tail_room_ != 0 || sparse_tail_room_ != 0) {
            const group_header& h = groups_.back();
            const size_type used = size_ & slot_mask;
            const size_type slot = (h.head + used) & slot_mask;
            const size_type room = std::max(tail_room_, sparse_tail_room_);
            const bool cursor_ok =
                h.sparse ? tail_room_ == 0 && sparse_tail_cursor_ == sparse_.data() + chunk_offset(h) + slot
                         : sparse_tail_room_ == 0 && tail_base_ == h.base &&
                               tail_cursor_ == dense_.data() + chunk_offset(h) + slot;
            if (used == 0 || !cursor_ok || room > group_capacity - slot || room > group_capacity - used) {
                return "the push_back cursor is stale";
            }
        }
        return {};
    }

    [[nodiscard]] friend bool operator==(const compact_id_array& lhs, const compact_id_array& rhs) noexcept {
        if (lhs.size_ != rhs.size_ || lhs.firsts_ != rhs.firsts_) {
            return false;
        }
        for (size_type g = 0; g < lhs.groups_.size(); ++g) {
            for (size_type k = 1, n = lhs.group_size(g); k < n; ++k) {
                if (lhs.value_at(g, k) != rhs.value_at(g, k)) {
                    return false;
                }
            }
        }
        return true;
    }

private:
    static constexpr size_type slot_mask = group_capacity - 1;
    static constexpr value_type max_span = 0xFFFF;
    static constexpr value_type half_window = 0x8000;
    // Bases that keep the window [base - 32768, base + 32767] inside [0, 2^32).
    static constexpr value_type min_base = half_window;
    static constexpr value_type max_base = 0xFFFFFFFFu - (half_window - 1);

    struct group_header {
        value_type base;     // dense groups: value = base + delta
        std::uint32_t chunk; // index of the group's chunk in dense_ or sparse_
        std::uint8_t head;   // slot of logical position 0
        bool sparse;
    };

    [[nodiscard]] static size_type chunk_offset(const group_header& h) noexcept {
        return size_type{h.chunk} * group_capacity;
    }
    // Modular arithmetic: exact for every value inside the window.
    [[nodiscard]] static value_type decode(value_type base, std::int16_t delta) noexcept {
        return base + static_cast<value_type>(static_cast<std::int32_t>(delta));
    }
    [[nodiscard]] static std::int16_t encode(value_type base, value_type v) noexcept {
        return static_cast<std::int16_t>(v - base);
    }
    [[nodiscard]] static bool in_window(value_type base, value_type v) noexcept {
        return v - base + half_window <= max_span;
    }

    /// A base whose window holds [lo, hi] (hi - lo <= 65535): starting at lo for the last group, which
    /// push_back grows upwards, centred otherwise so the group can take values on either side.
    [[nodiscard]] static value_type pick_base(value_type lo, value_type hi, bool growing) noexcept {
        const std::uint64_t slack = max_span - (hi - lo);
        const std::uint64_t base = std::uint64_t{lo} + half_window - (growing ? 0 : slack / 2);
        return static_cast<value_type>(std::clamp<std::uint64_t>(base, min_base, max_base));
    }

    [[nodiscard]] size_type group_size(size_type g) const noexcept {
        return g + 1 < groups_.size() ? group_capacity : size_ - g * group_capacity;
    }
    [[nodiscard]] value_type slot_value(const group_header& h, size_type slot) const noexcept {
        const size_type at = chunk_offset(h) + slot;
        return h.sparse ? sparse_[at] : decode(h.base, dense_[at]);
    }
    void store(const group_header& h, size_type slot, value_type v) noexcept {
        const size_type at = chunk_offset(h) + slot;
        if (h.sparse) {
            sparse_[at] = v;
        } else {
            dense_[at] = encode(h.base, v);
        }
    }
    [[nodiscard]] value_type value_at(size_type g, size_type k) const noexcept {
        const group_header& h = groups_[g];
        return slot_value(h, (h.head + k) & slot_mask);
    }

    /// Moves logical positions [from, from + n) of group g (n <= 255) by one slot, left or right, inside its
    /// circular queue. Deltas are moved as they are: the group's base does not change.
    void shift(size_type g, size_type from, size_type n, bool right) noexcept {
        const group_header& h = groups_[g];
        const size_type start = (h.head + from) & slot_mask;
        if (h.sparse) {
            ring_shift(sparse_.data() + chunk_offset(h), start, n, right);
        } else {
            ring_shift(dense_.data() + chunk_offset(h), start, n, right);
        }
        last_moves_ += n;
    }

    /// ring[(start + k) % 256] -> ring[(start + k +- 1) % 256] for k in [0, n), n <= 255: at most three
    /// memmoves, split where the range wraps.
    template<typename Slot>
    static void ring_shift(Slot* ring, size_type start, size_type n, bool right) noexcept {
        if (n == 0) {
            return;
        }
        const size_type end = start + n; // exclusive, not wrapped: < 511
        if (right) {
            if (end < group_capacity) {
                std::memmove(ring + start + 1, ring + start, n * sizeof(Slot));
                return;
            }
            // The part past the wrap moves first, then slot 255 crosses to slot 0, then the rest.
            std::memmove(ring + 1, ring, (end - group_capacity) * sizeof(Slot));
            ring[0] = ring[slot_mask];
            std::memmove(ring + start + 1, ring + start, (slot_mask - start) * sizeof(Slot));
            return;
        }
        if (start == 0) {
            ring[slot_mask] = ring[0];
            std::memmove(ring, ring + 1, (n - 1) * sizeof(Slot));
            return;
        }
        if (end <= group_capacity) {
            std::memmove(ring + start - 1, ring + start, n * sizeof(Slot));
            return;
        }
        std::memmove(ring + start - 1, ring + start, (group_capacity - start) * sizeof(Slot));
        ring[slot_mask] = ring[0];
        std::memmove(ring, ring + 1, (end - group_capacity - 1) * sizeof(Slot));
    }

    // ---- representation changes ---------------------------------------------------------------------

    /// Makes group g able to hold every value of [lo, hi] (which contains all of its values that will
    /// survive the operation under way): re-bases a dense group, or promotes it when the span exceeds
    /// 65,535. Slots holding a value the operation is dropping may decode to garbage afterwards.
    void make_fit(size_type g, value_type lo, value_type hi) {
        const group_header& h = groups_[g];
        if (h.sparse || (in_window(h.base, lo) && in_window(h.base, hi))) {
            return;
        }
        if (hi - lo <= max_span) {
            rebase(g, pick_base(lo, hi, g + 1 == groups_.size()));
        } else {
            promote(g);
        }
    }

    void rebase(size_type g, value_type base) noexcept {
        group_header& h = groups_[g];
        std::int16_t* deltas = dense_.data() + chunk_offset(h);
        for (size_type k = 0; k < group_capacity; ++k) {
            deltas[k] = encode(base, decode(h.base, deltas[k]));
        }
        h.base = base;
    }

    /// Dense -> sparse. Allocates only past the sparse pool's capacity, before changing anything.
    void promote(size_type g) {
        const size_type target = sparse_.size();
        sparse_.resize(target + group_capacity);
        group_header& h = groups_[g];
        const std::int16_t* deltas = dense_.data() + chunk_offset(h);
        for (size_type k = 0; k < group_capacity; ++k) {
            sparse_[target + k] = decode(h.base, deltas[k]);
        }
        const auto old_chunk = h.chunk;
        h.chunk = static_cast<std::uint32_t>(target / group_capacity);
        h.sparse = true;
        release_chunk(dense_, false, old_chunk);
    }

    /// Sparse -> dense. Precondition: the group spans at most 65,535. May throw std::bad_alloc before
    /// changing anything.
    void demote(size_type g) {
        const size_type n = group_size(g);
        const value_type base = pick_base(firsts_[g], value_at(g, n - 1), g + 1 == groups_.size());
        const size_type target = dense_.size();
        dense_.resize(target + group_capacity);
        group_header& h = groups_[g];
        const value_type* ids = sparse_.data() + chunk_offset(h);
        for (size_type k = 0; k < group_capacity; ++k) {
            dense_[target + k] = encode(base, ids[k]);
        }
        const auto old_chunk = h.chunk;
        h.chunk = static_cast<std::uint32_t>(target / group_capacity);
        h.sparse = false;
        h.base = base;
        release_chunk(sparse_, true, old_chunk);
    }

    /// Frees a chunk by moving the pool's last chunk into its place, so pools never hold holes.
    template<typename Slot>
    void release_chunk(std::vector<Slot>& pool, bool sparse, std::uint32_t chunk) noexcept {
        const auto last = static_cast<std::uint32_t>(pool.size() / group_capacity - 1);
        if (chunk != last) {
            std::copy_n(pool.data() + size_type{last} * group_capacity, group_capacity,
                        pool.data() + size_type{chunk} * group_capacity);
            for (group_header& h : groups_) {
                if (h.sparse == sparse && h.chunk == last) {
                    h.chunk = chunk;
                    break;
                }
            }
        }
        pool.resize(size_type{last} * group_capacity);
    }

    /// Eager demotion (see the header comment) of the sparse groups from `from` on.
    void demote_fitting_groups(size_type from) noexcept {
        if (sparse_.empty()) {
            return;
        }
        for (size_type g = from; g < groups_.size(); ++g) {
            if (groups_[g].sparse && value_at(g, group_size(g) - 1) - firsts_[g] <= max_span) {
                try {
                    demote(g);
                } catch (const std::bad_alloc&) {
                    return; // the group stays sparse: correct, only larger
                }
            }
        }
    }

    // ---- growth ---------------------------------------------------------------------------------------

    template<typename Type>
    static void grow(std::vector<Type>& vec, size_type needed) {
        if (needed > vec.capacity()) {
            vec.reserve(std::max(needed, vec.capacity() * 2));
        }
    }

    void reserve_new_group() {
        grow(groups_, groups_.size() + 1);
        grow(firsts_, firsts_.size() + 1);
        grow(dense_, dense_.size() + group_capacity);
    }

    /// A new last group holding v. Capacity reserved by the caller.
    void append_group(value_type v) noexcept {
        const size_type target = dense_.size();
        dense_.resize(target + group_capacity);
        groups_.push_back(
            {pick_base(v, v, true), static_cast<std::uint32_t>(target / group_capacity), 0, false});
        firsts_.push_back(v);
        store(groups_.back(), 0, v);
    }

    /// A new last group holding values[0, n), 1 <= n <= 256, strictly increasing and above back().
    void append_group(const value_type* values, size_type n) {
        ECSNET_ASSERT(n > 0 && n <= group_capacity, "a group holds 1 to 256 values");
        ECSNET_ASSERT(size_ % group_capacity == 0, "appending a group after a partial one");
        ECSNET_ASSERT(size_ == 0 || values[0] > back(), "append of a value not above back()");
        ECSNET_ASSERT(std::adjacent_find(values, values + n, std::greater_equal<>{}) == values + n,
                      "append of a range that is not strictly increasing");
        const bool sparse = values[n - 1] - values[0] > max_span;
        forget_tail();
        grow(groups_, groups_.size() + 1);
        grow(firsts_, firsts_.size() + 1);
        group_header h{};
        if (sparse) {
            grow(sparse_, sparse_.size() + group_capacity);
            const size_type target = sparse_.size();
            sparse_.resize(target + group_capacity);
            std::copy_n(values, n, sparse_.data() + target);
            h = {0, static_cast<std::uint32_t>(target / group_capacity), 0, true};
        } else {
            grow(dense_, dense_.size() + group_capacity);
            const size_type target = dense_.size();
            dense_.resize(target + group_capacity);
            const value_type base = pick_base(values[0], values[n - 1], true);
            std::int16_t* deltas = dense_.data() + target;
            for (size_type k = 0; k < n; ++k) {
                deltas[k] = encode(base, values[k]);
            }
            h = {base, static_cast<std::uint32_t>(target / group_capacity), 0, false};
        }
        groups_.push_back(h);
        firsts_.push_back(values[0]);
        size_ += n;
    }

    void push_back_slow(value_type v) {
        forget_tail();
        if ((size_ & slot_mask) == 0) {
            reserve_new_group();
            append_group(v);
        } else {
            // The last group is sparse, or dense and v is past its window (or the cursor was forgotten):
            // re-base or promote if needed, then store.
            const size_type g = groups_.size() - 1;
            make_fit(g, std::min(firsts_[g], v), std::max(back(), v));
            const group_header& h = groups_[g];
            store(h, (h.head + (size_ & slot_mask)) & slot_mask, v);
        }
        ++size_;
        refresh_tail();
    }

    /// Points the push_back cursor at the next free slot of the last group, if it is dense and not full.
    /// The cursor covers the slots up to the end of the chunk (the queue may wrap after them).
    void refresh_tail() noexcept {
        const size_type used = size_ & slot_mask;
        if (used == 0) {
            return; // no group, or the last one is full
        }
        const group_header& h = groups_.back();
        const size_type slot = (h.head + used) & slot_mask;
        const auto room = static_cast<std::uint32_t>(std::min(group_capacity - used, group_capacity - slot));
        if (h.sparse) {
            sparse_tail_cursor_ = sparse_.data() + chunk_offset(h) + slot;
            sparse_tail_room_ = room;
        } else {
            tail_cursor_ = dense_.data() + chunk_offset(h) + slot;
            tail_base_ = h.base;
            tail_room_ = room;
        }
    }

    /// Every change but push_back may move chunks, re-base or fill the last group: drop the cursor.
    void forget_tail() noexcept {
        tail_room_ = 0;
        sparse_tail_room_ = 0;
    }

    /// Reserves what an insert of v into group g may need, so that its cascade never allocates: a new last
    /// group, and a sparse chunk for each dense group that might be promoted. During the cascade group j
    /// holds values in [first(j - 1), first(j + 1)) (group g: [min(v, first(g)), first(g + 1))).
    void reserve_for_insert(size_type g, value_type v) {
        const size_type count = groups_.size();
        size_type promotions = 0;
        for (size_type j = g; j < count; ++j) {
            if (!groups_[j].sparse) {
                const value_type lo = j == g ? std::min(v, firsts_[j]) : firsts_[j - 1];
                const value_type hi = j + 1 < count ? firsts_[j + 1] - 1 : back();
                promotions += hi - lo > max_span ? 1 : 0;
            }
        }
        grow(sparse_, sparse_.size() + promotions * group_capacity);
        if ((size_ & slot_mask) == 0) {
            reserve_new_group();
        }
    }

    /// As reserve_for_insert, for an erase in full group g: group j then holds values in
    /// [first(j), first(j + 1)]; the last group only shrinks.
    void reserve_for_erase(size_type g) {
        const size_type count = groups_.size();
        size_type promotions = 0;
        for (size_type j = g; j + 1 < count; ++j) {
            if (!groups_[j].sparse) {
                promotions += firsts_[j + 1] - firsts_[j] > max_span ? 1 : 0;
            }
        }
        grow(sparse_, sparse_.size() + promotions * group_capacity);
    }

    // ---- insert and erase steps (seed 003) ------------------------------------------------------------

    /// Inserts v at logical position p (p < size of the group) of group g, shifting the shorter side of
    /// its circular queue. A full group pushes out its last value into `out` and returns true.
    bool insert_into_group(size_type g, size_type p, value_type v, value_type& out) {
        const size_type n = group_size(g);
        const value_type lo = p == 0 ? v : firsts_[g];
        if (n == group_capacity) {
            out = value_at(g, group_capacity - 1);
            const value_type hi = p == group_capacity - 1 ? v : value_at(g, group_capacity - 2);
            make_fit(g, lo, hi);
            // The last slot is free now: either shift [p, 255) right into it, or shift [0, p) left into it
            // (the head moves back by one).
            if (p >= group_capacity / 2) {
                shift(g, p, group_capacity - 1 - p, true);
            } else {
                shift(g, 0, p, false);
                groups_[g].head = static_cast<std::uint8_t>(groups_[g].head - 1);
            }
        } else {
            make_fit(g, lo, value_at(g, n - 1));
            // The slot before the head and the slot after the tail are both free.
            if (p < n - p) {
                shift(g, 0, p, false);
                groups_[g].head = static_cast<std::uint8_t>(groups_[g].head - 1);
            } else {
                shift(g, p, n - p, true);
            }
        }
        const group_header& h = groups_[g];
        store(h, (h.head + p) & slot_mask, v);
        firsts_[g] = lo;
        return n == group_capacity;
    }

    /// Cascade step of an insert: `in` (smaller than every value of group g) becomes its first value. A
    /// full group reuses its last slot as the new head and pushes the value there out into `out`.
    bool push_front_into_group(size_type g, value_type in, value_type& out) {
        const size_type n = group_size(g);
        const size_type head = groups_[g].head;
        const size_type new_head = (head + slot_mask) & slot_mask;
        if (n == group_capacity) {
            out = slot_value(groups_[g], new_head); // the last value
            make_fit(g, in, slot_value(groups_[g], (head + group_capacity - 2) & slot_mask));
        } else {
            make_fit(g, in, value_at(g, n - 1));
        }
        group_header& h = groups_[g];
        store(h, new_head, in);
        h.head = static_cast<std::uint8_t>(new_head);
        firsts_[g] = in;
        ++last_moves_;
        return n == group_capacity;
    }

    /// First step of an erase in full group g: removes logical position p, shifting the shorter side, and
    /// appends `in` (the next group's first value) at the tail.
    void remove_and_append(size_type g, size_type p, value_type in) {
        const value_type lo = value_at(g, p == 0 ? 1 : 0);
        make_fit(g, lo, in);
        if (p < group_capacity / 2) {
            shift(g, 0, p, true);
            groups_[g].head = static_cast<std::uint8_t>(groups_[g].head + 1);
        } else {
            shift(g, p + 1, group_capacity - 1 - p, false);
        }
        const group_header& h = groups_[g];
        store(h, (h.head + slot_mask) & slot_mask, in);
        firsts_[g] = lo;
        ++last_moves_;
    }

    /// Cascade step of an erase in a full group g that is not the last: its first value has moved to the
    /// group before; `in` (the next group's first value) takes the freed slot, which becomes the tail.
    void pop_front_push_back(size_type g, value_type in) {
        const value_type second = value_at(g, 1);
        make_fit(g, second, in);
        group_header& h = groups_[g];
        store(h, h.head, in);
        h.head = static_cast<std::uint8_t>(h.head + 1);
        firsts_[g] = second;
        ++last_moves_;
    }

    /// Last step of an erase cascade: the last group's first value has moved to the group before.
    void pop_front_of_last_group() noexcept {
        const size_type g = groups_.size() - 1;
        if (group_size(g) == 1) {
            drop_last_group();
            return;
        }
        groups_[g].head = static_cast<std::uint8_t>(groups_[g].head + 1);
        firsts_[g] = value_at(g, 0);
    }

    /// Removes logical position p of the last group, shifting the shorter side.
    void remove_from_last_group(size_type p) noexcept {
        const size_type g = groups_.size() - 1;
        const size_type n = group_size(g);
        if (n == 1) {
            drop_last_group();
            return;
        }
        if (p < n - 1 - p) {
            shift(g, 0, p, true);
            groups_[g].head = static_cast<std::uint8_t>(groups_[g].head + 1);
        } else {
            shift(g, p + 1, n - 1 - p, false);
        }
        firsts_[g] = value_at(g, 0);
    }

    void drop_last_group() noexcept {
        const group_header h = groups_.back();
        if (h.sparse) {
            release_chunk(sparse_, true, h.chunk);
        } else {
            release_chunk(dense_, false, h.chunk);
        }
        groups_.pop_back();
        firsts_.pop_back();
    }

    /// lower_bound inside group g, knowing first(g) <= v.
    [[nodiscard]] size_type lower_bound_in_group(size_type g, value_type v) const noexcept {
        const group_header& h = groups_[g];
        const size_type n = group_size(g);
        const size_type head = h.head;
        // Branch-free bisection over logical positions [0, n), n >= 1.
        auto bisect = [&](const auto* slots, auto key) {
            size_type lo = 0;
            for (size_type len = n; len > 1;) {
                const size_type half = len / 2;
                lo = slots[(head + lo + half) & slot_mask] < key ? lo + half : lo;
                len -= half;
            }
            return lo + (slots[(head + lo) & slot_mask] < key ? 1 : 0);
        };
        if (h.sparse) {
            return bisect(sparse_.data() + chunk_offset(h), v);
        }
        if (!in_window(h.base, v)) {
            return n; // v is above the window, hence above every value of the group
        }
        // The window does not wrap, so deltas compare like the values.
        return bisect(dense_.data() + chunk_offset(h), encode(h.base, v));
    }

    void release_all() noexcept {
        forget_tail();
        groups_ = {};
        firsts_ = {};
        dense_ = {};
        sparse_ = {};
    }

    std::vector<group_header> groups_;
    std::vector<value_type> firsts_; // firsts_[g]: the first value of group g, bisected by lower_bound
    std::vector<std::int16_t> dense_;
    std::vector<value_type> sparse_;
    size_type size_{};
    size_type last_moves_{};
    // push_back cursors (refresh_tail): valid while their room is not 0, at most one at a time.
    std::int16_t* tail_cursor_{};
    value_type tail_base_{};
    std::uint32_t tail_room_{};
    std::uint32_t sparse_tail_room_{};
    value_type* sparse_tail_cursor_{};
};

} // namespace ecsnet
