// The standard scene does what bench/RESULTS.md says it does: 10,000 entities in the arena, 20% moving at
// most 8 m/s and turning about every 2 s, 1% health changes, 0.1% spawns and despawns per tick, the same
// world for the same seed.

#include <gtest/gtest.h>

#include <cmath>

#include "ecsnet/arena/scene.hpp"

namespace ecsnet::arena::scene_test {
namespace {

TEST(Scene, RatesMatchTheSpecification) {
    registry reg;
    scene world{reg, scene_options{.seed = 5}};
    world.populate();
    ASSERT_EQ(reg.storage<Transform>().size(), 10000U);
    ASSERT_EQ(reg.storage<Health>().size(), 10000U);
    ASSERT_EQ(reg.storage<Kind>().size(), 10000U);
    double moved = 0;
    double health = 0;
    double spawned = 0;
    double despawned = 0;
    constexpr int ticks = 600;
    double max_step = 0;
    int turns = 0;
    std::vector<std::pair<entity, Transform>> before;
    for (int t = 0; t < ticks; ++t) {
        before.clear();
        for (const auto e : reg.storage<Mover>()) {
            before.emplace_back(e, reg.get<Transform>(e));
        }
        const auto r = world.step();
        moved += static_cast<double>(r.moved);
        health += static_cast<double>(r.health_changed);
        spawned += static_cast<double>(r.spawned);
        despawned += static_cast<double>(r.despawned);
        for (const auto& [e, old] : before) {
            if (!reg.valid(e)) {
                continue;
            }
            const auto& now = reg.get<Transform>(e);
            max_step = std::max(max_step, std::hypot(double(now.x - old.x), double(now.y - old.y)));
            turns += now.yaw != old.yaw ? 1 : 0;
            EXPECT_EQ(now.z, 0.0F);
            EXPECT_LE(std::fabs(now.x), arena_half_extent);
        }
    }
    EXPECT_NEAR(moved / ticks, 2000.0, 150.0);
    EXPECT_NEAR(health / ticks, 100.0, 5.0);
    EXPECT_NEAR(spawned / ticks, 10.0, 1.0);
    EXPECT_NEAR(despawned / ticks, 10.0, 1.0);
    EXPECT_LE(max_step, 8.0 / 30.0 + 1e-3);
    // About one turn (or bounce) every 2 s: 1/60 of the movers each tick.
    EXPECT_NEAR(turns / moved, 1.0 / 60.0, 0.005);
    EXPECT_NEAR(static_cast<double>(reg.storage<Transform>().size()), 10000.0, 300.0);
}

TEST(Scene, SameSeedSameWorld) {
    registry a;
    registry b;
    scene wa{a, scene_options{.entities = 500, .seed = 9}};
    scene wb{b, scene_options{.entities = 500, .seed = 9}};
    wa.populate();
    wb.populate();
    for (int t = 0; t < 100; ++t) {
        wa.step();
        wb.step();
    }
    ASSERT_EQ(a.storage<Transform>().size(), b.storage<Transform>().size());
    for (std::size_t i = 0; i < a.storage<Transform>().size(); ++i) {
        const auto e = a.storage<Transform>()[i];
        ASSERT_EQ(e, b.storage<Transform>()[i]);
        EXPECT_EQ(a.get<Transform>(e).x, b.get<Transform>(e).x);
        EXPECT_EQ(a.get<Health>(e).value, b.get<Health>(e).value);
    }
}

} // namespace
} // namespace ecsnet::arena::scene_test
