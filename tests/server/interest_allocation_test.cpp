// Interest management in steady state allocates nothing (issue 15): once a scene has been played once,
// playing it again makes no allocation in client_relevancy::update or
// priority_selector::accumulate_and_select. (The grid itself may reallocate a cell whose population swings by
// 4x: amortized O(1), not counted here.)

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/server/interest/client_relevancy.hpp>
#include <ecsnet/server/interest/distance_weight.hpp>
#include <ecsnet/server/interest/priority_selector.hpp>
#include <ecsnet/server/interest/spatial_grid.hpp>

#include "allocation_counter.hpp"

namespace interest_allocation_test {

namespace {

using namespace ecsnet::server::interest;

TEST(InterestSteadyState, ReplayingASceneAllocatesNothing) {
    constexpr id_type ids = 3000;
    constexpr std::size_t clients = 60;
    constexpr int ticks = 60;
    constexpr float side = 1000;
    // The scene: each tick 20% of the ids step 4 m, the avatars (ids 0..59) every tick; every client is
    // centered on its avatar, so its set keeps changing.
    std::mt19937 rng{11};
    std::uniform_real_distribution<float> coordinate{0, side};
    std::uniform_real_distribution<float> angle{0, 6.2831853f};
    std::vector<std::vector<grid_position>> frames(ticks, std::vector<grid_position>(ids));
    for (auto& p : frames[0]) {
        p = {coordinate(rng), coordinate(rng)};
    }
    for (int t = 1; t < ticks; ++t) {
        frames[t] = frames[t - 1];
        for (auto& p : frames[t]) {
            if (rng() % 5 == 0 || &p - frames[t].data() < static_cast<std::ptrdiff_t>(clients)) {
                const float a = angle(rng);
                p.x += 4 * std::cos(a);
                p.y += 4 * std::sin(a);
            }
        }
    }
    spatial_grid grid({0, 0, side, side}, 50);
    for (id_type id = 0; id < ids; ++id) {
        grid.insert(id, frames[0][id].x, frames[0][id].y);
    }
    std::vector<client_relevancy> relevancy(clients, client_relevancy(16));
    priority_selector selector({1, 10});
    const distance_weight weight(20, {1, 10});
    relevancy_changes changes;
    std::vector<pending_send> pending;
    std::vector<priority_candidate> chosen;
    std::size_t updates = 0;
    std::size_t sent = 0;
    std::size_t churn = 0;

    const auto play = [&](bool count) {
        for (int step = 0; step < 2 * ticks; ++step) { // forth and back: a replay sees the same states
            const auto& frame = frames[static_cast<std::size_t>(step < ticks ? step : 2 * ticks - 1 - step)];
            for (id_type id = 0; id < ids; ++id) {
                grid.move(id, frame[id].x, frame[id].y);
            }
            ecsnet::test_support::count_allocations(count);
            for (id_type c = 0; c < clients; ++c) {
                changes.clear();
                const id_type avatar[] = {c};
                relevancy[c].update(grid, frame[c].x, frame[c].y, 80, 100, avatar, changes);
                churn += changes.entered.size() + changes.left.size();
                pending.clear();
                const auto members = relevancy[c].members();
                for (std::uint32_t slot = 0; slot < members.size(); ++slot) {
                    const auto p = grid.position_of(members[slot]);
                    const float d2 = distance_squared(frame[c].x, frame[c].y, p.x, p.y);
                    pending.push_back({slot, 100 + members[slot] % 300, weight(d2)});
                }
                selector.accumulate_and_select(relevancy[c].accumulators(), pending, 4000, chosen);
                sent += chosen.size();
                ++updates;
            }
            ecsnet::test_support::count_allocations(false);
        }
    };
    play(false);
    play(false); // the scene played twice: every buffer has grown to the largest it will need
    ecsnet::test_support::reset_allocation_count();
    churn = 0;
    play(true);
    EXPECT_EQ(ecsnet::test_support::allocations_counted(), 0u) << "over " << updates / 3 << " updates";
    EXPECT_GT(churn, 1000u) << "ids must enter and leave during the replay, or it proves little";
    EXPECT_GT(sent, 0u);
    std::size_t members = 0;
    for (const auto& r : relevancy) {
        members += r.size();
    }
    EXPECT_GT(members / clients, 30u) << "the scene should give each client a real set";
}

} // namespace

} // namespace interest_allocation_test
