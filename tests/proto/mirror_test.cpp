// The client mirror: registry signals for arrivals, changes and departures; idle ticks; refusal of an
// unknown baseline and recovery by full state keeping local entities; stale snapshots; the server's
// ack tracker and snapshot cache; what the mirror keeps; members and components the game owns.

#include <gtest/gtest.h>

#include "ecsnet/proto/encoder.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "replication_support.hpp"

namespace ecsnet::proto::mirror_test {
namespace {

using arena::Health;
using arena::Kind;
using arena::Transform;

struct Sprite { // the client's own component on mirrored entities
    int id{};
};

// A server and one client connected by ack_tracker and snapshot_encoder, as the transports will be.
struct link {
    registry server;
    snapshot_history history{arena::replicated_schema(), server};
    snapshot_encoder encoder{history};
    ack_tracker acks;
    mirror client{arena::replicated_schema()};
    tick_type tick{};

    result<applied_snapshot> step(bool deliver = true) {
        ++tick;
        history.capture(tick, history.nominal_time_us(tick) + 100);
        const auto snapshot = encoder.encode(acks.next());
        if (!deliver) {
            return make_error(errc::stale_snapshot, "dropped");
        }
        auto applied = client.apply_envelope(snapshot->envelope);
        acks.on_ack(client.make_ack(), tick);
        return applied;
    }
};

TEST(Mirror, SignalsAnnounceArrivalsChangesAndDepartures) {
    link l;
    int arrived = 0;
    int moved = 0;
    int departed = 0;
    bool complete_on_arrival = true;
    auto& reg = l.client.registry();
    reg.on_construct<net_id>().connect([&](registry& r, entity e) {
        ++arrived;
        complete_on_arrival = complete_on_arrival && r.all_of<Transform, Health>(e);
    });
    reg.on_update<Transform>().connect([&](registry&, entity) { ++moved; });
    reg.on_destroy<net_id>().connect([&](registry&, entity) { ++departed; });

    std::vector<entity> es;
    for (int i = 0; i < 3; ++i) {
        es.push_back(l.server.create());
        l.server.emplace<Transform>(es.back(), float(i), 0.0F, 0.0F, 0.0F);
        l.server.emplace<Health>(es.back(), std::uint16_t{100});
    }
    ASSERT_TRUE(l.step());
    EXPECT_EQ(arrived, 3);
    EXPECT_TRUE(complete_on_arrival) << "net_id is emplaced after the replicated components";
    l.server.patch<Transform>(es[1], [](Transform& t) { t.x += 1.0F; });
    ASSERT_TRUE(l.step());
    EXPECT_EQ(moved, 1);
    l.server.destroy(es[0]);
    ASSERT_TRUE(l.step());
    EXPECT_EQ(departed, 1);
    EXPECT_EQ(reg.alive(), 2U);
    const auto local = l.client.find(net_entity{to_index(es[1]), to_version(es[1])});
    ASSERT_NE(local, null_entity);
    EXPECT_EQ(reg.get<Transform>(local).x, 2.0F);
    EXPECT_EQ(l.client.net_of(local), (net_entity{to_index(es[1]), to_version(es[1])}));
    EXPECT_EQ(l.client.find_index(to_index(es[0])), null_entity);
    // A new occupant of es[0]'s index is another entity: the old identity no longer finds anything.
    const net_entity gone{to_index(es[0]), to_version(es[0])};
    const auto successor = l.server.create();
    ASSERT_EQ(to_index(successor), gone.index) << "the server recycles the index";
    l.server.emplace<Health>(successor, std::uint16_t{7});
    ASSERT_TRUE(l.step());
    const auto local_successor = l.client.find_index(gone.index);
    ASSERT_NE(local_successor, null_entity);
    const auto successor_id = l.client.net_of(local_successor);
    ASSERT_TRUE(successor_id.has_value());
    EXPECT_NE(successor_id->generation, gone.generation);
    EXPECT_EQ(l.client.find(*successor_id), local_successor);
    EXPECT_EQ(l.client.find(gone), null_entity);
}

TEST(Mirror, IdleTicksCostLittleAndChangeNothing) {
    link l;
    const auto e = l.server.create();
    l.server.emplace<Kind>(e, std::uint8_t{3});
    ASSERT_TRUE(l.step());
    ASSERT_TRUE(l.step());
    int updates = 0;
    l.client.registry().on_update<Kind>().connect([&](registry&, entity) { ++updates; });
    l.history.capture(++l.tick, 0);
    v1::Envelope envelope;
    l.encoder.encode(l.acks.next(), *envelope.mutable_snapshot());
    EXPECT_TRUE(envelope.snapshot().columns().empty());
    EXPECT_FALSE(envelope.snapshot().has_checksum());
    EXPECT_LE(encode_envelope(envelope).size(), 16U);
    const auto applied = l.client.apply_envelope(encode_envelope(envelope));
    ASSERT_TRUE(applied) << applied.message();
    EXPECT_EQ(updates, 0);
    EXPECT_EQ(applied->components_written, 0U);
    EXPECT_EQ(l.client.newest_state()->checksum, l.history.newest().checksum);
}

TEST(Mirror, UnknownBaselineIsRefusedThenAFullStateRecoversKeepingLocalEntities) {
    link l;
    const auto a = l.server.create();
    const auto b = l.server.create();
    l.server.emplace<Transform>(a);
    l.server.emplace<Transform>(b);
    for (int n = 0; n < 5; ++n) {
        ASSERT_TRUE(l.step());
    }
    const auto local_a = l.client.find_index(to_index(a));
    // A snapshot against a baseline the client never had.
    l.history.capture(++l.tick, 0);
    l.server.patch<Transform>(a, [](Transform& t) { t.y = 5.0F; });
    l.history.capture(++l.tick, 0);
    v1::Snapshot snapshot;
    l.encoder.encode(baselines{l.tick - 1, {}}, snapshot);
    const auto before = testing::client_pools(l.client);
    const auto refused = l.client.apply(snapshot);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.code(), errc::unknown_baseline);
    EXPECT_TRUE(l.client.full_state_needed());
    EXPECT_EQ(testing::client_pools(l.client), before);
    // The ack asks for a full state; the tracker gives no baseline; the full state recovers.
    const auto ack = l.client.make_ack();
    EXPECT_TRUE(ack.full_state_requested());
    l.acks.on_ack(ack, l.tick);
    EXPECT_FALSE(l.acks.next().baseline);
    const auto applied = l.step();
    ASSERT_TRUE(applied) << applied.message();
    EXPECT_TRUE(applied->full_state);
    EXPECT_FALSE(l.client.full_state_needed());
    EXPECT_EQ(l.client.find_index(to_index(a)), local_a) << "same occupant, same local entity";
    EXPECT_EQ(l.client.registry().get<Transform>(local_a).y, 5.0F);
    EXPECT_EQ(testing::client_pools(l.client), testing::server_pools(arena::replicated_schema(), l.server));
    // Then deltas again.
    const auto next = l.step();
    ASSERT_TRUE(next);
    EXPECT_TRUE(next->baseline.has_value());
}

TEST(Mirror, StaleSnapshotsAreRefused) {
    link l;
    l.server.emplace<Kind>(l.server.create(), std::uint8_t{1});
    ASSERT_TRUE(l.step());
    v1::Snapshot old;
    l.encoder.encode(baselines{}, old);
    ASSERT_TRUE(l.step());
    EXPECT_EQ(l.client.apply(old).code(), errc::stale_snapshot);
    EXPECT_FALSE(l.client.full_state_needed());
}

TEST(Mirror, KeepsOnlyWhatTheServerMayStillUse) {
    link l;
    arena::scene world{l.server, arena::scene_options{.entities = 200, .seed = 4}};
    world.populate();
    for (int n = 0; n < 50; ++n) {
        world.step();
        ASSERT_TRUE(l.step());
    }
    // Acks one tick behind: the newest, its baseline and the second baseline.
    EXPECT_LE(l.client.stored(), 3U);
    // A client whose acks arrive 4 ticks late keeps a few more.
    mirror far{arena::replicated_schema()};
    ack_tracker far_acks;
    std::vector<v1::Ack> in_flight;
    for (int n = 0; n < 50; ++n) {
        world.step();
        l.history.capture(++l.tick, 0);
        ASSERT_TRUE(far.apply_envelope(l.encoder.encode(far_acks.next())->envelope));
        in_flight.push_back(far.make_ack());
        if (in_flight.size() > 4) {
            far_acks.on_ack(in_flight.front(), l.tick);
            in_flight.erase(in_flight.begin());
        }
    }
    EXPECT_LE(far.stored(), 7U);
    EXPECT_GE(far.stored(), 5U);
    EXPECT_TRUE(far.verify());
}

TEST(Mirror, AckTrackerOnlyMovesForward) {
    ack_tracker acks;
    EXPECT_EQ(acks.next(), baselines{});
    v1::Ack ack;
    ack.set_tick(10);
    acks.on_ack(ack, 12);
    EXPECT_EQ(acks.next(), (baselines{10, {}}));
    ack.set_tick(11);
    acks.on_ack(ack, 12);
    EXPECT_EQ(acks.next(), (baselines{11, 10}));
    ack.set_tick(9); // late
    acks.on_ack(ack, 12);
    EXPECT_EQ(acks.next(), (baselines{11, 10}));
    ack.set_tick(50); // from the future: impossible
    acks.on_ack(ack, 12);
    EXPECT_EQ(acks.next(), (baselines{11, 10}));
    ack.set_full_state_requested(true);
    acks.on_ack(ack, 20);
    EXPECT_EQ(acks.next(), baselines{});
    ack.set_full_state_requested(false);
    ack.set_tick(15); // sent before the client asked for a full state
    acks.on_ack(ack, 21);
    EXPECT_EQ(acks.next(), baselines{});
    ack.set_tick(21);
    acks.on_ack(ack, 21);
    EXPECT_EQ(acks.next(), (baselines{21, {}}));
}

TEST(Mirror, ClientsWithTheSameBaselinesShareTheBytes) {
    link l;
    l.server.emplace<Kind>(l.server.create(), std::uint8_t{1});
    l.history.capture(1, 0);
    l.history.capture(2, 0);
    const auto first = l.encoder.encode(baselines{1, {}});
    const auto second = l.encoder.encode(baselines{1, {}});
    EXPECT_EQ(first.get(), second.get());
    EXPECT_NE(l.encoder.encode(baselines{}).get(), first.get());
    EXPECT_EQ(l.encoder.cached(), 2U);
    l.history.capture(3, 0);
    EXPECT_NE(l.encoder.encode(baselines{1, {}}).get(), first.get());
    EXPECT_EQ(l.encoder.cached(), 1U);
    // A baseline the history no longer has gives a full state.
    EXPECT_EQ(l.encoder.encode(baselines{999, {}})->used, baselines{});
}

TEST(Mirror, TheGameKeepsItsOwnMembersAndComponents) {
    const auto& s = testing::test_schema();
    registry server;
    snapshot_history history{s, server};
    snapshot_encoder encoder{history};
    mirror client{s};
    const auto e = server.create();
    server.emplace<testing::Score>(e, testing::Score{10, -2, 555});
    history.capture(1, 0);
    ASSERT_TRUE(client.apply_envelope(encoder.encode(baselines{})->envelope));
    const auto local = client.find_index(to_index(e));
    auto& reg = client.registry();
    EXPECT_EQ(reg.get<testing::Score>(local).local_only, 0) << "undeclared members are not sent";
    reg.patch<testing::Score>(local, [](testing::Score& sc) { sc.local_only = 77; });
    reg.emplace<Sprite>(local, 4);
    server.patch<testing::Score>(e, [](testing::Score& sc) { sc.points = 11; });
    history.capture(2, 0);
    ASSERT_TRUE(client.apply_envelope(encoder.encode(baselines{1, {}})->envelope));
    EXPECT_EQ(reg.get<testing::Score>(local).points, 11U);
    EXPECT_EQ(reg.get<testing::Score>(local).local_only, 77) << "kept by the client";
    EXPECT_EQ(reg.get<Sprite>(local).id, 4);
    client.clear();
    EXPECT_EQ(reg.alive(), 0U);
    EXPECT_FALSE(client.newest_tick());
    EXPECT_TRUE(client.make_ack().full_state_requested());
}

TEST(Mirror, ServerTimeAndAckFollowTheSnapshots) {
    link l;
    l.server.emplace<Kind>(l.server.create(), std::uint8_t{1});
    const auto applied = l.step();
    ASSERT_TRUE(applied);
    EXPECT_EQ(applied->server_time_us, l.history.nominal_time_us(1) + 100);
    EXPECT_EQ(l.client.make_ack().tick(), 1U);
    EXPECT_FALSE(l.client.make_ack().full_state_requested());
    v1::ServerWelcome welcome;
    welcome.set_tick_rate(60);
    l.client.welcome(welcome);
    l.history.capture(++l.tick, 0);
    // The server's nominal time uses its own tick rate (30): a client told 60 rebuilds another time.
    const auto next = l.client.apply_envelope(l.encoder.encode(l.acks.next())->envelope);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->server_time_us, std::uint64_t{2} * 1000000 / 60 + (0 - l.history.nominal_time_us(2)));
}

} // namespace
} // namespace ecsnet::proto::mirror_test
