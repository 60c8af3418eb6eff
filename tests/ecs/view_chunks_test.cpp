// view_chunks: the chunks of a view, together, visit exactly what the view's each() visits.

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/registry.hpp>
#include <ecsnet/ecs/view_chunks.hpp>

namespace view_chunks_test {

namespace {

struct A {
    std::int32_t value;
};
struct B {
    std::int32_t value;
};
struct Marker {};
struct Hidden {};

using chunks_type =
    ecsnet::view_chunks<ecsnet::registry, ecsnet::type_list<A, const B, Marker>, ecsnet::type_list<Hidden>>;

TEST(ViewChunksTest, RandomizedAgainstTheView) {
    std::mt19937 rng{77};
    ecsnet::registry world;
    std::vector<ecsnet::entity> entities;
    for (int step = 0; step < 60; ++step) {
        // Random structural changes between checks: pools of different sizes and orders, holes.
        for (int change = 0; change < 200; ++change) {
            const auto kind = std::uniform_int_distribution<int>{0, 9}(rng);
            if (kind < 3 || entities.empty()) {
                const auto e = world.create();
                entities.push_back(e);
                if (rng() % 4 != 0) {
                    world.emplace<A>(e, static_cast<std::int32_t>(rng() % 1000));
                }
                if (rng() % 3 != 0) {
                    world.emplace<B>(e, static_cast<std::int32_t>(rng() % 1000));
                }
                if (rng() % 2 == 0) {
                    world.emplace<Marker>(e);
                }
                if (rng() % 5 == 0) {
                    world.emplace<Hidden>(e);
                }
                continue;
            }
            const auto at = std::uniform_int_distribution<std::size_t>{0, entities.size() - 1}(rng);
            const auto e = entities[at];
            if (kind == 3) {
                world.destroy(e);
                entities.erase(entities.begin() + static_cast<std::ptrdiff_t>(at));
            } else if (kind == 4) {
                world.remove<A>(e);
            } else if (kind == 5) {
                world.remove<Marker, Hidden>(e);
            } else if (kind == 6 && !world.all_of<A>(e)) {
                world.emplace<A>(e, 5);
            }
        }

        std::map<ecsnet::entity, std::pair<std::int32_t, std::int32_t>> expected;
        world.view<const A, const B, Marker>(ecsnet::exclude<Hidden>)
            .each([&](ecsnet::entity e, const A& a, const B& b) {
                expected[e] = {a.value, b.value};
            });

        const std::size_t chunk_size = std::uniform_int_distribution<std::size_t>{1, 64}(rng);
        const chunks_type chunks{world, chunk_size};
        ASSERT_EQ(chunks.chunk_count(), (chunks.size_hint() + chunk_size - 1) / chunk_size);
        std::map<ecsnet::entity, std::pair<std::int32_t, std::int32_t>> visited;
        std::size_t visits = 0;
        for (std::size_t chunk = chunks.chunk_count(); chunk-- != 0;) { // any order
            auto record = [&](ecsnet::entity e, A& a, const B& b) {
                ++visits;
                visited[e] = {a.value, b.value};
                a.value += 1; // writes go to the registry
            };
            chunks.each_in(chunk, record);
        }
        ASSERT_EQ(visits, expected.size()) << "an entity was visited twice";
        ASSERT_EQ(visited, expected) << "step " << step;
        for (const auto& [e, values] : expected) {
            ASSERT_EQ(world.get<A>(e).value, values.first + 1);
        }
    }
}

TEST(ViewChunksTest, TheSplitDependsOnlyOnTheLeadingPool) {
    ecsnet::registry world;
    for (int i = 0; i < 1000; ++i) {
        const auto e = world.create();
        world.emplace<A>(e, i);
        if (i % 10 == 0) {
            world.emplace<B>(e, i);
        }
    }
    const ecsnet::view_chunks<ecsnet::registry, ecsnet::type_list<A, const B>, ecsnet::type_list<>> chunks{
        world, 16};
    EXPECT_EQ(chunks.size_hint(), 100U) << "B is the shorter pool: it leads";
    EXPECT_EQ(chunks.chunk_count(), 7U);
    std::vector<std::int32_t> order;
    for (std::size_t chunk = 0; chunk < chunks.chunk_count(); ++chunk) {
        auto visit = [&](const A& a, const B&) { order.push_back(a.value); };
        chunks.each_in(chunk, visit);
    }
    ASSERT_EQ(order.size(), 100U);
    // Each chunk runs from its first position to its last; chunks follow each other.
    EXPECT_EQ(order.front(), 0);
    EXPECT_EQ(order[15], 150);
    EXPECT_EQ(order[16], 160);
    const ecsnet::view_chunks<ecsnet::registry, ecsnet::type_list<A>, ecsnet::type_list<>> empty_chunks{world,
                                                                                                        0};
    EXPECT_EQ(empty_chunks.chunk_size(), 1U) << "a zero chunk size is taken as 1";
}

TEST(ViewChunksTest, AlignedChunksSkipProbingAndStillFilter) {
    // Pools filled together are aligned: chunks there take the plain loop. A removal in the middle breaks
    // the alignment from that point: those chunks probe. Both must visit what the view visits.
    ecsnet::registry world;
    std::vector<ecsnet::entity> all;
    for (int i = 0; i < 3000; ++i) {
        const auto e = world.create();
        all.push_back(e);
        world.emplace<A>(e, i);
        world.emplace<B>(e, -i);
        world.emplace<Marker>(e);
        if (i % 7 == 0) {
            world.emplace<Hidden>(e);
        }
    }
    for (int round = 0; round < 2; ++round) {
        std::map<ecsnet::entity, std::pair<std::int32_t, std::int32_t>> expected;
        world.view<const A, const B, Marker>(ecsnet::exclude<Hidden>)
            .each([&](ecsnet::entity e, const A& a, const B& b) {
                expected[e] = {a.value, b.value};
            });
        const chunks_type chunks{world, 256};
        std::map<ecsnet::entity, std::pair<std::int32_t, std::int32_t>> visited;
        for (std::size_t chunk = 0; chunk < chunks.chunk_count(); ++chunk) {
            auto record = [&](ecsnet::entity e, A& a, const B& b) {
                EXPECT_TRUE(visited.emplace(e, std::make_pair(a.value, b.value)).second);
            };
            chunks.each_in(chunk, record);
        }
        EXPECT_EQ(visited, expected) << "round " << round;
        world.remove<B>(all[1500]); // B's last entity moves to position 1500: misaligned from there on
    }
}

} // namespace

} // namespace view_chunks_test
