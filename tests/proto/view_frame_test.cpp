// view_entry keeps the ticks before its own as distances (24 bytes an entry): against the plain ticks of a
// reference, every tick a view can hold reads back exactly where it matters, and where it cannot (a value
// before too old to extrapolate from, a view that carried the entity more than 65,535 ticks ago) it reads
// back as what changes nothing a client shows, or what makes the server send again rather than skip.

#include <cstdint>
#include <random>

#include <gtest/gtest.h>

#include "ecsnet/proto/entity_row.hpp"
#include "ecsnet/proto/view_frame.hpp"

namespace view_frame_test {

namespace {

using namespace ecsnet::proto;

TEST(ViewEntry, KeepsEveryTickItCanAndReadsTheOthersBackOnTheSafeSide) {
    std::mt19937 random{20261127};
    std::uniform_int_distribution<tick_type> any_tick{200'000, 0xFFFF'0000U}; // no wrap either way
    std::uniform_int_distribution<tick_type> distance{0, 40};
    std::uniform_int_distribution<tick_type> long_ago{0, 200'000};
    for (int round = 0; round < 100'000; ++round) {
        const tick_type tick = any_tick(random);
        const tick_type previous = round % 7 == 0 ? no_tick : tick - 1 - distance(random);
        const tick_type sent = tick - (round % 2 == 0 ? distance(random) : long_ago(random));
        const auto e = view_entry::make(3, 9, tick, previous, sent, 0xABCDU);

        ASSERT_EQ(e.tick, tick);
        ASSERT_EQ(e.index, 3U);
        ASSERT_EQ(e.generation, 9U);
        ASSERT_EQ(e.term, 0xABCDU);
        // The value before: exact while extrapolation may use it, none beyond (what extrapolates() says of
        // it either way: nothing).
        if (previous != no_tick && tick - previous <= max_extrapolation_ticks) {
            ASSERT_EQ(e.previous(), previous);
        } else {
            ASSERT_EQ(e.previous(), no_tick);
        }
        // The view that carried it: exact within 65,535 ticks; beyond, a later tick than the truth, so a
        // newer view's entry compares as carried since (a resend), never the reverse.
        if (tick - sent <= 0xFFFFU) {
            ASSERT_EQ(e.sent(), sent);
        } else {
            ASSERT_EQ(e.sent(), tick - 0xFFFFU);
            ASSERT_GT(e.sent(), sent);
        }
        // Advanced to a later tick: the value before is this one's, the view that carried it unchanged.
        const tick_type later = tick + 1 + distance(random);
        const auto advanced = e.advanced_to(later, 7);
        ASSERT_EQ(advanced.tick, later);
        ASSERT_EQ(advanced.term, 7U);
        ASSERT_EQ(advanced.previous(), later - tick <= max_extrapolation_ticks ? tick : no_tick);
        if (later - e.sent() <= 0xFFFFU) {
            ASSERT_EQ(advanced.sent(), e.sent());
        } else {
            ASSERT_GE(advanced.sent(), e.sent());
        }
    }
}

TEST(ViewEntry, IsTwentyFourBytesAndDefaultsToNoValueBefore) {
    EXPECT_EQ(sizeof(view_entry), 24U);
    const view_entry e;
    EXPECT_EQ(e.previous(), no_tick);
    EXPECT_EQ(e.sent(), e.tick);
}

} // namespace

} // namespace view_frame_test
