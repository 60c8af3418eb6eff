// Views: what they yield, what each() passes, and iteration while the current entity is removed.

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace {

using ecsnet::entity;

struct Position {
    int x;
};
struct Velocity {
    int dx;
};
struct Frozen {};
struct Hidden {};

std::set<entity> collect(auto view) {
    std::set<entity> seen;
    view.each([&seen](entity e, auto&&...) { EXPECT_TRUE(seen.insert(e).second) << "visited twice"; });
    return seen;
}

TEST(View, YieldsExactlyTheEntitiesWithEveryComponentAndNoExcludedOne) {
    ecsnet::registry registry;
    std::set<entity> expected;
    for (int i = 0; i < 300; ++i) {
        const auto e = registry.create();
        if (i % 2 == 0) {
            registry.emplace<Position>(e, i);
        }
        if (i % 3 == 0) {
            registry.emplace<Velocity>(e, i);
        }
        if (i % 5 == 0) {
            registry.emplace<Frozen>(e);
        }
        if (i % 2 == 0 && i % 3 == 0 && i % 5 != 0) {
            expected.insert(e);
        }
    }
    auto view = registry.view<Position, Velocity>(ecsnet::exclude<Frozen>);
    EXPECT_EQ(collect(view), expected);
    std::set<entity> iterated(view.begin(), view.end());
    EXPECT_EQ(iterated, expected);
    for (const auto e : expected) {
        EXPECT_TRUE(view.contains(e));
        EXPECT_EQ(view.get<Position>(e).x, view.get<Velocity>(e).dx);
    }
    EXPECT_EQ(view.size_hint(), registry.storage<Velocity>().size()); // the shortest pool leads
}

TEST(View, EachPassesComponentsWithOrWithoutTheEntityAndLeavesTagsOut) {
    ecsnet::registry registry;
    const auto e = registry.create();
    registry.emplace<Position>(e, 1);
    registry.emplace<Frozen>(e);
    int calls = 0;
    registry.view<Position, Frozen>().each([&](Position& p) {
        p.x += 1;
        ++calls;
    });
    registry.view<Frozen, const Position>().each([&](entity who, const Position& p) {
        EXPECT_EQ(who, e);
        EXPECT_EQ(p.x, 2);
        ++calls;
    });
    registry.view<Frozen>().each([&](entity who) {
        EXPECT_EQ(who, e);
        ++calls;
    });
    EXPECT_EQ(calls, 3);
}

TEST(View, ComponentsWrittenThroughTheViewStick) {
    ecsnet::registry registry;
    std::vector<entity> entities;
    for (int i = 0; i < 5000; ++i) { // several blocks
        const auto e = registry.create();
        registry.emplace<Position>(e, i);
        registry.emplace<Velocity>(e, 2);
        entities.push_back(e);
    }
    registry.view<Position, const Velocity>().each([](Position& p, const Velocity& v) { p.x += v.dx; });
    for (int i = 0; i < 5000; ++i) {
        ASSERT_EQ(registry.get<Position>(entities[static_cast<std::size_t>(i)]).x, i + 2);
    }
}

// Pools filled in the same order (aligned blocks) and in different orders (probing), with a removal of
// the current entity on some visits: every other entity must still be visited exactly once.
void check_removal_during_each(bool aligned, bool destroy) {
    ecsnet::registry registry;
    std::vector<entity> entities;
    for (int i = 0; i < 3000; ++i) {
        entities.push_back(registry.create());
    }
    for (std::size_t i = 0; i < entities.size(); ++i) {
        registry.emplace<Position>(entities[i], static_cast<int>(i));
    }
    for (std::size_t k = 0; k < entities.size(); ++k) {
        const auto i = aligned ? k : entities.size() - 1 - k;
        registry.emplace<Velocity>(entities[i], static_cast<int>(i));
    }
    std::multiset<entity> visited;
    registry.view<Position, Velocity>().each([&](entity e, Position& p, Velocity&) {
        visited.insert(e);
        if (p.x % 3 == 0) {
            if (destroy) {
                registry.destroy(e);
            } else {
                registry.remove<Position>(e);
            }
        }
    });
    EXPECT_EQ(visited.size(), entities.size());
    EXPECT_EQ(std::set<entity>(visited.begin(), visited.end()).size(), entities.size());
    EXPECT_EQ(registry.storage<Position>().size(), entities.size() - 1000);
}

TEST(View, RemovingTheCurrentEntityDuringEachIsSafe) {
    check_removal_during_each(true, false);
    check_removal_during_each(false, false);
    check_removal_during_each(true, true);
    check_removal_during_each(false, true);
}

TEST(View, RemovingTheCurrentEntityDuringRangeForIsSafe) {
    ecsnet::registry registry;
    for (int i = 0; i < 100; ++i) {
        registry.emplace<Position>(registry.create(), i);
    }
    int visited = 0;
    for (const auto e : registry.view<Position>()) {
        ++visited;
        registry.destroy(e);
    }
    EXPECT_EQ(visited, 100);
    EXPECT_EQ(registry.alive(), 0U);
}

TEST(View, EmptyAndMissingPools) {
    ecsnet::registry registry;
    int calls = 0;
    registry.view<Position, Hidden>().each([&calls](entity, Position&) { ++calls; });
    EXPECT_EQ(calls, 0);
    auto view = registry.view<Position>();
    EXPECT_EQ(view.begin(), view.end());
}

} // namespace
