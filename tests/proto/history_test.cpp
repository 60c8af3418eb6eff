// The server's history: capture puts the registry's declared components in sorted quantized columns;
// identity rules (a recycled index, an entity leaving and re-entering replication, 4096 reuses of an
// index within one tick) give new generations; undeclared components are never captured; old ticks are
// evicted; memory stays bounded.

#include <gtest/gtest.h>

#include <map>

#include "ecsnet/proto/checksum.hpp"
#include "ecsnet/proto/history.hpp"
#include "replication_support.hpp"

namespace ecsnet::proto::history_test {
namespace {

using arena::Health;
using arena::Kind;
using arena::Transform;

struct Secret {
    int code{};
};

std::uint32_t generation_of(const snapshot_history& h, std::uint32_t index) {
    std::vector<std::uint32_t> ids;
    ids = h.newest().flat(ids);
    const auto it = std::lower_bound(ids.begin(), ids.end(), index);
    EXPECT_TRUE(it != ids.end() && *it == index);
    return h.newest_generations()[static_cast<std::size_t>(it - ids.begin())];
}

TEST(History, CaptureSortsAndQuantizes) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    std::vector<entity> es;
    for (int i = 0; i < 5; ++i) {
        es.push_back(reg.create());
    }
    // Added out of index order; one entity has only Health; one has no declared component at all.
    reg.emplace<Transform>(es[3], 1.0F, 2.0F, 3.0F, 0.0F);
    reg.emplace<Transform>(es[0], -1.0F, 0.5F, 0.0F, 3.14159265F);
    reg.emplace<Health>(es[2], std::uint16_t{7});
    reg.emplace<Health>(es[0], std::uint16_t{9});
    reg.emplace<Secret>(es[4], 1);
    history.capture(10, 1234);
    const auto& s = history.newest();
    EXPECT_EQ(s.tick, 10U);
    EXPECT_EQ(s.server_time_us, 1234U);
    std::vector<std::uint32_t> ids;
    EXPECT_EQ(s.flat(ids), (std::vector<std::uint32_t>{0, 2, 3}));
    flatten(s.ids(0), ids);
    EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 3}));
    flatten(s.ids(1), ids);
    EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 2}));
    EXPECT_EQ(s.size(2), 0U);
    const fixed_point<20> xq{-1024.0, 1.0 / 512};
    EXPECT_EQ(s.components[0].fields[0].get(0), xq.quantize(-1.0F));
    EXPECT_EQ(s.components[0].fields[0].get(1), xq.quantize(1.0F));
    EXPECT_EQ(s.components[0].fields[3].get(0), 2048U); // pi in 12 bits
    EXPECT_EQ(s.components[1].fields[0].get(0), 9U);
    EXPECT_EQ(s.components[1].fields[0].get(1), 7U);
    EXPECT_EQ(s.checksum, state_checksum(history.weights(), s,
                                         std::vector<std::uint32_t>(history.newest_generations().begin(),
                                                                    history.newest_generations().end())));
    EXPECT_THROW(history.capture(10, 0), std::invalid_argument);
}

TEST(History, RecycledIndexGetsANewGeneration) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    const auto a = reg.create();
    reg.emplace<Kind>(a, std::uint8_t{1});
    history.capture(1, 0);
    const auto g1 = generation_of(history, to_index(a));
    EXPECT_EQ(g1, to_version(a));
    reg.destroy(a);
    const auto b = reg.create(); // same index, next version
    ASSERT_EQ(to_index(b), to_index(a));
    reg.emplace<Kind>(b, std::uint8_t{1});
    history.capture(2, 0);
    const auto g2 = generation_of(history, to_index(b));
    EXPECT_NE(g2, g1);
    EXPECT_EQ(g2 & 0xFFFU, to_version(b)) << "the low 12 bits are the server's version";
    std::vector<std::uint32_t> entered;
    history.entered_since(1, entered);
    EXPECT_EQ(entered, (std::vector<std::uint32_t>{to_index(b)}));
}

TEST(History, AFullCycleOfVersionsWithinOneTickIsStillANewOccupant) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    const auto first = reg.create();
    reg.emplace<Kind>(first, std::uint8_t{1});
    history.capture(1, 0);
    const auto g1 = generation_of(history, to_index(first));
    // Destroy it, then reuse its index 4096 times: the version wraps back to the very same entity value.
    reg.destroy(first);
    entity e = null_entity;
    for (int n = 0; n < 4095; ++n) {
        e = reg.create();
        reg.destroy(e);
    }
    e = reg.create();
    ASSERT_EQ(e, first) << "the registry's version wrapped";
    reg.emplace<Kind>(e, std::uint8_t{2});
    history.capture(2, 0);
    const auto g2 = generation_of(history, to_index(e));
    EXPECT_NE(g2, g1) << "the on_destroy listener saw the first occupant leave";
    EXPECT_EQ(g2 & 0xFFFU, to_version(e));
}

TEST(History, LeavingAndReenteringReplicationIsANewOccupant) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    const auto e = reg.create();
    reg.emplace<Health>(e, std::uint16_t{5});
    reg.emplace<Kind>(e, std::uint8_t{1});
    history.capture(1, 0);
    const auto g1 = generation_of(history, to_index(e));
    // Losing one of two declared components keeps it replicated, same occupant.
    reg.remove<Health>(e);
    history.capture(2, 0);
    EXPECT_EQ(generation_of(history, to_index(e)), g1);
    // Losing the last one and getting one back within a tick: it left, so it enters anew.
    reg.remove<Kind>(e);
    reg.emplace<Kind>(e, std::uint8_t{1});
    history.capture(3, 0);
    const auto g3 = generation_of(history, to_index(e));
    EXPECT_NE(g3, g1);
    // Absent for a whole tick, then back: new again.
    reg.remove<Kind>(e);
    history.capture(4, 0);
    EXPECT_EQ(history.newest().entity_count(), 0U);
    reg.emplace<Kind>(e, std::uint8_t{1});
    history.capture(5, 0);
    EXPECT_NE(generation_of(history, to_index(e)), g3);
}

TEST(History, AnnouncedGenerationMatchesTheCapture) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    const auto old = reg.create();
    reg.emplace<Kind>(old, std::uint8_t{1});
    history.capture(1, 0);
    reg.destroy(old);
    const auto avatar = reg.create();
    const auto announced = history.to_net(avatar); // ServerWelcome, before the avatar is captured
    reg.emplace<Transform>(avatar);
    history.capture(2, 0);
    EXPECT_EQ(announced.index, to_index(avatar));
    EXPECT_EQ(generation_of(history, announced.index), announced.generation);
    EXPECT_EQ(history.to_net(avatar), announced) << "stable once captured";
}

TEST(History, ARestoredGenerationIsKeptByTheFirstCaptureAndFollowedAfter) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    const auto e = reg.create();
    reg.emplace<Health>(e, std::uint16_t{1});
    const auto saved = to_version(e) + 3 * (entity_traits::version_mask + 1);      // past three wraps
    EXPECT_THROW(history.restore_generation(e, saved + 1), std::invalid_argument); // not e's version
    history.restore_generation(e, saved);
    EXPECT_EQ(history.to_net(e), (net_entity{to_index(e), saved}));
    history.capture(1, 0);
    EXPECT_EQ(generation_of(history, to_index(e)), saved);
    EXPECT_THROW(history.restore_generation(e, saved), std::invalid_argument); // only before a capture
    // A new occupant of the index moves on from the restored generation, never back below it.
    reg.destroy(e);
    const auto next = reg.create();
    ASSERT_EQ(to_index(next), to_index(e));
    reg.emplace<Health>(next, std::uint16_t{2});
    history.capture(2, 0);
    EXPECT_EQ(generation_of(history, to_index(next)), saved + 1);
}

TEST(History, KeepsTheLastDepthTicks) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg, history_options{4, 30}};
    reg.emplace<Kind>(reg.create(), std::uint8_t{1});
    for (tick_type t = 10; t < 20; t += 2) {
        history.capture(t, 0);
    }
    EXPECT_EQ(history.size(), 4U);
    EXPECT_EQ(history.newest_tick(), 18U);
    EXPECT_EQ(history.oldest_tick(), 12U);
    EXPECT_FALSE(history.contains(10));
    EXPECT_TRUE(history.contains(14));
    EXPECT_FALSE(history.contains(15));
    EXPECT_EQ(history.nominal_time_us(30), 1000000U);
}

// The checksum too: capture derives it from the previous tick's and the changes it lists, and it must equal
// the sum over the whole state every tick.
TEST(History, RandomWorldColumnsAndChecksumMatchTheRegistry) {
    const auto& s = testing::test_schema();
    registry reg;
    snapshot_history history{s, reg};
    testing::random_world world{reg, 3, 200};
    std::size_t listed = 0;
    for (tick_type t = 1; t <= 300; ++t) {
        world.step();
        history.capture(t, 0);
        // Rebuild the expected rows from the columns and compare with the registry's quantized pools.
        testing::pool_rows rows;
        const auto& state = history.newest();
        std::vector<std::uint32_t> ids;
        for (std::size_t c = 0; c < s.size(); ++c) {
            flatten(state.ids(c), ids);
            for (std::size_t k = 0; k < ids.size(); ++k) {
                rows.push_back(static_cast<std::uint32_t>(c));
                rows.push_back(ids[k]);
                for (const auto& column : state.components[c].fields) {
                    rows.push_back(column.get(k));
                }
            }
        }
        ASSERT_EQ(rows, testing::server_pools(s, reg)) << "tick " << t;
        ASSERT_TRUE(std::is_sorted(ids.begin(), ids.end()));
        const std::vector<std::uint32_t> generations(history.newest_generations().begin(),
                                                     history.newest_generations().end());
        ASSERT_EQ(state.checksum, state_checksum(history.weights(), state, generations)) << "tick " << t;
        listed += state.written_since ? 1U : 0U;
    }
    EXPECT_GT(listed, 290U) << "the checksum was derived from the changes on most ticks";
    // Memory is bounded: about the columns of 32 ticks.
    EXPECT_LT(history.memory_bytes(), 32U * 400U * 64U);
}

// The same where most components are on every entity (their ids are the entities'), as in the arena:
// entities recycled in place, Health coming and going, a fifth of them moving.
TEST(History, ArenaWorldChecksumFollowsEveryTick) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    arena::scene_random random{20261130};
    std::vector<entity> live;
    const auto spawn = [&] {
        const auto e = reg.create();
        reg.emplace<Transform>(e, static_cast<float>(random.uniform(-900.0, 900.0)), 0.0F, 0.0F, 0.0F);
        reg.emplace<Kind>(e, std::uint8_t{2});
        return e;
    };
    for (int i = 0; i < 300; ++i) {
        live.push_back(spawn());
    }
    std::size_t listed = 0;
    for (tick_type t = 1; t <= 400; ++t) {
        for (auto& e : live) {
            const double roll = random.uniform(0.0, 1.0);
            if (roll < 0.01) {
                reg.destroy(e);
                e = spawn(); // the index just freed: a new occupant in place
            } else if (roll < 0.03) {
                if (reg.all_of<Health>(e)) {
                    reg.remove<Health>(e);
                } else {
                    reg.emplace<Health>(e, std::uint16_t{40});
                }
            } else if (roll < 0.23) {
                reg.patch<Transform>(e, [](Transform& tr) { tr.x += 0.5F; });
            }
        }
        history.capture(t, 0);
        const auto& state = history.newest();
        const std::vector<std::uint32_t> generations(history.newest_generations().begin(),
                                                     history.newest_generations().end());
        ASSERT_EQ(state.checksum, state_checksum(history.weights(), state, generations)) << "tick " << t;
        listed += state.written_since ? 1U : 0U;
    }
    EXPECT_EQ(listed, 399U);
}

} // namespace
} // namespace ecsnet::proto::history_test
