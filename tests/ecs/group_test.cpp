// Groups (group.hpp, seed 002_c01289adc68b0dd6.txt): layout of owning groups, the three kinds, exclusions,
// ownership rules and nesting, filling on a populated registry, signals ordering, iteration while members
// leave, sorting groups, tags, more than 64 component types, fixed capacity. The randomized differential
// test is group_differential_test.cpp.

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace group_test {

namespace {

using ecsnet::entity;
using ecsnet::exclude;
using ecsnet::get;

struct A {
    int value;
};
struct B {
    int value;
};
struct C {
    int value;
};
struct D {
    std::string text;
};
struct Tag {};
struct Other {};

// The first `count` entities of every pool, which an owning group must keep identical.
template<typename... Pool>
bool aligned_prefix(std::size_t count, const Pool&... pool) {
    const auto* first = std::get<0>(std::forward_as_tuple(pool...)).data();
    return ((pool.size() >= count && std::equal(first, first + count, pool.data())) && ...);
}

template<typename Type>
std::string name() {
    return std::string{ecsnet::type_name<Type>()};
}

template<typename Group>
std::set<entity> members_of(const Group& group) {
    std::set<entity> members;
    group.each([&members](entity e, auto&&...) { EXPECT_TRUE(members.insert(e).second) << "visited twice"; });
    return members;
}

TEST(Group, FullOwningGroupFollowsTheSeedWalkThrough) {
    // Seed 002, "Groups": A has e3 e7 e8 e6, B has e4 e5; then e7 gets B, e4 gets A, e7 loses B.
    ecsnet::registry registry;
    std::vector<entity> e(9);
    for (auto& each : e) {
        each = registry.create();
    }
    for (const int i : {3, 7, 8, 6}) {
        registry.emplace<A>(e[i], i);
    }
    for (const int i : {4, 5}) {
        registry.emplace<B>(e[i], i);
    }
    const auto group = registry.group<A, B>();
    const auto& a = registry.storage<A>();
    const auto& b = registry.storage<B>();
    EXPECT_TRUE(group.empty());

    registry.emplace<B>(e[7], 7);
    ASSERT_EQ(group.size(), 1U);
    EXPECT_EQ(a[0], e[7]);
    EXPECT_EQ(b[0], e[7]);
    EXPECT_EQ(registry.get<A>(e[7]).value, 7);
    EXPECT_EQ(registry.get<B>(e[7]).value, 7);

    registry.emplace<A>(e[4], 4);
    ASSERT_EQ(group.size(), 2U);
    EXPECT_TRUE(aligned_prefix(2, a, b));
    EXPECT_EQ(a[1], e[4]);

    registry.remove<B>(e[7]);
    ASSERT_EQ(group.size(), 1U);
    EXPECT_EQ(a[0], e[4]);
    EXPECT_EQ(b[0], e[4]);
    EXPECT_FALSE(group.contains(e[7]));
    EXPECT_TRUE(group.contains(e[4]));
    EXPECT_EQ(registry.get<A>(e[4]).value, 4);
    EXPECT_EQ(registry.get<B>(e[4]).value, 4);
    EXPECT_EQ(registry.get<A>(e[7]).value, 7);
}

TEST(Group, AGroupCreatedOnAPopulatedRegistryFillsItself) {
    ecsnet::registry registry;
    std::set<entity> with_ab;
    std::set<entity> with_ab_not_c;
    for (int i = 0; i < 300; ++i) {
        const auto e = registry.create();
        if (i % 2 == 0) {
            registry.emplace<A>(e, i);
        }
        if (i % 3 == 0) {
            registry.emplace<B>(e, i);
        }
        if (i % 5 == 0) {
            registry.emplace<C>(e, i);
        }
        if (i % 6 == 0) {
            with_ab.insert(e);
            if (i % 5 != 0) {
                with_ab_not_c.insert(e);
            }
        }
    }
    const auto full = registry.group<A, B>();
    EXPECT_EQ(members_of(full), with_ab);
    EXPECT_EQ(full.size(), with_ab.size());
    EXPECT_TRUE(aligned_prefix(full.size(), registry.storage<A>(), registry.storage<B>()));

    const auto partial = registry.group<C>(get<A>);
    std::set<entity> with_ac;
    registry.view<A, C>().each([&with_ac](entity e, A&, C&) { with_ac.insert(e); });
    EXPECT_EQ(members_of(partial), with_ac);

    const auto non_owning = registry.group<>(get<A, B>, exclude<C>);
    EXPECT_EQ(members_of(non_owning), with_ab_not_c);
    for (const auto e : with_ab) {
        EXPECT_EQ(registry.get<A>(e).value, registry.get<B>(e).value); // components stayed with their entity
    }
}

TEST(Group, PartialOwningGroupArrangesOnlyTheOwnedPool) {
    ecsnet::registry registry;
    std::vector<entity> entities;
    for (int i = 0; i < 50; ++i) {
        entities.push_back(registry.create());
        registry.emplace<B>(entities.back(), i);
    }
    const std::vector<entity> b_order(registry.storage<B>().begin(), registry.storage<B>().end());
    const auto group = registry.group<A>(get<const B>);
    for (int i = 49; i >= 0; i -= 3) {
        registry.emplace<A>(entities[static_cast<std::size_t>(i)], i);
    }
    EXPECT_EQ(group.size(), 17U);
    EXPECT_TRUE(std::equal(b_order.begin(), b_order.end(), registry.storage<B>().begin()))
        << "B is not owned";
    group.each([](entity, A& a, const B& b) { EXPECT_EQ(a.value, b.value); });
    static_assert(std::is_same_v<decltype(group.get<B>(entities[49])), const B&>);
    EXPECT_EQ(group.get<B>(entities[49]).value, 49);
}

TEST(Group, NonOwningGroupLeavesEveryPoolAlone) {
    ecsnet::registry registry;
    for (int i = 0; i < 40; ++i) {
        const auto e = registry.create();
        registry.emplace<B>(e, i);
        if (i % 4 != 0) {
            registry.emplace<A>(e, i);
        }
    }
    const std::vector<entity> a_order(registry.storage<A>().begin(), registry.storage<A>().end());
    const std::vector<entity> b_order(registry.storage<B>().begin(), registry.storage<B>().end());
    const auto group = registry.group<>(get<A, B>);
    EXPECT_EQ(group.size(), 30U);
    EXPECT_FALSE(registry.owned<A>());
    EXPECT_TRUE(std::equal(a_order.begin(), a_order.end(), registry.storage<A>().begin()));
    EXPECT_TRUE(std::equal(b_order.begin(), b_order.end(), registry.storage<B>().begin()));
    int sum = 0;
    group.each([&sum](A& a, B& b) { sum += a.value - b.value; });
    EXPECT_EQ(sum, 0);
}

TEST(Group, ExcludedTypesMoveEntitiesInAndOut) {
    ecsnet::registry registry;
    const auto owning = registry.group<A>(get<B>, exclude<C, Tag>);
    const auto non_owning = registry.group<>(get<A, B>, exclude<Tag>);
    const auto e = registry.create();
    registry.emplace<A>(e, 1);
    registry.emplace<B>(e, 1);
    EXPECT_TRUE(owning.contains(e));
    EXPECT_TRUE(non_owning.contains(e));

    registry.emplace<Tag>(e);
    EXPECT_FALSE(owning.contains(e));
    EXPECT_FALSE(non_owning.contains(e));
    registry.emplace<C>(e, 1);
    registry.remove<Tag>(e);
    EXPECT_FALSE(owning.contains(e)) << "C still excludes it";
    EXPECT_TRUE(non_owning.contains(e));
    registry.remove<C>(e);
    EXPECT_TRUE(owning.contains(e));

    // clear() of an excluded type lets every entity that matched otherwise in.
    std::vector<entity> tagged;
    for (int i = 0; i < 20; ++i) {
        tagged.push_back(registry.create());
        registry.emplace<A>(tagged.back(), i);
        registry.emplace<B>(tagged.back(), i);
        registry.emplace<Tag>(tagged.back());
    }
    EXPECT_EQ(owning.size(), 1U);
    registry.clear<Tag>();
    EXPECT_EQ(owning.size(), 21U);
    EXPECT_EQ(non_owning.size(), 21U);
    EXPECT_EQ(members_of(owning).size(), 21U);
}

TEST(Group, TheSameSignatureIsTheSameGroupInAnyOrder) {
    ecsnet::registry registry;
    const auto first = registry.group<A, B>(get<C>, exclude<Tag>);
    const auto second = registry.group<B, A>(get<const C>, exclude<Tag>);
    const auto e = registry.create();
    registry.emplace<A>(e, 1);
    registry.emplace<B>(e, 2);
    registry.emplace<C>(e, 3);
    EXPECT_EQ(first.size(), 1U);
    EXPECT_EQ(second.size(), 1U);
    EXPECT_EQ(first.name(), second.name());
    EXPECT_EQ(first.name(), "group<" + name<A>() + ", " + name<B>() + ">(get<" + name<C>() + ">, exclude<" +
                                name<Tag>() + ">)");
    second.each([](B& b, A& a, const C& c) { EXPECT_EQ(a.value + b.value, c.value); });
}

TEST(Group, ConflictingOwnershipIsRefusedNamingBothGroups) {
    const auto refused = [](auto create_first, auto create_second, const std::string& first,
                            const std::string& second) {
        ecsnet::registry registry;
        create_first(registry);
        try {
            create_second(registry);
            ADD_FAILURE() << second << " should have been refused next to " << first;
        } catch (const ecsnet::group_error& error) {
            const std::string message = error.what();
            EXPECT_NE(message.find(first), std::string::npos) << message;
            EXPECT_NE(message.find(second), std::string::npos) << message;
        }
    };
    // "group<A, B>" with the names the compiler gives the types.
    const auto g = [](std::string types) {
        for (const auto& [plain, full] :
             {std::pair{std::string{"A"}, name<A>()}, std::pair{std::string{"B"}, name<B>()},
              std::pair{std::string{"C"}, name<C>()}}) {
            for (auto at = types.find(plain); at != std::string::npos;
                 at = types.find(plain, at + full.size())) {
                types.replace(at, plain.size(), full);
            }
        }
        return "group<" + types + ">";
    };
    // Two full-owning groups sharing one pool, neither inside the other.
    refused([](auto& r) { static_cast<void>(r.template group<A, B>()); },
            [](auto& r) { static_cast<void>(r.template group<A, C>()); }, g("A, B"), g("A, C"));
    // Same owned pool, different requirements.
    refused([](auto& r) { static_cast<void>(r.template group<A>(get<B>)); },
            [](auto& r) { static_cast<void>(r.template group<A>(get<C>)); },
            g("A") + "(get<" + name<B>() + ">)", g("A") + "(get<" + name<C>() + ">)");
    // The more restrictive one would own less than the other: it would break the other's alignment.
    refused([](auto& r) { static_cast<void>(r.template group<A, B>()); },
            [](auto& r) { static_cast<void>(r.template group<A>(get<B, C>)); }, g("A, B"),
            g("A") + "(get<" + name<B>() + ", " + name<C>() + ">)");
    // An exclusion on one side only, the other side requiring more.
    refused([](auto& r) { static_cast<void>(r.template group<A, B>(exclude<Tag>)); },
            [](auto& r) { static_cast<void>(r.template group<A, B, C>()); },
            g("A, B") + "(exclude<" + name<Tag>() + ">)", g("A, B, C"));
    // The registry still works after a refusal: the refused group left no trace.
    ecsnet::registry registry;
    const auto kept = registry.group<A, B>();
    EXPECT_THROW(static_cast<void>(registry.group<A, C>()), ecsnet::group_error);
    const auto e = registry.create();
    registry.emplace<A>(e, 1);
    registry.emplace<C>(e, 1);
    registry.emplace<B>(e, 1);
    EXPECT_EQ(kept.size(), 1U);
    EXPECT_EQ(registry.storage<C>().size(), 1U);
}

TEST(Group, NestedGroupsAreAllowedAndStayExactInEitherCreationOrder) {
    for (const bool inner_first : {false, true}) {
        ecsnet::registry registry;
        std::vector<entity> entities;
        for (int i = 0; i < 64; ++i) {
            entities.push_back(registry.create());
            registry.emplace<A>(entities.back(), i);
            if (i % 2 == 0) {
                registry.emplace<B>(entities.back(), i);
            }
            if (i % 3 == 0) {
                registry.emplace<C>(entities.back(), i);
            }
        }
        using outer_type = decltype(registry.group<A>(get<B>));
        using middle_type = decltype(registry.group<A, B>());
        using inner_type = decltype(registry.group<A, B, C>(exclude<Tag>));
        std::optional<outer_type> outer;
        std::optional<middle_type> middle;
        std::optional<inner_type> inner;
        if (inner_first) {
            inner.emplace(registry.group<A, B, C>(exclude<Tag>));
            middle.emplace(registry.group<A, B>());
            outer.emplace(registry.group<A>(get<B>));
        } else {
            outer.emplace(registry.group<A>(get<B>));
            middle.emplace(registry.group<A, B>());
            inner.emplace(registry.group<A, B, C>(exclude<Tag>));
        }
        const auto check = [&] {
            const auto& a = registry.storage<A>();
            const auto& b = registry.storage<B>();
            const auto& c = registry.storage<C>();
            std::size_t ab = 0;
            std::size_t abc = 0;
            for (const auto e : entities) {
                if (!registry.valid(e)) {
                    continue;
                }
                const bool has_ab = registry.all_of<A, B>(e);
                ab += has_ab ? 1 : 0;
                abc += (has_ab && registry.all_of<C>(e) && !registry.all_of<Tag>(e)) ? 1 : 0;
            }
            ASSERT_EQ(outer->size(), ab);
            ASSERT_EQ(middle->size(), ab);
            ASSERT_EQ(inner->size(), abc);
            ASSERT_TRUE(aligned_prefix(ab, a, b));
            ASSERT_TRUE(aligned_prefix(abc, a, b, c));
            for (std::size_t pos = 0; pos < abc; ++pos) {
                ASSERT_TRUE(inner->contains(a[pos]));
            }
            for (std::size_t pos = abc; pos < ab; ++pos) {
                ASSERT_FALSE(inner->contains(a[pos]));
                ASSERT_TRUE(middle->contains(a[pos]));
            }
        };
        check();
        registry.emplace<Tag>(entities[0]);
        check();
        registry.remove<B>(entities[6]);
        check();
        registry.emplace<B>(entities[9]);
        check();
        registry.remove<C>(entities[12]);
        check();
        registry.destroy(entities[18]);
        check();
        registry.remove<Tag>(entities[0]);
        check();
        registry.clear<C>();
        check();
        EXPECT_THROW(middle->sort([](entity lhs, entity rhs) { return lhs < rhs; }), ecsnet::group_error);
        EXPECT_THROW(outer->sort([](entity lhs, entity rhs) { return lhs < rhs; }), ecsnet::group_error);
        inner->sort<A>([](const A& lhs, const A& rhs) { return lhs.value > rhs.value; });
        check();
    }
}

TEST(Group, SortingAnOwnedPoolIsRefusedNamingTheGroup) {
    ecsnet::registry registry;
    const auto e = registry.create();
    registry.emplace<A>(e, 1);
    registry.emplace<C>(e, 1);
    registry.sort<A>([](const A& lhs, const A& rhs) { return lhs.value < rhs.value; }); // no group yet: fine
    static_cast<void>(registry.group<A, B>());
    EXPECT_TRUE(registry.owned<A>());
    EXPECT_TRUE(registry.owned<B>());
    EXPECT_FALSE(registry.owned<C>());
    try {
        registry.sort<A>([](const A& lhs, const A& rhs) { return lhs.value < rhs.value; });
        ADD_FAILURE() << "sorting an owned pool must throw";
    } catch (const ecsnet::group_error& error) {
        EXPECT_NE(std::string{error.what()}.find("group<" + name<A>() + ", " + name<B>() + ">"),
                  std::string::npos)
            << error.what();
    }
    EXPECT_THROW((registry.sort_as<B, C>()), ecsnet::group_error);
    EXPECT_NO_THROW((registry.sort_as<C, A>())); // reading an owned pool is fine
    static_assert(std::is_base_of_v<std::logic_error, ecsnet::group_error>);
}

TEST(Group, SortingAnOwningGroupMovesEveryOwnedArrayTogether) {
    for (const auto method : {ecsnet::sort_method::automatic, ecsnet::sort_method::in_place,
                              ecsnet::sort_method::permutation, ecsnet::sort_method::mixed}) {
        ecsnet::registry registry;
        const auto group = registry.group<A, D>(get<C>);
        std::vector<entity> outside;
        for (int i = 0; i < 200; ++i) {
            const auto e = registry.create();
            const int key = (i * 37) % 101;
            registry.emplace<A>(e, key);
            registry.emplace<D>(e, std::to_string(key));
            if (i % 4 != 0) {
                registry.emplace<C>(e, -key);
            } else {
                outside.push_back(e);
            }
        }
        ASSERT_EQ(group.size(), 150U);
        group.sort<C>([](const C& lhs, const C& rhs) { return lhs.value < rhs.value; }, {method, false});
        const auto& a = registry.storage<A>();
        const auto& d = registry.storage<D>();
        ASSERT_TRUE(aligned_prefix(group.size(), a, d));
        for (std::size_t pos = 0; pos < a.size(); ++pos) {
            ASSERT_EQ(a.index(a[pos]), pos);
            ASSERT_EQ(d.index(d[pos]), pos);
            ASSERT_EQ(std::to_string(a.element_at(pos).value), d.get(a[pos]).text)
                << "a component left its entity";
        }
        for (std::size_t pos = 1; pos < group.size(); ++pos) {
            ASSERT_GE(a.element_at(pos - 1).value, a.element_at(pos).value) << "sorted by -key";
        }
        for (const auto e : outside) {
            EXPECT_FALSE(group.contains(e));
        }
        // By two components, stably: ties on key parity keep the previous order.
        const std::vector<entity> before(group.begin(), group.end());
        group.sort<A, D>(
            [](const auto& lhs, const auto& rhs) {
                return std::get<0>(lhs).value % 2 < std::get<0>(rhs).value % 2;
            },
            {method, true});
        ASSERT_TRUE(aligned_prefix(group.size(), a, d));
        for (std::size_t pos = 1; pos < group.size(); ++pos) {
            const int previous = a.element_at(pos - 1).value % 2;
            const int current = a.element_at(pos).value % 2;
            ASSERT_LE(previous, current);
            if (previous == current) {
                const auto was = [&](entity e) {
                    return std::find(before.begin(), before.end(), e) - before.begin();
                };
                ASSERT_LT(was(group[pos - 1]), was(group[pos])) << "stable";
            }
        }
    }
}

TEST(Group, NonOwningGroupsSortTheirOwnList) {
    ecsnet::registry registry;
    const auto group = registry.group<>(get<A, B>);
    for (int i = 0; i < 100; ++i) {
        const auto e = registry.create();
        registry.emplace<A>(e, (i * 7) % 13);
        registry.emplace<B>(e, i);
    }
    const std::vector<entity> a_order(registry.storage<A>().begin(), registry.storage<A>().end());
    group.sort<A>([](const A& lhs, const A& rhs) { return lhs.value < rhs.value; }, ecsnet::stable_sort);
    for (std::size_t pos = 1; pos < group.size(); ++pos) {
        const auto& previous = group.get<A, B>(group[pos - 1]);
        const auto& current = group.get<A, B>(group[pos]);
        ASSERT_LE(std::get<0>(previous).value, std::get<0>(current).value);
        if (std::get<0>(previous).value == std::get<0>(current).value) {
            ASSERT_LT(std::get<1>(previous).value, std::get<1>(current).value) << "stable";
        }
    }
    EXPECT_TRUE(std::equal(a_order.begin(), a_order.end(), registry.storage<A>().begin()))
        << "pools untouched";
    std::vector<entity> seen;
    group.each([&seen](entity e, A&, B&) { seen.push_back(e); });
    EXPECT_TRUE(std::equal(seen.begin(), seen.end(), group.begin())) << "each() follows the sorted order";
}

TEST(Group, EachPassesOwnedThenGetComponentsAndLeavesTagsOut) {
    ecsnet::registry registry;
    const auto group = registry.group<A, Tag, const B>(get<Other, const C>);
    const auto e = registry.create();
    registry.emplace<A>(e, 1);
    registry.emplace<Tag>(e);
    registry.emplace<B>(e, 2);
    registry.emplace<Other>(e);
    registry.emplace<C>(e, 3);
    int calls = 0;
    group.each([&](entity who, A& a, const B& b, const C& c) {
        EXPECT_EQ(who, e);
        EXPECT_EQ(a.value + b.value, c.value);
        a.value = 10;
        ++calls;
    });
    group.each([&](A& a, const B&, const C&) {
        EXPECT_EQ(a.value, 10);
        ++calls;
    });
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(registry.get<A>(e).value, 10);
}

// Every way of leaving the group from inside each(): the entity swapped into the current position is still
// visited, and nobody is visited twice.
TEST(Group, EachVisitsEveryMemberOnceWhileMembersLeave) {
    for (int kind = 0; kind < 3; ++kind) {
        for (int how = 0; how < 3; ++how) {
            ecsnet::registry registry;
            for (int i = 0; i < 500; ++i) {
                const auto e = registry.create();
                registry.emplace<A>(e, i);
                registry.emplace<B>(e, i);
                registry.emplace<C>(e, i);
            }
            const auto run = [&](auto group) {
                const std::set<entity> before(group.begin(), group.end());
                std::set<entity> visited;
                std::size_t left = 0;
                group.each([&](entity e, auto&&...) {
                    EXPECT_TRUE(visited.insert(e).second) << "visited twice";
                    if (registry.get<A>(e).value % 3 != 0) {
                        return;
                    }
                    ++left;
                    if (how == 0) {
                        registry.remove<B>(e);
                    } else if (how == 1) {
                        registry.destroy(e);
                    } else {
                        registry.emplace<Tag>(e);
                    }
                });
                EXPECT_EQ(visited, before);
                EXPECT_EQ(group.size(), before.size() - left);
                EXPECT_EQ(members_of(group).size(), group.size());
            };
            if (kind == 0) {
                run(registry.group<A, B>(exclude<Tag>));
            } else if (kind == 1) {
                run(registry.group<A>(get<B>, exclude<Tag>));
            } else {
                run(registry.group<>(get<A, B>, exclude<Tag>));
            }
        }
    }
}

TEST(Group, ListenersSeeTheGroupsUpToDate) {
    ecsnet::registry registry;
    const auto group = registry.group<A, B>();
    int constructed = 0;
    int destroyed = 0;
    registry.on_construct<B>().connect([&](ecsnet::registry& r, entity e) {
        ++constructed;
        EXPECT_TRUE(group.contains(e)) << "already in the group when on_construct runs";
        EXPECT_EQ(r.get<A>(e).value, r.get<B>(e).value);
    });
    registry.on_destroy<B>().connect([&](ecsnet::registry& r, entity e) {
        ++destroyed;
        // destroy() removes the components one by one: A may be gone already, and the entity with it.
        EXPECT_EQ(group.contains(e), r.all_of<A>(e)) << "still in the group when on_destroy runs";
        EXPECT_TRUE(r.all_of<B>(e));
        if (r.all_of<A>(e)) {
            EXPECT_EQ(r.get<A>(e).value, r.get<B>(e).value);
        }
    });
    std::vector<entity> entities;
    for (int i = 0; i < 10; ++i) {
        entities.push_back(registry.create());
        registry.emplace<A>(entities.back(), i);
        registry.emplace<B>(entities.back(), i);
    }
    registry.remove<B>(entities[3]);
    registry.destroy(entities[5]);
    registry.clear<B>();
    EXPECT_EQ(constructed, 10);
    EXPECT_EQ(destroyed, 10);
    EXPECT_TRUE(group.empty());
}

TEST(Group, ListenersThatChangeTheEntityKeepGroupsExact) {
    ecsnet::registry registry;
    const auto group = registry.group<A, B>();
    const auto partial = registry.group<C>(get<A>, exclude<Tag>);
    // Giving B takes A away again; removing C tags the entity.
    registry.on_construct<B>().connect([](ecsnet::registry& r, entity e) {
        if (r.get<B>(e).value < 0) {
            r.remove<A>(e);
        }
    });
    registry.on_destroy<C>().connect([](ecsnet::registry& r, entity e) { r.emplace<Tag>(e); });
    const auto kept = registry.create();
    const auto dropped = registry.create();
    for (const auto e : {kept, dropped}) {
        registry.emplace<A>(e, 1);
        registry.emplace<C>(e, 1);
    }
    registry.emplace<B>(kept, 1);
    registry.emplace<B>(dropped, -1);
    EXPECT_TRUE(group.contains(kept));
    EXPECT_FALSE(group.contains(dropped));
    EXPECT_EQ(group.size(), 1U);
    EXPECT_EQ(partial.size(), 1U); // dropped lost A
    registry.remove<C>(kept);
    EXPECT_TRUE(registry.all_of<Tag>(kept));
    EXPECT_TRUE(partial.empty());
    EXPECT_EQ(members_of(group), (std::set<entity>{kept}));
}

TEST(Group, ClearAndDestroyEmptyTheGroups) {
    ecsnet::registry registry;
    const auto full = registry.group<A, B>();
    const auto partial = registry.group<C>(get<A>);
    const auto non_owning = registry.group<>(get<A, C>, exclude<Tag>);
    for (int i = 0; i < 100; ++i) {
        const auto e = registry.create();
        registry.emplace<A>(e, i);
        registry.emplace<B>(e, i);
        registry.emplace<C>(e, i);
    }
    EXPECT_EQ(full.size(), 100U);
    registry.clear<B>();
    EXPECT_TRUE(full.empty());
    EXPECT_EQ(partial.size(), 100U);
    registry.clear<A>();
    EXPECT_TRUE(partial.empty());
    EXPECT_TRUE(non_owning.empty());
    for (int i = 0; i < 10; ++i) {
        const auto e = registry.create();
        registry.emplace<A>(e, i);
        registry.emplace<B>(e, i);
        registry.emplace<C>(e, i);
    }
    EXPECT_EQ(full.size(), 10U);
    EXPECT_EQ(non_owning.size(), 10U);
    registry.clear();
    EXPECT_TRUE(full.empty());
    EXPECT_TRUE(partial.empty());
    EXPECT_TRUE(non_owning.empty());
    const auto e = registry.create();
    registry.emplace<A>(e, 1);
    registry.emplace<B>(e, 1);
    EXPECT_EQ(full.size(), 1U);
    EXPECT_EQ(full[0], e);
}

template<int I>
struct Many {
    int value;
};

template<int... I>
void emplace_many(ecsnet::registry& registry, entity e, std::integer_sequence<int, I...>) {
    (registry.emplace<Many<I>>(e, I), ...);
}

TEST(Group, GroupsKeepWorkingPastSixtyFourComponentTypes) {
    ecsnet::registry registry;
    const auto early = registry.group<A, B>(exclude<Tag>); // built while the bitsets have one word
    const auto e = registry.create();
    registry.emplace<A>(e, 1);
    emplace_many(registry, e, std::make_integer_sequence<int, 70>{}); // widens the bitsets
    registry.emplace<B>(e, 1);
    EXPECT_TRUE(early.contains(e));
    const auto late = registry.group<Many<68>, Many<69>>(get<A>, exclude<Other>);
    EXPECT_TRUE(late.contains(e));
    registry.emplace<Other>(e);
    EXPECT_FALSE(late.contains(e));
    registry.remove<Other>(e);
    EXPECT_TRUE(late.contains(e));
    registry.emplace<Tag>(e);
    EXPECT_FALSE(early.contains(e));
    registry.remove<Many<69>>(e);
    EXPECT_FALSE(late.contains(e));
}

TEST(Group, FixedCapacityRegistriesHaveGroupsToo) {
    ecsnet::basic_registry<ecsnet::fixed_capacity<256>> registry;
    const auto full = registry.group<A, B>();
    const auto non_owning = registry.group<>(get<A, C>);
    for (int i = 0; i < 256; ++i) {
        const auto e = registry.create();
        registry.emplace<A>(e, i);
        registry.emplace<B>(e, i);
        if (i % 2 == 0) {
            registry.emplace<C>(e, i);
        }
    }
    EXPECT_EQ(full.size(), 256U);
    EXPECT_EQ(non_owning.size(), 128U);
    full.sort<A>([](const A& lhs, const A& rhs) { return lhs.value > rhs.value; });
    EXPECT_EQ(registry.get<A>(full[0]).value, 255);
    EXPECT_EQ(registry.get<B>(full[0]).value, 255);
    EXPECT_THROW(static_cast<void>(registry.create()), ecsnet::capacity_error);
}

} // namespace

} // namespace group_test
