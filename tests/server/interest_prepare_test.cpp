// Snapshots written ahead on the workers (interest_replicator::prepare, --workers 2), without sockets: the
// replicator as game_server::tick drives it, and one view_mirror per client applying what it is handed.
// - every snapshot applies (its checksum proves the mirror equals what the client should hold) and every
//   mirror verifies, including the clients whose prepared snapshot was now and then never sent (a link
//   that was closing): their views take it as in flight, and nothing they receive is wrong;
// - those are counted as discarded, the others as prepared;
// - clients are balanced between the two encoders, and the encoders' statistics add up to the metrics.

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/view_mirror.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/server_metrics.hpp"

namespace interest_prepare_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

struct mirrored_client {
    explicit mirrored_client(const proto::schema& schema)
        : mirror{schema} {}
    std::unique_ptr<client_replication> replication;
    proto::view_mirror mirror;
    std::deque<v1::Ack> acks; // in flight back to the server
    std::size_t applied{};
};

// Whether a ViewSnapshot's body starts with its tables: its first bit, bit 0 of byte 0 (protocol.md 7.1).
bool carries_tables(std::string_view envelope_bytes) {
    v1::Envelope envelope;
    if (!envelope.ParseFromString(std::string{envelope_bytes}) || envelope.view_snapshot().body().empty()) {
        return false;
    }
    return (static_cast<unsigned char>(envelope.view_snapshot().body()[0]) & 1U) != 0;
}

TEST(InterestPrepare, PreparedSnapshotsKeepMirrorsExactEvenWhenSomeAreNeverSent) {
    arena_world world{arena_options{2'000, 7, 30, 1}};
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    server_metrics metrics;
    interest_replicator replicator{world, history, *world.spatial(),
                                   interest_options{160.0F, 128, 30, 2, 128, 52, 2}, metrics};
    ASSERT_EQ(replicator.encoder_count(), 2U);

    constexpr std::size_t count = 8;
    std::vector<std::unique_ptr<mirrored_client>> clients;
    std::vector<client_replication*> replications;
    for (std::size_t i = 0; i < count; ++i) {
        const auto id = static_cast<client_id>(i + 1);
        const auto avatar = world.client_joined(id, "client" + std::to_string(id));
        auto c = std::make_unique<mirrored_client>(world.replicated_schema());
        std::optional<refusal> refused;
        c->replication = replicator.join(id, avatar, v1::ClientHello{}, refused);
        ASSERT_NE(c->replication, nullptr);
        v1::ServerWelcome welcome;
        replicator.welcome(*c->replication, welcome);
        c->mirror.welcome(welcome);
        replications.push_back(c->replication.get());
        clients.push_back(std::move(c));
    }
    std::size_t on_first = 0;
    for (const auto* r : replications) {
        on_first += replicator.encoder_of(*r) == 0 ? 1 : 0;
    }
    EXPECT_EQ(on_first, count / 2) << "the least loaded encoder at each join";

    std::size_t never_sent = 0;
    constexpr proto::tick_type ticks = 300;
    for (proto::tick_type tick = 1; tick <= ticks; ++tick) {
        world.update(1.0 / 30.0);
        const auto time_us = std::uint64_t{tick} * 1'000'000 / 30;
        history.capture(tick, time_us);
        replicator.tick(tick, time_us);
        replicator.prepare(replications);
        if (tick % 50 == 0) {
            replicator.prepare(replications); // twice in a tick: the first ones are kept, none discarded
        }
        for (std::size_t i = 0; i < count; ++i) {
            auto& c = *clients[i];
            // Clients 0 and 1 (one on each encoder) now and then do not take theirs: their link was closing.
            if (i < 2 && tick > 3 && tick < ticks && tick % (5 + static_cast<proto::tick_type>(i)) == 0) {
                ++never_sent;
                continue;
            }
            const auto snapshot = replicator.snapshot(*c.replication);
            ASSERT_TRUE(snapshot.has_value());
            EXPECT_EQ(snapshot->tick, tick);
            replicator.sent(*c.replication, snapshot->envelope().size() + 52);
            const auto applied = c.mirror.apply_envelope(snapshot->envelope());
            ASSERT_TRUE(applied) << "client " << i << " tick " << tick << ": " << applied.message();
            ASSERT_TRUE(c.mirror.verify()) << "client " << i << " tick " << tick;
            ++c.applied;
            c.acks.push_back(c.mirror.make_ack());
            // Acks arrive 1 to 3 ticks late.
            while (c.acks.size() > 1 + i % 3) {
                replicator.on_ack(*c.replication, c.acks.front());
                c.acks.pop_front();
            }
        }
    }
    for (std::size_t i = 0; i < count; ++i) {
        EXPECT_GT(clients[i]->mirror.size(), 0U) << "client " << i;
        EXPECT_GE(clients[i]->applied, ticks - ticks / 5) << "client " << i;
    }
    // Each one not taken is found stale by the next prepare().
    EXPECT_EQ(metrics.snapshots_discarded.value(), never_sent);
    EXPECT_EQ(metrics.snapshots_prepared.value(), count * ticks - never_sent);
    const auto stats = replicator.encoder_stats();
    EXPECT_EQ(stats.lookups, replicator.encoder(0).stats().lookups + replicator.encoder(1).stats().lookups);
    EXPECT_EQ(metrics.view_cache_lookups.value(), stats.lookups);
    EXPECT_EQ(metrics.view_cache_hits.value(), stats.hits);
    EXPECT_GT(replicator.encoder(0).stats().lookups, 0U);
    EXPECT_GT(replicator.encoder(1).stats().lookups, 0U);
}

// Clients go to the encoder of their stretch of the arena (by their avatar's x), so that neighbours share
// codes; one that walks (here: is moved) to the other side follows, and its mirror stays exact (its next
// view carries the other encoder's tables).
TEST(InterestPrepare, ClientsFollowTheirPlaceBetweenEncodersWithExactMirrors) {
    arena_world world{arena_options{2'000, 7, 30, 1}};
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    server_metrics metrics;
    interest_replicator replicator{world, history, *world.spatial(),
                                   interest_options{160.0F, 128, 30, 2, 128, 52, 2}, metrics};
    const auto area = *world.spatial(); // a copy: spatial() returns an optional by value
    const float west = area.min_x + 0.2F * (area.max_x - area.min_x);
    const float east = area.min_x + 0.8F * (area.max_x - area.min_x);

    constexpr std::size_t count = 8;
    std::vector<std::unique_ptr<mirrored_client>> clients;
    std::vector<client_replication*> replications;
    std::vector<entity> avatars;
    for (std::size_t i = 0; i < count; ++i) {
        const auto id = static_cast<client_id>(i + 1);
        avatars.push_back(world.client_joined(id, "client" + std::to_string(id)));
        // West, west, east, east, ...: the least-loaded choice at join alternates encoders, so each
        // encoder starts with clients of both sides.
        world.registry().patch<arena::Transform>(avatars.back(),
                                                 [&](arena::Transform& t) { t.x = i % 4 < 2 ? west : east; });
        auto c = std::make_unique<mirrored_client>(world.replicated_schema());
        std::optional<refusal> refused;
        c->replication = replicator.join(id, avatars.back(), v1::ClientHello{}, refused);
        ASSERT_NE(c->replication, nullptr);
        v1::ServerWelcome welcome;
        replicator.welcome(*c->replication, welcome);
        c->mirror.welcome(welcome);
        replications.push_back(c->replication.get());
        clients.push_back(std::move(c));
    }
    std::size_t moved_with_tables = 0;
    const auto run = [&](proto::tick_type from, proto::tick_type to) {
        std::vector<std::size_t> encoder_before(count);
        for (proto::tick_type tick = from; tick <= to; ++tick) {
            world.update(1.0 / 30.0);
            const auto time_us = std::uint64_t{tick} * 1'000'000 / 30;
            history.capture(tick, time_us);
            replicator.tick(tick, time_us);
            for (std::size_t i = 0; i < count; ++i) {
                encoder_before[i] = replicator.encoder_of(*replications[i]);
            }
            replicator.prepare(replications);
            for (std::size_t i = 0; i < count; ++i) {
                auto& c = *clients[i];
                const auto snapshot = replicator.snapshot(*c.replication);
                ASSERT_TRUE(snapshot.has_value());
                if (replicator.encoder_of(*c.replication) != encoder_before[i]) {
                    // Moved: its first view from the new encoder starts with that encoder's tables.
                    EXPECT_TRUE(carries_tables(snapshot->envelope()))
                        << "client " << i << " tick " << tick << ": no tables";
                    ++moved_with_tables;
                }
                replicator.sent(*c.replication, snapshot->envelope().size() + 52);
                const auto applied = c.mirror.apply_envelope(snapshot->envelope());
                ASSERT_TRUE(applied) << "client " << i << " tick " << tick << ": " << applied.message();
                ASSERT_TRUE(c.mirror.verify()) << "client " << i << " tick " << tick;
                c.acks.push_back(c.mirror.make_ack());
                while (c.acks.size() > 1 + i % 3) {
                    replicator.on_ack(*c.replication, c.acks.front());
                    c.acks.pop_front();
                }
            }
        }
    };
    const auto encoder_of = [&](std::size_t i) { return replicator.encoder_of(*replications[i]); };
    const auto is_west = [](std::size_t i) { return i % 4 < 2; };
    run(1, 20);
    for (std::size_t i = 0; i < count; ++i) {
        EXPECT_EQ(encoder_of(i), encoder_of(is_west(i) ? 0 : 2)) << "client " << i;
    }
    EXPECT_NE(encoder_of(0), encoder_of(2));
    const auto moves = metrics.encoder_moves.value();
    EXPECT_GE(moves, 2U) << "half of each side started on the other side's encoder";

    // Two western clients cross to the east, two eastern ones to the west: the shares stay even.
    const auto east_encoder = encoder_of(2);
    for (const std::size_t i : {0U, 4U}) {
        world.registry().patch<arena::Transform>(avatars[i], [&](arena::Transform& t) { t.x = east; });
    }
    for (const std::size_t i : {2U, 6U}) {
        world.registry().patch<arena::Transform>(avatars[i], [&](arena::Transform& t) { t.x = west; });
    }
    run(21, 60);
    EXPECT_EQ(encoder_of(0), east_encoder);
    EXPECT_EQ(encoder_of(4), east_encoder);
    EXPECT_NE(encoder_of(2), east_encoder);
    EXPECT_NE(encoder_of(6), east_encoder);
    EXPECT_EQ(metrics.encoder_moves.value(), moves + 4);
    EXPECT_EQ(moved_with_tables, metrics.encoder_moves.value());
}

// --workers 1: nothing is written ahead; snapshot() writes when asked, as without workers.
TEST(InterestPrepare, OneWorkerWritesWhenAsked) {
    arena_world world{arena_options{500, 7, 30, 1}};
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    server_metrics metrics;
    interest_replicator replicator{world, history, *world.spatial(),
                                   interest_options{160.0F, 128, 30, 2, 128, 52, 1}, metrics};
    EXPECT_EQ(replicator.encoder_count(), 1U);
    std::vector<std::unique_ptr<client_replication>> owned;
    std::vector<client_replication*> replications;
    for (client_id id = 1; id <= 3; ++id) {
        std::optional<refusal> refused;
        owned.push_back(replicator.join(id, world.client_joined(id, "c"), v1::ClientHello{}, refused));
        replications.push_back(owned.back().get());
    }
    for (proto::tick_type tick = 1; tick <= 5; ++tick) {
        world.update(1.0 / 30.0);
        history.capture(tick, tick * 33'333U);
        replicator.tick(tick, tick * 33'333U);
        replicator.prepare(replications);
        for (auto* r : replications) {
            const auto snapshot = replicator.snapshot(*r);
            ASSERT_TRUE(snapshot.has_value());
            EXPECT_EQ(snapshot->tick, tick);
        }
    }
    EXPECT_EQ(metrics.snapshots_prepared.value(), 0U);
    EXPECT_EQ(metrics.snapshots_discarded.value(), 0U);
}

// The tick's other work on the capture (game_server passes lag compensation's record) runs once a tick,
// before tick() returns, with one worker or beside the tables' update on two; what it reads is the tick
// just captured, and the snapshots written after it are the same either way.
TEST(InterestPrepare, TheTicksOtherWorkRunsOnceBeforeTickReturns) {
    std::vector<std::string> snapshots_by_workers[2];
    for (const std::size_t workers : {std::size_t{1}, std::size_t{2}}) {
        arena_world world{arena_options{2'000, 11, 30, 1}};
        proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                        proto::history_options{32, 30}};
        server_metrics metrics;
        interest_replicator replicator{world, history, *world.spatial(),
                                       interest_options{160.0F, 128, 30, 2, 128, 52, workers}, metrics};
        std::optional<refusal> refused;
        const auto joined = replicator.join(1, world.client_joined(1, "c"), v1::ClientHello{}, refused);
        ASSERT_NE(joined, nullptr);
        std::vector<client_replication*> replications{joined.get()};
        std::size_t runs = 0;
        std::size_t saw_the_capture = 0;
        constexpr proto::tick_type ticks = 40;
        for (proto::tick_type tick = 1; tick <= ticks; ++tick) {
            world.update(1.0 / 30.0);
            history.capture(tick, tick * 33'333U);
            replicator.tick(tick, tick * 33'333U, [&] {
                ++runs;
                saw_the_capture += history.newest_tick() == tick ? 1 : 0;
            });
            EXPECT_EQ(runs, tick) << workers << " worker(s)";
            replicator.prepare(replications);
            const auto snapshot = replicator.snapshot(*joined);
            ASSERT_TRUE(snapshot.has_value());
            snapshots_by_workers[workers - 1].emplace_back(snapshot->envelope());
            v1::Ack ack;
            ack.set_tick(tick);
            replicator.on_ack(*joined, ack);
        }
        EXPECT_EQ(saw_the_capture, ticks);
    }
    EXPECT_EQ(snapshots_by_workers[0], snapshots_by_workers[1]);
}

} // namespace

} // namespace interest_prepare_test
