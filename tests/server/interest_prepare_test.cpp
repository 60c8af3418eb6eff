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
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/view_mirror.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/server_metrics.hpp"

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

} // namespace
