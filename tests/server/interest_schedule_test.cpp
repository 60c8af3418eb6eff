// staggered_schedule (issue 15): every client recomputes once per period, and the per-tick count is flat.

#include <ecsnet/server/interest/staggered_schedule.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace interest_schedule_test {

namespace {

using ecsnet::server::interest::staggered_schedule;

TEST(StaggeredSchedule, EveryClientOncePerPeriodAndAFlatLoad) {
    for (std::uint32_t period = 1; period <= 6; ++period) {
        const staggered_schedule schedule(period);
        for (std::size_t count : {0u, 1u, 5u, 999u, 1000u, 1001u}) {
            std::vector<std::uint64_t> last(count, ~std::uint64_t{0});
            std::size_t lightest = count;
            std::size_t heaviest = 0;
            for (std::uint64_t tick = 1000; tick < 1000 + 4 * period; ++tick) {
                std::size_t due = 0;
                std::size_t previous = 0;
                schedule.for_each_due(tick, count, [&](std::size_t client) {
                    EXPECT_TRUE(schedule.due(tick, client));
                    EXPECT_TRUE(due == 0 || client > previous) << "increasing order";
                    if (last[client] != ~std::uint64_t{0}) {
                        EXPECT_EQ(tick - last[client], period) << "client " << client;
                    }
                    last[client] = tick;
                    previous = client;
                    ++due;
                });
                EXPECT_EQ(due, schedule.due_count(tick, count));
                lightest = std::min(lightest, due);
                heaviest = std::max(heaviest, due);
            }
            EXPECT_LE(heaviest - lightest, 1u) << "period " << period << " clients " << count;
            EXPECT_TRUE(std::none_of(last.begin(), last.end(), [](auto t) { return t == ~std::uint64_t{0}; }))
                << "a client was never due";
        }
    }
    EXPECT_THROW(staggered_schedule(0), std::invalid_argument);
}

} // namespace

} // namespace interest_schedule_test
