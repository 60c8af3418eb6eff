// The startup line about the heap's pages: GLIBC_TUNABLES read as glibc reads it (the last setting of a
// name wins, other tunables beside it), the kernel's mode from the bracketed word, and each case's words.

#include <gtest/gtest.h>

#include "ecsnet/server/heap_pages.hpp"

namespace heap_pages_test {

namespace {

using ecsnet::server::describe;
using ecsnet::server::read_heap_pages;

constexpr const char* madvise_mode = "always [madvise] never\n";

TEST(HeapPages, TheTunableAmongOthersAndTheKernelsBracketedMode) {
    EXPECT_TRUE(read_heap_pages("glibc.malloc.hugetlb=1", madvise_mode).on());
    EXPECT_TRUE(read_heap_pages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2", madvise_mode).on());
    EXPECT_TRUE(read_heap_pages("glibc.malloc.hugetlb=1", "[always] madvise never").on());
    EXPECT_EQ(read_heap_pages(nullptr, madvise_mode).thp_mode, "madvise");

    EXPECT_FALSE(read_heap_pages(nullptr, madvise_mode).asked);
    EXPECT_FALSE(read_heap_pages("", madvise_mode).asked);
    EXPECT_FALSE(read_heap_pages("glibc.malloc.hugetlb=0", madvise_mode).asked);
    EXPECT_FALSE(read_heap_pages("glibc.malloc.hugetlb=1:glibc.malloc.hugetlb=0", madvise_mode).asked)
        << "the last setting wins";
    EXPECT_FALSE(read_heap_pages("xglibc.malloc.hugetlb=1", madvise_mode).asked);
    EXPECT_FALSE(read_heap_pages("glibc.malloc.hugetlb=1", "always madvise [never]").on());
    EXPECT_FALSE(read_heap_pages("glibc.malloc.hugetlb=1", "").on()) << "an unreadable mode is not on";
    EXPECT_EQ(read_heap_pages("glibc.malloc.hugetlb=1", "[madvise").thp_mode, "");
}

TEST(HeapPages, EachCaseSaysWhatHoldsAndWhatToSet) {
    EXPECT_NE(describe(read_heap_pages(nullptr, madvise_mode)).find("GLIBC_TUNABLES=glibc.malloc.hugetlb=1"),
              std::string::npos);
    EXPECT_NE(
        describe(read_heap_pages("glibc.malloc.hugetlb=1", madvise_mode)).find("on transparent huge pages"),
        std::string::npos);
    EXPECT_NE(describe(read_heap_pages("glibc.malloc.hugetlb=1", "always madvise [never]")).find("'never'"),
              std::string::npos);
    EXPECT_NE(describe(read_heap_pages("glibc.malloc.hugetlb=1", "")).find("unknown"), std::string::npos);
}

} // namespace

} // namespace heap_pages_test
