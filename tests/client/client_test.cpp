// The client SDK against the real server, in-process on 127.0.0.1: handshake, mirror equal to the server
// tick by tick, inputs moving the avatar, the three ways to run, stats, reconnection, and the disconnects.
// Every test runs over both transports (ClientE2E/tcp, ClientE2E/udp: a development token the client makes
// itself, the server running with --insecure-dev).

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/arena/input.hpp"

namespace client_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::client::testing;
using ecsnet::arena::Transform;
using ecsnet::client::client_options;
using ecsnet::client::client_state;
using ecsnet::client::disconnect_reason;
using ecsnet::client::threading;
using ecsnet::client::transport_kind;

class ClientE2E : public ::testing::TestWithParam<transport_kind> {
protected:
    client_options named(const std::string& name, threading mode = threading::poll) const {
        auto options = over(GetParam(), name);
        options.mode = mode;
        return options;
    }
    void share_io_context(std::size_t runners, bool single_threaded_io);
};

std::string move_payload(float dir_x, float dir_y, float speed) {
    arena::move_input input;
    input.dir_x = dir_x;
    input.dir_y = dir_y;
    input.speed = speed;
    return arena::encode(input);
}

std::uint32_t quantized_x(float x) {
    return proto::fixed_point<20>{-arena::arena_half_extent, arena::position_step}.quantize(x);
}

// Connects, checks the handshake and the mirror, walks the avatar along x for about a second, stops it, and
// checks where the server and the mirror both put it. Works in poll and own_thread modes.
void mirror_and_move(const client_options& options) {
    const auto& name = options.name;
    test_server server;
    ecsnet::client::client net{arena::replicated_schema(), options};
    std::vector<applied_record> applied;
    record_applied(net, applied);
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    EXPECT_FALSE(net.connect("127.0.0.1", server.port())) << "a second connect() while connecting";

    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }))
        << "state " << ecsnet::client::to_string(net.state()) << ", " << net.disconnect_message();
    EXPECT_EQ(net.state(), client_state::connected);
    EXPECT_NE(net.client_id(), 0U);
    EXPECT_EQ(net.tick_rate(), 30U);
    ASSERT_TRUE(net.own_net_entity().has_value());
    const auto me = net.own_entity();
    EXPECT_EQ(net.mirror().net_of(me), net.own_net_entity());
    ASSERT_TRUE(net.registry().all_of<Transform>(me));
    EXPECT_EQ(net.registry().get<arena::Kind>(me).value, 8U) << "avatars are kind 8 in the arena";
    EXPECT_GT(net.registry().storage<Transform>().size(), 250U);

    const auto avatar = server.avatar_of(name);
    ASSERT_NE(avatar, null_entity);
    const auto start = server.transform_of(avatar);
    ASSERT_TRUE(start.has_value());
    EXPECT_EQ(to_index(avatar), net.own_net_entity()->index);

    // Walk away from the nearer edge at full speed for about a second, then stop.
    const float dir = start->x > 0.0F ? -1.0F : 1.0F;
    const auto walk_until = std::chrono::steady_clock::now() + 1000ms;
    while (std::chrono::steady_clock::now() < walk_until) {
        EXPECT_TRUE(net.send_input(move_payload(dir, 0.0F, 100.0F)))
            << "the server clamps the speed to 8 m/s";
        poll_for(net, 100ms);
    }
    EXPECT_TRUE(net.send_input(move_payload(0.0F, 0.0F, 0.0F)));
    poll_for(net, 300ms);

    const auto end = server.transform_of(avatar);
    ASSERT_TRUE(end.has_value());
    const float moved = (end->x - start->x) * dir;
    EXPECT_GT(moved, 5.0F) << "about 8 m/s for about 1 s";
    EXPECT_LT(moved, 12.0F) << "the speed is clamped to 8 m/s";
    EXPECT_NEAR(end->y, start->y, 1e-3F) << "no input asked for y";

    // The avatar has stopped: the mirror shows exactly the server's (quantized) position.
    ASSERT_TRUE(poll_until(
        net,
        [&] {
            const auto* t = net.registry().try_get<Transform>(net.own_entity());
            return t != nullptr && quantized_x(t->x) == quantized_x(end->x);
        },
        2000ms));
    const auto& mine = net.registry().get<Transform>(net.own_entity());
    EXPECT_NEAR(mine.y, end->y, arena::position_step);

    const auto compared = expect_checksums_match(server, applied);
    EXPECT_GT(compared, 30U);
    expect_registry_matches_newest_state(net.mirror());
    const auto stats = net.stats();
    EXPECT_EQ(stats.checksum_mismatches, 0U);
    EXPECT_EQ(stats.snapshots_refused, 0U);
    EXPECT_EQ(stats.full_states_received, 1U);
    EXPECT_GE(stats.inputs_sent, 10U);
    ASSERT_FALSE(applied.empty());
    EXPECT_TRUE(applied.front().full_state);
    // Every tick between the first and the last applied one arrived, or nearly (a loaded machine may skip).
    const auto span = applied.back().tick - applied.front().tick + 1;
    EXPECT_GE(applied.size() * 10, span * 9) << applied.size() << " of " << span << " ticks";
}

TEST_P(ClientE2E, PollModeMirrorsTheServerAndMovesItsAvatar) {
    mirror_and_move(named("poller", threading::poll));
}

TEST_P(ClientE2E, OwnThreadModeMirrorsTheServerAndMovesItsAvatar) {
    mirror_and_move(named("threaded", threading::own_thread));
}

// Mode 3: twenty clients on one application io_context run by `runners` threads; everything of a client
// happens on its strand (or, with one runner and single_threaded_io, on the io_context's executor), where
// the test also reads its mirror.
void ClientE2E::share_io_context(std::size_t runners, bool single_threaded_io) {
    test_server server{500};
    constexpr std::size_t count = 20;
    asio::io_context io{static_cast<int>(runners)};
    auto work = asio::make_work_guard(io);
    std::vector<std::thread> threads;

    struct observed {
        std::vector<applied_record> applied;
        std::vector<std::thread::id> threads;
        std::size_t concurrent_violations{};
        std::atomic<int> inside{0};
    };
    std::vector<std::unique_ptr<observed>> seen;
    std::vector<std::unique_ptr<ecsnet::client::client>> clients;
    for (std::size_t i = 0; i < count; ++i) {
        seen.push_back(std::make_unique<observed>());
        auto options = named("bot" + std::to_string(i));
        options.single_threaded_io = single_threaded_io;
        clients.push_back(std::make_unique<ecsnet::client::client>(io, arena::replicated_schema(), options));
        auto& c = *clients.back();
        auto& o = *seen.back();
        c.on_snapshot([&c, &o](const proto::applied_snapshot& applied) {
            if (o.inside.fetch_add(1) != 0) {
                ++o.concurrent_violations; // two handlers of one client at once: the strand failed
            }
            const auto* state = c.mirror().newest_state();
            o.applied.push_back({applied.tick, state->checksum, c.mirror().verify(), applied.full_state});
            o.inside.fetch_sub(1);
        });
        ASSERT_TRUE(c.connect("127.0.0.1", server.port()));
    }
    for (std::size_t t = 0; t < runners; ++t) {
        threads.emplace_back([&io] { io.run(); });
    }
    ASSERT_TRUE(wait_until([&] {
        return std::all_of(clients.begin(), clients.end(),
                           [](const auto& c) { return c->state() == client_state::connected; });
    }));
    // Every client walks; send_input is callable from any thread.
    const auto until = std::chrono::steady_clock::now() + 1500ms;
    while (std::chrono::steady_clock::now() < until) {
        for (std::size_t i = 0; i < count; ++i) {
            const float angle = static_cast<float>(i) * 0.3F;
            EXPECT_TRUE(clients[i]->send_input(move_payload(std::cos(angle), std::sin(angle), 4.0F)));
        }
        std::this_thread::sleep_for(100ms);
    }
    // Read each mirror on its own strand.
    for (auto& c : clients) {
        std::promise<bool> own;
        asio::post(c->get_executor(), [&c, &own] { own.set_value(c->own_entity() != null_entity); });
        EXPECT_TRUE(own.get_future().get());
        const auto stats = c->stats();
        EXPECT_EQ(stats.checksum_mismatches, 0U);
        EXPECT_EQ(stats.snapshots_refused, 0U);
    }
    clients.clear(); // while the io_context runs: each sends CLIENT_QUIT and winds down on its strand
    EXPECT_TRUE(
        wait_until([&] { return server.server().call([&] { return server.server().clients().empty(); }); }));
    work.reset();
    io.stop();
    for (auto& t : threads) {
        t.join();
    }
    for (const auto& o : seen) {
        EXPECT_EQ(o->concurrent_violations, 0U);
        ASSERT_GT(o->applied.size(), 30U);
        expect_checksums_match(server, o->applied);
        // Most ticks between the first and the last applied: 75% leaves room for clients and a server under
        // the sanitizers on two shared cores, where late acks hold the server to its window (43 of 48 seen).
        const auto span = o->applied.back().tick - o->applied.front().tick + 1;
        EXPECT_GE(o->applied.size() * 4, span * 3) << o->applied.size() << " of " << span << " ticks";
    }
}

TEST_P(ClientE2E, ManyClientsShareAnApplicationIoContext) {
    share_io_context(2, false);
}

// One thread runs the io_context, as in ecsnet-bots: the clients skip their strands, and the same holds
// (one handler of a client at a time, inputs sent from another thread, mirrors exact, a clean wind-down).
TEST_P(ClientE2E, ClientsOnAnIoContextOfOneThreadNeedNoStrand) {
    share_io_context(1, true);
}

// An application may stop and destroy its io_context right after destroying a client, before the handlers
// that wind the client down have run (or after some of them): the io_context then destroys those handlers,
// and with them the last hold on the connection, its socket and its memory (LSan checks the memory in the
// sanitizer build; the descriptors are counted here).
TEST_P(ClientE2E, AnIoContextDestroyedBeforeTheCloseRanLeavesNothingOpen) {
    test_server server{50};
    const auto baseline = open_descriptors();
    for (int handlers_run = 0; handlers_run < 6; ++handlers_run) {
        asio::io_context io;
        {
            ecsnet::client::client c{io, arena::replicated_schema(),
                                     named("early" + std::to_string(handlers_run))};
            ASSERT_TRUE(c.connect("127.0.0.1", server.port()));
            const auto deadline = std::chrono::steady_clock::now() + 5000ms;
            while (c.state() != client_state::connected && std::chrono::steady_clock::now() < deadline) {
                io.run_one_for(10ms);
            }
            ASSERT_EQ(c.state(), client_state::connected) << c.disconnect_message();
        } // the client posts its close to the io_context...
        for (int i = 0; i < handlers_run; ++i) {
            io.poll_one(); // ...which runs some of the handlers, or none...
        }
    } // ...and is destroyed with the rest
    // The server closes its side of a TCP connection once it sees the end of it.
    EXPECT_TRUE(wait_until([&] { return open_descriptors() == baseline; }))
        << open_descriptors() << " descriptors open, " << baseline << " before the clients";
}

TEST_P(ClientE2E, StatsAreSane) {
    test_server server;
    ecsnet::client::client net{arena::replicated_schema(), named("stats")};
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::connected; }));
    poll_for(net, 2000ms);
    const auto stats = net.stats();
    EXPECT_GT(stats.rtt.count(), 0);
    EXPECT_LT(stats.rtt.count(), 500'000);
    EXPECT_GT(stats.rtt_smoothed.count(), 0);
    EXPECT_GE(stats.pings_sent, 2U);
    EXPECT_GE(stats.pongs_received, 1U) << "over UDP too: the Pings feed the server clock";
    EXPECT_GT(stats.bytes_received, 2'000U);
    EXPECT_GT(stats.bytes_sent, 100U);
    EXPECT_GT(stats.bytes_in_per_second, 1000.0);
    EXPECT_GT(stats.bytes_out_per_second, 50.0);
    EXPECT_GT(stats.snapshots_per_second, 22.0) << "30 Hz server";
    EXPECT_LT(stats.snapshots_per_second, 36.0) << "30 Hz server";
    EXPECT_GE(stats.snapshots_applied, 45U);
    EXPECT_EQ(stats.snapshots_applied, stats.snapshots_received);
    EXPECT_EQ(stats.full_states_received, 1U);
    ASSERT_TRUE(stats.newest_tick.has_value());
    EXPECT_EQ(stats.newest_tick, net.mirror().newest_tick());

    // Times: the newest tick happened within the last half second, by both clocks.
    const auto now_unix = static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                        std::chrono::system_clock::now().time_since_epoch())
                                                        .count());
    const auto server_unix = static_cast<std::int64_t>(stats.newest_tick_server_unix_us);
    const auto applied_unix = static_cast<std::int64_t>(stats.newest_tick_applied_unix_us);
    EXPECT_LT(std::abs(now_unix - server_unix), 500'000);
    EXPECT_GE(applied_unix - server_unix, -50'000) << "update latency on one machine is not negative";
    EXPECT_LT(applied_unix - server_unix, 500'000);
    const auto server_now = net.server_time_us();
    EXPECT_GE(server_now, stats.newest_tick_server_time_us - 50'000);
    EXPECT_LT(server_now, stats.newest_tick_server_time_us + 500'000);
    EXPECT_EQ(net.render_time_us() / 1000, (net.server_time_us() - 100'000) / 1000);
    if (GetParam() == transport_kind::udp) {
        // The transport's own measures: every packet acked on the loopback.
        EXPECT_GT(stats.packets_sent, 40U) << "an ack per snapshot";
        EXPECT_GE(stats.packets_received, stats.snapshots_received);
        EXPECT_LT(stats.packet_loss, 0.05);
        EXPECT_GT(stats.rtt_min.count(), 0);
        EXPECT_LE(stats.rtt_min, stats.rtt_smoothed + stats.rtt_variance);
        EXPECT_EQ(stats.inputs_overflowed, 0U);
    } else {
        EXPECT_EQ(stats.packets_sent, 0U) << "UDP only";
        EXPECT_EQ(stats.rtt_min.count(), 0) << "UDP only";
    }

    // Interpolating at the render time gives the avatar somewhere (it does not move: exactly where it is).
    const auto sampled = net.sample<Transform>(net.own_entity());
    ASSERT_TRUE(sampled.has_value());
    EXPECT_EQ(quantized_x(sampled->x), quantized_x(net.registry().get<Transform>(net.own_entity()).x));
}

TEST_P(ClientE2E, ReconnectingStartsFromAFullState) {
    test_server server;
    ecsnet::client::client net{arena::replicated_schema(), named("again")};
    std::vector<applied_record> applied;
    record_applied(net, applied);
    std::vector<std::size_t> mirrored_at_welcome;
    net.on_connected([&] { mirrored_at_welcome.push_back(net.registry().alive()); });
    std::vector<ecsnet::client::disconnect_info> endings;
    net.on_disconnected([&](const ecsnet::client::disconnect_info& info) { endings.push_back(info); });

    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return applied.size() >= 5; }));
    const auto first_id = net.client_id();
    net.close("see you");
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::disconnected; }));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::client_quit);
    EXPECT_FALSE(net.last_disconnect().from_server);
    ASSERT_EQ(endings.size(), 1U);
    EXPECT_EQ(endings[0].reason, disconnect_reason::client_quit);
    EXPECT_GT(net.registry().alive(), 250U) << "the mirror keeps the last state after a disconnect";
    EXPECT_TRUE(wait_until([&] {
        return server.server().call([&] { return server.server().clients().empty(); });
    })) << "the server saw the client quit";

    const auto before = applied.size();
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return applied.size() >= before + 5; }));
    EXPECT_NE(net.client_id(), first_id);
    ASSERT_EQ(mirrored_at_welcome.size(), 2U);
    EXPECT_EQ(mirrored_at_welcome[0], 0U);
    EXPECT_EQ(mirrored_at_welcome[1], 0U) << "the welcome of the new connection cleared the mirror";
    EXPECT_TRUE(applied[before].full_state) << "the first snapshot after reconnecting is a full state";
    EXPECT_EQ(net.stats().full_states_received, 1U) << "stats are per connection";
    expect_checksums_match(server, applied);
    expect_registry_matches_newest_state(net.mirror());
    EXPECT_NE(net.own_entity(), null_entity);
}

TEST_P(ClientE2E, DestroyingAConnectedClientTellsTheServer) {
    test_server server;
    for (const auto mode : {threading::poll, threading::own_thread}) {
        {
            ecsnet::client::client net{arena::replicated_schema(), named("leaver", mode)};
            ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
            ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
            EXPECT_EQ(server.server().call([&] { return server.server().clients().size(); }), 1U);
        }
        EXPECT_TRUE(wait_until(
            [&] { return server.server().call([&] { return server.server().clients().empty(); }); }, 2000ms));
    }
    const auto quits = server.server().call(
        [&] { return server.server().metrics().disconnects.with("CLIENT_QUIT").value(); });
    EXPECT_EQ(quits, 2U);
}

TEST_P(ClientE2E, ServerStopIsShutdownFromTheServer) {
    test_server server{100};
    ecsnet::client::client net{arena::replicated_schema(), named("stopped")};
    std::vector<ecsnet::client::disconnect_info> endings;
    net.on_disconnected([&](const ecsnet::client::disconnect_info& info) { endings.push_back(info); });
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
    std::thread stopper{[&] { server.stop(); }};
    const bool ended = poll_until(net, [&] { return net.state() == client_state::disconnected; });
    stopper.join();
    ASSERT_TRUE(ended);
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::shutdown) << net.disconnect_message();
    EXPECT_TRUE(net.last_disconnect().from_server);
    EXPECT_FALSE(net.disconnect_message().empty());
    EXPECT_EQ(endings.size(), 1U);
}

TEST_P(ClientE2E, OwnThreadModeDropsTheOldestSnapshotsWhenPollIsLate) {
    test_server server;
    auto options = named("late", threading::own_thread);
    options.max_pending_snapshots = 4;
    ecsnet::client::client net{arena::replicated_schema(), options};
    std::vector<applied_record> applied;
    record_applied(net, applied);
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return applied.size() >= 3; }));
    std::this_thread::sleep_for(700ms); // no poll(): about 20 snapshots arrive
    EXPECT_LE(net.poll(), 4U);
    EXPECT_GT(net.stats().snapshots_dropped, 5U);
    const auto before = applied.size();
    ASSERT_TRUE(poll_until(net, [&] { return applied.size() >= before + 10; }));
    EXPECT_EQ(net.stats().snapshots_refused, 0U) << "later deltas still apply";
    expect_checksums_match(server, applied);
    expect_registry_matches_newest_state(net.mirror());
}

TEST_P(ClientE2E, InputsAreRefusedWhenTheyCannotBeSent) {
    test_server server;
    ecsnet::client::client net{arena::replicated_schema(), named("refused")};
    EXPECT_FALSE(net.send_input(move_payload(1, 0, 1))) << "not connected";
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::connected; }));
    EXPECT_FALSE(net.send_input(std::string(2000, 'x'))) << "larger than max_input_size";
    // Over UDP an Input rides the redundant channel (256 bytes a message).
    const bool udp = GetParam() == transport_kind::udp;
    EXPECT_EQ(net.send_input(std::string(ecsnet::client::max_udp_input_size + 1, 'x')), !udp);
    EXPECT_TRUE(net.send_input(move_payload(1, 0, 1)));
    poll_for(net, 100ms);
    const auto stats = net.stats();
    EXPECT_EQ(stats.inputs_refused, udp ? 2U : 1U) << "connect() reset the counters";
    EXPECT_EQ(stats.inputs_sent, udp ? 1U : 2U);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientE2E, ::testing::Values(transport_kind::tcp, transport_kind::udp),
                         transport_name);

} // namespace

} // namespace client_test
