// What a server does with datagrams it should not act on: random bytes, truncated and oversized packets,
// every byte of valid packets flipped, replays, packets of the wrong kind, floods of requests from many
// source ports. Each is refused under a counted reason, answered with nothing (or, before a source is
// proven, with less than it sent), and costs memory only within the configured bounds. In memory, with
// simulated time.

#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "transport_harness.hpp"

namespace udp_refusal_test {

namespace {

using namespace ecsnet::transport;
using namespace ecsnet::transport::testing;

server_config unlimited_config() {
    auto config = harness::default_config();
    config.handshake_packets_per_second_per_ip = 0; // these tests send many packets from one IP on purpose
    return config;
}

std::uint8_t type_of(const datagram& d) {
    return static_cast<std::uint8_t>(d.bytes[0] & 0x0F);
}

// Captures the first datagram of `type` sent from `from`, and stops it.
std::function<bool(datagram&)> capture(std::vector<datagram>& into, packet_type type, net_address from) {
    return [&into, type, from](datagram& d) {
        if (d.from == from && type_of(d) == static_cast<std::uint8_t>(type) && into.empty()) {
            into.push_back(d);
            return false;
        }
        return true;
    };
}

TEST(Refusal, RandomDatagramsAreAllRefusedAndAnsweredWithNothing) {
    harness net{unlimited_config()};
    std::mt19937_64 random{99};
    constexpr int count = 20'000;
    for (int i = 0; i < count; ++i) {
        std::vector<std::uint8_t> bytes(random() % 1400);
        for (auto& b : bytes) {
            b = static_cast<std::uint8_t>(random());
        }
        if (!bytes.empty() && random() % 2 == 0) {
            bytes[0] =
                static_cast<std::uint8_t>(random() % 8 | ((1 + random() % 8) << 4)); // plausible prefixes
        }
        if (random() % 4 == 0 && bytes.size() > 0) {
            bytes.resize(1078);
            bytes[0] = 0; // a request's size and prefix, random content
        }
        const auto from = net_address::ipv4({10, 1, static_cast<std::uint8_t>(random()), 1},
                                            static_cast<std::uint16_t>(1 + random() % 60000));
        net.server().receive(bytes, from, net.now());
    }
    EXPECT_TRUE(net.queue().empty()) << "the server answered junk";
    EXPECT_EQ(net.server().counters().dropped.total(), static_cast<std::uint64_t>(count));
    EXPECT_EQ(net.server().connection_count(), 0U);
    EXPECT_EQ(net.server().table_sizes().pending_handshakes, 0U);
    EXPECT_EQ(net.server_events_log().dropped.size(), static_cast<std::size_t>(count));
}

TEST(Refusal, TruncatedRequestsAreMalformed) {
    harness net{unlimited_config()};
    const auto request = write_connection_request(net.token());
    for (std::size_t size = 1; size < request.size(); ++size) {
        net.server().receive(std::span{request}.first(size), *net_address::parse("10.0.0.2:5000"), net.now());
    }
    EXPECT_EQ(net.dropped(drop_reason::malformed), request.size() - 1);
    EXPECT_TRUE(net.queue().empty());
}

TEST(Refusal, OversizedDatagramsAreMalformed) {
    harness net{unlimited_config()};
    const auto request = write_connection_request(net.token());
    std::vector<std::uint8_t> longer(request.begin(), request.end());
    longer.resize(1079);
    net.server().receive(longer, *net_address::parse("10.0.0.2:5000"), net.now());
    std::vector<std::uint8_t> huge(1201, 0x15);
    net.server().receive(huge, *net_address::parse("10.0.0.2:5000"), net.now());
    std::vector<std::uint8_t> jumbo(65'000, 0);
    net.server().receive(jumbo, *net_address::parse("10.0.0.2:5000"), net.now());
    EXPECT_EQ(net.dropped(drop_reason::malformed), 3U);
    EXPECT_TRUE(net.queue().empty());
}

TEST(Refusal, AnEmptyDatagramIsMalformed) {
    harness net;
    net.server().receive({}, *net_address::parse("10.0.0.2:5000"), net.now());
    EXPECT_EQ(net.dropped(drop_reason::malformed), 1U);
}

TEST(Refusal, EveryByteOfARequestFlippedGetsNoChallenge) {
    harness net{unlimited_config()};
    const auto request = write_connection_request(net.token());
    for (std::size_t i = 0; i < request.size(); ++i) {
        auto changed = request;
        changed[i] ^= 0x20;
        net.server().receive(changed, net_address::ipv4({10, 2, 0, 1}, static_cast<std::uint16_t>(1000 + i)),
                             net.now());
    }
    EXPECT_TRUE(net.queue().empty());
    EXPECT_EQ(net.server().counters().dropped.total(), request.size());
    EXPECT_EQ(net.server().table_sizes().pending_handshakes, 0U);
}

TEST(Refusal, EveryByteOfAResponseFlippedOpensNoConnection) {
    harness net{unlimited_config()};
    auto& client = net.add_client("10.0.0.2:5000");
    std::vector<datagram> held;
    net.filter = capture(held, packet_type::response, *net_address::parse("10.0.0.2:5000"));
    ASSERT_TRUE(client.connect(net.token(), net.now()));
    net.pump();
    ASSERT_EQ(held.size(), 1U);
    net.queue().clear();
    const auto dropped_before = net.server().counters().dropped.total();
    for (std::size_t i = 0; i < held[0].bytes.size(); ++i) {
        auto changed = held[0];
        changed.bytes[i] ^= 0x01;
        net.deliver(changed);
    }
    EXPECT_EQ(net.server().connection_count(), 0U);
    EXPECT_TRUE(net.queue().empty());
    EXPECT_EQ(net.server().counters().dropped.total() - dropped_before, held[0].bytes.size());
    // The genuine one still works.
    net.deliver(held[0]);
    EXPECT_EQ(net.server().connection_count(), 1U);
}

TEST(Refusal, EveryByteOfAPayloadFlippedIsDroppedAndNothingIsDelivered) {
    harness net{unlimited_config()};
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    std::vector<datagram> held;
    net.filter = capture(held, packet_type::payload, *net_address::parse("10.0.0.2:5000"));
    client.send(channel::reliable, text("the one message"), net.now());
    client.flush(net.now());
    net.pump();
    ASSERT_EQ(held.size(), 1U);
    net.filter = nullptr;
    for (std::size_t i = 0; i < held[0].bytes.size(); ++i) {
        for (const std::uint8_t mask : {0x01, 0x80}) {
            auto changed = held[0];
            changed.bytes[i] ^= mask;
            net.deliver(changed);
        }
    }
    EXPECT_TRUE(net.server_events_log().messages.empty());
    EXPECT_EQ(net.server().connection_count(), 1U); // forged packets do not end a connection
    net.deliver(held[0]);
    ASSERT_EQ(net.server_events_log().messages.size(), 1U);
    EXPECT_EQ(net.server_events_log().messages[0].bytes, "the one message");
}

TEST(Refusal, ReplayedPayloadsAreDropped) {
    harness net{unlimited_config()};
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    std::vector<datagram> sent;
    net.filter = [&](datagram& d) {
        if (d.to == net.server_address() && type_of(d) == 5) {
            sent.push_back(d);
        }
        return true;
    };
    for (int i = 0; i < 10; ++i) {
        const auto message = std::to_string(i);
        client.send(channel::unreliable, text(message), net.now());
        client.flush(net.now());
        net.pump();
    }
    const auto delivered = net.server_events_log().messages.size();
    ASSERT_GE(delivered, 10U);
    for (const auto& d : sent) {
        net.deliver(d);
    }
    EXPECT_EQ(net.server_events_log().messages.size(), delivered);
    EXPECT_EQ(net.dropped(drop_reason::replayed), sent.size());
}

TEST(Refusal, PacketsOnlyAServerSendsAreBadPrefixes) {
    harness net;
    for (const std::uint8_t prefix : {0x11, 0x12}) { // denied, challenge
        std::vector<std::uint8_t> bytes(40, 0);
        bytes[0] = prefix;
        net.server().receive(bytes, *net_address::parse("10.0.0.2:5000"), net.now());
    }
    EXPECT_EQ(net.dropped(drop_reason::bad_prefix), 2U);
}

TEST(Refusal, ConnectionPacketsFromAnUnknownSourceAreDropped) {
    harness net;
    const auto keep_alive = std::vector<std::uint8_t>(18, 0x14);
    net.server().receive(keep_alive, *net_address::parse("10.0.0.2:5000"), net.now());
    EXPECT_EQ(net.dropped(drop_reason::unknown_source), 1U);
    EXPECT_TRUE(net.queue().empty());
}

TEST(Refusal, AConnectedClientsOwnRequestIsIgnored) {
    harness net;
    auto& client = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(net.connect(client));
    net.server().receive(write_connection_request(net.token(9)), *net_address::parse("10.0.0.2:5000"),
                         net.now());
    EXPECT_EQ(net.dropped(drop_reason::already_connected), 1U);
}

// Before a source has answered a challenge, nothing the server sends it is bigger than what it received.
TEST(Refusal, NothingSentBeforeConfirmationIsBiggerThanWhatItAnswers) {
    auto config = unlimited_config();
    config.max_clients = 3;
    harness net{config};
    std::set<net_address> connected;
    std::size_t checked = 0;
    for (int i = 0; i < 6; ++i) { // 3 connect, 3 are denied (full), each retrying
        std::string address{
            "10.0.0."}; // appended: g++ 12 warns falsely on "literal" + std::string (-Wrestrict)
        address += std::to_string(10 + i);
        address += ":5000";
        net.add_client(address).connect(net.token(100 + i), net.now());
    }
    for (int round = 0; round < 300; ++round) {
        while (!net.queue().empty()) {
            auto d = net.queue().front();
            net.queue().pop_front();
            if (d.to != net.server_address()) {
                net.deliver(d);
                continue;
            }
            const bool proven = connected.contains(d.from);
            const auto before = net.queue().size();
            net.deliver(d);
            for (const auto& e : net.server_events_log().connected) {
                connected.insert(e.remote);
            }
            if (!proven) {
                for (auto it = net.queue().begin() + static_cast<std::ptrdiff_t>(before);
                     it != net.queue().end(); ++it) {
                    if (it->to == d.from) {
                        EXPECT_LE(it->bytes.size(), d.bytes.size()) << "type " << int(type_of(*it));
                        ++checked;
                    }
                }
            }
        }
        net.run(10ms);
    }
    EXPECT_EQ(net.server().connection_count(), 3U);
    EXPECT_GT(checked, 6U);
}

// A flood of valid requests (the dev key: anyone can make tokens) from thousands of source ports: the
// server's tables stay within their configured capacities, and a legitimate client still connects.
TEST(Refusal, AFloodOfRequestsFromManyPortsStaysWithinTheConfiguredMemory) {
    auto config = unlimited_config();
    config.private_key = dev_private_key;
    config.max_pending_handshakes = 256;
    config.max_pending_per_ip = 16;
    harness net{config};
    net.unix_time() = unix_now();
    dev_token_params params;
    params.protocol_id = test_protocol;
    params.server_addresses = {net.server_address()};
    auto& legit = net.add_client("10.0.0.2:5000");
    ASSERT_TRUE(legit.connect(*make_dev_token(params), net.now()));
    std::size_t max_pending = 0;
    for (int i = 0; i < 4000; ++i) {
        params.client_id = 0;
        const auto request = write_connection_request(*make_dev_token(params));
        // 16 attacking IPs, 250 ports each.
        const auto from = net_address::ipv4({10, 66, 0, static_cast<std::uint8_t>(i % 16)},
                                            static_cast<std::uint16_t>(1024 + i / 16));
        net.server().receive(request, from, net.now());
        max_pending = std::max(max_pending, net.server().table_sizes().pending_handshakes);
        if (i % 100 == 0) {
            net.run(10ms); // the legitimate client's traffic interleaves with the flood
        }
    }
    EXPECT_LE(max_pending, 256U);
    EXPECT_GT(net.server().counters().pending_evicted.load(), 3000U);
    EXPECT_LE(net.server().table_sizes().rate_limited_ips, config.max_rate_limited_ips);
    ASSERT_TRUE(net.run_until([&] { return legit.state() == client_state::connected; }, 5s));
    // The challenges went to the flooding ports (each smaller than its request), nothing else.
    EXPECT_EQ(net.server().connection_count(), 1U);
}

TEST(Refusal, OneIpSendingTooFastIsRateLimitedOthersAreNot) {
    auto config = harness::default_config();
    config.handshake_packets_per_second_per_ip = 10;
    config.handshake_burst_per_ip = 20;
    harness net{config};
    const auto request = write_connection_request(net.token(1));
    for (int i = 0; i < 200; ++i) {
        net.server().receive(request, net_address::ipv4({10, 66, 0, 1}, static_cast<std::uint16_t>(2000 + i)),
                             net.now());
    }
    EXPECT_EQ(net.dropped(drop_reason::rate_limited), 180U);
    auto& other = net.add_client("10.0.0.2:5000");
    EXPECT_TRUE(net.connect(other, 2));
    // The budget refills with time.
    net.now() += 1s;
    const auto before = net.dropped(drop_reason::rate_limited);
    for (int i = 0; i < 10; ++i) {
        net.server().receive(request, net_address::ipv4({10, 66, 0, 1}, 3000), net.now());
    }
    EXPECT_EQ(net.dropped(drop_reason::rate_limited), before);
}

} // namespace

} // namespace udp_refusal_test
