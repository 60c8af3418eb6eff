#pragma once

// The vector of the arrays that grow with the world: packed entities, components, the registry's entity and
// bitset arrays.
//
// Small, it lives on the heap like a std::vector. Once it needs 2 MiB, it moves, once, into a range of
// address space reserved for the most elements it expects to hold (`expected_max`: a pool's max_size()),
// 2 MiB-aligned and hinted for huge pages (huge_pages.hpp); from then on it grows in place by making more of
// the range writable, a page-table change: nothing is copied and no page is faulted in twice. A std::vector
// growing by doubling copies the elements about once more and has the kernel zero about twice the final size
// in fresh pages (creating 1M entities with two components: ~92 MB zeroed for ~50 MB of arrays, a third of
// BM_Create's time, bench/RESULTS.md). Past expected_max, or where the range cannot be reserved, it moves to
// a bigger block as a std::vector does. A reserved range costs address space only: memory is faulted in,
// 2 MiB at a time, when written, as with any huge block. A released range goes to the range_recycler
// (huge_pages.hpp), so the arrays of a registry created after another was destroyed reuse its pages.
//
// Relocation moves elements even when their move constructor may throw (std::vector would copy them); such
// a throw leaves the basic guarantee (the elements already moved stay moved-from). Otherwise an insertion
// that throws changes nothing. Invalidation: as std::vector (growth may relocate; erasing at the end
// invalidates only the erased element).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "huge_pages.hpp"

namespace ecsnet::detail {

template<typename Type>
class huge_vector {
    static_assert(std::is_nothrow_destructible_v<Type>, "elements are destroyed in noexcept paths");

public:
    using value_type = Type;
    using size_type = std::size_t;
    using iterator = Type*;
    using const_iterator = const Type*;

    huge_vector() noexcept = default;
    /// `expected_max`: how many elements the reserved range is sized for (a hint, not a limit).
    explicit huge_vector(size_type expected_max) noexcept
        : expected_max_{std::min(expected_max, max_size())} {}
    huge_vector(const huge_vector&) = delete;
    huge_vector& operator=(const huge_vector&) = delete;
    huge_vector(huge_vector&& other) noexcept
        : data_{std::exchange(other.data_, nullptr)}
        , size_{std::exchange(other.size_, 0)}
        , capacity_{std::exchange(other.capacity_, 0)}
        , committed_{std::exchange(other.committed_, 0)}
        , reserved_{std::exchange(other.reserved_, 0)}
        , expected_max_{other.expected_max_} {}
    huge_vector& operator=(huge_vector&& other) noexcept {
        huge_vector moved{std::move(other)};
        swap(moved);
        return *this;
    }
    ~huge_vector() {
        clear();
        release(data_, committed_, reserved_);
    }

    void swap(huge_vector& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        std::swap(capacity_, other.capacity_);
        std::swap(committed_, other.committed_);
        std::swap(reserved_, other.reserved_);
        std::swap(expected_max_, other.expected_max_);
    }

    [[nodiscard]] Type* data() noexcept { return data_; }
    [[nodiscard]] const Type* data() const noexcept { return data_; }
    [[nodiscard]] size_type size() const noexcept { return size_; }
    [[nodiscard]] size_type capacity() const noexcept { return capacity_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    [[nodiscard]] static constexpr size_type max_size() noexcept {
        return static_cast<size_type>(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(Type);
    }
    /// Whether the elements sit in a reserved range (they grow in place).
    [[nodiscard]] bool in_reserved_range() const noexcept { return reserved_ != 0; }

    [[nodiscard]] iterator begin() noexcept { return data_; }
    [[nodiscard]] iterator end() noexcept { return data_ + size_; }
    [[nodiscard]] const_iterator begin() const noexcept { return data_; }
    [[nodiscard]] const_iterator end() const noexcept { return data_ + size_; }

    [[nodiscard]] Type& operator[](size_type pos) noexcept {
        ECSNET_ASSERT(pos < size_, "huge_vector index out of range");
        return data_[pos];
    }
    [[nodiscard]] const Type& operator[](size_type pos) const noexcept {
        ECSNET_ASSERT(pos < size_, "huge_vector index out of range");
        return data_[pos];
    }
    [[nodiscard]] Type& back() noexcept { return (*this)[size_ - 1]; }
    [[nodiscard]] const Type& back() const noexcept { return (*this)[size_ - 1]; }

    /// Room for `count` elements without relocating again.
    void reserve(size_type count) {
        if (count > capacity_) {
            grow_to(count);
        }
    }

    void push_back(const Type& value) { emplace_back(value); }
    void push_back(Type&& value) { emplace_back(std::move(value)); }

    template<typename... Args>
    Type& emplace_back(Args&&... args) {
        if (size_ == capacity_) [[unlikely]] {
            return grow_and_emplace(std::forward<Args>(args)...);
        }
        auto* element = ::new (static_cast<void*>(data_ + size_)) Type(std::forward<Args>(args)...);
        ++size_;
        return *element;
    }

    void pop_back() noexcept {
        ECSNET_ASSERT(size_ != 0, "pop_back on an empty huge_vector");
        --size_;
        std::destroy_at(data_ + size_);
    }

    void clear() noexcept {
        std::destroy(data_, data_ + size_);
        size_ = 0;
    }

    /// Grows to `count` copies of `value` past the current elements, or shrinks to `count`.
    void resize(size_type count, const Type& value) {
        if (count < size_) {
            std::destroy(data_ + count, data_ + size_);
            size_ = count;
            return;
        }
        reserve(count);
        while (size_ < count) {
            ::new (static_cast<void*>(data_ + size_)) Type(value);
            ++size_;
        }
    }

private:
    // Room for `count` elements: the current range made writable further (data unchanged), or a new block
    // (nothing moved yet). Throws std::bad_alloc, std::length_error; then nothing changed.
    struct block {
        Type* data;
        size_type capacity;
        std::size_t committed; // bytes writable in a reserved range (0 for a heap block)
        std::size_t reserved;  // bytes of the reserved range (0 for a heap block)
    };

    [[nodiscard]] block room_for(size_type count) {
        if (count > max_size()) {
            throw std::length_error("huge_vector: too many elements");
        }
        const auto bytes = count * sizeof(Type);
        if (is_huge_block(bytes)) {
            const auto wanted = huge_block_length(bytes);
            if (reserved_ != 0 && wanted <= reserved_) {
                reserved_range range{as_bytes(data_), reserved_, committed_};
                if (!commit_range(range, wanted)) {
                    throw std::bad_alloc{};
                }
                return {data_, range.writable / sizeof(Type), range.writable, reserved_};
            }
            auto range = reserve_range(huge_block_length(std::max(bytes, expected_max_ * sizeof(Type))));
            if (range.first == nullptr) {
                range = reserve_range(wanted);
            }
            if (range.first != nullptr) {
                if (!commit_range(range, wanted)) {
                    release_range(range);
                    throw std::bad_alloc{};
                }
                // A recycled range may be writable further already: all of it is capacity.
                return {reinterpret_cast<Type*>(range.first), range.writable / sizeof(Type), range.writable,
                        range.length};
            }
            // No reserved range on this system: an ordinary block.
        }
        return {static_cast<Type*>(::operator new (bytes, std::align_val_t{alignof(Type)})), count, 0, 0};
    }

    [[nodiscard]] size_type next_capacity(size_type at_least) const noexcept {
        const auto doubled = capacity_ > max_size() / 2 ? max_size() : capacity_ * 2;
        return std::max({at_least, doubled, size_type{8}});
    }

    ECSNET_NOINLINE void grow_to(size_type count) {
        const auto room = room_for(count);
        if (room.data == data_) {
            adopt_in_place(room);
            return;
        }
        try {
            move_elements(room);
        } catch (...) {
            release(room.data, room.committed, room.reserved);
            throw;
        }
        adopt(room);
    }

    // Growth then construction; a throw from either leaves the vector as it was.
    template<typename... Args>
    ECSNET_NOINLINE Type& grow_and_emplace(Args&&... args) {
        const auto room = room_for(next_capacity(size_ + 1));
        if (room.data == data_) {
            adopt_in_place(room);
            auto* element = ::new (static_cast<void*>(data_ + size_)) Type(std::forward<Args>(args)...);
            ++size_;
            return *element;
        }
        // The new element first: args may refer to an element about to move.
        Type* element = nullptr;
        try {
            element = ::new (static_cast<void*>(room.data + size_)) Type(std::forward<Args>(args)...);
        } catch (...) {
            release(room.data, room.committed, room.reserved);
            throw;
        }
        try {
            move_elements(room);
        } catch (...) {
            std::destroy_at(element);
            release(room.data, room.committed, room.reserved);
            throw;
        }
        adopt(room);
        ++size_;
        return *element;
    }

    // Moves the elements into `room` and destroys them here; on a throw, what was moved into the room is
    // destroyed again (the caller releases the room).
    void move_elements(const block& room) {
        if constexpr (std::is_trivially_copyable_v<Type>) {
            if (size_ != 0) {
                std::memcpy(static_cast<void*>(room.data), static_cast<const void*>(data_),
                            size_ * sizeof(Type));
            }
        } else {
            size_type moved = 0;
            try {
                for (; moved < size_; ++moved) {
                    ::new (static_cast<void*>(room.data + moved)) Type(std::move(data_[moved]));
                }
            } catch (...) {
                std::destroy(room.data, room.data + moved);
                throw;
            }
            std::destroy(data_, data_ + size_);
        }
    }

    void adopt_in_place(const block& room) noexcept {
        capacity_ = room.capacity;
        committed_ = room.committed;
    }

    void adopt(const block& room) noexcept {
        release(data_, committed_, reserved_);
        data_ = room.data;
        capacity_ = room.capacity;
        committed_ = room.committed;
        reserved_ = room.reserved;
    }

    static void release(Type* data, std::size_t committed, std::size_t reserved) noexcept {
        if (data == nullptr) {
            return;
        }
        if (reserved != 0) {
            release_range({as_bytes(data), reserved, committed});
        } else {
            ::operator delete (data, std::align_val_t{alignof(Type)});
        }
    }

    [[nodiscard]] static std::byte* as_bytes(Type* data) noexcept {
        return reinterpret_cast<std::byte*>(data);
    }

    Type* data_{};
    size_type size_{};
    size_type capacity_{};
    std::size_t committed_{}; // bytes of the reserved range made writable
    std::size_t reserved_{};  // bytes of the reserved range; 0 while on the heap
    size_type expected_max_{};
};

} // namespace ecsnet::detail
