// The SDK over UDP against a miniature server (udp_fake_server.hpp) that can misbehave at will:
// - a development token made by the client itself connects; the welcome is applied; every snapshot is
//   applied with the server's checksum; the wire mapping holds (the hello on reliable without a token,
//   acks and pings on unreliable, inputs on redundant with sequences 1, 2, 3...);
// - under 20% loss, latency, jitter, duplicates and reordering, every applied snapshot is still exact and
//   every input arrives, once, in order (the redundant channel);
// - the disconnects both ways: close() -> the server hears CLIENT_QUIT (10) and the message; the server's
//   disconnect -> its reason (shutdown), from the server;
// - a welcome with another schema, bytes that are not the protocol: the client ends with schema_mismatch
//   or protocol_error and tells the server the code; a snapshot overtaking the welcome on the unreliable
//   channel is dropped, not an error;
// - no welcome (handshake_timeout), a silent server (timeout);
// - tokens: one issued for the server connects with connect(token) (base64 or 2,048 bytes) and from
//   client_options; a development token to a server with its own key, a token of another protocol id, an
//   expired token, bytes that are not a token, a port where nobody answers: connect_failed within the
//   connect timeout, with the transport's error in the message.

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/arena/input.hpp"
#include "udp_fake_server.hpp"

namespace client_udp_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::client::testing;
using ecsnet::client::client_options;
using ecsnet::client::client_state;
using ecsnet::client::disconnect_reason;
using ecsnet::client::transport_kind;
using transport::channel;
using steady = std::chrono::steady_clock;

client_options quick(const std::string& name) {
    auto options = over(transport_kind::udp, name);
    options.connect_timeout = 1000ms;
    options.handshake_timeout = 1000ms;
    options.interpolation_states = 0;
    return options;
}

bool until_disconnected(ecsnet::client::client& net, std::chrono::milliseconds timeout = 5000ms) {
    return poll_until(
        net, [&] { return net.state() == client_state::disconnected; }, timeout);
}

std::string move_payload(float dir_x, float dir_y) {
    arena::move_input input;
    input.dir_x = dir_x;
    input.dir_y = dir_y;
    input.speed = 4.0F;
    return arena::encode(input);
}

// The applied ticks' checksums against the fake's.
std::size_t expect_exact(udp_fake_server& fake, const std::vector<applied_record>& applied) {
    std::size_t compared = 0;
    for (const auto& record : applied) {
        const auto expected = fake.checksum(record.tick);
        EXPECT_TRUE(expected.has_value()) << "tick " << record.tick;
        if (expected) {
            EXPECT_EQ(record.checksum, *expected) << "tick " << record.tick;
            ++compared;
        }
        EXPECT_TRUE(record.verified) << "tick " << record.tick;
    }
    return compared;
}

// The fake's messages of one kind, with their channels.
std::vector<udp_fake_server::message> of_kind(udp_fake_server& fake, v1::Envelope::MessageCase which) {
    auto all = fake.received();
    std::erase_if(all,
                  [which](const udp_fake_server::message& m) { return m.envelope.message_case() != which; });
    return all;
}

std::string serialized(const v1::Envelope& envelope) {
    return envelope.SerializeAsString();
}

std::string welcome_of(const proto::schema& schema) {
    proto::welcome_info info;
    info.client_id = 9;
    info.tick_rate = 30;
    return serialized(proto::make_server_welcome(schema.layout(), info));
}

// The arena's schema with the yaw one bit narrower.
const proto::schema& narrow_yaw_schema() {
    using namespace ecsnet::proto;
    using arena::Transform;
    static const schema instance{
        component<Transform>(
            "Transform",
            field<&Transform::x>("x", fixed_point<20>{-arena::arena_half_extent, arena::position_step}),
            field<&Transform::y>("y", fixed_point<20>{-arena::arena_half_extent, arena::position_step}),
            field<&Transform::z>("z", fixed_point<18>{-256.0, arena::position_step}),
            field<&Transform::yaw>("yaw", angle<11>{})),
        component<arena::Health>("Health", field<&arena::Health::value>("value", integer<>{})),
        component<arena::Kind>("Kind", field<&arena::Kind::value>("value", integer<>{})),
        component<arena::LastHit>("LastHit", field<&arena::LastHit::target>("target", integer<>{}),
                                  field<&arena::LastHit::tick>("tick", integer<>{}),
                                  field<&arena::LastHit::hits>("hits", integer<>{}))};
    return instance;
}

transport::connect_token token_for(const udp_fake_server& fake, const transport::key& key,
                                   std::uint64_t protocol_id = ecsnet::client::default_protocol_id) {
    transport::token_params params;
    params.protocol_id = protocol_id;
    params.client_id = 77;
    params.server_addresses = {fake.address()};
    params.timeout_seconds = 5;
    return *transport::issue_token(params, key);
}

// Connects `net` to `fake` with a development token and polls it until it has applied `count` snapshots,
// recorded in `applied`.
::testing::AssertionResult connect_and_apply(ecsnet::client::client& net, const udp_fake_server& fake,
                                             std::vector<applied_record>& applied, std::size_t count) {
    record_applied(net, applied);
    if (!net.connect("127.0.0.1", fake.port())) {
        return ::testing::AssertionFailure() << "connect() refused";
    }
    if (!poll_until(net, [&] { return applied.size() >= count; })) {
        return ::testing::AssertionFailure()
               << applied.size() << " of " << count << " snapshots applied; "
               << ecsnet::client::to_string(net.state()) << ": " << net.disconnect_message();
    }
    return ::testing::AssertionSuccess();
}

TEST(ClientUdp, ADevelopmentTokenConnectsAndEverySnapshotIsExact) {
    udp_fake_server fake;
    ecsnet::client::client net{arena::replicated_schema(), quick("udp")};
    std::vector<applied_record> applied;
    ASSERT_TRUE(connect_and_apply(net, fake, applied, 30));
    EXPECT_EQ(net.state(), client_state::connected);
    EXPECT_NE(net.own_entity(), null_entity);
    EXPECT_EQ(net.registry().storage<arena::Transform>().size(), 20U);
    EXPECT_GE(expect_exact(fake, applied), 30U);
    expect_registry_matches_newest_state(net.mirror());
    EXPECT_TRUE(applied.front().full_state);
    const auto stats = net.stats();
    EXPECT_EQ(stats.snapshots_refused, 0U);
    EXPECT_EQ(stats.full_states_received, 1U) << "deltas once the server had an ack";
    EXPECT_GT(stats.bytes_received, 1000U);
    EXPECT_GT(stats.packets_received, 30U);
    // Ticks skipped by nothing: a loopback loses no datagram.
    const auto span = applied.back().tick - applied.front().tick + 1;
    EXPECT_GE(applied.size() * 10, span * 9);
}

// What a snapshot's handlers send (its ack) leaves in one packet at the delivery's end, and is counted then:
// with the client not polled, nothing more leaves it, and every byte the server received is in its
// statistics (a report after each send missed that last packet).
TEST(ClientUdp, WhatADeliverySendsIsCountedWhenItEnds) {
    udp_fake_server fake;
    ecsnet::client::client net{arena::replicated_schema(), quick("udp")};
    std::vector<applied_record> applied;
    ASSERT_TRUE(connect_and_apply(net, fake, applied, 10));
    std::this_thread::sleep_for(100ms); // the server reads the last ack; the client, not polled, is still
    const auto stats = net.stats();
    EXPECT_GT(stats.bytes_sent, 0U);
    EXPECT_EQ(stats.bytes_sent, fake.counters().bytes_received.load());
}

TEST(ClientUdp, EachMessageTakesItsChannel) {
    udp_fake_server fake;
    auto options = quick("mapped");
    options.ping_interval = 50ms;
    ecsnet::client::client net{arena::replicated_schema(), options};
    std::size_t applied = 0;
    net.on_snapshot([&](const proto::applied_snapshot&) { ++applied; });
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return applied >= 5; }));
    for (int i = 0; i < 10; ++i) {
        EXPECT_TRUE(net.send_input(move_payload(1.0F, 0.0F)));
        poll_for(net, 20ms);
    }
    poll_for(net, 200ms);

    const auto hellos = of_kind(fake, v1::Envelope::kClientHello);
    ASSERT_EQ(hellos.size(), 1U);
    EXPECT_EQ(hellos[0].channel, channel::reliable);
    EXPECT_TRUE(hellos[0].envelope.client_hello().connect_token().empty()) << "the transport took the token";
    EXPECT_EQ(hellos[0].envelope.client_hello().client_name(), "mapped");
    const auto acks = of_kind(fake, v1::Envelope::kAck);
    EXPECT_GE(acks.size(), 5U);
    EXPECT_TRUE(std::all_of(acks.begin(), acks.end(),
                            [](const auto& m) { return m.channel == channel::unreliable; }));
    const auto pings = of_kind(fake, v1::Envelope::kPing);
    EXPECT_GE(pings.size(), 2U);
    EXPECT_TRUE(std::all_of(pings.begin(), pings.end(),
                            [](const auto& m) { return m.channel == channel::unreliable; }));
    const auto inputs = of_kind(fake, v1::Envelope::kInput);
    ASSERT_EQ(inputs.size(), 10U) << "each input once";
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        EXPECT_EQ(inputs[i].channel, channel::redundant);
        EXPECT_EQ(inputs[i].envelope.input().sequence(), i + 1);
        EXPECT_EQ(inputs[i].envelope.input().payload(), move_payload(1.0F, 0.0F));
        EXPECT_GT(inputs[i].envelope.input().client_tick(), 0U);
    }
    EXPECT_EQ(of_kind(fake, v1::Envelope::kDisconnect).size(), 0U) << "no Disconnect message over UDP";
}

TEST(ClientUdp, UnderLossSnapshotsStayExactAndEveryInputArrivesOnce) {
    udp_fake_server fake;
    auto options = quick("lossy");
    options.simulator.loss = 0.2;
    options.simulator.latency = 20ms;
    options.simulator.jitter = 5ms;
    options.simulator.duplicate = 0.05;
    options.simulator.reorder = 0.05;
    options.simulator.seed = 3;
    ecsnet::client::client net{arena::replicated_schema(), options};
    std::vector<applied_record> applied;
    ASSERT_TRUE(connect_and_apply(net, fake, applied, 1));
    constexpr std::uint32_t inputs = 40;
    for (std::uint32_t i = 0; i < inputs; ++i) {
        EXPECT_TRUE(net.send_input(move_payload(0.0F, 1.0F)));
        poll_for(net, 33ms);
    }
    poll_for(net, 800ms); // the last inputs' packets acked, resends done
    EXPECT_EQ(net.state(), client_state::connected) << net.disconnect_message();
    EXPECT_GT(applied.size(), 20U);
    EXPECT_GE(expect_exact(fake, applied), 20U);
    const auto stats = net.stats();
    EXPECT_EQ(stats.checksum_mismatches, 0U);
    EXPECT_GT(stats.packets_lost, 0U) << "the simulator dropped some";
    EXPECT_GT(stats.packet_loss, 0.0);
    EXPECT_EQ(stats.inputs_overflowed, 0U);
    // The redundant channel: all, once, in order, though a fifth of the packets were lost.
    const auto got = of_kind(fake, v1::Envelope::kInput);
    ASSERT_EQ(got.size(), inputs);
    for (std::uint32_t i = 0; i < inputs; ++i) {
        EXPECT_EQ(got[i].envelope.input().sequence(), i + 1);
    }
}

TEST(ClientUdp, CloseTellsTheServerClientQuit) {
    udp_fake_server fake;
    ecsnet::client::client net{arena::replicated_schema(), quick("leaving")};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
    net.close("see you");
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::client_quit);
    EXPECT_FALSE(net.last_disconnect().from_server);
    ASSERT_TRUE(wait_until([&] { return !fake.endings().empty(); }, 2000ms));
    EXPECT_EQ(fake.endings().front().first, 10) << "CLIENT_QUIT";
    EXPECT_EQ(fake.endings().front().second, "see you");
    EXPECT_EQ(fake.connections(), 0U);
}

TEST(ClientUdp, DestroyingTheClientTellsTheServerToo) {
    udp_fake_server fake;
    for (const auto mode : {ecsnet::client::threading::poll, ecsnet::client::threading::own_thread}) {
        {
            auto options = quick("destroyed");
            options.mode = mode;
            ecsnet::client::client net{arena::replicated_schema(), options};
            ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
            ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
        }
        ASSERT_TRUE(wait_until([&] { return fake.connections() == 0; }, 2000ms));
    }
    const auto endings = fake.endings();
    ASSERT_EQ(endings.size(), 2U);
    for (const auto& [code, message] : endings) {
        EXPECT_EQ(code, 10);
        EXPECT_EQ(message, "client destroyed");
    }
}

TEST(ClientUdp, TheServersDisconnectIsItsReason) {
    udp_fake_server fake;
    ecsnet::client::client net{arena::replicated_schema(), quick("dropped")};
    std::vector<ecsnet::client::disconnect_info> endings;
    net.on_disconnected([&](const ecsnet::client::disconnect_info& info) { endings.push_back(info); });
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
    fake.disconnect_all(1, "server shutting down");
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::shutdown);
    EXPECT_TRUE(net.last_disconnect().from_server);
    EXPECT_EQ(net.disconnect_message(), "server shutting down");
    ASSERT_EQ(endings.size(), 1U);
    // A code the protocol does not name: the server ended it without a known reason.
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::connected; }));
    fake.disconnect_all(200, "game rules");
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::connection_lost);
    EXPECT_TRUE(net.last_disconnect().from_server);
}

TEST(ClientUdp, AWelcomeWithAnotherSchemaIsRefusedAndTheServerTold) {
    udp_fake_server::settings settings;
    settings.welcome_schema = &narrow_yaw_schema();
    udp_fake_server fake{settings};
    ecsnet::client::client net{arena::replicated_schema(), quick("picky")};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::schema_mismatch);
    EXPECT_NE(net.disconnect_message().find("yaw"), std::string::npos) << net.disconnect_message();
    ASSERT_TRUE(wait_until([&] { return !fake.endings().empty(); }, 2000ms));
    EXPECT_EQ(fake.endings().front().first, 3) << "SCHEMA_MISMATCH";
}

TEST(ClientUdp, BytesThatAreNotTheProtocolAreAProtocolErrorTheServerHears) {
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(3);
    v1::Envelope snapshot;
    snapshot.mutable_snapshot()->set_tick(1);
    const std::vector<std::pair<std::string, std::vector<std::pair<channel, std::string>>>> cases{
        {"not a protobuf message", {{channel::reliable, std::string{"\x03zz", 3}}}},
        {"an empty envelope", {{channel::unreliable, std::string{}}}},
        {"an Ack, which only clients send", {{channel::reliable, serialized(ack)}}},
        {"a snapshot before the welcome, on the ordered channel",
         {{channel::reliable, serialized(snapshot)}}},
        {"a second welcome",
         {{channel::reliable, welcome_of(arena::replicated_schema())},
          {channel::reliable, welcome_of(arena::replicated_schema())}}},
        {"a welcome, then a snapshot that is not one",
         {{channel::reliable, welcome_of(arena::replicated_schema())},
          {channel::unreliable, std::string{"\x0A\x01\xFF", 3}}}},
    };
    for (const auto& [what, reply] : cases) {
        SCOPED_TRACE(what);
        udp_fake_server::settings settings;
        settings.what = udp_fake_server::script::reply;
        settings.reply = reply;
        udp_fake_server fake{settings};
        ecsnet::client::client net{arena::replicated_schema(), quick("victim")};
        ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
        ASSERT_TRUE(until_disconnected(net));
        EXPECT_EQ(net.disconnect_reason(), disconnect_reason::protocol_error) << net.disconnect_message();
        EXPECT_FALSE(net.last_disconnect().from_server);
        ASSERT_TRUE(wait_until([&] { return !fake.endings().empty(); }, 2000ms));
        EXPECT_EQ(fake.endings().front().first, 2) << "PROTOCOL_ERROR";
    }
}

TEST(ClientUdp, ASnapshotOvertakingTheWelcomeOnTheUnreliableChannelIsDropped) {
    v1::Envelope snapshot;
    snapshot.mutable_snapshot()->set_tick(1);
    udp_fake_server::settings settings;
    settings.what = udp_fake_server::script::reply;
    settings.reply_spacing = 50ms;
    settings.reply = {{channel::unreliable, serialized(snapshot)},
                      {channel::reliable, welcome_of(arena::replicated_schema())}};
    udp_fake_server fake{settings};
    ecsnet::client::client net{arena::replicated_schema(), quick("overtaken")};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::connected; }));
    poll_for(net, 100ms);
    EXPECT_EQ(net.state(), client_state::connected) << net.disconnect_message();
    EXPECT_EQ(net.client_id(), 9U);
    EXPECT_EQ(net.stats().snapshots_received, 0U);
}

// The ack of a full state may be lost, and the server sends nothing until it hears it: the client repeats
// its newest ack while nothing newer comes, after 100 ms, then 200, 400... (protocol.md 5.1).
TEST(ClientUdp, TheNewestAckIsRepeatedWhileNothingNewerArrives) {
    v1::Envelope full;
    full.mutable_snapshot()->set_tick(5);
    full.mutable_snapshot()->set_full_state(true);
    udp_fake_server::settings settings;
    settings.what = udp_fake_server::script::reply;
    settings.reply = {{channel::reliable, welcome_of(arena::replicated_schema())},
                      {channel::reliable, serialized(full)}};
    udp_fake_server fake{settings};
    auto options = quick("repeating");
    options.thin = true; // acks the header alone: the fake's snapshot needs no content
    ecsnet::client::client net{arena::replicated_schema(), options};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.stats().snapshots_received == 1; }));
    poll_for(net, 850ms);
    const auto acks = of_kind(fake, v1::Envelope::kAck);
    // Sent at 0, then again at about 100, 300 and 700 ms.
    ASSERT_GE(acks.size(), 3U);
    EXPECT_LE(acks.size(), 5U) << "the repeats back off";
    for (const auto& ack : acks) {
        EXPECT_EQ(ack.envelope.ack().tick(), 5U);
        EXPECT_EQ(ack.channel, channel::unreliable);
    }
    EXPECT_EQ(net.stats().acks_repeated, acks.size() - 1);
}

TEST(ClientUdp, NoWelcomeIsAHandshakeTimeout) {
    udp_fake_server::settings settings;
    settings.what = udp_fake_server::script::silence;
    udp_fake_server fake{settings};
    auto options = quick("impatient");
    options.handshake_timeout = 300ms;
    ecsnet::client::client net{arena::replicated_schema(), options};
    const auto started = steady::now();
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::handshake_timeout);
    EXPECT_GE(steady::now() - started, 290ms);
    ASSERT_TRUE(wait_until([&] { return !fake.endings().empty(); }, 2000ms));
    EXPECT_EQ(fake.endings().front().first, 5) << "HANDSHAKE_TIMEOUT";
}

TEST(ClientUdp, ASilentServerIsATimeout) {
    udp_fake_server::settings settings;
    settings.what = udp_fake_server::script::reply;
    settings.reply = {
        {channel::reliable, welcome_of(arena::replicated_schema())}}; // then nothing but keep-alives
    udp_fake_server fake{settings};
    auto options = quick("lonely");
    options.idle_timeout = 400ms;
    options.ping_interval = 50ms;
    ecsnet::client::client net{arena::replicated_schema(), options};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::connected; }));
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::timeout) << net.disconnect_message();
    EXPECT_GE(fake.count(v1::Envelope::kPing), 3U) << "pings kept going while waiting";
}

TEST(ClientUdp, AnIssuedTokenConnectsInEitherFormAndFromTheOptions) {
    udp_fake_server::settings settings;
    settings.private_key = transport::generate_key();
    udp_fake_server fake{settings};
    const auto as_bytes = [](const transport::connect_token& token) {
        const auto bytes = transport::serialize(token);
        return std::string{reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    };
    // connect(token): base64, then the 2,048 bytes.
    for (const auto& form : {transport::to_base64(token_for(fake, settings.private_key)),
                             as_bytes(token_for(fake, settings.private_key))}) {
        ecsnet::client::client net{arena::replicated_schema(), quick("holder")};
        ASSERT_TRUE(net.connect(std::string_view{form}));
        ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }))
            << net.disconnect_message();
    }
    // client_options::connect_token: connect(host, port) goes where the token says.
    auto options = quick("configured");
    options.connect_token = transport::to_base64(token_for(fake, settings.private_key));
    ecsnet::client::client net{arena::replicated_schema(), options};
    ASSERT_TRUE(net.connect("ignored.invalid", 1));
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; })) << net.disconnect_message();
}

// Each wrong token ends in connect_failed within the connect timeout, the transport's error named.
TEST(ClientUdp, WrongTokensAreConnectFailedWithTheTransportsError) {
    udp_fake_server::settings settings;
    settings.private_key = transport::generate_key(); // not a development server
    udp_fake_server keyed{settings};
    udp_fake_server dev; // the development key, the default protocol id

    struct attempt {
        std::string what;
        std::function<bool(ecsnet::client::client&)> connect;
        std::string expected; // in the message
        std::chrono::milliseconds within;
        client_options options;
    };
    auto other_protocol = quick("other-protocol");
    other_protocol.protocol_id = 0x1234;
    transport::token_params expired_params;
    expired_params.protocol_id = ecsnet::client::default_protocol_id;
    expired_params.server_addresses = {dev.address()};
    expired_params.now_unix = transport::unix_now() - 120;
    expired_params.expire_seconds = 60;
    const auto expired =
        transport::to_base64(*transport::issue_token(expired_params, transport::dev_private_key));
    const std::vector<attempt> attempts{
        {"a development token to a server with its own key",
         [&](ecsnet::client::client& c) { return c.connect("127.0.0.1", keyed.port()); }, "request_timed_out",
         1500ms, quick("dev-token")},
        {"a development token of another protocol id",
         [&](ecsnet::client::client& c) { return c.connect("127.0.0.1", dev.port()); }, "request_timed_out",
         1500ms, other_protocol},
        {"an expired token", [&](ecsnet::client::client& c) { return c.connect(std::string_view{expired}); },
         "token_expired", 300ms, quick("expired")},
        {"bytes that are not a token",
         [](ecsnet::client::client& c) { return c.connect(std::string_view{"not a token"}); }, "bad_base64",
         300ms, quick("garbage")},
    };
    for (const auto& a : attempts) {
        SCOPED_TRACE(a.what);
        ecsnet::client::client net{arena::replicated_schema(), a.options};
        const auto started = steady::now();
        ASSERT_TRUE(a.connect(net));
        ASSERT_TRUE(until_disconnected(net));
        EXPECT_LT(steady::now() - started, a.within);
        EXPECT_EQ(net.disconnect_reason(), disconnect_reason::connect_failed) << net.disconnect_message();
        EXPECT_FALSE(net.last_disconnect().from_server);
        EXPECT_NE(net.disconnect_message().find(a.expected), std::string::npos) << net.disconnect_message();
    }
    // The servers said nothing, but counted why.
    EXPECT_GT(keyed.counters().dropped.value(transport::drop_reason::token_invalid), 0U);
    EXPECT_GT(dev.counters().dropped.value(transport::drop_reason::wrong_protocol), 0U);
    EXPECT_EQ(dev.connections(), 0U);
}

TEST(ClientUdp, NobodyAnsweringIsConnectFailedWithinTheTimeout) {
    asio::io_context io;
    asio::ip::udp::socket mute{
        io, asio::ip::udp::endpoint{asio::ip::make_address("127.0.0.1"), 0}}; // never reads
    auto options = quick("unheard");
    options.connect_timeout = 500ms;
    ecsnet::client::client net{arena::replicated_schema(), options};
    const auto started = steady::now();
    ASSERT_TRUE(net.connect("127.0.0.1", mute.local_endpoint().port()));
    ASSERT_TRUE(until_disconnected(net));
    const auto took = steady::now() - started;
    EXPECT_GE(took, 450ms);
    EXPECT_LT(took, 1500ms);
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::connect_failed);
    EXPECT_NE(net.disconnect_message().find("request_timed_out"), std::string::npos)
        << net.disconnect_message();
    EXPECT_NE(net.disconnect_message().find("127.0.0.1:" + std::to_string(mute.local_endpoint().port())),
              std::string::npos)
        << net.disconnect_message();
    // An unknown host name fails at once.
    ASSERT_TRUE(net.connect("no-such-host.invalid", 7777));
    ASSERT_TRUE(until_disconnected(net, 10'000ms));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::connect_failed);
    EXPECT_NE(net.disconnect_message().find("cannot resolve"), std::string::npos) << net.disconnect_message();
}

} // namespace

} // namespace client_udp_test
