// The load-test engine (issue 7) in-process, against the real server on 127.0.0.1 (ephemeral ports) and
// against misbehaving fakes. Every run is bounded (seconds):
// - bots wander / idle: all welcomed, zero desyncs, every applied snapshot's latency recorded, inputs sent
//   (or not) and the server's avatars moving (or not);
// - the ramp spreads the connects and the duration counts from its end;
// - no server on the port, a full server, a server that stops, one that welcomes and then goes silent, one
//   that never welcomes, one whose snapshots lie about their checksum: each ends with the right counts, a
//   clear reason, a failed verdict, and in bounded time;
// - an interruption ends the run early;
// - thin bots (alone, or besides full ones) are welcomed, ack, and are counted apart; bots under the
//   network simulator stay exact; bots connect with the tokens they are given.

#include <atomic>
#include <chrono>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "../client/udp_fake_server.hpp"
#include "../server/server_support.hpp"
#include "bots_fakes.hpp"
#include "ecsnet/bots/swarm.hpp"

namespace bots_swarm_test {

namespace {

using namespace std::chrono_literals;
using namespace ecsnet;
using namespace ecsnet::bots;
using client::testing::test_server;

using steady = std::chrono::steady_clock;

// Over UDP, the default (the real server runs with --insecure-dev: the bots make their own tokens); the
// fakes of bots_fakes.hpp speak TCP.
swarm_options quick_options(std::uint16_t port, std::size_t clients, double duration,
                            client::transport_kind transport = client::transport_kind::udp) {
    swarm_options o;
    o.transport = transport;
    o.host = "127.0.0.1";
    o.port = port;
    o.clients = clients;
    o.duration_seconds = duration;
    o.threads = 2;
    o.quiet = true;
    o.progress_interval = 250ms;
    return o;
}

struct run_result {
    swarm_report report;
    std::string progress;
    std::string log;
    double seconds{};
};

run_result run(const swarm_options& options, const std::atomic<bool>* stop = nullptr) {
    std::ostringstream progress;
    std::ostringstream log;
    const auto started = steady::now();
    auto report = run_swarm(options, progress, log, stop);
    return {std::move(report), progress.str(), log.str(),
            std::chrono::duration<double>(steady::now() - started).count()};
}

std::string failures(const swarm_report& report) {
    std::string out;
    for (const auto& f : report.failures) {
        out += f + "\n";
    }
    return out;
}

// Where the server has the avatar of bot `name` right now (nothing if it has none).
std::optional<arena::Transform> avatar(test_server& server, const std::string& name) {
    const auto e = server.avatar_of(name);
    return e == null_entity ? std::nullopt : server.transform_of(e);
}

class BotsSwarmOver : public ::testing::TestWithParam<client::transport_kind> {};

TEST_P(BotsSwarmOver, WanderingBotsAreAllWelcomedNeverDesyncAndMoveTheirAvatars) {
    test_server server{300};
    auto options = quick_options(server.port(), 20, 3.0, GetParam());
    options.quiet = false;
    auto running = std::async(std::launch::async, [&] { return run(options); });
    std::this_thread::sleep_for(1500ms);
    const auto before = avatar(server, "bot-7");
    std::this_thread::sleep_for(500ms);
    const auto after = avatar(server, "bot-7");
    const auto result = running.get();
    const auto& r = result.report;

    EXPECT_TRUE(r.passed()) << failures(r) << result.log;
    EXPECT_EQ(r.ended_by, run_end::duration);
    EXPECT_EQ(r.clients_requested, 20U);
    EXPECT_EQ(r.clients_reached, 20U);
    EXPECT_EQ(r.connect_failures, 0U);
    EXPECT_EQ(r.dropped, 0U);
    EXPECT_EQ(r.desyncs, 0U);
    EXPECT_EQ(r.snapshots_refused, 0U);
    EXPECT_EQ(r.tick_rate, 30U);
    EXPECT_EQ(r.latency.samples, r.snapshots_applied); // every applied snapshot's latency
    EXPECT_GT(r.snapshots_applied,
              20U * 15U); // 20 x 90 at full speed; a sanitizer build on a busy machine is slower
    EXPECT_GT(r.latency.max_ms, 0.0);
    EXPECT_LE(r.latency.p50_ms, r.latency.p99_ms);
    EXPECT_LE(r.latency.p99_ms, r.latency.max_ms);
    EXPECT_GT(r.snapshots_per_second.median, 5.0);
    EXPECT_GT(r.ticks_applied_ratio.min, 0.1);
    // Slightly above 1 is possible: a bot's connected time starts when its strand handles the welcome, which
    // on a busy machine can be after the server sent the next snapshots.
    EXPECT_LE(r.ticks_applied_ratio.max, 1.25);
    EXPECT_GT(r.bytes_in_per_second.median, 1000.0);
    EXPECT_GT(r.inputs_sent,
              r.snapshots_applied / 2); // an input per applied snapshot, the last may be in flight
    EXPECT_EQ(r.inputs_refused, 0U);
    EXPECT_GT(r.cpu_user_seconds + r.cpu_system_seconds, 0.0);
    EXPECT_NEAR(r.measured_seconds, 3.0, 0.5);
    // The progress lines: about one per 250 ms.
    EXPECT_GE(std::count(result.progress.begin(), result.progress.end(), '\n'), 8);
    EXPECT_NE(result.progress.find("connected 20/20"), std::string::npos) << result.progress;
    // What the HTML report draws: a row per bot with its own latencies, the run sample by sample (the last
    // at the end of the measurement), the merged histogram's bins.
    ASSERT_EQ(r.bots.size(), 20U);
    std::uint64_t per_bot_samples = 0;
    for (const auto& b : r.bots) {
        EXPECT_EQ(b.phase, bot_phase::connected) << b.name;
        EXPECT_EQ(b.latency_samples, b.applied) << b.name;
        EXPECT_LE(b.latency_p50_ms, b.latency_p99_ms) << b.name;
        EXPECT_TRUE(b.disconnect_reason.empty()) << b.name;
        per_bot_samples += b.latency_samples;
    }
    EXPECT_EQ(per_bot_samples, r.latency.samples);
    EXPECT_EQ(r.bots[7].name, "bot-7");
    EXPECT_GE(r.progress.samples().size(), 8U);
    EXPECT_EQ(r.progress.samples().back().connected, 20U);
    EXPECT_GT(r.progress.samples().back().at_seconds, 2.5);
    std::uint64_t binned = 0;
    for (const auto& bin : r.latency_bins) {
        binned += bin.count;
    }
    EXPECT_EQ(binned, r.latency.samples);

    ASSERT_TRUE(before && after);
    EXPECT_GT(std::hypot(after->x - before->x, after->y - before->y), 1.0) << "the avatar moved (>= 4 m/s)";
    EXPECT_EQ(server.server().metrics().refused_inputs.value(), 0U);
    // Every bot said goodbye: the server counts CLIENT_QUIT for each.
    EXPECT_TRUE(client::testing::wait_until(
        [&] { return server.server().metrics().disconnects.with("CLIENT_QUIT").value() == 20U; }, 3000ms));
}

INSTANTIATE_TEST_SUITE_P(Transports, BotsSwarmOver,
                         ::testing::Values(client::transport_kind::tcp, client::transport_kind::udp),
                         client::testing::transport_name);

TEST(BotsSwarm, IdleBotsSendNoInputAndTheirAvatarsStay) {
    test_server server{100};
    auto options = quick_options(server.port(), 5, 2.0);
    options.behaviour = behaviour_kind::idle;
    auto running = std::async(std::launch::async, [&] { return run(options); });
    std::this_thread::sleep_for(1000ms);
    const auto before = avatar(server, "bot-2");
    std::this_thread::sleep_for(500ms);
    const auto after = avatar(server, "bot-2");
    const auto result = running.get();
    EXPECT_TRUE(result.report.passed()) << failures(result.report);
    EXPECT_EQ(result.report.inputs_sent, 0U);
    ASSERT_TRUE(before && after);
    EXPECT_EQ(before->x, after->x);
    EXPECT_EQ(before->y, after->y);
}

// Each thread runs an io_context of its own and the bots take turns among them: one thread serves them all,
// and a thread left without a bot neither keeps the run from ending nor stops the others.
TEST(BotsSwarm, EveryBotIsServedWithOneThreadOrMoreThreadsThanBots) {
    test_server server{100};
    for (const auto& [threads, clients] : {std::pair<std::size_t, std::size_t>{1, 3}, {3, 2}}) {
        auto options = quick_options(server.port(), clients, 1.0);
        options.threads = threads;
        options.name_prefix = "t" + std::to_string(threads);
        const auto result = run(options);
        const auto& r = result.report;
        EXPECT_TRUE(r.passed()) << threads << " threads: " << failures(r) << result.log;
        EXPECT_EQ(r.ended_by, run_end::duration) << threads << " threads";
        EXPECT_EQ(r.clients_reached, clients) << threads << " threads";
        EXPECT_EQ(r.desyncs, 0U) << threads << " threads";
        ASSERT_EQ(r.bots.size(), clients);
        for (const auto& b : r.bots) {
            EXPECT_GT(b.applied, 5U) << threads << " threads, " << b.name;
        }
        EXPECT_LT(result.seconds, 6.0) << threads << " threads";
    }
}

TEST(BotsSwarm, TheRampSpreadsConnectsAndTheDurationCountsFromItsEnd) {
    test_server server{50};
    auto options = quick_options(server.port(), 10, 1.0);
    options.ramp_seconds = 1.0;
    auto running = std::async(std::launch::async, [&] { return run(options); });
    std::this_thread::sleep_for(450ms);
    const auto early = server.server().call([&] { return server.server().clients().size(); });
    const auto result = running.get();
    EXPECT_GE(early, 1U);
    EXPECT_LE(early, 8U) << "half way through the ramp, about half the bots";
    EXPECT_TRUE(result.report.passed()) << failures(result.report);
    EXPECT_EQ(result.report.clients_reached, 10U);
    EXPECT_NEAR(result.report.elapsed_seconds, 2.0, 0.3);
    EXPECT_NEAR(result.report.measured_seconds, 1.0, 0.3);
    EXPECT_LT(result.seconds, 5.0);
}

TEST(BotsSwarm, NoServerEndsAtOnceWithConnectFailures) {
    auto options = quick_options(client::testing::unused_port(), 8, 30.0, client::transport_kind::tcp);
    const auto result = run(options);
    const auto& r = result.report;
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.ended_by, run_end::all_bots_ended);
    EXPECT_EQ(r.clients_reached, 0U);
    EXPECT_EQ(r.connect_failures, 8U);
    EXPECT_EQ(r.connect_failure_reasons.at("connect_failed"), 8U);
    EXPECT_NE(failures(r).find("8 of 8 bots failed to connect"), std::string::npos) << failures(r);
    EXPECT_NE(result.log.find("connect failure: bot-0: connect_failed"), std::string::npos) << result.log;
    EXPECT_LT(result.seconds, 5.0) << "not the 30 s planned";
}

TEST(BotsSwarm, NoServerOverUdpEndsWithinTheConnectTimeout) {
    auto options = quick_options(client::testing::unused_port(), 4, 30.0);
    options.connect_timeout = 500ms;
    const auto result = run(options);
    const auto& r = result.report;
    EXPECT_EQ(r.ended_by, run_end::all_bots_ended);
    EXPECT_EQ(r.connect_failure_reasons.at("connect_failed"), 4U);
    EXPECT_NE(failures(r).find("request_timed_out"), std::string::npos) << failures(r);
    EXPECT_LT(result.seconds, 3.0);
}

TEST(BotsSwarm, AFullServerRefusesSomeBots) {
    auto server_options = testing_support::test_options(50);
    server_options.max_clients = 5;
    testing_support::running_server server{server_options};
    const auto result = run(quick_options(server.port(), 8, 1.5));
    const auto& r = result.report;
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.clients_reached, 5U);
    EXPECT_EQ(r.connect_failures, 3U);
    EXPECT_EQ(r.connect_failure_reasons.at("server_full"), 3U);
    EXPECT_EQ(r.desyncs, 0U);
    EXPECT_EQ(r.dropped, 0U);
    EXPECT_NE(failures(r).find("server full"), std::string::npos) << failures(r);
}

TEST(BotsSwarm, AServerThatStopsDropsEveryBotAndEndsTheRun) {
    test_server server{100};
    auto running =
        std::async(std::launch::async, [&] { return run(quick_options(server.port(), 10, 20.0)); });
    std::this_thread::sleep_for(1000ms);
    server.stop();
    const auto result = running.get();
    const auto& r = result.report;
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.ended_by, run_end::all_bots_ended);
    EXPECT_EQ(r.clients_reached, 10U);
    EXPECT_EQ(r.dropped, 10U);
    EXPECT_EQ(r.disconnects.at("shutdown"), 10U);
    ASSERT_EQ(r.bots.size(), 10U);
    EXPECT_EQ(r.bots[3].phase, bot_phase::dropped);
    EXPECT_EQ(r.bots[3].disconnect_reason, "shutdown: server shutting down") << "the per-bot table says why";
    EXPECT_NE(failures(r).find("10 bots were disconnected during the run (shutdown 10)"), std::string::npos)
        << failures(r);
    EXPECT_NE(result.log.find("(from the server): server shutting down"), std::string::npos) << result.log;
    EXPECT_LT(result.seconds, 6.0);
}

TEST(BotsSwarm, ASilentServerIsReportedAsStalled) {
    bots::testing::scripted_server silent{bots::testing::welcome_only_script()};
    auto options = quick_options(silent.port(), 4, 20.0, client::transport_kind::tcp);
    options.stall_timeout = 1000ms;
    const auto result = run(options);
    const auto& r = result.report;
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.ended_by, run_end::server_stalled);
    EXPECT_EQ(r.clients_reached, 4U);
    EXPECT_EQ(r.snapshots_applied, 0U);
    EXPECT_NE(
        failures(r).find("the server stopped answering: no snapshot applied by any of the 4 connected bots"),
        std::string::npos)
        << failures(r);
    EXPECT_LT(result.seconds, 5.0);
}

TEST(BotsSwarm, NoWelcomeIsAHandshakeTimeout) {
    client::testing::fake_server mute; // accepts, never writes
    auto options = quick_options(mute.port(), 3, 20.0, client::transport_kind::tcp);
    options.handshake_timeout = 500ms;
    const auto result = run(options);
    const auto& r = result.report;
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.connect_failures, 3U);
    EXPECT_EQ(r.connect_failure_reasons.at("handshake_timeout"), 3U);
    EXPECT_LT(result.seconds, 4.0);
}

TEST(BotsSwarm, ASnapshotWithAWrongChecksumIsADesyncLoggedWithItsTick) {
    bots::testing::scripted_server liar{bots::testing::lying_script()};
    auto options = quick_options(liar.port(), 3, 1.5, client::transport_kind::tcp);
    const auto result = run(options);
    const auto& r = result.report;
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.clients_reached, 3U);
    EXPECT_EQ(r.desyncs, 3U) << "one per bot";
    EXPECT_EQ(r.desynced_bots, 3U);
    EXPECT_EQ(r.snapshots_refused, 3U);
    EXPECT_GT(r.snapshots_applied, 3U * 20U) << "they recovered from the next full state";
    EXPECT_NE(failures(r).find("3 desyncs"), std::string::npos) << failures(r);
    EXPECT_NE(result.log.find("desync: bot-0: state checksum mismatch at tick 2 (after tick 1)"),
              std::string::npos)
        << result.log;
}

TEST(BotsSwarm, AnInterruptionEndsTheRunEarly) {
    test_server server{50};
    std::atomic<bool> stop{false};
    auto running =
        std::async(std::launch::async, [&] { return run(quick_options(server.port(), 4, 30.0), &stop); });
    std::this_thread::sleep_for(700ms);
    stop = true;
    const auto result = running.get();
    EXPECT_EQ(result.report.ended_by, run_end::interrupted);
    EXPECT_FALSE(result.report.passed());
    EXPECT_EQ(result.report.clients_reached, 4U);
    EXPECT_EQ(result.report.dropped, 0U) << "closing at the end is no drop";
    EXPECT_LT(result.seconds, 4.0);
}

// Thin bots besides full ones: acked headers, latencies and disconnects of their own, no mirror.
TEST(BotsSwarm, ThinBotsAckWithoutMirroringAndAreCountedApart) {
    test_server server{300};
    auto options = quick_options(server.port(), 3, 2.0);
    options.thin = 12;
    auto running = std::async(std::launch::async, [&] { return run(options); });
    std::this_thread::sleep_for(1000ms);
    const auto connected = server.server().call([&] { return server.server().clients().size(); });
    const auto result = running.get();
    const auto& r = result.report;
    EXPECT_TRUE(r.passed()) << failures(r) << result.log;
    EXPECT_EQ(connected, 15U) << "full and thin bots are all the server's clients";
    EXPECT_EQ(r.clients_requested, 3U);
    EXPECT_EQ(r.clients_reached, 3U);
    EXPECT_EQ(r.latency.samples, r.snapshots_applied) << "the full bots' latencies only";
    EXPECT_EQ(r.thin.clients_requested, 12U);
    EXPECT_EQ(r.thin.clients_reached, 12U);
    EXPECT_EQ(r.thin.connect_failures, 0U);
    EXPECT_EQ(r.thin.dropped, 0U);
    EXPECT_EQ(r.thin.desyncs, 0U);
    EXPECT_GT(r.thin.snapshots_applied, 12U * 15U) << "headers acked";
    EXPECT_EQ(r.thin.latency.samples, r.thin.snapshots_applied);
    EXPECT_GT(r.thin.latency.max_ms, 0.0);
    EXPECT_GT(r.thin.snapshots_per_second.median, 5.0);
    EXPECT_GT(r.thin.bytes_in_per_second.median, 1000.0);
    EXPECT_GT(r.thin.inputs_sent, 0U) << "thin bots send their behaviour's inputs too";
    google::protobuf::Struct json;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(to_json(r), &json).ok());
    const auto& thin = json.fields().at("thin").struct_value().fields();
    EXPECT_EQ(thin.at("clients_requested").number_value(), 12.0);
    EXPECT_EQ(thin.at("clients_reached").number_value(), 12.0);
    EXPECT_EQ(thin.at("latency_ms").struct_value().fields().at("samples").number_value(),
              static_cast<double>(r.thin.snapshots_applied));
    EXPECT_EQ(json.fields().at("parameters").struct_value().fields().at("thin").number_value(), 12.0);
    EXPECT_TRUE(client::testing::wait_until(
        [&] { return server.server().metrics().disconnects.with("CLIENT_QUIT").value() == 15U; }, 3000ms));
}

TEST(BotsSwarm, ThinBotsAloneMakeARun) {
    test_server server{100};
    auto options = quick_options(server.port(), 0, 1.0);
    options.thin = 5;
    const auto result = run(options);
    const auto& r = result.report;
    EXPECT_TRUE(r.passed()) << failures(r) << result.log;
    EXPECT_EQ(r.clients_requested, 0U);
    EXPECT_EQ(r.thin.clients_reached, 5U);
    EXPECT_GT(r.thin.snapshots_applied, 5U * 10U);
}

// The simulator on every bot's socket: losses and resends, yet every applied snapshot is exact.
TEST(BotsSwarm, UnderTheSimulatorBotsStayExact) {
    test_server server{200};
    auto options = quick_options(server.port(), 6, 2.0);
    options.simulator.loss = 0.05;
    options.simulator.latency = 10ms;
    options.simulator.jitter = 2ms;
    options.simulator.reorder = 0.02;
    const auto result = run(options);
    const auto& r = result.report;
    EXPECT_TRUE(r.passed()) << failures(r) << result.log;
    EXPECT_EQ(r.desyncs, 0U);
    EXPECT_GT(r.packets_sent, 6U * 30U);
    EXPECT_GT(r.packets_lost, 0U) << "5% of the bots' packets lost";
    EXPECT_GT(r.latency.p50_ms, 10.0) << "the simulated latency is in the update latency";
}

// Tokens from a file (swarm_options::tokens): each bot connects with its own; without them, development
// tokens that a server with its own key ignores.
TEST(BotsSwarm, EachBotConnectsWithItsToken) {
    client::testing::udp_fake_settings settings;
    settings.private_key = transport::generate_key();
    client::testing::udp_fake_server fake{settings};
    auto options = quick_options(fake.port(), 2, 1.0);
    options.thin = 1;
    for (std::uint64_t i = 0; i < 3; ++i) {
        transport::token_params params;
        params.protocol_id = client::default_protocol_id;
        params.client_id = 100 + i;
        params.server_addresses = {fake.address()};
        options.tokens.push_back(transport::to_base64(*transport::issue_token(params, settings.private_key)));
    }
    const auto with_tokens = run(options);
    EXPECT_EQ(with_tokens.report.clients_reached, 2U) << failures(with_tokens.report) << with_tokens.log;
    EXPECT_EQ(with_tokens.report.thin.clients_reached, 1U);
    EXPECT_EQ(with_tokens.report.desyncs, 0U);

    options.tokens.clear();
    options.connect_timeout = 500ms;
    const auto without = run(options);
    EXPECT_EQ(without.report.clients_reached, 0U);
    EXPECT_EQ(without.report.connect_failure_reasons.at("connect_failed"), 2U);
    EXPECT_NE(failures(without.report).find("request_timed_out"), std::string::npos)
        << failures(without.report);
}

} // namespace

} // namespace bots_swarm_test
