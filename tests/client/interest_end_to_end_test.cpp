// Interest management end to end (issue 15): a server with a relevancy radius, SDK clients that steer their
// avatars, and what each of them mirrors.
// - every applied view passes the mirror's checks (header, lists, checksum of the whole view) and the
//   registry equals the view (verify), with no refusal;
// - a client mirrors only what is near its avatar: every mirrored entity is within the leave radius of the
//   avatar's mirrored position (with the margin of an entity's travel between recomputations), and it
//   mirrors far fewer entities than the world holds;
// - entities that go out of range are destroyed in the mirror with removal_reason::out_of_relevancy, and
//   the avatar of a client that leaves is destroyed with removal_reason::destroyed;
// - a client asking for a budget too small for its own avatar is refused with BUDGET_TOO_SMALL;
// - a thin client (no mirror) stays connected and acks, and the server keeps sending to it;
// - with two workers over UDP, snapshots written ahead on the workers, each client pinned to one of two
//   encoders: 40 walking clients mirror exactly, and the encoders' statistics add up to the metrics.

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/arena/input.hpp"
#include "ecsnet/server/interest_replicator.hpp"

namespace interest_end_to_end_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::client::testing;
using ecsnet::arena::Transform;

constexpr float radius = 120.0F;

// Over both transports (InterestEndToEnd/tcp, /udp).
class InterestEndToEnd : public ::testing::TestWithParam<ecsnet::client::transport_kind> {
protected:
    ecsnet::client::client_options named(std::string name) const {
        auto options = over(GetParam(), std::move(name));
        options.interpolation_states = 0;
        return options;
    }
};

struct removal_counter {
    std::map<proto::removal_reason, std::size_t> by_reason;
};

TEST_P(InterestEndToEnd, ClientsMirrorOnlyWhatIsNearAndEverythingTheyMirrorIsExact) {
    test_server server{3000, 30, radius};
    ecsnet::client::client walker{arena::replicated_schema(), named("walker")};
    ecsnet::client::client watcher{arena::replicated_schema(), named("watcher")};
    removal_counter removed;
    std::size_t refusals = 0;
    std::size_t applied = 0;
    std::size_t checked = 0;
    double farthest = 0.0;
    std::size_t largest_view = 0;
    walker.registry().on_destroy<proto::net_id>().connect([&](registry& reg, entity e) {
        static_cast<void>(reg);
        ++removed.by_reason[walker.mirror().removal_reason_of(e)];
    });
    walker.on_snapshot_refused([&](const proto::error&) { ++refusals; });
    walker.on_snapshot([&](const proto::applied_snapshot&) {
        ++applied;
        ASSERT_TRUE(walker.mirror().verify());
        const auto me = walker.own_entity();
        const auto* mine = me == null_entity ? nullptr : walker.registry().try_get<Transform>(me);
        if (mine == nullptr) {
            return;
        }
        std::size_t count = 0;
        walker.registry().view<const Transform>().each([&](entity e, const Transform& t) {
            ++count;
            static_cast<void>(e);
            farthest = std::max(farthest, std::hypot(double{t.x} - mine->x, double{t.y} - mine->y));
        });
        largest_view = std::max(largest_view, count);
        ++checked;
    });
    ASSERT_TRUE(walker.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(watcher.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(
        poll_until(walker, [&] { return walker.state() == ecsnet::client::client_state::connected; }));
    EXPECT_TRUE(walker.interest_managed());
    // The walker crosses the arena fast, so entities keep entering and leaving its view.
    const auto deadline = std::chrono::steady_clock::now() + 4s;
    while (std::chrono::steady_clock::now() < deadline) {
        walker.send_input(arena::encode(arena::move_input{0, 1.0F, 0.3F, 8.0F}));
        walker.poll();
        watcher.poll();
        std::this_thread::sleep_for(15ms);
    }
    EXPECT_GT(applied, 80U);
    EXPECT_GT(checked, 80U);
    EXPECT_EQ(refusals, 0U);
    // Entities move up to 8 m/s and the set is recomputed every 2 ticks: a margin of a few metres.
    EXPECT_LE(farthest, radius * 1.1 + 5.0);
    EXPECT_LT(largest_view, 600U) << "a client mirrors a small part of 3,000 entities";
    EXPECT_GT(removed.by_reason[proto::removal_reason::out_of_relevancy], 0U);
    EXPECT_EQ(removed.by_reason[proto::removal_reason::none], 0U) << "every removal says why";

    // The watcher leaves: if it was in the walker's view, its avatar is destroyed, not out of relevancy.
    watcher.close();
    poll_for(walker, 300ms);
    EXPECT_EQ(walker.stats().checksum_mismatches, 0U);
    EXPECT_EQ(walker.stats().snapshots_refused, 0U);
}

// The relevant sets recomputed on two threads (the server's --workers 2): the clients due in a tick are
// split between them (interest_replicator), and what each client mirrors is still only what is near.
TEST_P(InterestEndToEnd, SetsRecomputedOnTwoWorkersStayNearAndExact) {
    test_server server{3000, 30, radius, {}, 2};
    ecsnet::client::client walker{arena::replicated_schema(), named("walker")};
    std::vector<std::unique_ptr<ecsnet::client::client>> crowd; // thin: 6 of 12 sets due a tick
    for (int i = 0; i < 11; ++i) {
        auto options = named("crowd" + std::to_string(i));
        options.thin = true;
        crowd.push_back(std::make_unique<ecsnet::client::client>(arena::replicated_schema(), options));
        ASSERT_TRUE(crowd.back()->connect("127.0.0.1", server.port()));
    }
    std::size_t applied = 0;
    double farthest = 0.0;
    walker.on_snapshot([&](const proto::applied_snapshot&) {
        ++applied;
        ASSERT_TRUE(walker.mirror().verify());
        const auto* mine = walker.registry().try_get<Transform>(walker.own_entity());
        if (mine == nullptr) {
            return;
        }
        walker.registry().view<const Transform>().each([&](const Transform& t) {
            farthest = std::max(farthest, std::hypot(double{t.x} - mine->x, double{t.y} - mine->y));
        });
    });
    ASSERT_TRUE(walker.connect("127.0.0.1", server.port()));
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < deadline) {
        walker.send_input(arena::encode(arena::move_input{0, 1.0F, 0.3F, 8.0F}));
        walker.poll();
        for (auto& c : crowd) {
            c->poll();
        }
        std::this_thread::sleep_for(15ms);
    }
    EXPECT_GT(applied, 60U);
    EXPECT_LE(farthest, radius * 1.1 + 5.0);
    EXPECT_EQ(walker.stats().checksum_mismatches, 0U);
    EXPECT_EQ(walker.stats().snapshots_refused, 0U);
    for (auto& c : crowd) {
        EXPECT_EQ(c->state(), ecsnet::client::client_state::connected);
        EXPECT_GT(c->stats().snapshots_received, 30U);
    }
}

TEST_P(InterestEndToEnd, ABudgetTooSmallForTheOwnAvatarIsRefusedAtConnect) {
    test_server server{200, 30, radius};
    auto options = named("starved");
    options.max_receive_kbps = 1; // 4 bytes a tick
    ecsnet::client::client c{arena::replicated_schema(), options};
    ASSERT_TRUE(c.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(c, [&] { return c.state() == ecsnet::client::client_state::disconnected; }));
    EXPECT_EQ(c.disconnect_reason(), ecsnet::client::disconnect_reason::budget_too_small);
    EXPECT_NE(c.disconnect_message().find("kbps"), std::string::npos) << c.disconnect_message();
}

TEST_P(InterestEndToEnd, AThinClientAcksWithoutMirroringAndKeepsReceiving) {
    test_server server{1000, 30, radius};
    auto options = named("thin");
    options.thin = true;
    ecsnet::client::client c{arena::replicated_schema(), options};
    ASSERT_TRUE(c.connect("127.0.0.1", server.port()));
    poll_for(c, 1500ms);
    EXPECT_EQ(c.state(), ecsnet::client::client_state::connected);
    EXPECT_GT(c.stats().snapshots_applied, 30U);
    EXPECT_EQ(c.registry().alive(), 0U) << "a thin client mirrors nothing";
    // Its acks keep the server sending deltas, not full states.
    const auto infos = server.server().call([&] { return server.server().clients(); });
    ASSERT_EQ(infos.size(), 1U);
    ASSERT_TRUE(infos[0].acked.has_value());
    EXPECT_GT(*infos[0].acked, 20U);
    // on_snapshot reports each acked header.
    std::size_t reported = 0;
    c.on_snapshot([&](const proto::applied_snapshot& header) {
        EXPECT_GT(header.server_time_us, 0U);
        ++reported;
    });
    poll_for(c, 300ms);
    EXPECT_GT(reported, 3U);
}

// The tick's snapshots written ahead on two workers (--workers 2; UDP links, which send them at once:
// interest_replicator::prepare), each client pinned to one of two encoders for life. Over UDP only, since
// TCP links write theirs when their socket is idle, on the network thread.
TEST(InterestPreparedSnapshots, FortyClientsOnTwoEncodersMirrorExactly) {
    constexpr std::size_t count = 40;
    test_server server{3000, 30, radius, {}, 2};
    std::vector<std::unique_ptr<ecsnet::client::client>> clients;
    std::vector<std::size_t> applied(count, 0);
    std::vector<std::size_t> unverified(count, 0);
    std::vector<std::size_t> refused(count, 0);
    for (std::size_t i = 0; i < count; ++i) {
        auto options = over(ecsnet::client::transport_kind::udp, "walker" + std::to_string(i));
        options.interpolation_states = 0;
        clients.push_back(std::make_unique<ecsnet::client::client>(arena::replicated_schema(), options));
        auto& c = *clients.back();
        c.on_snapshot([&, i](const proto::applied_snapshot&) {
            ++applied[i];
            if (!clients[i]->mirror().verify()) {
                ++unverified[i];
            }
        });
        c.on_snapshot_refused([&, i](const proto::error&) { ++refused[i]; });
        ASSERT_TRUE(c.connect("127.0.0.1", server.port()));
    }
    // Each walks its own way, so entities keep entering and leaving the views.
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < deadline) {
        for (std::size_t i = 0; i < count; ++i) {
            const auto angle = static_cast<float>(i) * 0.157F;
            clients[i]->send_input(
                arena::encode(arena::move_input{0, std::cos(angle), std::sin(angle), 8.0F}));
            clients[i]->poll();
        }
        std::this_thread::sleep_for(10ms);
    }
    for (std::size_t i = 0; i < count; ++i) {
        SCOPED_TRACE("client " + std::to_string(i));
        EXPECT_EQ(clients[i]->state(), ecsnet::client::client_state::connected);
        EXPECT_GT(applied[i], 20U);
        EXPECT_EQ(unverified[i], 0U);
        EXPECT_EQ(refused[i], 0U);
        EXPECT_EQ(clients[i]->stats().checksum_mismatches, 0U);
        EXPECT_EQ(clients[i]->stats().snapshots_refused, 0U);
    }

    struct encoder_figures {
        std::size_t encoders{};
        std::vector<std::uint64_t> lookups;
        proto::view_encoder_stats sum;
        std::uint64_t metric_lookups{};
        std::uint64_t metric_hits{};
        std::uint64_t prepared{};
        std::uint64_t encoded{};
    };
    const auto figures = server.server().call([&] {
        auto& replicator = dynamic_cast<server::interest_replicator&>(server.server().replication());
        encoder_figures f;
        f.encoders = replicator.encoder_count();
        for (std::size_t at = 0; at < f.encoders; ++at) {
            f.lookups.push_back(replicator.encoder(at).stats().lookups);
        }
        f.sum = replicator.encoder_stats();
        const auto& metrics = server.server().metrics();
        f.metric_lookups = metrics.view_cache_lookups.value();
        f.metric_hits = metrics.view_cache_hits.value();
        f.prepared = metrics.snapshots_prepared.value();
        f.encoded = metrics.snapshot_size.count();
        return f;
    });
    ASSERT_EQ(figures.encoders, 2U);
    // Both encoders serve clients, and the metrics count what both did.
    EXPECT_GT(figures.lookups[0], 0U);
    EXPECT_GT(figures.lookups[1], 0U);
    EXPECT_EQ(figures.sum.lookups, figures.lookups[0] + figures.lookups[1]);
    EXPECT_EQ(figures.metric_lookups, figures.sum.lookups);
    EXPECT_EQ(figures.metric_hits, figures.sum.hits);
    EXPECT_GT(figures.sum.hits, 0U) << "clients of one encoder share codes";
    EXPECT_LT(figures.sum.hits, figures.sum.lookups);
    // Most snapshots were written ahead (all but the full states sent at join and the flow-controlled).
    EXPECT_GT(figures.prepared, figures.encoded / 2) << figures.prepared << " of " << figures.encoded;
}

INSTANTIATE_TEST_SUITE_P(Transports, InterestEndToEnd,
                         ::testing::Values(ecsnet::client::transport_kind::tcp,
                                           ecsnet::client::transport_kind::udp),
                         transport_name);

} // namespace

} // namespace interest_end_to_end_test
