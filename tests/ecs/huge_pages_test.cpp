// Huge-page blocks and the sparse array's promotion of dense page runs into them.

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/huge_pages.hpp>
#include <ecsnet/ecs/sparse_array.hpp>

namespace huge_pages_test {

namespace {

using ecsnet::detail::huge_page_allocator;
using ecsnet::detail::huge_page_size;
using ecsnet::detail::npos;
using ecsnet::detail::paged_sparse_array;

bool aligned_to(const void* block, std::size_t alignment) {
    return reinterpret_cast<std::uintptr_t>(block) % alignment == 0;
}

#if defined(__linux__)
// The VmFlags of the mapping that holds `address`, from /proc/self/smaps ("hg" is MADV_HUGEPAGE).
std::string vm_flags_of(const void* address) {
    std::ifstream smaps{"/proc/self/smaps"};
    const auto target = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        // A mapping starts with "first-last perms ...", in hexadecimal.
        if (const auto dash = line.find('-'); dash != std::string::npos && dash < line.find(' ')) {
            const auto first = std::stoull(line.substr(0, dash), nullptr, 16);
            const auto last = std::stoull(line.substr(dash + 1), nullptr, 16);
            inside = first <= target && target < last;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return {};
}
#endif

TEST(HugePages, BigBlocksAreAlignedWritableAndHinted) {
    huge_page_allocator<std::uint32_t> allocator;
    const std::size_t count = 3 * huge_page_size / sizeof(std::uint32_t) + 5; // 6 MiB and a bit
    auto* block = allocator.allocate(count);
    ASSERT_NE(block, nullptr);
    std::memset(block, 0xAB, count * sizeof(std::uint32_t)); // every byte is ours (ASan would object)
    EXPECT_EQ(block[count - 1], 0xABABABABU);
#if defined(__linux__)
    EXPECT_TRUE(aligned_to(block, huge_page_size));
    // The hint is applied; whether the kernel then finds huge pages is its business. A kernel without
    // transparent huge pages refuses the hint, and a root without /proc cannot show it: nothing to check.
    const bool kernel_has_thp = std::ifstream{"/sys/kernel/mm/transparent_hugepage/enabled"}.good();
    const auto flags = vm_flags_of(block);
    if (kernel_has_thp && !flags.empty()) {
        EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
    }
#endif
    allocator.deallocate(block, count);
}

TEST(HugePages, SmallBlocksComeFromTheHeapWithTheirAlignment) {
    struct alignas(64) Wide {
        std::uint8_t bytes[64];
    };
    huge_page_allocator<Wide> allocator;
    auto* block = allocator.allocate(100);
    EXPECT_TRUE(aligned_to(block, 64));
    EXPECT_FALSE(ecsnet::detail::is_huge_block(100 * sizeof(Wide)));
    allocator.deallocate(block, 100);
}

TEST(HugePages, AnImpossibleCountThrowsInsteadOfWrapping) {
    huge_page_allocator<std::uint64_t> allocator;
    EXPECT_THROW((void)allocator.allocate(std::numeric_limits<std::size_t>::max() / 4), std::bad_alloc);
}

TEST(HugePages, AVectorKeepsItsElementsAcrossTheThreshold) {
    std::vector<std::uint32_t, huge_page_allocator<std::uint32_t>> values;
    const std::uint32_t count = 3 * huge_page_size / sizeof(std::uint32_t);
    for (std::uint32_t i = 0; i < count; ++i) {
        values.push_back(i * 7U);
    }
    for (std::uint32_t i = 0; i < count; ++i) {
        ASSERT_EQ(values[i], i * 7U);
    }
    EXPECT_TRUE(ecsnet::detail::is_huge_block(values.capacity() * sizeof(std::uint32_t)));
}

#if defined(__linux__) && defined(MADV_FREE)
// A released range is kept for the next reservation of the same length, writable part included, within the
// recycler's bounds; clear() gives everything back.
TEST(HugePages, ReleasedRangesAreReusedForTheSameLength) {
    using ecsnet::detail::range_recycler;
    auto& recycler = range_recycler::instance();
    recycler.clear();
    const auto length = 4 * huge_page_size;
    auto range = ecsnet::detail::reserve_range(length);
    ASSERT_NE(range.first, nullptr);
    EXPECT_TRUE(aligned_to(range.first, huge_page_size));
    EXPECT_EQ(range.writable, 0U);
    ASSERT_TRUE(ecsnet::detail::commit_range(range, huge_page_size));
    std::memset(range.first, 0x5A, huge_page_size); // writable now
    auto* const first = range.first;
    ecsnet::detail::release_range(range);
    EXPECT_EQ(recycler.kept(), (std::pair<std::size_t, std::size_t>{1, huge_page_size}));

    // Another length gets a fresh range; the same length gets the kept one, still writable where it was.
    const auto other = ecsnet::detail::reserve_range(2 * huge_page_size);
    EXPECT_NE(other.first, first);
    auto again = ecsnet::detail::reserve_range(length);
    EXPECT_EQ(again.first, first);
    EXPECT_EQ(again.writable, huge_page_size);
    again.first[huge_page_size - 1] = std::byte{1};
    EXPECT_EQ(recycler.kept().first, 0U);
    ASSERT_TRUE(ecsnet::detail::commit_range(again, length));
    again.first[length - 1] = std::byte{2};

    // Bounded: past max_ranges, released ranges are unmapped.
    std::vector<ecsnet::detail::reserved_range> many;
    for (std::size_t i = 0; i < range_recycler::max_ranges + 3; ++i) {
        many.push_back(ecsnet::detail::reserve_range(huge_page_size));
    }
    for (const auto& each : many) {
        ecsnet::detail::release_range(each);
    }
    EXPECT_EQ(recycler.kept().first, range_recycler::max_ranges);
    ecsnet::detail::release_range(again);
    ecsnet::detail::release_range(other);
    EXPECT_EQ(recycler.kept().first, range_recycler::max_ranges);
    recycler.clear();
    EXPECT_EQ(recycler.kept(), (std::pair<std::size_t, std::size_t>{0, 0}));
}
#endif

TEST(SparseArray, ADenseRunOfPagesMovesIntoOneHugeBlockWithItsSlots) {
    constexpr auto page = paged_sparse_array::page_size;
    constexpr auto run = paged_sparse_array::pages_per_block;
    static_assert(run * page * sizeof(ecsnet::detail::position_type) == huge_page_size);
    paged_sparse_array sparse;
    // One slot in each page of the run, one page short of promotion.
    const auto promote_at = paged_sparse_array::pages_to_promote;
    for (std::uint32_t p = 0; p + 1 < promote_at; ++p) {
        sparse.assure(p * page + p) = p;
    }
    EXPECT_EQ(sparse.huge_blocks(), 0U);
    EXPECT_EQ(sparse.allocated_pages(), promote_at - 1);
    sparse.assure((promote_at - 1) * page + 1) = 1'000;
    EXPECT_EQ(sparse.huge_blocks(), 1U);
    EXPECT_EQ(sparse.allocated_pages(), run); // the whole run now has slots
    for (std::uint32_t p = 0; p + 1 < promote_at; ++p) {
        EXPECT_EQ(sparse.lookup(p * page + p), p);
        EXPECT_EQ(sparse.lookup(p * page + p + 1), npos);
    }
    EXPECT_EQ(sparse.lookup((promote_at - 1) * page + 1), 1'000U);
    EXPECT_EQ(sparse.lookup(run * page - 1), npos); // the run's last slot exists and is empty
    EXPECT_EQ(sparse.lookup(run * page), npos);     // beyond the run: no page
    // Later pages of the run are already there: no allocation, no second block.
    sparse.assure(100 * page) = 7;
    EXPECT_EQ(sparse.lookup(100 * page), 7U);
    EXPECT_EQ(sparse.huge_blocks(), 1U);

    paged_sparse_array moved{std::move(sparse)};
    EXPECT_EQ(moved.lookup(100 * page), 7U);
    EXPECT_EQ(moved.huge_blocks(), 1U);
}

TEST(SparseArray, ScatteredIndicesKeepSmallPages) {
    constexpr auto page = paged_sparse_array::page_size;
    constexpr auto run = paged_sparse_array::pages_per_block;
    paged_sparse_array sparse;
    // A few pages in each of many runs: never a quarter of any run.
    for (std::uint32_t r = 0; r < 64; ++r) {
        for (std::uint32_t p = 0; p < 4; ++p) {
            sparse.assure((r * run + p * 9) * page) = r;
        }
    }
    EXPECT_EQ(sparse.huge_blocks(), 0U);
    EXPECT_EQ(sparse.allocated_pages(), 64U * 4U);
    EXPECT_EQ(sparse.lookup((63 * run + 27) * page), 63U);
}

} // namespace

} // namespace huge_pages_test
