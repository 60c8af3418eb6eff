#pragma once

// The sparse half of a sparse set: entity index -> position in the packed array.
//
// Two layouts, chosen at compile time by the capacity policy (seed 001, "Static dispatching"):
// - paged_sparse_array: pages of 4096 slots allocated on demand, so a set holding index 1,000,000 alone
//   allocates one page, not a million slots. Missing pages all point at one shared read-only page of
//   `npos`, so a lookup is a bounds check and two loads, with no null test.
// - flat_sparse_array<N>: one block of N slots allocated at construction; no allocation afterwards.
//
// Slots are never reset when an element leaves the set: the set validates a slot against its packed
// array (seed 004), which is what makes clear() O(1).

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "config.hpp"
#include "entity.hpp"

namespace ecsnet::detail {

using position_type = std::uint32_t;
inline constexpr position_type npos = ~position_type{};

class paged_sparse_array {
public:
    static constexpr std::size_t page_size = 4096;

    paged_sparse_array() noexcept = default;
    paged_sparse_array(const paged_sparse_array&) = delete;
    paged_sparse_array& operator=(const paged_sparse_array&) = delete;
    paged_sparse_array(paged_sparse_array&& other) noexcept
        : pages_{std::exchange(other.pages_, {})} {}
    paged_sparse_array& operator=(paged_sparse_array&& other) noexcept {
        if (this != &other) {
            release();
            pages_ = std::exchange(other.pages_, {});
        }
        return *this;
    }
    ~paged_sparse_array() { release(); }

    /// The slot of `index`, or npos where no page exists. O(1).
    [[nodiscard]] position_type lookup(entity_traits::integral_type index) const noexcept {
        const auto page = index / page_size;
        return page < pages_.size() ? pages_[page][index % page_size] : npos;
    }

    /// The slot of an index whose page exists (one of the set's elements): no bounds check, so that a get()
    /// on a known component is three dependent loads.
    [[nodiscard]] position_type existing(entity_traits::integral_type index) const noexcept {
        ECSNET_ASSERT(index / page_size < pages_.size(), "sparse slot without a page");
        return pages_[index / page_size][index % page_size];
    }

    /// The slot of `index`, allocating its page if needed. May throw std::bad_alloc.
    [[nodiscard]] position_type& assure(entity_traits::integral_type index) {
        const auto page = index / page_size;
        if (page >= pages_.size()) {
            pages_.resize(page + 1, const_cast<position_type*>(empty_page().data()));
        }
        if (pages_[page] == empty_page().data()) {
            auto* fresh = new position_type[page_size];
            std::fill_n(fresh, page_size, npos);
            pages_[page] = fresh;
        }
        return pages_[page][index % page_size];
    }

    /// The slot of an index whose page exists (it holds an element of the set).
    [[nodiscard]] position_type& at(entity_traits::integral_type index) noexcept {
        ECSNET_ASSERT(index / page_size < pages_.size() && pages_[index / page_size] != empty_page().data(),
                      "sparse slot without a page");
        return pages_[index / page_size][index % page_size];
    }

    [[nodiscard]] std::size_t allocated_pages() const noexcept {
        return static_cast<std::size_t>(std::count_if(
            pages_.begin(), pages_.end(), [](const auto* page) { return page != empty_page().data(); }));
    }

private:
    static const std::array<position_type, page_size>& empty_page() noexcept {
        static constexpr auto page = [] {
            std::array<position_type, page_size> slots{};
            slots.fill(npos);
            return slots;
        }();
        return page;
    }

    void release() noexcept {
        for (auto* page : pages_) {
            if (page != empty_page().data()) {
                delete[] page;
            }
        }
        pages_.clear();
    }

    std::vector<position_type*> pages_;
};

template<std::size_t N>
class flat_sparse_array {
public:
    flat_sparse_array()
        : slots_{std::make_unique<position_type[]>(N)} {
        std::fill_n(slots_.get(), N, npos);
    }

    [[nodiscard]] position_type lookup(entity_traits::integral_type index) const noexcept {
        return index < N ? slots_[index] : npos;
    }

    [[nodiscard]] position_type existing(entity_traits::integral_type index) const noexcept {
        ECSNET_ASSERT(index < N, "sparse slot out of the fixed range");
        return slots_[index];
    }

    [[nodiscard]] position_type& assure(entity_traits::integral_type index) {
        if (index >= N) {
            throw capacity_error("entity index " + std::to_string(index) + " exceeds the fixed capacity of " +
                                 std::to_string(N));
        }
        return slots_[index];
    }

    [[nodiscard]] position_type& at(entity_traits::integral_type index) noexcept {
        ECSNET_ASSERT(index < N, "sparse slot out of the fixed range");
        return slots_[index];
    }

    [[nodiscard]] static constexpr std::size_t allocated_pages() noexcept { return 1; }

private:
    std::unique_ptr<position_type[]> slots_;
};

template<typename Capacity>
struct sparse_array_for {
    using type = paged_sparse_array;
};

template<std::size_t N>
struct sparse_array_for<fixed_capacity<N>> {
    using type = flat_sparse_array<N>;
};

} // namespace ecsnet::detail
