// snapshot_stride: the snapshot rate an overloaded server falls back to. It rises while the ticks overrun
// or fill the period, comes back once the server has caught up, never flaps on a steady load, backs off
// where its estimate misses, and at any stride gives every client exactly one turn in `stride` ticks, the
// clients spread evenly over them.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "ecsnet/server/snapshot_stride.hpp"

namespace ecsnet::server::snapshot_stride_test {
namespace {

constexpr std::size_t ticks_per_second = 30;

snapshot_stride make(std::uint32_t max_stride = 4) {
    return snapshot_stride{snapshot_stride_options{.max_stride = max_stride}, ticks_per_second};
}

// Feeds one window (a second) of ticks at `load` (the last second's mean tick duration against the period, as
// tick_load measures it), the first `overruns` of them overrunning; returns how many times the stride changed
// (at most once, at the window's last tick). `snapshot_load`, the snapshots' part of the load, is all of it
// unless given.
int second_of(snapshot_stride& stride, double load, std::size_t overruns = 0, double snapshot_load = -1.0) {
    int changes = 0;
    for (std::size_t t = 0; t < ticks_per_second; ++t) {
        changes += stride.tick_ended(t < overruns, load, snapshot_load < 0.0 ? load : snapshot_load) ? 1 : 0;
    }
    return changes;
}

TEST(SnapshotStride, StaysAtOneWhileTheTicksFit) {
    auto stride = make();
    for (int s = 0; s < 20; ++s) {
        EXPECT_EQ(second_of(stride, 0.85, 2), 0); // busy, with a hiccup or two a second
    }
    EXPECT_EQ(stride.stride(), 1U);
    EXPECT_NEAR(stride.last_load(), 0.85, 1e-9);
}

TEST(SnapshotStride, RisesWhenTheTicksFillThePeriodOrOverrunUpToItsMaximum) {
    auto by_load = make(3);
    EXPECT_EQ(second_of(by_load, 0.95), 1);
    EXPECT_EQ(by_load.stride(), 2U);
    EXPECT_EQ(second_of(by_load, 0.95), 1);
    EXPECT_EQ(by_load.stride(), 3U);
    EXPECT_EQ(second_of(by_load, 0.95), 0); // its maximum
    EXPECT_EQ(by_load.stride(), 3U);

    auto by_overruns = make();
    EXPECT_EQ(second_of(by_overruns, 0.5, 7), 0); // 7 of 30: under a quarter
    EXPECT_EQ(second_of(by_overruns, 0.5, 8), 1); // 8 of 30: over
    EXPECT_EQ(by_overruns.stride(), 2U);

    // Nothing is decided before a window has ended.
    auto early = make();
    for (std::size_t t = 0; t + 1 < ticks_per_second; ++t) {
        EXPECT_FALSE(early.tick_ended(true, 2.0, 1.0));
    }
    EXPECT_TRUE(early.tick_ended(true, 2.0, 1.0));
}

TEST(SnapshotStride, ComesBackOnlyOnceTheLowerStrideWouldFit) {
    auto stride = make();
    second_of(stride, 1.2, 30);
    second_of(stride, 1.2, 30);
    ASSERT_EQ(stride.stride(), 3U);
    // At stride 3 a load of 0.5 would be 0.75 at stride 2 (over 0.7): it stays.
    EXPECT_EQ(second_of(stride, 0.5), 0);
    EXPECT_EQ(stride.stride(), 3U);
    // 0.45 would be 0.675: down to 2. Still overrunning now and then: it stays at 2.
    EXPECT_EQ(second_of(stride, 0.45), 1);
    EXPECT_EQ(stride.stride(), 2U);
    EXPECT_EQ(second_of(stride, 0.30, 2), 0);
    EXPECT_EQ(stride.stride(), 2U);
    // One overrun in a second is a hiccup: down to 1.
    EXPECT_EQ(second_of(stride, 0.30, 1), 1);
    EXPECT_EQ(stride.stride(), 1U);
}

// Only the snapshots' part of the tick grows back one stride lower: a server at stride 2 whose ticks take
// 42% of the period, 22 points of it writing and sending snapshots, would take 64% at stride 1 and comes
// down (scaling the whole load, 84%, kept it at 2); one whose snapshots are 30 points of 42 would take 72%.
TEST(SnapshotStride, ComesBackByWhatTheSnapshotsWouldCostOneStrideLower) {
    auto split = make();
    second_of(split, 1.2, 30);
    ASSERT_EQ(split.stride(), 2U);
    EXPECT_NEAR(split.load_one_lower(0.42, 0.22), 0.64, 1e-9);
    EXPECT_NEAR(split.load_one_lower(0.42, 0.30), 0.72, 1e-9);
    EXPECT_NEAR(split.load_one_lower(0.42, 0.90), 0.84, 1e-9); // a part above the whole counts as the whole
    EXPECT_NEAR(split.load_one_lower(0.42, -1.0), 0.42, 1e-9); // and one below 0 as none
    EXPECT_EQ(second_of(split, 0.42, 0, 0.30), 0);
    EXPECT_EQ(split.stride(), 2U);
    EXPECT_EQ(second_of(split, 0.42, 0, 0.22), 1);
    EXPECT_EQ(split.stride(), 1U);
    EXPECT_NEAR(split.load_one_lower(0.42, 0.22), 0.42, 1e-9); // nothing lower than 1
}

// A box whose ticks fit at stride 2 and whose estimate says stride 1 would too, but where stride 1 overruns
// (what the tick's own time does not show: the cores shared with other processes, the datagrams received
// between ticks). Each flap doubles how long stride 2 then holds, up to the maximum: over five minutes the
// server spends a handful of seconds at stride 1 instead of half of them, and still tries now and then.
// Once a lower stride holds for the calm period, the backoff is forgotten.
TEST(SnapshotStride, FlapsBackOffExponentiallyUntilALowerStrideHolds) {
    auto stride = make(2);
    const auto saturated_second = [&] {
        return stride.stride() == 1 ? second_of(stride, 0.8, ticks_per_second, 0.4)
                                    : second_of(stride, 0.35, 0, 0.15); // 0.5 expected at stride 1
    };
    int lowerings = 0;
    int seconds_at_one = 0;
    for (int s = 0; s < 300; ++s) {
        const auto before = stride.stride();
        saturated_second();
        lowerings += stride.stride() < before ? 1 : 0;
        seconds_at_one += stride.stride() == 1 ? 1 : 0;
    }
    // Holds of 1, 2, 4, ... 64 windows: 9 lowerings in 300 windows (150 without the backoff).
    EXPECT_GE(lowerings, 8);
    EXPECT_LE(lowerings, 10);
    EXPECT_LE(seconds_at_one, 10);
    EXPECT_EQ(stride.hold_windows(), 64U);

    // The load falls: stride 1 fits. It comes down within the hold and stays; after the calm period the
    // backoff is back to one window.
    int waited = 0;
    while (stride.stride() == 2 && waited < 64) {
        second_of(stride, 0.3, 0, 0.15);
        ++waited;
    }
    ASSERT_EQ(stride.stride(), 1U);
    for (int s = 0; s < 30; ++s) {
        EXPECT_EQ(second_of(stride, 0.45, 0, 0.3), 0);
    }
    EXPECT_EQ(stride.hold_windows(), 1U);
    // Saturated again: up, then down after one window, then the backoff starts over at 2.
    EXPECT_EQ(saturated_second(), 1);
    EXPECT_EQ(stride.stride(), 2U);
    EXPECT_EQ(saturated_second(), 1);
    EXPECT_EQ(stride.stride(), 1U);
    EXPECT_EQ(saturated_second(), 1);
    EXPECT_EQ(stride.hold_windows(), 2U);
}

TEST(SnapshotStride, AMaximumOfOneNeverLowersTheRate) {
    auto stride = make(1);
    for (int s = 0; s < 10; ++s) {
        EXPECT_EQ(second_of(stride, 3.0, 30), 0);
    }
    EXPECT_EQ(stride.stride(), 1U);
    for (std::uint64_t tick = 0; tick < 10; ++tick) {
        EXPECT_TRUE(stride.sends_at(tick, tick * 7 + 3));
    }
}

// A server whose tick costs `fixed` plus `per_snapshot` divided by the stride (of the period): on such a
// steady load the stride moves one way only, then holds, and where it settles the ticks fit, and the
// stride one lower would not (told the snapshots' part, or only the whole load, which overstates it).
TEST(SnapshotStride, NeverFlapsOnASteadyLoad) {
    std::mt19937_64 random{20261128};
    std::uniform_real_distribution<double> share{0.0, 1.5};
    for (int trial = 0; trial < 4000; ++trial) {
        const bool told_the_split = trial % 2 == 0;
        const double fixed = share(random) / 3.0;
        const double per_snapshot = share(random);
        const double burst = share(random) * 2.0; // a transient overload first, or none
        auto stride = make();
        int direction = 0;
        int reversals = 0;
        for (int s = 0; s < 40; ++s) {
            const double snapshots = per_snapshot / stride.stride();
            const double load = fixed + snapshots + (s < 3 ? burst : 0.0);
            const auto before = stride.stride();
            second_of(stride, load, load > 1.0 ? ticks_per_second : 0, told_the_split ? snapshots : load);
            if (s < 3 || stride.stride() == before) {
                continue;
            }
            const int moved = stride.stride() > before ? 1 : -1;
            reversals += direction != 0 && moved != direction ? 1 : 0;
            direction = moved;
        }
        ASSERT_EQ(reversals, 0) << "fixed " << fixed << " per snapshot " << per_snapshot;
        const double settled = fixed + per_snapshot / stride.stride();
        if (stride.stride() < 4) {
            ASSERT_LE(settled, 0.9) << "fixed " << fixed << " per snapshot " << per_snapshot;
        }
        if (stride.stride() > 1) { // it would not fit one stride lower (exactly, when told the split)
            const double lower = told_the_split ? fixed + per_snapshot / (stride.stride() - 1)
                                                : (fixed + per_snapshot / stride.stride()) * stride.stride() /
                                                      (stride.stride() - 1);
            ASSERT_GE(lower, 0.7) << "fixed " << fixed << " per snapshot " << per_snapshot;
        }
    }
}

TEST(SnapshotStride, EveryClientGetsOneTurnInEachStrideOfTicksSpreadEvenly) {
    auto stride = make();
    for (std::uint32_t expected = 1; expected <= 4; ++expected) {
        ASSERT_EQ(stride.stride(), expected);
        constexpr std::uint64_t clients = 1000;
        std::vector<std::uint64_t> per_tick(expected, 0);
        for (std::uint64_t client = 1; client <= clients; ++client) {
            for (std::uint64_t first = 100; first < 100 + 3 * expected; first += expected) {
                int turns = 0;
                for (std::uint64_t tick = first; tick < first + expected; ++tick) {
                    if (stride.sends_at(tick, client)) {
                        ++turns;
                        if (first == 100) {
                            ++per_tick[tick - first];
                        }
                    }
                }
                ASSERT_EQ(turns, 1) << "client " << client << " stride " << expected;
            }
        }
        for (const auto count : per_tick) { // 1000 clients over `expected` ticks: as even as they divide
            EXPECT_LE(count, clients / expected + 1);
            EXPECT_GE(count, clients / expected);
        }
        second_of(stride, 2.0, ticks_per_second);
    }
}

} // namespace
} // namespace ecsnet::server::snapshot_stride_test
