// Views: what they yield, what each() passes, and iteration while the current entity is removed.

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace view_test {

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

// The aligned-block shortcut (a block of pools found aligned is not compared again while its stamps hold,
// sparse_set.hpp): every component a view passes must belong to the entity it passes, after any change.
struct Tagged {
    std::uint32_t owner; // the entity the component was given to
};
template<int I>
struct Part : Tagged {};

TEST(View, AlignedBlocksStayExactAcrossEveryKindOfChange) {
    std::mt19937 rng{2024};
    ecsnet::registry registry;
    std::map<entity, int> parts; // which of Part<0..2> an entity has, as bits
    const auto give = [&](entity e, int bits) {
        const auto owner = ecsnet::to_integral(e);
        if ((bits & 1) != 0) {
            registry.emplace<Part<0>>(e, Tagged{owner});
        }
        if ((bits & 2) != 0) {
            registry.emplace<Part<1>>(e, Tagged{owner});
        }
        if ((bits & 4) != 0) {
            registry.emplace<Part<2>>(e, Tagged{owner});
        }
        parts[e] |= bits;
    };
    // Several blocks of pools filled together, so that most blocks are aligned.
    for (int i = 0; i < 5000; ++i) {
        give(registry.create(), 7);
    }
    // Led by each of its pools in turn (each_between), not only by the shortest: stamps recorded with one
    // leader are then checked by walks led by the others.
    const auto check = [&](auto view, int required, const char* what) {
        std::set<entity> expected;
        for (const auto& [e, bits] : parts) {
            if ((bits & required) == required) {
                expected.insert(e);
            }
        }
        int wrong_parts = 0;
        const auto pools = static_cast<std::size_t>(std::popcount(static_cast<unsigned>(required)));
        for (std::size_t lead = 0; lead < pools; ++lead) {
            std::set<entity> seen;
            auto visit = [&](entity e, const auto&... components) {
                EXPECT_TRUE(seen.insert(e).second) << what << ": visited twice";
                wrong_parts += ((components.owner != ecsnet::to_integral(e) ? 1 : 0) + ...);
            };
            view.each_between(lead, 0, ~std::size_t{}, visit);
            ASSERT_EQ(seen, expected) << what << " led by pool " << lead;
        }
        ASSERT_EQ(wrong_parts, 0) << what << ": components of another entity";
    };
    const auto pick = [&] {
        auto it = parts.begin();
        std::advance(it, std::uniform_int_distribution<std::size_t>{0, parts.size() - 1}(rng));
        return it->first;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{20};
    for (int step = 0; step < 400 && std::chrono::steady_clock::now() < deadline; ++step) {
        // Every view twice, so that the second walk runs on the stamps the first one recorded.
        for (int pass = 0; pass < 2; ++pass) {
            check(registry.view<Part<0>, Part<1>>(), 3, "view<0, 1>");
            check(registry.view<Part<1>, Part<0>>(), 3, "view<1, 0>");
            check(registry.view<Part<2>, Part<0>, Part<1>>(), 7, "view<2, 0, 1>");
        }
        if (std::uniform_int_distribution<int>{0, 99}(rng) < 40) {
            // Every entity gets its missing parts and the pools line up again: most blocks are aligned
            // (and stamped by the next walks) when the next few changes come.
            for (const auto& [e, bits] : std::map<entity, int>{parts}) {
                give(e, 7 & ~bits);
            }
            registry.sort_as<Part<1>, Part<0>>();
            registry.sort_as<Part<2>, Part<0>>();
        }
        const int changes = std::uniform_int_distribution<int>{1, 4}(rng);
        for (int change = 0; change < changes && !parts.empty(); ++change) {
            const auto e = pick();
            const auto kind = std::uniform_int_distribution<int>{0, 99}(rng);
            if (kind < 25) { // a new entity with some parts: appended, maybe in one pool only
                give(registry.create(), std::uniform_int_distribution<int>{1, 7}(rng));
            } else if (kind < 45) { // destroy: swap-and-pop in each of its pools
                registry.destroy(e);
                parts.erase(e);
            } else if (kind < 65) { // lose one part
                const int bit = std::uniform_int_distribution<int>{0, 2}(rng);
                if ((parts[e] & (1 << bit)) != 0) {
                    bit == 0   ? registry.erase<Part<0>>(e)
                    : bit == 1 ? registry.erase<Part<1>>(e)
                               : registry.erase<Part<2>>(e);
                    parts[e] &= ~(1 << bit);
                }
            } else if (kind < 80) { // gain the parts it lacks (appended: out of line with the other pools)
                give(e, 7 & ~parts[e]);
            } else if (kind < 88) { // sort one pool by a key unrelated to positions, each method
                const ecsnet::sort_options options{
                    static_cast<ecsnet::sort_method>(std::uniform_int_distribution<int>{1, 3}(rng)),
                    rng() % 2 == 0};
                const auto salt = static_cast<std::uint32_t>(rng());
                const auto by_hash = [salt](const Tagged& lhs, const Tagged& rhs) {
                    return ((lhs.owner * 2654435761U) ^ salt) < ((rhs.owner * 2654435761U) ^ salt);
                };
                rng() % 2 == 0 ? registry.sort<Part<0>>(by_hash, options)
                               : registry.sort<Part<2>>(by_hash, options);
            } else if (kind < 96) { // realign: what pools filled together or a sort_as produce
                registry.sort_as<Part<1>, Part<0>>();
                registry.sort_as<Part<2>, Part<0>>();
            } else { // a pool emptied and refilled in another order
                registry.clear<Part<1>>();
                std::vector<entity> refill;
                for (auto& [owner, bits] : parts) {
                    bits &= ~2;
                    if (rng() % 3 != 0) {
                        refill.push_back(owner);
                    }
                }
                std::shuffle(refill.begin(), refill.end(), rng);
                for (const auto owner : refill) {
                    give(owner, 2);
                }
            }
        }
    }
}

} // namespace

} // namespace view_test
