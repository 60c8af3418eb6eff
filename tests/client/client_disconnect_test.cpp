// Every way a TCP connection ends reaches the client with its reason: the server's Disconnect (SHUTDOWN on
// stop, SCHEMA_MISMATCH on a client with another schema), and what the client decides itself (connection
// refused, no welcome in time, a silent server, bad bytes, a welcome with another schema). Bad bytes from
// a server never crash the client. (The same over UDP: client_udp_test.cpp.)

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <asio/buffer.hpp>
#include <asio/write.hpp>
#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/framing.hpp"
#include "ecsnet/proto/handshake.hpp"

namespace client_disconnect_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::client::testing;
using ecsnet::client::client_options;
using ecsnet::client::client_state;
using ecsnet::client::disconnect_reason;

// The arena's schema with the yaw one bit narrower: the same names, another contract.
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

// Over TCP: the fake servers here speak raw TCP bytes (client_udp_test.cpp has the UDP side).
client_options quick(const std::string& name) {
    auto options = over(ecsnet::client::transport_kind::tcp, name);
    options.connect_timeout = 2000ms;
    options.handshake_timeout = 2000ms;
    return options;
}

// Runs `net` until it is disconnected; returns whether it got there in time.
bool until_disconnected(ecsnet::client::client& net, std::chrono::milliseconds timeout = 5000ms) {
    return poll_until(
        net, [&] { return net.state() == client_state::disconnected; }, timeout);
}

// What a fake server received from the client, frame by frame.
struct received {
    std::mutex mutex;
    std::vector<v1::Envelope> messages;

    std::size_t count(v1::Envelope::MessageCase which) {
        std::lock_guard lock{mutex};
        return static_cast<std::size_t>(
            std::count_if(messages.begin(), messages.end(),
                          [which](const v1::Envelope& e) { return e.message_case() == which; }));
    }
};

// A fake server's session: reads and decodes the client's frames into `into`; on the first ClientHello it
// writes `reply` (raw bytes), and closes after writing if `close_after`.
class scripted_session : public std::enable_shared_from_this<scripted_session> {
public:
    scripted_session(std::shared_ptr<asio::ip::tcp::socket> socket, received& into, std::string reply,
                     bool close_after)
        : socket_{std::move(socket)}
        , into_{into}
        , reply_{std::move(reply)}
        , close_after_{close_after} {}

    void start() { read(); }

private:
    void read() {
        socket_->async_read_some(
            asio::buffer(buffer_), [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                if (ec) {
                    return;
                }
                bool hello = false;
                static_cast<void>(self->decoder_.feed(
                    std::string_view{self->buffer_.data(), n}, [&](std::string_view frame) {
                        auto message = proto::decode_envelope(frame);
                        if (message) {
                            hello = hello || message->message_case() == v1::Envelope::kClientHello;
                            std::lock_guard lock{self->into_.mutex};
                            self->into_.messages.push_back(std::move(message.value()));
                        }
                    }));
                if (hello && !self->reply_.empty()) {
                    asio::async_write(*self->socket_, asio::buffer(self->reply_),
                                      [self](const asio::error_code&, std::size_t) {
                                          if (self->close_after_) {
                                              asio::error_code ignored;
                                              self->socket_->close(ignored);
                                          }
                                      });
                }
                self->read();
            });
    }

    std::shared_ptr<asio::ip::tcp::socket> socket_;
    received& into_;
    std::string reply_;
    bool close_after_;
    proto::frame_decoder decoder_;
    std::array<char, 4096> buffer_{};
};

// A fake server answering the first ClientHello with `reply`.
fake_server scripted(received& into, std::string reply, bool close_after = false) {
    return fake_server{
        [&into, reply = std::move(reply), close_after](std::shared_ptr<asio::ip::tcp::socket> socket) {
            std::make_shared<scripted_session>(std::move(socket), into, reply, close_after)->start();
        }};
}

std::string frame_of(const v1::Envelope& message) {
    std::string out;
    EXPECT_TRUE(proto::append_envelope_frame(out, message));
    return out;
}

std::string welcome_frame(const proto::schema& schema) {
    proto::welcome_info info;
    info.client_id = 7;
    info.tick_rate = 30;
    info.own_entity = proto::net_entity{3, 1};
    return frame_of(proto::make_server_welcome(schema.layout(), info));
}

TEST(ClientDisconnect, ServerStopSendsShutdown) {
    test_server server;
    ecsnet::client::client net{arena::replicated_schema(), quick("stopped")};
    std::vector<ecsnet::client::disconnect_info> endings;
    net.on_disconnected([&](const ecsnet::client::disconnect_info& info) { endings.push_back(info); });
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
    std::thread stopper{[&] { server.stop(); }};
    const bool ended = until_disconnected(net);
    stopper.join();
    ASSERT_TRUE(ended);
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::shutdown);
    EXPECT_TRUE(net.last_disconnect().from_server);
    EXPECT_FALSE(net.disconnect_message().empty());
    ASSERT_EQ(endings.size(), 1U) << "on_disconnected is called once";
    EXPECT_EQ(endings[0].reason, disconnect_reason::shutdown);
}

TEST(ClientDisconnect, AnotherSchemaIsRefusedByTheServer) {
    test_server server;
    ecsnet::client::client net{narrow_yaw_schema(), quick("other-schema")};
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::schema_mismatch);
    EXPECT_TRUE(net.last_disconnect().from_server);
    EXPECT_NE(net.disconnect_message().find("yaw"), std::string::npos) << net.disconnect_message();
    EXPECT_EQ(net.stats().snapshots_applied, 0U);
}

TEST(ClientDisconnect, AWelcomeWithAnotherSchemaIsRefusedByTheClient) {
    received got;
    auto fake = scripted(got, welcome_frame(narrow_yaw_schema()));
    ecsnet::client::client net{arena::replicated_schema(), quick("picky")};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::schema_mismatch);
    EXPECT_FALSE(net.last_disconnect().from_server);
    EXPECT_NE(net.disconnect_message().find("yaw"), std::string::npos) << net.disconnect_message();
    // The client told the server why.
    ASSERT_TRUE(wait_until([&] { return got.count(v1::Envelope::kDisconnect) == 1; }));
    std::lock_guard lock{got.mutex};
    EXPECT_EQ(got.messages.front().message_case(), v1::Envelope::kClientHello);
    EXPECT_EQ(got.messages.front().client_hello().client_name(), "picky");
    EXPECT_EQ(got.messages.back().disconnect().reason(), v1::SCHEMA_MISMATCH);
}

TEST(ClientDisconnect, ARefusedConnectionIsConnectFailed) {
    ecsnet::client::client net{arena::replicated_schema(), quick("nobody-home")};
    ASSERT_TRUE(net.connect("127.0.0.1", unused_port()));
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::connect_failed);
    EXPECT_FALSE(net.last_disconnect().from_server);
    // An unknown host name fails the same way.
    ASSERT_TRUE(net.connect("no-such-host.invalid", 7777));
    ASSERT_TRUE(until_disconnected(net, 10'000ms));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::connect_failed);
}

TEST(ClientDisconnect, NoWelcomeInTimeIsAHandshakeTimeout) {
    fake_server fake; // accepts, never answers
    auto options = quick("impatient");
    options.handshake_timeout = 300ms;
    ecsnet::client::client net{arena::replicated_schema(), options};
    const auto started = std::chrono::steady_clock::now();
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::handshake_timeout);
    EXPECT_FALSE(net.last_disconnect().from_server);
    EXPECT_GE(std::chrono::steady_clock::now() - started, 290ms);
}

TEST(ClientDisconnect, ASilentServerIsATimeout) {
    received got;
    auto fake = scripted(got, welcome_frame(arena::replicated_schema())); // then never a snapshot
    auto options = quick("lonely");
    options.idle_timeout = 400ms;
    options.ping_interval = 50ms;
    ecsnet::client::client net{arena::replicated_schema(), options};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::connected; }));
    EXPECT_EQ(net.client_id(), 7U);
    ASSERT_TRUE(net.own_net_entity().has_value());
    EXPECT_EQ(net.own_net_entity()->index, 3U);
    EXPECT_EQ(net.own_entity(), null_entity) << "no snapshot yet";
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::timeout);
    EXPECT_FALSE(net.last_disconnect().from_server);
    EXPECT_GE(got.count(v1::Envelope::kPing), 3U) << "pings kept going while waiting";
}

// Bytes that are not the protocol: each ends the session with protocol_error, and the client says so.
TEST(ClientDisconnect, BadBytesFromTheServerAreAProtocolError) {
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(3);
    v1::Envelope snapshot;
    snapshot.mutable_snapshot()->set_tick(1);
    const std::vector<std::pair<std::string, std::string>> cases{
        {"not a protobuf message", std::string{"\x03"
                                               "abc",
                                               4}},
        {"an empty envelope", std::string{"\x00", 1}},
        {"a length prefix of 2^32 - 1", std::string{"\xFF\xFF\xFF\xFF\x0F", 5}},
        {"a length prefix of 6 bytes", std::string{"\xFF\xFF\xFF\xFF\xFF\x01", 6}},
        {"a frame just above 1 MiB",
         [] {
             std::string prefix;
             proto::append_length_prefix(prefix, (std::size_t{1} << 20) + 1);
             return prefix;
         }()},
        {"an Ack, which only clients send", frame_of(ack)},
        {"a snapshot before the welcome", frame_of(snapshot)},
        {"a second welcome",
         welcome_frame(arena::replicated_schema()) + welcome_frame(arena::replicated_schema())},
    };
    for (const auto& [what, bytes] : cases) {
        SCOPED_TRACE(what);
        received got;
        auto fake = scripted(got, bytes);
        ecsnet::client::client net{arena::replicated_schema(), quick("victim")};
        ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
        ASSERT_TRUE(until_disconnected(net));
        EXPECT_EQ(net.disconnect_reason(), disconnect_reason::protocol_error) << net.disconnect_message();
        EXPECT_FALSE(net.last_disconnect().from_server);
        EXPECT_TRUE(wait_until([&] { return got.count(v1::Envelope::kDisconnect) == 1; }, 2000ms))
            << "the client tells the server";
    }
}

// Random bytes after the hello, then the server closes: whatever they decode to, the client ends with a
// reason and never crashes (run under ASan/UBSan too).
TEST(ClientDisconnect, RandomBytesNeverCrashTheClient) {
    std::uint64_t seed = 0x5EED;
    const auto next = [&seed] {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::uint32_t>(seed >> 33);
    };
    for (int round = 0; round < 40; ++round) {
        std::string bytes;
        if (round % 2 == 0) {
            // A plausible frame: a small length prefix, then that many random bytes.
            const auto size = next() % 64;
            proto::append_length_prefix(bytes, size);
            for (std::uint32_t i = 0; i < size; ++i) {
                bytes.push_back(static_cast<char>(next()));
            }
        } else {
            const auto size = 1 + next() % 96;
            for (std::uint32_t i = 0; i < size; ++i) {
                bytes.push_back(static_cast<char>(next()));
            }
        }
        // Sometimes behind a valid welcome, so that the bytes reach the snapshot path too.
        if (round % 3 == 0) {
            bytes = welcome_frame(arena::replicated_schema()) + bytes;
        }
        received got;
        auto fake = scripted(got, bytes, true);
        ecsnet::client::client net{arena::replicated_schema(), quick("fuzzed")};
        ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
        ASSERT_TRUE(until_disconnected(net)) << "round " << round;
        EXPECT_NE(net.disconnect_reason(), disconnect_reason::none);
        EXPECT_EQ(net.stats().snapshots_applied, 0U);
    }
}

TEST(ClientDisconnect, ClosingBeforeTheConnectionOpensIsQuiet) {
    received got;
    auto fake = scripted(got, "");
    ecsnet::client::client net{arena::replicated_schema(), quick("hasty")};
    ASSERT_TRUE(net.connect("127.0.0.1", fake.port()));
    net.close();
    ASSERT_TRUE(until_disconnected(net));
    EXPECT_EQ(net.disconnect_reason(), disconnect_reason::client_quit);
    net.close(); // nothing open: nothing happens
    EXPECT_EQ(net.state(), client_state::disconnected);
}

} // namespace

} // namespace client_disconnect_test
