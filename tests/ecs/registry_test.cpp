// The registry: entity lifecycle, component operations, signals, bitsets, capacities and misuse.

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace registry_test {

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

// destroy() lets the pools nobody watches go in one pass and clears the mask at the end; the first watched
// pool (here Kind<66>, in the second word of bits) hands over to the general path, whose listeners may
// remove and add components.
TEST(Registry, DestroyWithUnwatchedPoolsThenAWatchedOneInTheSecondWord) {
    ecsnet::registry registry;
    const auto e = registry.create();
    const auto other = registry.create();
    emplace_all(registry, e, std::make_integer_sequence<int, 70>{});
    emplace_all(registry, other, std::make_integer_sequence<int, 70>{});
    int kind68_destroyed = 0;
    registry.on_destroy<Kind<66>>().connect([](ecsnet::registry& r, entity who) {
        r.remove<Kind<68>>(who);
        r.emplace<Name>(who, "added while dying");
    });
    registry.on_destroy<Kind<68>>().connect([&kind68_destroyed](ecsnet::registry& r, entity who) {
        ++kind68_destroyed;
        EXPECT_TRUE(r.all_of<Kind<68>>(who));
    });
    registry.destroy(e);
    EXPECT_FALSE(registry.valid(e));
    EXPECT_EQ(kind68_destroyed, 1);
    EXPECT_TRUE(registry.storage<Name>().empty());
    EXPECT_TRUE(has_all(registry, other, std::make_integer_sequence<int, 70>{})); // untouched
    for (std::size_t i = 0; i < registry.pool_count(); ++i) {
        EXPECT_FALSE(registry.pool_at(i).contains(e)) << registry.pool_name(i);
    }
    // The recycled index starts with no bits at all.
    const auto reborn = registry.create();
    ASSERT_EQ(ecsnet::to_index(reborn), ecsnet::to_index(e));
    EXPECT_TRUE(registry.orphan(reborn));
    registry.emplace<Kind<1>>(reborn, 1);
    EXPECT_TRUE(registry.all_of<Kind<1>>(reborn));
    EXPECT_FALSE((registry.any_of<Kind<0>, Kind<66>>(reborn)));
    registry.destroy(other); // all unwatched but 66 and 68, which are watched
    EXPECT_EQ(kind68_destroyed, 2);
    EXPECT_EQ(registry.storage<Kind<0>>().size(), 0U);
    EXPECT_EQ(registry.storage<Kind<1>>().size(), 1U);
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

// pool_handle<T>() against the registry's own functions: two registries receive the same random operations,
// one through registry.emplace/patch/replace/remove, the other through pool handles obtained before any
// component exists (and kept while more pools and groups are created). Signals, bitsets, group contents
// and pool orders must stay identical after every step; try_patch refuses absent components and stale ids.
TEST(Registry, PoolHandleMatchesTheRegistrysOwnWritePath) {
    ecsnet::registry direct;
    ecsnet::registry handled;
    auto position = handled.pool_handle<Position>();
    auto frozen = handled.pool_handle<Frozen>();
    auto velocity = handled.pool_handle<Velocity>();
    std::vector<std::string> direct_events;
    std::vector<std::string> handled_events;
    const auto listen = [](ecsnet::registry& registry, std::vector<std::string>& events) {
        const auto record = [&events](const char* what) {
            return [&events, what](ecsnet::registry&, entity e) {
                events.push_back(std::string{what} + std::to_string(ecsnet::to_integral(e)));
            };
        };
        registry.on_construct<Position>().connect(record("c"));
        registry.on_update<Position>().connect(record("u"));
        registry.on_destroy<Position>().connect(record("d"));
        registry.on_construct<Frozen>().connect(record("F"));
        registry.on_destroy<Frozen>().connect(record("f"));
    };
    listen(direct, direct_events);
    listen(handled, handled_events);
    // The handle's sinks are the registry's (a listener connected through either is called by both paths).
    position.on_update().connect(
        [&handled_events](ecsnet::registry&, entity) { handled_events.push_back("h"); });
    direct.on_update<Position>().connect(
        [&direct_events](ecsnet::registry&, entity) { direct_events.push_back("h"); });
    // Groups over the written types: full-owning, and non-owning with an exclusion.
    const auto direct_owning = direct.group<Position, Velocity>();
    const auto handled_owning = handled.group<Position, Velocity>();
    const auto direct_free = direct.group<>(ecsnet::get<Position>, ecsnet::exclude<Frozen>);
    const auto handled_free = handled.group<>(ecsnet::get<Position>, ecsnet::exclude<Frozen>);
    // More pools after the handles, past 64 types (the bitsets widen): the records they point to stay put.
    [&handled]<int... I>(std::integer_sequence<int, I...>) {
        (static_cast<void>(handled.pool_handle<Kind<I>>()), ...);
    }
    (std::make_integer_sequence<int, 70>{});

    std::mt19937 rng{20261121};
    std::vector<entity> direct_entities;
    std::vector<entity> handled_entities;
    std::vector<entity> stale;
    const auto pick = [&](std::size_t n) {
        return std::uniform_int_distribution<std::size_t>{0, n - 1}(rng);
    };
    for (int step = 0; step < 4000; ++step) {
        const int op = std::uniform_int_distribution<int>{0, 99}(rng);
        if (direct_entities.empty() || op < 10) {
            direct_entities.push_back(direct.create());
            handled_entities.push_back(handled.create());
            ASSERT_EQ(direct_entities.back(), handled_entities.back());
            continue;
        }
        const auto k = pick(direct_entities.size());
        const auto d = direct_entities[k];
        const auto h = handled_entities[k];
        const float value = static_cast<float>(step);
        if (op < 15) {
            direct.destroy(d);
            handled.destroy(h);
            stale.push_back(h);
            direct_entities.erase(direct_entities.begin() + static_cast<std::ptrdiff_t>(k));
            handled_entities.erase(handled_entities.begin() + static_cast<std::ptrdiff_t>(k));
        } else if (op < 35) {
            if (!direct.all_of<Position>(d)) {
                direct.emplace<Position>(d, value, -value);
                EXPECT_EQ(position.emplace(h, value, -value).x, value);
            }
        } else if (op < 50) {
            const bool has = direct.all_of<Position>(d);
            if (has) {
                direct.patch<Position>(d, [&](Position& p) { p.y = value; });
            }
            auto* patched = position.try_patch(h, [&](Position& p) { p.y = value; });
            ASSERT_EQ(patched != nullptr, has);
            if (has) {
                EXPECT_EQ(patched->y, value);
                EXPECT_EQ(handled.get<Position>(h).y, value);
            }
        } else if (op < 58) {
            if (direct.all_of<Position>(d)) {
                direct.replace<Position>(d, value, value);
                EXPECT_EQ(position.replace(h, value, value).x, value);
                direct.patch<Position>(d, [](Position& p) { p.x += 1.F; });
                position.patch(h, [](Position& p) { p.x += 1.F; });
            }
        } else if (op < 70) {
            const auto removed = direct.remove<Position>(d);
            EXPECT_EQ(position.remove(h), removed);
        } else if (op < 78) {
            if (!direct.all_of<Velocity>(d)) {
                direct.emplace<Velocity>(d, value, value);
                velocity.emplace(h, value, value);
            } else {
                direct.remove<Velocity>(d);
                EXPECT_EQ(velocity.remove(h), 1U);
            }
        } else if (op < 90) {
            if (!direct.all_of<Frozen>(d)) {
                direct.emplace<Frozen>(d);
                frozen.emplace(h);
            } else {
                direct.remove<Frozen>(d);
                EXPECT_EQ(frozen.remove(h), 1U);
            }
        } else if (!stale.empty()) {
            // A stale identifier (its slot possibly reused): nothing found, nothing called, nothing fired.
            const auto old = stale[pick(stale.size())];
            bool called = false;
            const auto before = handled_events.size();
            EXPECT_EQ(position.try_patch(old, [&](Position&) { called = true; }), nullptr);
            EXPECT_FALSE(called);
            EXPECT_EQ(handled_events.size(), before);
            EXPECT_FALSE(position.contains(old));
            EXPECT_EQ(position.try_get(old), nullptr);
        }

        // Invariants after every step.
        ASSERT_EQ(direct_events, handled_events) << "step " << step;
        ASSERT_EQ(direct_owning.size(), handled_owning.size());
        ASSERT_EQ(direct_free.size(), handled_free.size());
        const auto& dp = direct.storage<Position>();
        const auto& hp = position.storage();
        ASSERT_EQ(&hp, &handled.storage<Position>());
        ASSERT_EQ(dp.size(), hp.size());
        for (std::size_t i = 0; i < dp.size(); ++i) {
            ASSERT_EQ(dp[i], hp[i]); // same order: the owning group sorted both the same way
            ASSERT_EQ(direct.get<Position>(dp[i]).x, handled.get<Position>(hp[i]).x);
            ASSERT_EQ(direct.get<Position>(dp[i]).y, handled.get<Position>(hp[i]).y);
        }
        ASSERT_EQ(direct.storage<Velocity>().size(), velocity.storage().size());
        ASSERT_EQ(direct.storage<Frozen>().size(), frozen.storage().size());
        for (std::size_t i = 0; i < direct_entities.size(); ++i) {
            const auto d = direct_entities[i];
            const auto h = handled_entities[i];
            ASSERT_EQ((direct.all_of<Position>(d)), (handled.all_of<Position>(h)));
            ASSERT_EQ((direct.all_of<Position>(d)), position.contains(h));
            ASSERT_EQ((direct.all_of<Velocity>(d)), (handled.all_of<Velocity>(h)));
            ASSERT_EQ((direct.all_of<Frozen>(d)), (handled.all_of<Frozen>(h)));
            ASSERT_EQ((direct.all_of<Position, Velocity>(d)), (handled.all_of<Position, Velocity>(h)));
            ASSERT_EQ(direct_owning.contains(d), handled_owning.contains(h));
            ASSERT_EQ(handled_owning.contains(h), (handled.all_of<Position, Velocity>(h)));
            ASSERT_EQ(direct_free.contains(d), handled_free.contains(h));
            ASSERT_EQ(handled_free.contains(h), handled.all_of<Position>(h) && !handled.all_of<Frozen>(h));
        }
    }
    EXPECT_GT(handled_owning.size() + handled_free.size(), 0U);
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

} // namespace registry_test
