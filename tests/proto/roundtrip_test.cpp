// Round trip: 10,000 ticks of a random world of about 60 entities (creates, destroys with index recycling,
// components added and removed, entities leaving and re-entering replication, field changes from one step to
// the extremes, bursts), each tick encoded against a random baseline (and random second baseline) both sides
// still keep, sometimes as a full state, sometimes dropped on the way; after every applied tick the client's
// pools equal the server's quantized pools exactly, its state equals the server's, and the checksums agree.

#include <gtest/gtest.h>

#include <map>

#include "ecsnet/proto/encoder.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "replication_support.hpp"

namespace ecsnet::proto::roundtrip_test {
namespace {

using testing::client_pools;
using testing::server_pools;
using testing::test_schema;

struct round_trip_stats {
    std::size_t applied{};
    std::size_t full{};
    std::size_t extrapolated{};
    std::size_t idle{};
    std::size_t lagging{}; // baseline older than the client's newest state
    std::size_t replaced{};
};

// Picks what a client acked: its newest tick half the time, else a random older one it still keeps.
baselines choose(arena::scene_random& rng, const snapshot_history& history, const mirror& client) {
    std::vector<tick_type> common;
    for (std::size_t n = 0; n < 64; ++n) {
        const auto newest = client.newest_tick();
        if (!newest || *newest < n) {
            break;
        }
        const auto tick = static_cast<tick_type>(*newest - n);
        if (client.state(tick) != nullptr && history.contains(tick) && tick < history.newest_tick()) {
            common.push_back(tick);
        }
    }
    baselines wanted;
    if (common.empty() || rng.chance(0.05)) {
        return wanted;
    }
    const auto at = rng.chance(0.5) ? 0 : rng.below(common.size());
    wanted.baseline = common[at];
    if (at + 1 < common.size() && rng.chance(0.7)) {
        wanted.second = common[at + 1 + rng.below(common.size() - at - 1)];
    }
    return wanted;
}

void check_mirror(const snapshot_history& history, const registry& server, const mirror& client) {
    const auto& server_state = history.newest();
    const auto* client_state = client.newest_state();
    ASSERT_NE(client_state, nullptr);
    ASSERT_EQ(client_state->tick, server_state.tick);
    ASSERT_TRUE(client_state->same_contents(server_state, false))
        << client_state->first_difference(server_state, history.layout(), false);
    const auto generations = history.newest_generations();
    ASSERT_TRUE(std::equal(generations.begin(), generations.end(), client_state->generations.begin(),
                           client_state->generations.end()));
    ASSERT_EQ(client_state->checksum, server_state.checksum);
    ASSERT_EQ(state_checksum(history.weights(), *client_state), server_state.checksum);
    ASSERT_EQ(client_pools(client), server_pools(history.replicated_schema(), server));
    const auto* ids = client.registry().try_storage<net_id>();
    ASSERT_EQ(ids == nullptr ? 0U : ids->size(), server_state.entity_count());
}

TEST(RoundTrip, TenThousandRandomTicks) {
    const auto& schema = test_schema();
    registry server;
    snapshot_history history{schema, server};
    snapshot_encoder encoder{history};
    mirror client{schema};
    testing::random_world world{server, 42, 60};
    arena::scene_random rng{7};
    round_trip_stats stats;
    std::map<std::uint32_t, std::pair<std::uint32_t, entity>> identity; // index -> (generation, local entity)

    for (tick_type tick = 1; tick <= 10000; ++tick) {
        world.step();
        history.capture(tick, history.nominal_time_us(tick) + rng.below(3000));
        const auto wanted = choose(rng, history, client);
        v1::Envelope envelope;
        const auto used = encoder.encode(wanted, *envelope.mutable_snapshot());
        ASSERT_EQ(used.baseline, wanted.baseline);
        const auto bytes = encode_envelope(envelope);
        if (rng.chance(0.08)) {
            continue; // lost on the way
        }
        const auto newest = client.newest_tick();
        auto applied = client.apply_envelope(bytes);
        ASSERT_TRUE(applied) << "tick " << tick << ": " << applied.message();
        ASSERT_EQ(applied->tick, tick);
        ASSERT_EQ(applied->server_time_us, history.newest().server_time_us);
        ++stats.applied;
        stats.full += applied->full_state ? 1 : 0;
        stats.extrapolated += applied->second ? 1 : 0;
        stats.idle += envelope.snapshot().columns().empty() && !applied->full_state ? 1 : 0;
        stats.lagging += applied->baseline && newest && *applied->baseline < *newest ? 1 : 0;
        check_mirror(history, server, client);
        if (::testing::Test::HasFatalFailure()) {
            FAIL() << "at tick " << tick;
        }
        // A recycled or re-entered index is a new local entity, never the previous occupant's.
        const auto* state = client.newest_state();
        std::vector<std::uint32_t> ids;
        ids = state->flat(ids);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto local = client.find_index(ids[i]);
            auto [it, fresh] = identity.try_emplace(ids[i], state->generations[i], local);
            if (!fresh) {
                if (it->second.first != state->generations[i]) {
                    ASSERT_NE(it->second.second, local) << "index " << ids[i] << " kept its local entity";
                    ++stats.replaced;
                } else {
                    ASSERT_EQ(it->second.second, local);
                }
                it->second = {state->generations[i], local};
            }
        }
    }
    // The run covered every path.
    EXPECT_GT(stats.applied, 9000U);
    EXPECT_GT(stats.full, 100U);
    EXPECT_GT(stats.extrapolated, 3000U);
    EXPECT_GT(stats.lagging, 1000U);
    EXPECT_GT(stats.replaced, 100U);
    RecordProperty("idle", static_cast<int>(stats.idle));
}

// The standard scene (500 entities, 200 ticks) with the arena schema: the same guarantees, for a client
// whose acks are 1 tick old and one whose acks are 4 ticks old (extrapolation over 4 ticks).
TEST(RoundTrip, StandardSceneAgainstOneAndFourTickBaselines) {
    const auto& schema = arena::replicated_schema();
    registry server;
    arena::scene world{server, arena::scene_options{.entities = 500, .seed = 3}};
    world.populate();
    snapshot_history history{schema, server};
    snapshot_encoder encoder{history};
    mirror near{schema};
    mirror far{schema};
    for (tick_type tick = 1; tick <= 200; ++tick) {
        world.step();
        history.capture(tick, history.nominal_time_us(tick));
        for (auto [client, age] : {std::pair{&near, 1U}, std::pair{&far, 4U}}) {
            baselines wanted;
            if (tick > age + 1) {
                wanted = {tick - age, tick - age - 1};
            }
            const auto snapshot = encoder.encode(wanted);
            ASSERT_EQ(snapshot->used.baseline, wanted.baseline);
            auto applied = client->apply_envelope(snapshot->envelope);
            ASSERT_TRUE(applied) << applied.message();
            check_mirror(history, server, *client);
            if (::testing::Test::HasFatalFailure()) {
                FAIL() << "at tick " << tick << " age " << age;
            }
        }
    }
}

} // namespace
} // namespace ecsnet::proto::roundtrip_test
