#pragma once

// The sparse half of a sparse set: entity index -> position in the packed array.
//
// Two layouts, chosen at compile time by the capacity policy (seed 001, "Static dispatching"):
// - paged_sparse_array: pages of 4096 slots allocated on demand, so a set holding index 1,000,000 alone
//   allocates one page, not a million slots. Missing pages all point at one shared read-only page of
//   `npos`, so a lookup is a bounds check and two loads, with no null test. Where indices are dense (a
//   quarter of an aligned run of 128 pages in use), the run moves into one 2 MiB block on huge pages
//   (huge_pages.hpp), so that random lookups in a big world stop missing the TLB.
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
#include "huge_pages.hpp"

namespace ecsnet::detail {

using position_type = std::uint32_t;
inline constexpr position_type npos = ~position_type{};

class paged_sparse_array {
public:
    static constexpr std::size_t page_size = 4096;
    /// Pages per huge block: 128 pages of 16 KiB make 2 MiB.
    static constexpr std::size_t pages_per_block = huge_page_size / (page_size * sizeof(position_type));
    /// An aligned run of pages moves into a huge block once this many of its pages exist, so a block
    /// costs at most four times the pages it replaces, while a few scattered indices keep 16 KiB pages.
    static constexpr std::size_t pages_to_promote = pages_per_block / 4;

    paged_sparse_array() noexcept = default;
    paged_sparse_array(const paged_sparse_array&) = delete;
    paged_sparse_array& operator=(const paged_sparse_array&) = delete;
    paged_sparse_array(paged_sparse_array&& other) noexcept
        : pages_{std::exchange(other.pages_, {})}
        , blocks_{std::exchange(other.blocks_, {})} {}
    paged_sparse_array& operator=(paged_sparse_array&& other) noexcept {
        if (this != &other) {
            release();
            pages_ = std::exchange(other.pages_, {});
            blocks_ = std::exchange(other.blocks_, {});
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

    /// The slot of `index`, allocating its page if needed. May throw std::bad_alloc, leaving the array as
    /// it was.
    [[nodiscard]] position_type& assure(entity_traits::integral_type index) {
        const auto page = index / page_size;
        if (page >= pages_.size()) {
            pages_.resize(page + 1, missing());
        }
        if (pages_[page] == missing()) [[unlikely]] {
            allocate_page(page);
        }
        return pages_[page][index % page_size];
    }

    /// The slot of an index whose page exists (it holds an element of the set).
    [[nodiscard]] position_type& at(entity_traits::integral_type index) noexcept {
        ECSNET_ASSERT(index / page_size < pages_.size() && pages_[index / page_size] != missing(),
                      "sparse slot without a page");
        return pages_[index / page_size][index % page_size];
    }

    /// Pages that hold slots, those inside huge blocks included.
    [[nodiscard]] std::size_t allocated_pages() const noexcept {
        return static_cast<std::size_t>(
            std::count_if(pages_.begin(), pages_.end(), [](const auto* page) { return page != missing(); }));
    }

    /// Runs of pages that live in a huge block.
    [[nodiscard]] std::size_t huge_blocks() const noexcept {
        return static_cast<std::size_t>(std::count_if(blocks_.begin(), blocks_.end(),
                                                      [](const auto* block) { return block != nullptr; }));
    }

private:
    static position_type* missing() noexcept {
        static constexpr auto page = [] {
            std::array<position_type, page_size> slots{};
            slots.fill(npos);
            return slots;
        }();
        // Never written through: assure() replaces a missing page before handing out a slot.
        return const_cast<position_type*>(page.data());
    }

    [[nodiscard]] bool in_block(std::size_t page) const noexcept {
        const auto block = page / pages_per_block;
        return block < blocks_.size() && blocks_[block] != nullptr;
    }

    ECSNET_NOINLINE void allocate_page(std::size_t page) {
        const auto first = page / pages_per_block * pages_per_block;
        const auto last = std::min(first + pages_per_block, pages_.size());
        const auto present = std::count_if(pages_.begin() + static_cast<std::ptrdiff_t>(first),
                                           pages_.begin() + static_cast<std::ptrdiff_t>(last),
                                           [](const auto* slots) { return slots != missing(); });
        if (static_cast<std::size_t>(present) + 1 >= pages_to_promote) {
            promote(page / pages_per_block);
            return;
        }
        auto* fresh = new position_type[page_size];
        std::fill_n(fresh, page_size, npos);
        pages_[page] = fresh;
    }

    // Moves the run of pages `block` into one huge block: every allocation comes first, so a throw changes
    // nothing that can be seen.
    void promote(std::size_t block) {
        const auto first = block * pages_per_block;
        if (pages_.size() < first + pages_per_block) {
            pages_.resize(first + pages_per_block, missing());
        }
        if (blocks_.size() <= block) {
            blocks_.resize(block + 1, nullptr);
        }
        auto* slots = static_cast<position_type*>(allocate_block(huge_page_size, alignof(position_type)));
        std::fill_n(slots, pages_per_block * page_size, npos);
        for (std::size_t i = 0; i < pages_per_block; ++i) {
            auto*& page = pages_[first + i];
            if (page != missing()) {
                std::copy_n(page, page_size, slots + i * page_size);
                delete[] page;
            }
            page = slots + i * page_size;
        }
        blocks_[block] = slots;
    }

    void release() noexcept {
        for (std::size_t page = 0; page < pages_.size(); ++page) {
            if (pages_[page] != missing() && !in_block(page)) {
                delete[] pages_[page];
            }
        }
        for (auto* block : blocks_) {
            if (block != nullptr) {
                deallocate_block(block, huge_page_size, alignof(position_type));
            }
        }
        pages_.clear();
        blocks_.clear();
    }

    std::vector<position_type*> pages_;
    // One entry per run of pages_per_block pages: the huge block holding the run, or nullptr.
    std::vector<position_type*> blocks_;
};

template<std::size_t N>
class flat_sparse_array {
public:
    flat_sparse_array()
        : slots_(N, npos) {}

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
    std::vector<position_type, huge_page_allocator<position_type>> slots_;
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
