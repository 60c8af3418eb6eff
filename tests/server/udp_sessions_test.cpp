// The server over UDP (issue 14), with a client built on the transport alone (udp_support.hpp), and connect
// tokens on TCP. Each bad case its own test; every other client carries on.

#include <cstdio>
#include <fstream>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include <ecsnet/transport/connect_token.hpp>
#include <ecsnet/transport/key.hpp>

#include "server_support.hpp"
#include "udp_support.hpp"

namespace udp_sessions_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;

server::server_options udp_options(std::size_t npcs = 300) {
    auto options = test_options(npcs);
    options.transport = server::transport_kind::both;
    return options;
}

TEST(UdpSessions, AClientJoinsMirrorsExactlyAndSteersItsAvatar) {
    running_server server{udp_options()};
    udp_test_client client;
    client.connect(server.port());
    ASSERT_TRUE(client.wait([&] { return client.connected; }));
    client.send_hello("walker");
    ASSERT_TRUE(client.wait([&] { return client.welcomed && client.applied.size() >= 10; }));
    std::optional<arena::Transform> start;
    ASSERT_TRUE(client.wait([&] { return client.own_transform.has_value(); }));
    {
        std::lock_guard lock{client.mutex_};
        start = client.own_transform;
    }
    for (int i = 0; i < 30; ++i) {
        client.send_move(1.0F, 0.0F, 5.0F);
        std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(client.wait([&] { return client.applied.size() >= 40; }));
    std::lock_guard lock{client.mutex_};
    EXPECT_TRUE(client.refusals.empty()) << client.refusals.front();
    EXPECT_GE(client.full_states_reliable, 1U) << "full states go on the reliable channel";
    EXPECT_GT(client.deltas_unreliable, 10U) << "deltas go on the unreliable channel";
    EXPECT_GT(client.own_transform->x, start->x + 1.0F) << "the inputs moved the avatar";
    const auto clients = server.get().call([&] { return server.get().clients(); });
    ASSERT_EQ(clients.size(), 1U);
    EXPECT_EQ(clients[0].transport, "udp");
    EXPECT_TRUE(clients[0].rtt_ms.has_value());
}

TEST(UdpSessions, EveryInputArrivesOnceThroughHeavyLoss) {
    running_server server{udp_options()};
    transport::sim_config lossy;
    lossy.loss = 0.3;
    lossy.seed = 5;
    udp_test_client client{lossy};
    client.connect(server.port());
    ASSERT_TRUE(client.wait([&] { return client.connected; }, 10s));
    client.send_hello("lossy");
    ASSERT_TRUE(client.wait([&] { return client.welcomed; }, 10s));
    for (int i = 0; i < 90; ++i) {
        client.send_move(0.0F, 1.0F, 2.0F);
        std::this_thread::sleep_for(10ms);
    }
    const auto applied_inputs = [&] { return server.get().metrics().inputs.value(); };
    const auto deadline = steady::now() + 10s;
    while (applied_inputs() < 90 && steady::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(applied_inputs(), 90U) << "each input applied exactly once, none lost";
    const auto clients = server.get().call([&] { return server.get().clients(); });
    ASSERT_EQ(clients.size(), 1U);
    EXPECT_EQ(clients[0].inputs_received, 90U);
}

TEST(UdpSessions, DatagramBytesAreCountedInTheTrafficMetrics) {
    running_server server{udp_options()};
    udp_test_client client;
    client.connect(server.port());
    ASSERT_TRUE(client.wait([&] { return client.connected; }));
    client.send_hello("counted");
    ASSERT_TRUE(client.wait([&] { return client.welcomed && client.applied.size() >= 10; }));
    // Read in the server's thread, after a tick exported them: the metrics trail the transport's counts by
    // at most what it sent since that tick, and no TCP client adds to them here.
    const auto [metric_sent, metric_received, udp_sent, udp_received] = server.get().call([&] {
        auto& s = server.get();
        const auto& udp = s.udp()->server().counters();
        return std::tuple{s.metrics().sent_bytes.value(), s.metrics().received_bytes.value(),
                          udp.bytes_sent.load(), udp.bytes_received.load()};
    });
    EXPECT_GT(metric_sent, 10U * 20U) << "ten snapshots at least";
    EXPECT_LE(metric_sent, udp_sent);
    EXPECT_GT(metric_received, 0U);
    EXPECT_LE(metric_received, udp_received);
}

TEST(UdpSessions, TheClientLeavingIsSeenAsClientQuit) {
    running_server server{udp_options()};
    udp_test_client client;
    client.connect(server.port());
    ASSERT_TRUE(client.wait([&] { return client.connected; }));
    client.send_hello("leaver");
    ASSERT_TRUE(client.wait([&] { return client.welcomed; }));
    client.disconnect(static_cast<std::uint8_t>(v1::CLIENT_QUIT), "bye");
    const auto deadline = steady::now() + 3s;
    while (server.get().metrics().disconnects.with("CLIENT_QUIT").value() == 0 && steady::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(server.get().metrics().disconnects.with("CLIENT_QUIT").value(), 1U);
}

TEST(UdpSessions, ShutdownTellsEveryClientWhy) {
    running_server server{udp_options()};
    udp_test_client client;
    client.connect(server.port());
    ASSERT_TRUE(client.wait([&] { return client.connected; }));
    client.send_hello("stayer");
    ASSERT_TRUE(client.wait([&] { return client.welcomed; }));
    server.stop();
    ASSERT_TRUE(client.wait([&] { return client.ended.has_value(); }));
    std::lock_guard lock{client.mutex_};
    EXPECT_EQ(*client.ended, transport::client_error::disconnected_by_server);
    EXPECT_EQ(client.disconnect_info.code, static_cast<std::uint8_t>(v1::SHUTDOWN));
}

TEST(UdpSessions, JunkDatagramsAreCountedByReasonAndHarmNoOne) {
    running_server server{udp_options()};
    udp_test_client client;
    client.connect(server.port());
    ASSERT_TRUE(client.wait([&] { return client.connected; }));
    client.send_hello("bystander");
    ASSERT_TRUE(client.wait([&] { return client.welcomed; }));
    {
        asio::io_context io;
        asio::ip::udp::socket junk{io, asio::ip::udp::endpoint{asio::ip::udp::v4(), 0}};
        const asio::ip::udp::endpoint to{asio::ip::make_address("127.0.0.1"), server.port()};
        std::mt19937 random{3};
        std::vector<std::uint8_t> bytes;
        for (int i = 0; i < 2000; ++i) {
            bytes.resize(1 + random() % 1300);
            for (auto& b : bytes) {
                b = static_cast<std::uint8_t>(random());
            }
            junk.send_to(asio::buffer(bytes), to);
        }
    }
    const auto before = client.wait([&] { return true; }) ? client.applied.size() : 0;
    ASSERT_TRUE(client.wait([&] { return client.applied.size() >= before + 20; }));
    std::uint64_t dropped = 0;
    const auto& family = server.get().metrics().packets_dropped;
    const auto deadline = steady::now() + 3s;
    while (dropped < 1000 && steady::now() < deadline) {
        std::this_thread::sleep_for(50ms);
        dropped = 0;
        for (std::size_t i = 0; i < family.size(); ++i) {
            dropped += family.counter_at(i).value();
        }
    }
    EXPECT_GE(dropped, 1000U) << "junk is counted (some may be lost by the socket buffers)";
    std::lock_guard lock{client.mutex_};
    EXPECT_TRUE(client.refusals.empty());
    EXPECT_FALSE(client.ended.has_value());
}

// A server with a key of its own.
struct keyed_server {
    explicit keyed_server(server::transport_kind kind) {
        key = transport::generate_key();
        path = ::testing::TempDir() + "ecsnet_udp_sessions_key_" + std::to_string(std::random_device{}());
        std::ofstream{path} << transport::to_hex(key) << "\n";
        auto options = test_options();
        options.insecure_dev = false;
        options.key_file = path;
        options.transport = kind;
        server = std::make_unique<running_server>(options);
    }
    ~keyed_server() { std::remove(path.c_str()); }

    transport::connect_token token(std::uint32_t expire_seconds = 30,
                                   std::uint64_t protocol_id = server::default_protocol_id) {
        transport::token_params params;
        params.protocol_id = protocol_id;
        params.client_id = 77;
        params.server_addresses = {
            *transport::net_address::parse("127.0.0.1:" + std::to_string(server->port()))};
        params.expire_seconds = expire_seconds;
        return transport::issue_token(params, key).value();
    }

    transport::key key{};
    std::string path;
    std::unique_ptr<running_server> server;
};

TEST(UdpSessions, ADevelopmentTokenIsRefusedByAServerWithItsOwnKey) {
    keyed_server keyed{server::transport_kind::udp};
    udp_test_client client;
    client.connect(keyed.server->port()); // a dev token
    ASSERT_TRUE(client.wait([&] { return client.ended.has_value(); }, 10s));
    {
        std::lock_guard lock{client.mutex_};
        EXPECT_FALSE(client.connected);
    }
    const auto& family = keyed.server->get().metrics().packets_dropped;
    std::uint64_t dropped = 0;
    for (std::size_t i = 0; i < family.size(); ++i) {
        dropped += family.counter_at(i).value();
    }
    EXPECT_GT(dropped, 0U);
    // The studio's own token connects.
    udp_test_client good;
    good.connect(keyed.server->port(), keyed.token());
    ASSERT_TRUE(good.wait([&] { return good.connected; }));
    good.send_hello("good");
    EXPECT_TRUE(good.wait([&] { return good.welcomed; }));
}

std::string bytes_of(const transport::connect_token& token) {
    const auto raw = transport::serialize(token);
    return std::string{reinterpret_cast<const char*>(raw.data()), raw.size()};
}

TEST(TcpTokens, AServerWithAKeyWantsAValidUnusedTokenInTheHello) {
    keyed_server keyed{server::transport_kind::tcp};
    const auto port = keyed.server->port();
    const auto refused_with = [&](const std::string& token) -> std::optional<v1::Disconnect> {
        raw_client c{port};
        c.send(proto::make_client_hello(arena::replicated_schema().layout(), token, "tokened"));
        for (int i = 0; i < 20; ++i) {
            auto message = c.read(200ms);
            if (message && message->has_server_welcome()) {
                return std::nullopt;
            }
            if (message && message->has_disconnect()) {
                return message->disconnect();
            }
        }
        ADD_FAILURE() << "neither a welcome nor a disconnect";
        return std::nullopt;
    };
    const auto none = refused_with("");
    ASSERT_TRUE(none.has_value());
    EXPECT_EQ(none->reason(), v1::AUTHENTICATION_FAILED);

    const auto token = bytes_of(keyed.token());
    EXPECT_FALSE(refused_with(token).has_value()) << "a valid token is welcomed";
    const auto again = refused_with(token);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->reason(), v1::AUTHENTICATION_FAILED);
    EXPECT_NE(again->message().find("already used"), std::string::npos) << again->message();

    auto forged = bytes_of(keyed.token());
    forged[200] = static_cast<char>(forged[200] ^ 0x40);
    const auto bad = refused_with(forged);
    ASSERT_TRUE(bad.has_value());
    EXPECT_EQ(bad->reason(), v1::AUTHENTICATION_FAILED);

    const auto other = refused_with(bytes_of(keyed.token(30, 12345)));
    ASSERT_TRUE(other.has_value());
    EXPECT_NE(other->message().find("another protocol"), std::string::npos) << other->message();
}

TEST(ServerStart, WithoutAKeyOrDevelopmentModeTheServerRefusesToStart) {
    auto options = test_options();
    options.insecure_dev = false;
    server::arena_options arena;
    arena.npcs = 10;
    server::game_server server{options, std::make_unique<server::arena_world>(arena)};
    try {
        server.open();
        FAIL() << "it started";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string{e.what()}.find("--key-file"), std::string::npos) << e.what();
    }
}

} // namespace

} // namespace udp_sessions_test
