// The handshake between a server_core and client_cores in memory (simulated time): a client with a good
// token connects; each way a token or a handshake packet can be wrong is refused with its own reason and
// costs the server no connection; the client's state machine reports each failure clearly.

#include <algorithm>
#include <array>

#include <gtest/gtest.h>

#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"
#include "transport_harness.hpp"

namespace udp_handshake_test {

namespace {

using namespace ecsnet::transport;
using namespace ecsnet::transport::testing;

std::size_t count_type(const std::vector<datagram>& log, packet_type type, const net_address& from) {
    return static_cast<std::size_t>(std::count_if(log.begin(), log.end(), [&](const datagram& d) {
        return d.from == from && !d.bytes.empty() && (d.bytes[0] & 0x0F) == static_cast<std::uint8_t>(type);
    }));
}

TEST(Handshake, AClientWithAGoodTokenConnects) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client, 1001));
    ASSERT_EQ(net.server_events_log().connected.size(), 1U);
    const auto& info = net.server_events_log().connected[0];
    EXPECT_EQ(info.client_id, 1001U);
    EXPECT_EQ(info.user_data[0], static_cast<std::uint8_t>(1001 & 0xFF));
    EXPECT_EQ(info.remote.to_string(), "10.0.0.2:5000");
    EXPECT_EQ(net.events_of("10.0.0.2:5000").connected, 1);
    EXPECT_EQ(net.server().connection_count(), 1U);
    EXPECT_EQ(net.server().counters().dropped.total(), 0U);
    EXPECT_EQ(net.server().table_sizes().pending_handshakes, 0U); // the claim became a used token
    EXPECT_EQ(net.server().table_sizes().used_tokens, 1U);

    // Messages both ways.
    EXPECT_EQ(client.send(channel::reliable, text("hello server"), net.now()), send_status::queued);
    client.flush(net.now());
    net.pump();
    ASSERT_FALSE(net.server_events_log().messages.empty());
    EXPECT_EQ(net.server_events_log().messages.back().bytes, "hello server");
    EXPECT_EQ(net.server().send(info.id, channel::reliable, text("hello client"), net.now()),
              send_status::queued);
    net.server().flush(info.id, net.now());
    net.pump();
    ASSERT_FALSE(net.events_of("10.0.0.2:5000").messages.empty());
    EXPECT_EQ(net.events_of("10.0.0.2:5000").messages.back().second, "hello client");
}

// The connection's packets use AES-256-GCM when the server offers it and the client may use it, else
// ChaCha20-Poly1305, and messages flow either way.
TEST(Handshake, TheCipherIsAesWhenBothEndsRunItElseChaCha) {
    const bool aes_here = (available_ciphers() & cipher_bit(packet_cipher::aes256_gcm)) != 0;
    const auto chacha_only = cipher_bit(packet_cipher::chacha20_poly1305);
    struct case_t {
        std::uint8_t server;
        std::uint8_t client;
        packet_cipher expected;
    };
    const auto aes_if_here = aes_here ? packet_cipher::aes256_gcm : packet_cipher::chacha20_poly1305;
    for (const auto& c : {case_t{0, 0, aes_if_here}, case_t{chacha_only, 0, packet_cipher::chacha20_poly1305},
                          case_t{0, chacha_only, packet_cipher::chacha20_poly1305}}) {
        auto config = harness::default_config();
        config.ciphers = c.server;
        harness net{config};
        client_config client_settings;
        client_settings.ciphers = c.client;
        auto& client = net.add_client("10.0.0.2:5000", client_settings);
        ASSERT_TRUE(net.connect(client, 7));
        const auto& info = net.server_events_log().connected.at(0);
        EXPECT_EQ(client.stats(net.now()).cipher, c.expected);
        EXPECT_EQ(net.server().stats(info.id, net.now())->cipher, c.expected);
        EXPECT_EQ(client.send(channel::reliable, text("over the chosen cipher"), net.now()),
                  send_status::queued);
        client.flush(net.now());
        net.pump();
        ASSERT_FALSE(net.server_events_log().messages.empty());
        EXPECT_EQ(net.server_events_log().messages.back().bytes, "over the chosen cipher");
        EXPECT_EQ(net.server().counters().dropped.total(), 0U);
    }
}

// A response naming a cipher the server did not offer (a client that ignores the offer, or a forged one)
// connects nothing.
TEST(Handshake, AResponseChoosingACipherNotOfferedIsRefused) {
    auto config = harness::default_config();
    config.ciphers = cipher_bit(packet_cipher::chacha20_poly1305);
    harness net{config};
    const auto from = *net_address::parse("10.0.0.2:5000");
    const auto token = net.token(9);
    const auto challenge = net.challenge_for(token, from);
    ASSERT_TRUE(challenge);
    EXPECT_EQ(challenge->ciphers, cipher_bit(packet_cipher::chacha20_poly1305));
    std::array<std::uint8_t, max_datagram_bytes> out{};
    const auto response_size = seal_clear_packet(
        packet_type::response, handshake_sequence_bit | 1,
        write_response({challenge->challenge_sequence, challenge->token, packet_cipher::aes256_gcm}),
        token.client_to_server_key, test_protocol, out);
    net.server().receive(std::span{out}.first(response_size), from, net.now());
    EXPECT_EQ(net.server().connection_count(), 0U);
    EXPECT_EQ(net.dropped(drop_reason::malformed), 1U);
}

TEST(Handshake, ATokenSealedWithAnotherKeyIsRefused) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(client.connect(net.token(1, {}, 60, 5, generate_key()), net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::token_invalid), 1U);
    EXPECT_EQ(count_type(net.log(), packet_type::challenge, net.server_address()), 0U);
    EXPECT_EQ(net.server().table_sizes().pending_handshakes, 0U);
}

TEST(Handshake, ATokenWithBytesFlippedIsRefused) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    auto token = net.token();
    token.encrypted_private[500] ^= 0x04;
    ASSERT_TRUE(client.connect(token, net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::token_invalid), 1U);
    EXPECT_EQ(net.server().connection_count(), 0U);
}

TEST(Handshake, AnExpiredTokenIsRefusedByTheServer) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    const auto token = net.token(7, {}, 30);
    ASSERT_TRUE(client.connect(token, net.now())); // the client's clock says it is valid...
    net.queue().clear();
    net.unix_time() += 31; // ...the server's says it expired (a skewed clock, or a request replayed late)
    net.server().receive(write_connection_request(token), *net_address::parse("10.0.0.2:5000"), net.now());
    EXPECT_EQ(net.dropped(drop_reason::token_expired), 1U);
    EXPECT_TRUE(net.queue().empty()); // no challenge
}

TEST(Handshake, AnExpiredTokenIsRefusedByTheClientBeforeSending) {
    harness net;
    auto token = net.token(7, {}, 30);
    net.unix_time() += 30;
    auto& client = net.add_client("10.0.0.2:5000");
    EXPECT_FALSE(client.connect(token, net.now()));
    EXPECT_EQ(client.error(), client_error::token_expired);
    EXPECT_TRUE(net.queue().empty()); // nothing sent
    ASSERT_EQ(net.events_of("10.0.0.2:5000").disconnected.size(), 1U);
    EXPECT_EQ(net.events_of("10.0.0.2:5000").disconnected[0].first, client_error::token_expired);
}

TEST(Handshake, AMalformedTokenIsRefusedByTheClient) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    const std::vector<std::uint8_t> junk(2048, 0x41);
    EXPECT_FALSE(client.connect(junk, net.now()));
    EXPECT_EQ(client.error(), client_error::token_invalid);
    EXPECT_TRUE(net.queue().empty());
}

TEST(Handshake, ATokenNotNamingThisServerIsRefused) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    // The client is told to go to this server's address, but the token names another server.
    auto token = net.token(1, {*net_address::parse("10.9.9.9:7777")});
    token.server_addresses = {net.server_address()};
    ASSERT_TRUE(client.connect(token, net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::token_wrong_address), 1U);
    EXPECT_EQ(net.server().connection_count(), 0U);
}

TEST(Handshake, AnotherPortOfTheServersIpIsAnotherServer) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    auto token = net.token(1, {*net_address::parse("10.0.0.1:7778")});
    token.server_addresses = {net.server_address()};
    ASSERT_TRUE(client.connect(token, net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::token_wrong_address), 1U);
}

TEST(Handshake, ATokenUsedFromAnotherAddressDuringItsHandshakeIsRefused) {
    harness net;
    const auto token = net.token(5);
    auto& first = net.add_client("10.0.0.2:5000");
    auto& thief = net.add_client("10.0.0.66:6000");
    ASSERT_TRUE(first.connect(token, net.now()));
    net.filter = [](datagram& d) {
        return (d.bytes[0] & 0x0F) == 0;
    }; // requests only: the handshake stays pending
    net.pump();
    ASSERT_TRUE(thief.connect(token, net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::token_reused), 1U);
    net.filter = nullptr;
    ASSERT_TRUE(net.run_until([&] { return first.state() == client_state::connected; }));
    EXPECT_NE(thief.state(), client_state::connected);
}

TEST(Handshake, ATokenThatConnectedIsRefusedFromAnyAddressEvenAfterItsConnectionEnds) {
    harness net;
    const auto token = net.token(5);
    auto& first = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(first.connect(token, net.now()));
    ASSERT_TRUE(net.run_until([&] { return first.state() == client_state::connected; }));
    auto& thief = net.add_client("10.0.0.66:6000");
    ASSERT_TRUE(thief.connect(token, net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::token_reused), 1U);

    first.disconnect(10, "bye", net.now());
    net.pump();
    ASSERT_EQ(net.server().connection_count(), 0U);
    auto& again = net.add_client("10.0.0.2:5001");
    ASSERT_TRUE(again.connect(token, net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::token_reused), 2U);
    EXPECT_EQ(net.server().connection_count(), 0U);
}

TEST(Handshake, ARetryFromTheSameAddressGetsAnotherChallenge) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(client.connect(net.token(), net.now()));
    net.filter = [](datagram& d) { return (d.bytes[0] & 0x0F) == 0; }; // the challenges are lost
    net.run(350ms);
    EXPECT_GE(count_type(net.log(), packet_type::challenge, net.server_address()), 3U);
    EXPECT_EQ(net.dropped(drop_reason::token_reused), 0U);
    net.filter = nullptr;
    EXPECT_TRUE(net.run_until([&] { return client.state() == client_state::connected; }));
}

TEST(Handshake, AnotherProtocolIdIsRefused) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    token_params params;
    params.protocol_id = test_protocol + 1;
    params.client_id = 1;
    params.server_addresses = {net.server_address()};
    params.now_unix = net.unix_time();
    ASSERT_TRUE(client.connect(*issue_token(params, net.private_key()), net.now()));
    net.pump();
    EXPECT_EQ(net.dropped(drop_reason::wrong_protocol), 1U);
}

TEST(Handshake, AnotherVersionIsRefused) {
    harness net;
    auto request = write_connection_request(net.token());
    request[12] = '9';
    net.server().receive(request, *net_address::parse("10.0.0.2:5000"), net.now());
    EXPECT_EQ(net.dropped(drop_reason::wrong_version), 1U);
    EXPECT_TRUE(net.queue().empty());
}

TEST(Handshake, AFullServerDeniesAndTheClientSaysSo) {
    auto config = harness::default_config();
    config.max_clients = 2;
    harness net{config};
    ASSERT_TRUE(net.connect(net.add_client("10.0.0.2:5000"), 1));
    ASSERT_TRUE(net.connect(net.add_client("10.0.0.3:5000"), 2));
    auto& third = net.add_client("10.0.0.4:5000");
    ASSERT_TRUE(third.connect(net.token(3), net.now()));
    ASSERT_TRUE(net.run_until([&] { return third.state() == client_state::disconnected; }));
    EXPECT_EQ(third.error(), client_error::denied_server_full);
    EXPECT_GE(net.dropped(drop_reason::server_full), 1U);
    EXPECT_GE(net.server().counters().denials_sent.load(), 1U);
    EXPECT_EQ(net.server().connection_count(), 2U);
    ASSERT_EQ(net.events_of("10.0.0.4:5000").disconnected.size(), 1U);
    EXPECT_EQ(net.events_of("10.0.0.4:5000").disconnected[0].first, client_error::denied_server_full);
}

TEST(Handshake, ASecondConnectionOfTheSameClientIdIsDenied) {
    harness net;
    ASSERT_TRUE(net.connect(net.add_client("10.0.0.2:5000"), 77));
    auto& twin = net.add_client("10.0.0.3:5000");
    ASSERT_TRUE(twin.connect(net.token(77), net.now()));
    ASSERT_TRUE(net.run_until([&] { return twin.state() == client_state::disconnected; }));
    EXPECT_EQ(twin.error(), client_error::denied_client_id_in_use);
    EXPECT_EQ(net.server().connection_count(), 1U);
}

TEST(Handshake, NoServerAnsweringIsARequestTimeout) {
    harness net;
    client_config config;
    config.handshake_timeout = 500ms;
    auto& client = net.add_client("10.0.0.2:5000", config);
    ASSERT_TRUE(client.connect(net.token(1, {*net_address::parse("10.0.0.99:7777")}), net.now()));
    ASSERT_TRUE(net.run_until([&] { return client.state() == client_state::disconnected; }, 2s));
    EXPECT_EQ(client.error(), client_error::request_timed_out);
    // It kept asking at its resend interval meanwhile.
    EXPECT_GE(count_type(net.log(), packet_type::connection_request, *net_address::parse("10.0.0.2:5000")),
              4U);
}

TEST(Handshake, AChallengeWithoutAKeepAliveIsAResponseTimeout) {
    harness net;
    client_config config;
    config.handshake_timeout = 500ms;
    auto& client = net.add_client("10.0.0.2:5000", config);
    ASSERT_TRUE(client.connect(net.token(), net.now()));
    net.filter = [&](datagram& d) { // the server never hears a response
        return !(d.to == net.server_address() && (d.bytes[0] & 0x0F) == 3);
    };
    ASSERT_TRUE(net.run_until([&] { return client.state() == client_state::disconnected; }, 2s));
    EXPECT_EQ(client.error(), client_error::response_timed_out);
}

TEST(Handshake, ASilentFirstServerMovesOnToTheNext) {
    harness net;
    client_config config;
    config.handshake_timeout = 300ms;
    auto& client = net.add_client("10.0.0.2:5000", config);
    const auto silent = *net_address::parse("10.0.0.99:7777");
    ASSERT_TRUE(client.connect(net.token(1, {silent, net.server_address()}), net.now()));
    ASSERT_TRUE(net.run_until([&] { return client.state() == client_state::connected; }, 2s));
    EXPECT_EQ(client.server_address(), net.server_address());
}

TEST(Handshake, TheTokensLifetimeBoundsTheWholeAttempt) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    // Three silent servers, 5 s each (the token's timeout), but a token living 8 s.
    const std::vector<net_address> silent{*net_address::parse("10.0.0.97:1"),
                                          *net_address::parse("10.0.0.98:1"),
                                          *net_address::parse("10.0.0.99:1")};
    ASSERT_TRUE(client.connect(net.token(1, silent, 8, 5), net.now()));
    ASSERT_TRUE(net.run_until([&] { return client.state() == client_state::disconnected; }, 20s, 100ms));
    EXPECT_EQ(client.error(), client_error::token_expired);
}

TEST(Handshake, AResponseFromAnotherAddressDoesNotOpenTheChallenge) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(client.connect(net.token(), net.now()));
    const auto thief = *net_address::parse("10.0.0.66:5000");
    net.filter = [&](datagram& d) {
        if (d.to == net.server_address() && (d.bytes[0] & 0x0F) == 3) {
            d.from = thief; // an attacker on the path replays the response from its own address
            return true;
        }
        return true;
    };
    net.pump();
    EXPECT_GE(net.dropped(drop_reason::challenge_invalid), 1U);
    EXPECT_EQ(net.server().connection_count(), 0U);
}

TEST(Handshake, AnOldChallengeIsRefused) {
    auto config = harness::default_config();
    config.challenge_lifetime = 1s;
    harness net{config};
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(client.connect(net.token(), net.now()));
    std::vector<datagram> held;
    net.filter = [&](datagram& d) {
        if (d.to == net.server_address() && (d.bytes[0] & 0x0F) == 3) {
            held.push_back(d);
            return false;
        }
        return true;
    };
    net.pump();
    ASSERT_EQ(held.size(), 1U);
    net.now() += 2s;
    net.deliver(held[0]);
    EXPECT_EQ(net.dropped(drop_reason::challenge_invalid), 1U);
    EXPECT_EQ(net.server().connection_count(), 0U);
}

TEST(Handshake, AResponseSurvivesTheChallengeKeyRotationButNotTwo) {
    auto config = harness::default_config();
    config.challenge_key_rotation = 100ms;
    config.challenge_lifetime = 10s;
    harness net{config};
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(client.connect(net.token(), net.now()));
    std::vector<datagram> held;
    net.filter = [&](datagram& d) {
        if (d.to == net.server_address() && (d.bytes[0] & 0x0F) == 3) {
            held.push_back(d);
            return false;
        }
        return true;
    };
    net.pump();
    ASSERT_EQ(held.size(), 1U);
    net.now() += 150ms;
    net.server().update(net.now()); // one rotation
    auto copy = held[0];
    net.filter = nullptr;
    net.now() += 150ms;
    net.server().update(net.now()); // a second one: the key is gone
    net.deliver(copy);
    EXPECT_EQ(net.dropped(drop_reason::challenge_invalid), 1U);
}

TEST(Handshake, ADevKeyServerAcceptsDevTokensAndSaysItIsInsecure) {
    auto config = harness::default_config();
    config.private_key = dev_private_key;
    harness net{config};
    EXPECT_TRUE(net.server().uses_dev_key());
    dev_token_params params;
    params.protocol_id = test_protocol;
    params.server_addresses = {net.server_address()};
    auto& client = net.add_client("10.0.0.2:5000");
    net.unix_time() = unix_now(); // dev tokens are issued on the system clock
    ASSERT_TRUE(client.connect(*make_dev_token(params), net.now()));
    EXPECT_TRUE(net.run_until([&] { return client.state() == client_state::connected; }));

    harness secure;
    EXPECT_FALSE(secure.server().uses_dev_key());
}

} // namespace

} // namespace udp_handshake_test
