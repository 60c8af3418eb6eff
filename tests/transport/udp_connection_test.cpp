// Connections once established, in memory with simulated time: keep-alives while idle, timeouts on both
// sides when the peer vanishes, disconnects with their code and message in both directions (redundant
// packets: one surviving copy is enough), a handler calling the server back from inside its callbacks,
// the statistics.

#include <gtest/gtest.h>

#include "ecsnet/transport/disconnect_code.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"
#include "ecsnet/transport/session_keys.hpp"
#include "transport_harness.hpp"

namespace udp_connection_test {

namespace {

using namespace ecsnet::transport;
using namespace ecsnet::transport::testing;

std::uint8_t type_of(const datagram& d) {
    return static_cast<std::uint8_t>(d.bytes[0] & 0x0F);
}

TEST(Connection, KeepAlivesKeepAnIdleConnectionOpen) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    net.run(12s, 20ms); // more than twice the token's 5 s timeout, with nothing to say
    EXPECT_EQ(client.state(), client_state::connected);
    EXPECT_EQ(net.server().connection_count(), 1U);
    const auto id = net.server_events_log().connected.at(0).id;
    const auto stats = net.server().stats(id, net.now());
    ASSERT_TRUE(stats);
    EXPECT_GE(stats->keep_alives_sent, 100U); // every 100 ms
    EXPECT_LE(stats->since_last_received.count(), 200);
    EXPECT_GE(client.stats(net.now()).keep_alives_sent, 100U);
}

TEST(Connection, AClientThatVanishesTimesOut) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    net.filter = [&](datagram& d) { return d.to != net.server_address(); }; // the client is gone
    net.run(4s);
    EXPECT_EQ(net.server().connection_count(), 1U); // not yet: the token says 5 s
    net.run(2s);
    EXPECT_EQ(net.server().connection_count(), 0U);
    ASSERT_EQ(net.server_events_log().disconnected.size(), 1U);
    const auto& info = net.server_events_log().disconnected[0].second;
    EXPECT_EQ(info.code, disconnect_code::timeout);
    EXPECT_EQ(info.by, closed_by::local);
    EXPECT_NE(info.message.find("5 s"), std::string::npos) << info.message;
    EXPECT_EQ(net.server().counters().timeouts.load(), 1U);
}

TEST(Connection, TheConfiguredTimeoutOverridesTheTokens) {
    auto config = harness::default_config();
    config.timeout = std::chrono::seconds{1};
    harness net{config};
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    net.filter = [&](datagram& d) { return d.to != net.server_address(); };
    net.run(1500ms);
    EXPECT_EQ(net.server().connection_count(), 0U);
}

TEST(Connection, AServerThatVanishesTimesOutOnTheClient) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    net.filter = [&](datagram& d) { return d.from != net.server_address(); };
    ASSERT_TRUE(net.run_until([&] { return client.state() == client_state::disconnected; }, 8s));
    EXPECT_EQ(client.error(), client_error::timed_out);
    ASSERT_EQ(net.events_of("10.0.0.2:5000").disconnected.size(), 1U);
    EXPECT_EQ(net.events_of("10.0.0.2:5000").disconnected[0].second.code, disconnect_code::timeout);
}

TEST(Connection, TheServersDisconnectReachesTheClientWithItsReason) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    const auto id = net.server_events_log().connected.at(0).id;
    // Seven of the eight redundant copies are lost: the eighth is enough.
    int disconnects_seen = 0;
    net.filter = [&](datagram& d) { return !(type_of(d) == 6 && ++disconnects_seen < 8); };
    ASSERT_TRUE(net.server().disconnect(id, disconnect_code::kicked, "kicked: speed hack", net.now()));
    EXPECT_EQ(net.server().connection_count(), 0U); // the slot is free at once
    net.pump();
    EXPECT_EQ(disconnects_seen, 8);
    EXPECT_EQ(client.state(), client_state::disconnected);
    EXPECT_EQ(client.error(), client_error::disconnected_by_server);
    EXPECT_EQ(client.server_disconnect().code, disconnect_code::kicked);
    EXPECT_EQ(client.server_disconnect().message, "kicked: speed hack");
    EXPECT_EQ(client.server_disconnect().by, closed_by::peer);
    ASSERT_EQ(net.server_events_log().disconnected.size(), 1U);
    EXPECT_EQ(net.server_events_log().disconnected[0].second.by, closed_by::local);
    EXPECT_FALSE(net.server().disconnect(id, 1, "again", net.now()));
}

TEST(Connection, TheClientsDisconnectReachesTheServerWithItsReason) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    client.disconnect(disconnect_code::client_quit, "player closed the game", net.now());
    EXPECT_EQ(client.state(), client_state::disconnected);
    EXPECT_EQ(client.error(), client_error::none);
    net.pump();
    ASSERT_EQ(net.server_events_log().disconnected.size(), 1U);
    const auto& info = net.server_events_log().disconnected[0].second;
    EXPECT_EQ(info.code, disconnect_code::client_quit);
    EXPECT_EQ(info.message, "player closed the game");
    EXPECT_EQ(info.by, closed_by::peer);
    EXPECT_EQ(net.server().connection_count(), 0U);
    // The redundant copies that arrive after the first find no connection.
    EXPECT_EQ(net.dropped(drop_reason::unknown_source), 7U);
}

TEST(Connection, AHandlerMayDisconnectFromInsideOnMessage) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    net.server_events_log().on_message_hook = [&](connection_id id, channel, std::span<const std::byte>) {
        net.server().disconnect(id, disconnect_code::kicked, "no", net.now());
    };
    client.send(channel::reliable, text("a"), net.now());
    client.send(channel::reliable, text("b"), net.now());
    client.flush(net.now());
    net.pump();
    EXPECT_EQ(net.server_events_log().messages.size(), 1U); // nothing delivered after the disconnect
    EXPECT_EQ(client.error(), client_error::disconnected_by_server);
}

TEST(Connection, AHandlerMayAnswerAndFlushFromInsideOnMessage) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    net.server_events_log().on_message_hook = [&](connection_id id, channel ch,
                                                  std::span<const std::byte> m) {
        net.server().send(id, ch, m, net.now()); // echo
        net.server().flush(id, net.now());
    };
    client.send(channel::reliable, text("echo me"), net.now());
    client.flush(net.now());
    net.pump();
    ASSERT_EQ(net.events_of("10.0.0.2:5000").messages.size(), 1U);
    EXPECT_EQ(net.events_of("10.0.0.2:5000").messages[0].second, "echo me");
}

TEST(Connection, StatsCountTheTraffic) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    for (int i = 0; i < 5; ++i) {
        client.send(channel::unreliable, text(std::string(100, 'x')), net.now());
        client.flush(net.now());
        net.pump();
    }
    const auto id = net.server_events_log().connected.at(0).id;
    const auto stats = net.server().stats(id, net.now());
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->remote.to_string(), "10.0.0.2:5000");
    EXPECT_GE(stats->datagrams_received, 6U); // the keep-alive that confirmed, five payloads
    EXPECT_GE(stats->bytes_received, 5U * 100U);
    EXPECT_GE(stats->link.bytes_received, 5U * 100U);
    const auto client_stats = client.stats(net.now());
    EXPECT_EQ(client_stats.remote, net.server_address());
    EXPECT_GE(client_stats.bytes_sent, 5U * 100U);
    EXPECT_FALSE(net.server().stats(id + 1000, net.now()));
}

TEST(Connection, SendingToAnUnknownConnectionQueuesNothing) {
    harness net;
    EXPECT_EQ(net.server().send(12345, channel::reliable, text("x"), net.now()), send_status::queue_full);
    auto& client = net.add_client("10.0.0.2:5000");
    EXPECT_EQ(client.send(channel::reliable, text("x"), net.now()), send_status::queue_full);
}

TEST(Connection, DisconnectAllEndsEveryConnection) {
    harness net;
    auto& a = net.add_client("10.0.0.2:5000");
    auto& b = net.add_client("10.0.0.3:5000");
    ASSERT_TRUE(net.connect(a, 1));
    ASSERT_TRUE(net.connect(b, 2));
    net.server().disconnect_all(disconnect_code::shutdown, "server stopping", net.now());
    net.pump();
    EXPECT_EQ(net.server().connection_count(), 0U);
    EXPECT_EQ(a.error(), client_error::disconnected_by_server);
    EXPECT_EQ(b.server_disconnect().code, disconnect_code::shutdown);
    EXPECT_EQ(b.server_disconnect().message, "server stopping");
}

TEST(Connection, AClientCanReconnectWithANewToken) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client, 5));
    client.disconnect(disconnect_code::client_quit, "", net.now());
    net.pump();
    ASSERT_TRUE(net.connect(client, 5));
    EXPECT_EQ(net.server().connection_count(), 1U);
    EXPECT_EQ(net.server_events_log().connected.size(), 2U);
    EXPECT_NE(net.server_events_log().connected[0].id, net.server_events_log().connected[1].id);
}

} // namespace

namespace {

// A client that completes the handshake by hand (it knows the token's keys), then sends authenticated
// payloads whose bodies the link refuses: counted, and past the limit the server ends the connection.
TEST(Connection, APeerSendingMalformedBodiesIsDisconnected) {
    auto config = harness::default_config();
    config.max_malformed_bodies = 3;
    harness net{config};
    const auto from = *net_address::parse("10.0.0.2:5000");
    const auto token = net.token(9);
    const auto challenge = net.challenge_for(token, from);
    ASSERT_TRUE(challenge);
    std::array<std::uint8_t, max_datagram_bytes> out{};
    const auto response_size =
        seal_clear_packet(packet_type::response, handshake_sequence_bit | 1,
                          write_response({challenge->challenge_sequence, challenge->token}),
                          token.client_to_server_key, test_protocol, out);
    net.server().receive(std::span{out}.first(response_size), from, net.now());
    ASSERT_EQ(net.server().connection_count(), 1U);

    const auto keys =
        derive_session_keys(token.client_to_server_key, token.server_to_client_key, challenge->salt);
    const std::vector<std::uint8_t> junk_body(40, 0xFF);
    for (std::uint64_t sequence = 0; sequence < 4; ++sequence) {
        const auto n =
            seal_packet(packet_type::payload, sequence, junk_body, keys.client_to_server, test_protocol, out);
        net.server().receive(std::span{out}.first(n), from, net.now());
    }
    EXPECT_EQ(net.dropped(drop_reason::link_refused), 4U);
    EXPECT_EQ(net.server().connection_count(), 0U);
    ASSERT_EQ(net.server_events_log().disconnected.size(), 1U);
    EXPECT_EQ(net.server_events_log().disconnected[0].second.code, disconnect_code::protocol_error);
}

} // namespace

} // namespace udp_connection_test
