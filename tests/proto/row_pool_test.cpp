// row_pool (the rows a view mirror's views share): slots counted and recycled, rows kept in place through
// a reserved batch, and a pool reserved for its worst case on every apply moving only now and then.

#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/proto/row_pool.hpp"

namespace row_pool_test {

namespace {

using ecsnet::proto::row_pool;

TEST(RowPool, SlotsAreCountedAndRecycled) {
    row_pool pool{3};
    const std::uint32_t a_row[] = {1, 2, 3};
    const std::uint32_t b_row[] = {4, 5, 6};
    const auto a = pool.allocate(a_row, 11);
    const auto b = pool.allocate(b_row, 22);
    EXPECT_EQ(pool.used(), 2U);
    EXPECT_EQ(pool.row(b)[2], 6U);
    EXPECT_EQ(pool.term(a), 11U);
    pool.retain(a);
    pool.release(a);
    EXPECT_EQ(pool.used(), 2U); // still referred to once
    pool.release(a);
    EXPECT_EQ(pool.used(), 1U);
    const auto c = pool.allocate(b_row, 33);
    EXPECT_EQ(c, a); // the freed slot again
    EXPECT_EQ(pool.row(c)[0], 4U);
    pool.retain(row_pool::none); // no-ops
    pool.release(row_pool::none);
    EXPECT_EQ(pool.used(), 2U);
}

TEST(RowPool, RowsStayInPlaceThroughAReservedBatch) {
    row_pool pool{4};
    const std::uint32_t row[] = {7, 8, 9, 10};
    const auto first = pool.allocate(row, 1);
    pool.reserve(100);
    const auto* before = pool.row(first);
    for (int i = 0; i < 100; ++i) {
        static_cast<void>(pool.allocate(row, 1));
    }
    EXPECT_EQ(pool.row(first), before);
}

// A view mirror reserves for its worst case (twice the new view's size) before every apply, while the slots
// in use creep up: the pool grows geometrically, so it moves (copying every row) a few times, not on every
// apply as with reserves of the exact size asked.
TEST(RowPool, WorstCaseReservesOnEveryApplyMoveThePoolRarely) {
    row_pool pool{10};
    const std::vector<std::uint32_t> row(10, 5);
    std::vector<std::uint32_t> live;
    const std::uint32_t* data = nullptr;
    int moves = 0;
    for (int apply = 0; apply < 300; ++apply) {
        pool.reserve(100);
        if (pool.used() > 0 && pool.row(0) != data) {
            ++moves;
        }
        for (int i = 0; i < 50; ++i) {
            live.push_back(pool.allocate(row.data(), 1));
        }
        for (int i = 0; i < 49; ++i) { // one more slot in use after each apply
            pool.release(live.back());
            live.pop_back();
        }
        data = pool.row(0);
    }
    EXPECT_EQ(pool.used(), 300U);
    EXPECT_LE(moves, 12);
}

} // namespace

} // namespace row_pool_test
