// The registry: entity lifecycle, component operations, signals, bitsets, capacities and misuse.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace {

using ecsnet::entity;

struct Position {
    float x, y;
};
struct Velocity {
    float dx, dy;
};
struct Name {
    std::string value;
};
struct Frozen {};

template<int I>
struct Kind {
    int value;
};

TEST(Registry, CreateDestroyAndRecycleWithANewVersion) {
    ecsnet::registry registry;
    const auto a = registry.create();
    const auto b = registry.create();
    EXPECT_NE(a, b);
    EXPECT_TRUE(registry.valid(a));
    EXPECT_EQ(registry.alive(), 2U);
    registry.destroy(a);
    EXPECT_FALSE(registry.valid(a));
    EXPECT_EQ(registry.alive(), 1U);
    EXPECT_EQ(registry.current(ecsnet::to_index(a)), ecsnet::null_entity);
    const auto c = registry.create(); // recycles a's index
    EXPECT_EQ(ecsnet::to_index(c), ecsnet::to_index(a));
    EXPECT_EQ(ecsnet::to_version(c), ecsnet::to_version(a) + 1);
    EXPECT_FALSE(registry.valid(a)); // the stale identifier stays invalid
    EXPECT_TRUE(registry.valid(c));
    EXPECT_EQ(registry.current(ecsnet::to_index(a)), c);
    EXPECT_FALSE(registry.valid(ecsnet::null_entity));
}

TEST(Registry, VersionsWrapAfterFourThousandReuses) {
    ecsnet::registry registry;
    auto e = registry.create();
    const auto first = e;
    for (std::uint32_t i = 0; i <= ecsnet::entity_traits::version_mask; ++i) {
        registry.destroy(e);
        e = registry.create();
        ASSERT_EQ(ecsnet::to_index(e), ecsnet::to_index(first));
    }
    EXPECT_EQ(ecsnet::to_version(e), 0U); // 4096 generations later, the version wrapped
}

TEST(Registry, ComponentOperations) {
    ecsnet::registry registry;
    const auto e = registry.create();
    auto& p = registry.emplace<Position>(e, 1.F, 2.F);
    EXPECT_EQ(p.x, 1.F);
    registry.emplace<Frozen>(e);
    EXPECT_TRUE((registry.all_of<Position, Frozen>(e)));
    EXPECT_FALSE((registry.all_of<Position, Velocity>(e)));
    EXPECT_TRUE((registry.any_of<Velocity, Frozen>(e)));
    EXPECT_FALSE(registry.any_of<Velocity>(e));
    EXPECT_EQ(registry.try_get<Velocity>(e), nullptr);
    EXPECT_EQ(registry.try_get<Position>(e)->y, 2.F);

    registry.patch<Position>(e, [](Position& pos) { pos.x = 10.F; });
    EXPECT_EQ(registry.get<Position>(e).x, 10.F);
    registry.replace<Position>(e, 3.F, 4.F);
    EXPECT_EQ(registry.get<Position>(e).y, 4.F);
    registry.emplace_or_replace<Velocity>(e, 1.F, 1.F);
    registry.emplace_or_replace<Velocity>(e, 2.F, 2.F);
    EXPECT_EQ(registry.get<Velocity>(e).dx, 2.F);
    EXPECT_EQ(registry.get_or_emplace<Name>(e, "crate").value, "crate");
    EXPECT_EQ(registry.get_or_emplace<Name>(e, "other").value, "crate");

    auto [pos, vel] = registry.get<Position, Velocity>(e);
    EXPECT_EQ(pos.x + vel.dx, 5.F);
    const auto& constant = std::as_const(registry);
    EXPECT_EQ(constant.get<Position>(e).x, 3.F);
    static_assert(std::is_const_v<std::remove_reference_t<decltype(constant.get<Position>(e))>>);

    EXPECT_EQ((registry.remove<Velocity, Name>(e)), 2U);
    EXPECT_EQ(registry.remove<Velocity>(e), 0U);
    registry.erase<Frozen>(e);
    EXPECT_FALSE(registry.orphan(e));
    registry.erase<Position>(e);
    EXPECT_TRUE(registry.orphan(e));
}

TEST(Registry, DestroyRemovesEveryComponent) {
    ecsnet::registry registry;
    const auto a = registry.create();
    const auto b = registry.create();
    registry.emplace<Position>(a, 1.F, 1.F);
    registry.emplace<Name>(a, "a");
    registry.emplace<Position>(b, 2.F, 2.F);
    registry.destroy(a);
    EXPECT_EQ(registry.storage<Position>().size(), 1U);
    EXPECT_EQ(registry.storage<Name>().size(), 0U);
    EXPECT_EQ(registry.get<Position>(b).x, 2.F);
    EXPECT_EQ(registry.try_get<Position>(a), nullptr); // stale: no component
}

TEST(Registry, StaleIdentifierNeverReachesTheNewOccupantsComponents) {
    ecsnet::registry registry;
    const auto old = registry.create();
    registry.emplace<Position>(old, 1.F, 1.F);
    registry.destroy(old);
    const auto fresh = registry.create();
    registry.emplace<Position>(fresh, 9.F, 9.F);
    ASSERT_EQ(ecsnet::to_index(old), ecsnet::to_index(fresh));
    EXPECT_FALSE(registry.valid(old));
    EXPECT_EQ(registry.try_get<Position>(old), nullptr);
}

TEST(Registry, SignalsFireAroundConstructionUpdateAndDestruction) {
    ecsnet::registry registry;
    std::vector<std::pair<char, entity>> events;
    float seen_on_destroy = 0.F;
    registry.on_construct<Position>().connect([&](ecsnet::registry& r, entity e) {
        events.emplace_back('c', e);
        EXPECT_TRUE(r.all_of<Position>(e)); // after the component exists
    });
    registry.on_update<Position>().connect([&](ecsnet::registry&, entity e) { events.emplace_back('u', e); });
    registry.on_destroy<Position>().connect([&](ecsnet::registry& r, entity e) {
        events.emplace_back('d', e);
        seen_on_destroy = r.get<Position>(e).x; // before it goes
    });
    const auto e = registry.create();
    registry.emplace<Position>(e, 1.F, 0.F);
    registry.patch<Position>(e, [](Position& p) { p.x = 5.F; });
    registry.replace<Position>(e, 6.F, 0.F);
    registry.destroy(e);
    EXPECT_EQ(events, (std::vector<std::pair<char, entity>>{{'c', e}, {'u', e}, {'u', e}, {'d', e}}));
    EXPECT_EQ(seen_on_destroy, 6.F);
}

TEST(Registry, DestroyCompletesEvenIfAListenerAddsComponents) {
    ecsnet::registry registry;
    registry.on_destroy<Position>().connect(
        [](ecsnet::registry& r, entity e) { r.emplace<Name>(e, "late"); });
    const auto e = registry.create();
    registry.emplace<Position>(e, 0.F, 0.F);
    registry.destroy(e);
    EXPECT_FALSE(registry.valid(e));
    EXPECT_TRUE(registry.storage<Name>().empty());
    EXPECT_TRUE(registry.storage<Position>().empty());
}

TEST(Registry, DestroySkipsAComponentAListenerAlreadyRemoved) {
    ecsnet::registry registry;
    int name_destroyed = 0;
    registry.on_destroy<Position>().connect([](ecsnet::registry& r, entity e) { r.remove<Name>(e); });
    registry.on_destroy<Name>().connect([&name_destroyed](ecsnet::registry& r, entity e) {
        ++name_destroyed;
        EXPECT_TRUE(r.all_of<Name>(e)); // only ever called for a component that is there
    });
    const auto e = registry.create();
    registry.emplace<Position>(e, 0.F, 0.F); // Position's bit comes first: its listener runs first
    registry.emplace<Name>(e, "gone early");
    registry.destroy(e);
    EXPECT_EQ(name_destroyed, 1); // once, through remove<Name>, not again by destroy
    EXPECT_TRUE(registry.storage<Name>().empty());
}

TEST(Registry, ClearOfATypeAndOfEverything) {
    ecsnet::registry registry;
    int destroyed = 0;
    registry.on_destroy<Name>().connect([&destroyed](ecsnet::registry&, entity) { ++destroyed; });
    std::vector<entity> entities;
    for (int i = 0; i < 10; ++i) {
        const auto e = registry.create();
        registry.emplace<Position>(e, float(i), 0.F);
        registry.emplace<Name>(e, std::to_string(i));
        entities.push_back(e);
    }
    registry.clear<Position>();
    EXPECT_TRUE(registry.storage<Position>().empty());
    EXPECT_FALSE(registry.any_of<Position>(entities[3]));
    EXPECT_TRUE(registry.all_of<Name>(entities[3]));
    registry.clear();
    EXPECT_EQ(destroyed, 10);
    EXPECT_EQ(registry.alive(), 0U);
    for (const auto e : entities) {
        EXPECT_FALSE(registry.valid(e));
    }
    // Everything is reusable, with new versions.
    const auto again = registry.create();
    EXPECT_EQ(ecsnet::to_index(again), 0U);
    EXPECT_EQ(ecsnet::to_version(again), 1U);
    EXPECT_TRUE(registry.orphan(again));
}

template<int... I>
void emplace_all(ecsnet::registry& registry, entity e, std::integer_sequence<int, I...>) {
    (registry.emplace<Kind<I>>(e, I), ...);
}
template<int... I>
bool has_all(ecsnet::registry& registry, entity e, std::integer_sequence<int, I...>) {
    return (registry.all_of<Kind<I>>(e) && ...) && ((registry.get<Kind<I>>(e).value == I) && ...);
}

TEST(Registry, MoreThanSixtyFourComponentTypes) {
    ecsnet::registry registry;
    const auto early = registry.create();
    registry.emplace<Position>(early, 7.F, 7.F);
    const auto e = registry.create();
    emplace_all(registry, e, std::make_integer_sequence<int, 70>{}); // widens the bitsets past one word
    EXPECT_EQ(registry.pool_count(), 71U);
    EXPECT_TRUE(has_all(registry, e, std::make_integer_sequence<int, 70>{}));
    EXPECT_TRUE(registry.all_of<Position>(early)); // bits of the first word survived the widening
    EXPECT_FALSE(registry.any_of<Kind<69>>(early));
    registry.destroy(e);
    for (std::size_t i = 0; i < registry.pool_count(); ++i) {
        if (registry.pool_name(i) != ecsnet::type_name<Position>()) {
            EXPECT_TRUE(registry.pool_at(i).empty()) << registry.pool_name(i);
        }
    }
}

TEST(Registry, FixedCapacityRegistry) {
    ecsnet::basic_registry<ecsnet::fixed_capacity<3>> registry;
    const auto a = registry.create();
    static_cast<void>(registry.create());
    static_cast<void>(registry.create());
    EXPECT_THROW(static_cast<void>(registry.create()), ecsnet::capacity_error);
    registry.emplace<Position>(a, 1.F, 2.F);
    registry.destroy(a);
    const auto b = registry.create(); // a freed slot is reusable
    EXPECT_EQ(ecsnet::to_index(b), ecsnet::to_index(a));
    EXPECT_FALSE(registry.all_of<Position>(b));
}

TEST(Registry, TypeNamesAreReadable) {
    EXPECT_NE(ecsnet::type_name<Position>().find("Position"), std::string_view::npos);
    EXPECT_EQ(ecsnet::type_name<int>(), "int");
    EXPECT_NE(ecsnet::type_id<Position>(), ecsnet::type_id<Velocity>());
    EXPECT_EQ(ecsnet::type_id<const Position&>(), ecsnet::type_id<Position>());
}

#if ECSNET_ASSERTS_ENABLED
TEST(RegistryDeathTest, StaleEntityIsAnErrorInDebugBuilds) {
    ecsnet::registry registry;
    const auto e = registry.create();
    registry.emplace<Position>(e, 1.F, 1.F);
    registry.destroy(e);
    EXPECT_DEATH(static_cast<void>(registry.get<Position>(e)), "invalid entity");
    EXPECT_DEATH(registry.emplace<Position>(e, 1.F, 1.F), "invalid entity");
    const auto live = registry.create();
    registry.emplace<Position>(live, 0.F, 0.F);
    EXPECT_DEATH(registry.emplace<Position>(live, 0.F, 0.F), "already has this component");
    EXPECT_DEATH(static_cast<void>(registry.get<Velocity>(live)), "");
}
#endif

} // namespace
