// The demo arena's world: a wave of NPCs (spawn_wave) lands where it is asked, inside the arena, and its
// NPCs are the arena's own kind of NPC.

#include <cmath>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/movement.hpp>

#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/hit_target.hpp"

namespace arena_world_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

std::vector<entity> spawned_by(arena_world& world, float x, float y, float radius, std::size_t count) {
    std::unordered_set<entity> before;
    world.registry().view<arena::Transform>().each(
        [&](entity e, const arena::Transform&) { before.insert(e); });
    world.spawn_wave(x, y, radius, count);
    std::vector<entity> added;
    world.registry().view<arena::Transform>().each([&](entity e, const arena::Transform&) {
        if (!before.contains(e)) {
            added.push_back(e);
        }
    });
    return added;
}

TEST(ArenaWorld, AWaveLandsInsideItsDiscAsTheArenasOwnNpcs) {
    arena_world world{arena_options{100, 7, 30, 1}};
    const auto npcs = world.npcs();
    const auto wave = spawned_by(world, 120.0F, -40.0F, 30.0F, 500);
    ASSERT_EQ(wave.size(), 500U);
    EXPECT_EQ(world.npcs(), npcs + 500);
    double farthest = 0;
    for (const auto e : wave) {
        const auto& t = world.registry().get<arena::Transform>(e);
        farthest = std::max(farthest, std::hypot(t.x - 120.0, t.y + 40.0));
        EXPECT_TRUE(world.registry().all_of<arena::Health>(e));
        EXPECT_TRUE(world.registry().all_of<arena::Kind>(e));
        EXPECT_TRUE(world.registry().all_of<hit_target>(e));
    }
    EXPECT_LE(farthest, 30.0 + 1e-3);
    EXPECT_GT(farthest, 25.0) << "the whole disc, not its middle";

    // By the arena's edge: clamped inside, never beyond.
    const auto edge = arena::movement_edge;
    for (const auto e : spawned_by(world, static_cast<float>(edge), static_cast<float>(-edge), 100.0F, 200)) {
        const auto& t = world.registry().get<arena::Transform>(e);
        EXPECT_LE(std::abs(t.x), edge);
        EXPECT_LE(std::abs(t.y), edge);
    }
}

} // namespace

} // namespace arena_world_test
