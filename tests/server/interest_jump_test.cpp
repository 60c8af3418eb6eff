// A client whose avatar jumps (a teleport, a respawn) has its relevant set recomputed before its turn in the
// schedule (interest_replicator::tick, focus_jumped):
// - one teleported client sees its new place at the next tick, not up to a relevancy period later;
// - many teleported at once are recomputed a turn's share a tick (count / period + 1) besides the clients
//   whose turn it is, every one of them within count / share ticks, so the surge spreads as the schedule
//   does;
// - an avatar that walks (less than half the hysteresis margin between two of its turns) never jumps.

#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/server_metrics.hpp"

namespace interest_jump_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

constexpr float radius = 160.0F;
constexpr float leave_radius = radius * 1.1F;

struct arena_with_clients {
    explicit arena_with_clients(std::uint32_t period)
        : world{arena_options{2'000, 11, 30, 1}}
        , history{world.replicated_schema(), world.registry(), proto::history_options{32, 30}}
        , replicator{world, history, *world.spatial(), interest_options{radius, 128, 30, period, 128, 52, 1},
                     metrics} {}

    void join(std::size_t count, float x, float y) {
        for (std::size_t i = 0; i < count; ++i) {
            const auto id = static_cast<client_id>(avatars.size() + 1);
            avatars.push_back(world.client_joined(id, "client" + std::to_string(id)));
            place(avatars.back(), x, y);
            std::optional<refusal> refused;
            clients.push_back(replicator.join(id, avatars.back(), v1::ClientHello{}, refused));
            EXPECT_NE(clients.back(), nullptr);
        }
    }
    void place(entity avatar, float x, float y) {
        world.registry().patch<arena::Transform>(avatar, [&](arena::Transform& t) {
            t.x = x;
            t.y = y;
        });
    }
    void tick() {
        ++now;
        world.update(1.0 / 30.0);
        const auto time_us = std::uint64_t{now} * 1'000'000 / 30;
        history.capture(now, time_us);
        replicator.tick(now, time_us);
    }
    // Whether client i's set was recomputed around (x, y), give or take `slack` metres: nine in ten of its
    // members, its own avatar aside, are within the leave radius of there (the others: NPCs that wrapped
    // around the arena's edge since the recomputation). The positions are the world's, as of the last tick.
    [[nodiscard]] bool set_is_around(std::size_t i, float x, float y, float slack = 1.0F) {
        std::unordered_map<std::uint32_t, std::pair<float, float>> at;
        world.registry().view<arena::Transform>().each([&at](entity e, const arena::Transform& t) {
            at[entity_traits::to_index(e)] = {t.x, t.y};
        });
        const auto own = entity_traits::to_index(avatars[i]);
        std::size_t members = 0;
        std::size_t near = 0;
        for (const auto index : replicator.relevant_of(*clients[i])) {
            const auto found = at.find(index);
            if (index == own || found == at.end()) {
                continue;
            }
            const auto [ex, ey] = found->second;
            ++members;
            near += std::hypot(ex - x, ey - y) <= leave_radius + slack ? 1 : 0;
        }
        return members >= 10 && near * 10 >= members * 9;
    }

    arena_world world;
    proto::snapshot_history history;
    server_metrics metrics;
    interest_replicator replicator;
    std::vector<entity> avatars;
    std::vector<std::unique_ptr<client_replication>> clients;
    proto::tick_type now{0};
};

TEST(InterestJumps, ATeleportedClientSeesItsNewPlaceAtTheNextTick) {
    arena_with_clients arena{30}; // a turn every second: without the rule, the old place for up to 30 ticks
    const auto area = *arena.world.spatial();
    const float west = area.min_x + 0.25F * (area.max_x - area.min_x);
    const float east = area.min_x + 0.75F * (area.max_x - area.min_x);
    const float middle = (area.min_y + area.max_y) * 0.5F;
    ASSERT_GT(east - west, 2.0F * leave_radius);
    arena.join(1, west, middle);
    for (int t = 0; t < 5; ++t) {
        arena.tick();
    }
    ASSERT_TRUE(arena.set_is_around(0, west, middle));

    arena.place(arena.avatars[0], east, middle);
    arena.tick();
    EXPECT_TRUE(arena.set_is_around(0, east, middle)) << "recomputed at the tick after the jump";
    EXPECT_EQ(arena.metrics.relevancy_jumps.value(), 1U);
    for (int t = 0; t < 40; ++t) {
        arena.tick();
    }
    EXPECT_EQ(arena.metrics.relevancy_jumps.value(), 1U) << "one jump, one early recomputation";
}

TEST(InterestJumps, ManyTeleportedAtOnceAreRecomputedATurnsShareATick) {
    constexpr std::size_t count = 40;
    constexpr std::uint32_t period = 8;
    constexpr std::size_t share = count / period + 1; // 6
    arena_with_clients arena{period};
    const auto area = *arena.world.spatial();
    const float west = area.min_x + 0.25F * (area.max_x - area.min_x);
    const float east = area.min_x + 0.75F * (area.max_x - area.min_x);
    const float middle = (area.min_y + area.max_y) * 0.5F;
    arena.join(count, west, middle);
    for (int t = 0; t < 2 * static_cast<int>(period); ++t) {
        arena.tick();
    }
    EXPECT_EQ(arena.metrics.relevancy_jumps.value(), 0U);

    for (const auto avatar : arena.avatars) {
        arena.place(avatar, east, middle);
    }
    std::size_t jumps_before = 0;
    std::size_t ticks_until_all = 0;
    for (std::size_t t = 1; t <= period; ++t) {
        arena.tick();
        const std::size_t jumps = arena.metrics.relevancy_jumps.value();
        EXPECT_LE(jumps - jumps_before, share) << "tick " << t << " after the teleport";
        jumps_before = jumps;
        std::size_t around = 0;
        for (std::size_t i = 0; i < count; ++i) {
            around += arena.set_is_around(i, east, middle) ? 1 : 0;
        }
        // Each tick at least a share of those not recomputed yet (and those whose turn it is).
        EXPECT_GE(around, std::min(count, t * share)) << "tick " << t;
        if (around == count && ticks_until_all == 0) {
            ticks_until_all = t;
        }
    }
    EXPECT_GT(ticks_until_all, 1U) << "not all in the first tick";
    EXPECT_GE(ticks_until_all, 1U);
    EXPECT_LE(ticks_until_all, (count + share - 1) / share) << "a share a tick at least";
    // Those whose turn came first were not recomputed early: fewer early recomputations than clients.
    EXPECT_LT(arena.metrics.relevancy_jumps.value(), count);
    EXPECT_GT(arena.metrics.relevancy_jumps.value(), share);
}

TEST(InterestJumps, AnAvatarWalkingNeverJumps) {
    constexpr std::uint32_t period = 8;
    arena_with_clients arena{period};
    const auto area = *arena.world.spatial();
    float x = area.min_x + 0.25F * (area.max_x - area.min_x);
    const float y = (area.min_y + area.max_y) * 0.5F;
    arena.join(3, x, y);
    // Just under half the 16 m margin per period: 7.9 m every 8 ticks, 300 ticks.
    const float step = 7.9F / static_cast<float>(period);
    for (int t = 0; t < 300; ++t) {
        x += step;
        for (const auto avatar : arena.avatars) {
            arena.place(avatar, x, y);
        }
        arena.tick();
    }
    EXPECT_EQ(arena.metrics.relevancy_jumps.value(), 0U);
    EXPECT_TRUE(arena.set_is_around(0, x, y, 8.0F)) << "recomputed at its turns, within 8 m of here";
}

} // namespace

} // namespace interest_jump_test
