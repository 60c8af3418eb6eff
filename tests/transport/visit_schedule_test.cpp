// The server's schedule of timer visits against a reference model (each connection's due time in a map):
// random due times that move earlier and later, connections that go and slots that are reused, and a
// clock that advances, give the same connections due at each step; the wheel stays bounded. With times to
// the microsecond, a connection is never taken early and at most a millisecond late.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/transport/visit_schedule.hpp"

namespace visit_schedule_test {

namespace {

using namespace std::chrono_literals;
using ecsnet::transport::clock;
using ecsnet::transport::connection_id;
using ecsnet::transport::make_connection_id;
using ecsnet::transport::visit_schedule;

// The definition: a connection is due when its due time is at most now; taking it forgets its due time.
struct reference_schedule {
    std::map<connection_id, clock::time_point> due;
    std::set<connection_id> known; // given a due time since they began, due or taken

    std::vector<connection_id> take_due(clock::time_point now) {
        std::vector<connection_id> out;
        for (auto it = due.begin(); it != due.end();) {
            if (it->second <= now) {
                out.push_back(it->first);
                it = due.erase(it);
            } else {
                ++it;
            }
        }
        return out;
    }
};

std::vector<connection_id> taken(visit_schedule& schedule, clock::time_point now) {
    std::vector<connection_id> out;
    schedule.take_due(now, out);
    std::sort(out.begin(), out.end());
    return out;
}

TEST(VisitSchedule, DueConnectionsComeOutOnceAtTheirTime) {
    visit_schedule schedule;
    const auto t0 = clock::time_point{} + 1s;
    const auto a = make_connection_id(0, 1);
    const auto b = make_connection_id(1, 1);
    schedule.set_due(a, t0 + 10ms);
    schedule.set_due(b, t0 + 5ms);
    EXPECT_TRUE(taken(schedule, t0).empty());
    EXPECT_EQ(taken(schedule, t0 + 5ms), std::vector<connection_id>{b});
    EXPECT_TRUE(taken(schedule, t0 + 6ms).empty()); // taken: not due again until set again
    EXPECT_EQ(taken(schedule, t0 + 10ms), std::vector<connection_id>{a});
    EXPECT_TRUE(taken(schedule, t0 + 1h).empty());
}

TEST(VisitSchedule, ADueTimeMovedLaterIsNotTakenEarly) {
    visit_schedule schedule;
    const auto t0 = clock::time_point{} + 1s;
    const auto a = make_connection_id(3, 1);
    schedule.set_due(a, t0 + 10ms);
    schedule.set_due(a, t0 + 100ms); // its entry at +10 ms stays, and must not make it due then
    EXPECT_TRUE(taken(schedule, t0 + 10ms).empty());
    EXPECT_TRUE(taken(schedule, t0 + 99ms).empty());
    EXPECT_EQ(taken(schedule, t0 + 100ms), std::vector<connection_id>{a});
}

TEST(VisitSchedule, AForgottenConnectionAndItsSlotsPredecessorAreNeverDue) {
    visit_schedule schedule;
    const auto t0 = clock::time_point{} + 1s;
    const auto old_one = make_connection_id(2, 1);
    const auto new_one = make_connection_id(2, 2); // the same slot, reused
    schedule.set_due(old_one, t0 + 1ms);
    schedule.forget(old_one);
    EXPECT_TRUE(taken(schedule, t0 + 1ms).empty());
    schedule.set_due(old_one, t0 + 2ms);
    schedule.set_due(new_one, t0 + 3ms); // replaces the slot's old connection without a forget
    EXPECT_TRUE(taken(schedule, t0 + 2ms).empty());
    EXPECT_EQ(taken(schedule, t0 + 3ms), std::vector<connection_id>{new_one});
    EXPECT_EQ(schedule.scheduled(), 1U);
}

TEST(VisitSchedule, MatchesTheReferenceUnderRandomDueTimes) {
    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
        std::mt19937 rng{seed};
        visit_schedule schedule;
        reference_schedule reference;
        std::vector<std::uint32_t> generation(64, 1);
        auto now = clock::time_point{} + 1s;
        std::size_t most_entries = 0;
        for (int step = 0; step < 20'000; ++step) {
            const auto slot = static_cast<std::uint32_t>(rng() % generation.size());
            const auto id = make_connection_id(slot, generation[slot]);
            switch (rng() % 8) {
            case 0: { // the connection ends, and the slot's next one has another id
                schedule.forget(id);
                reference.due.erase(id);
                reference.known.erase(id);
                ++generation[slot];
                break;
            }
            case 1:
            case 2:
            case 3: { // a due time soon (an ack owed, a message queued), maybe now or past
                const auto when = now + std::chrono::milliseconds{static_cast<int>(rng() % 20) - 2};
                schedule.set_due(id, when);
                reference.due[id] = when;
                reference.known.insert(id);
                break;
            }
            case 4:
            case 5: { // a due time far (a keep-alive, a timeout)
                const auto when = now + std::chrono::milliseconds{50 + rng() % 5'000};
                schedule.set_due(id, when);
                reference.due[id] = when;
                reference.known.insert(id);
                break;
            }
            default: { // the timer runs
                now += std::chrono::milliseconds{rng() % 6};
                auto expected = reference.take_due(now);
                std::sort(expected.begin(), expected.end());
                ASSERT_EQ(taken(schedule, now), expected) << "seed " << seed << " step " << step;
                break;
            }
            }
            ASSERT_EQ(schedule.scheduled(), reference.known.size());
            most_entries = std::max(most_entries, schedule.entries());
        }
        // Stale entries are rebuilt away: at most 8 per connection in the schedule, plus a few.
        EXPECT_LE(most_entries, 8 * generation.size() + 65) << "seed " << seed;
    }
}

TEST(VisitSchedule, TakesAConnectionNeverEarlyAndAtMostAMillisecondLate) {
    for (std::uint32_t seed = 1; seed <= 10; ++seed) {
        std::mt19937 rng{seed};
        visit_schedule schedule;
        std::map<connection_id, clock::time_point> due;
        auto now = clock::time_point{} + 1s;
        for (int step = 0; step < 20'000; ++step) {
            const auto id = make_connection_id(static_cast<std::uint32_t>(rng() % 32), 1);
            if (rng() % 3 != 0) { // a due time anywhere within the next 20 ms, to the microsecond
                const auto when = now + std::chrono::microseconds{rng() % 20'000};
                schedule.set_due(id, when);
                due[id] = when;
                continue;
            }
            now += std::chrono::microseconds{rng() % 3'000};
            std::vector<connection_id> out;
            schedule.take_due(now, out);
            for (const auto taken_id : out) {
                ASSERT_TRUE(due.contains(taken_id)) << "taken twice, seed " << seed;
                ASSERT_LE(due[taken_id], now) << "taken early, seed " << seed;
                due.erase(taken_id);
            }
            for (const auto& [waiting, when] : due) {
                ASSERT_GT(when, now - 1ms) << "more than a millisecond late, seed " << seed;
            }
        }
    }
}

} // namespace

} // namespace visit_schedule_test
