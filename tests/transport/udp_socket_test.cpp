// udp_server and udp_client on real sockets over 127.0.0.1 (ports picked by the kernel), one io_context
// run by the test thread: connecting and exchanging messages, the amplification rule checked on the
// wire with a hand-driven socket, a full server denying, a client vanishing (server timeout), disconnect
// reasons both ways, a flood of valid requests from many source ports while a legitimate client connects.

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <asio/strand.hpp>

#include <gtest/gtest.h>

#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/disconnect_code.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"
#include "udp_socket_support.hpp"

namespace udp_socket_test {

namespace {

using namespace ecsnet::transport;
using namespace ecsnet::transport::testing;
using namespace std::chrono_literals;

// With the datagrams sent on the server's own thread (batch_sender.hpp, the default) and on the
// io_context's; read on the receive interval's timer (the default) and as each arrives.
class SocketPaths : public ::testing::TestWithParam<std::tuple<bool, std::chrono::microseconds>> {};

TEST_P(SocketPaths, AClientConnectsAndMessagesFlowBothWays) {
    asio::io_context io;
    auto options = local_server_options();
    options.send_thread = std::get<0>(GetParam());
    options.receive_interval = std::get<1>(GetParam());
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    EXPECT_FALSE(server.uses_dev_key());
    client_events client_log;
    udp_client client{io.get_executor(), {}, client_log};
    ASSERT_TRUE(client.connect(token_for(server, options.config.private_key, 314)));
    ASSERT_TRUE(run_until(io, [&] { return client.state() == client_state::connected; }));
    ASSERT_TRUE(run_until(io, [&] { return server_log.connected.size() == 1; }));
    EXPECT_EQ(server_log.connected[0].client_id, 314U);
    EXPECT_EQ(server_log.connected[0].remote.port, client.local_address()->port);

    client.send(channel::reliable, text("ping"));
    client.flush();
    ASSERT_TRUE(run_until(io, [&] { return !server_log.messages.empty(); }));
    EXPECT_EQ(server_log.messages[0].bytes, "ping");
    const auto id = server_log.connected[0].id;
    server.send(id, channel::unreliable, text("pong"));
    server.flush(id);
    ASSERT_TRUE(run_until(io, [&] { return !client_log.messages.empty(); }));
    EXPECT_EQ(client_log.messages[0].second, "pong");
    EXPECT_EQ(server.counters().dropped.total(), 0U);
    const auto stats = server.stats(id);
    ASSERT_TRUE(stats);
    EXPECT_GT(stats->bytes_received, 0U);
    EXPECT_EQ(server.counters().send_failures.load(), 0U);

    // Stopped, the socket is closed: what the server still sends is counted as failed, never written to
    // the descriptor (whose number the process may have given to another file since).
    server.stop();
    server.send(id, channel::unreliable, text("late"));
    server.flush(id);
    run_for(io, 20ms);
    EXPECT_GT(server.counters().send_failures.load(), 0U);
}

INSTANTIATE_TEST_SUITE_P(UdpSockets, SocketPaths,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1000us, 0us)),
                         [](const auto& info) {
                             return std::string{std::get<0>(info.param) ? "sent_on_own_thread"
                                                                        : "sent_on_io_thread"} +
                                    (std::get<1>(info.param) > 0us ? "_read_on_timer" : "_read_on_arrival");
                         });

// With a receive interval, a datagram's arrival wakes nobody: it waits in the socket for the interval's
// timer (here 30 s away), or for receive_waiting() (the game server's tick), which reads it and sends the
// replies at once.
TEST(UdpSockets, WithAReceiveIntervalAnArrivalWakesNobodyUntilReceiveWaiting) {
    asio::io_context io;
    auto options = local_server_options();
    options.receive_interval = std::chrono::seconds{30}; // no timed read within the test
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    client_events client_log;
    udp_client client{io.get_executor(), {}, client_log};
    ASSERT_TRUE(client.connect(token_for(server, options.config.private_key, 27)));
    // The connection request waits: a handshake on 127.0.0.1 takes a few milliseconds.
    run_for(io, 200ms);
    EXPECT_EQ(client.state(), client_state::sending_request);
    EXPECT_TRUE(server_log.connected.empty());
    // Each receive_waiting() takes the client's latest packet and answers it.
    ASSERT_TRUE(run_until(io, [&] {
        server.receive_waiting();
        return client.state() == client_state::connected && server_log.connected.size() == 1;
    }));
    client.send(channel::reliable, text("hello"));
    client.flush();
    run_for(io, 100ms);
    EXPECT_TRUE(server_log.messages.empty());
    server.receive_waiting();
    ASSERT_EQ(server_log.messages.size(), 1U);
    EXPECT_EQ(server_log.messages[0].bytes, "hello");
}

// A server whose reads found nothing for a while reads at its timers' pace (update_interval), and still
// answers the first client that comes.
TEST(UdpSockets, AServerIdleForAWhileStillAnswersTheFirstClient) {
    asio::io_context io;
    auto options = local_server_options();
    options.receive_interval = 1ms;
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    run_for(io, 300ms); // 100 empty reads and more
    client_events client_log;
    udp_client client{io.get_executor(), {}, client_log};
    ASSERT_TRUE(client.connect(token_for(server, options.config.private_key, 8)));
    ASSERT_TRUE(run_until(io, [&] { return client.state() == client_state::connected; }));
    ASSERT_TRUE(run_until(io, [&] { return server_log.connected.size() == 1; }));
    client.send(channel::reliable, text("first"));
    client.flush();
    ASSERT_TRUE(run_until(io, [&] { return !server_log.messages.empty(); }));
    EXPECT_EQ(server_log.messages[0].bytes, "first");
}

// What a client's message handler sends (a snapshot's ack, an input) leaves while the datagram is handled,
// in one packet: before any other handler runs (it used to wait for a timer re-armed for now: two more
// handler runs per datagram).
TEST(UdpSockets, RepliesFromAMessageHandlerLeaveAtOnceInOnePacket) {
    asio::io_context io;
    auto options = local_server_options();
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    struct replying_client : client_events {
        asio::io_context* io{};
        udp_client* client{};
        std::uint64_t sent_before{};
        std::optional<std::uint64_t> sent_right_after;
        void on_message(channel ch, std::span<const std::byte> m) override {
            client_events::on_message(ch, m);
            sent_before = client->stats().datagrams_sent;
            client->send(channel::unreliable, text("ack"));
            client->send(channel::unreliable, text("input"));
            // Runs once this datagram's handler returns, ahead of any timer.
            asio::post(*io, [this] { sent_right_after = client->stats().datagrams_sent; });
        }
    };
    replying_client client_log;
    udp_client client{io.get_executor(), {}, client_log};
    client_log.io = &io;
    client_log.client = &client;
    ASSERT_TRUE(client.connect(token_for(server, options.config.private_key, 5)));
    ASSERT_TRUE(run_until(io, [&] { return server_log.connected.size() == 1; }));
    ASSERT_TRUE(run_until(io, [&] { return client.state() == client_state::connected; }));
    const auto id = server_log.connected[0].id;
    server.send(id, channel::unreliable, text("snapshot"));
    server.flush(id);
    ASSERT_TRUE(run_until(io, [&] { return client_log.sent_right_after.has_value(); }));
    EXPECT_EQ(*client_log.sent_right_after, client_log.sent_before + 1);
    ASSERT_TRUE(run_until(io, [&] { return server_log.messages.size() == 2; }));
    EXPECT_EQ(server_log.messages[0].bytes, "ack");
    EXPECT_EQ(server_log.messages[1].bytes, "input");
}

TEST(UdpSockets, ABase64TokenConnectsToo) {
    asio::io_context io;
    auto options = local_server_options();
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    client_events client_log;
    udp_client client{io.get_executor(), {}, client_log};
    ASSERT_TRUE(client.connect_base64(to_base64(token_for(server, options.config.private_key, 1))));
    EXPECT_TRUE(run_until(io, [&] { return client.state() == client_state::connected; }));
    EXPECT_FALSE(client.connect_base64("not a token"));
    EXPECT_EQ(client.error(), client_error::token_invalid);
}

// Every datagram the server sends to a source before it has answered a challenge is no bigger than the
// datagram it answers: checked on the wire, for junk, requests (accepted and denied) and responses.
TEST(UdpSockets, NoAnswerBeforeConfirmationIsBiggerThanWhatItAnswers) {
    asio::io_context io;
    auto options = local_server_options(1);
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    raw_socket raw{io};
    std::size_t answers = 0;
    const auto exchange = [&](const std::vector<std::uint8_t>& sent) {
        raw.send(sent, server.local_address());
        run_for(io, 20ms);
        auto replies = raw.drain();
        for (const auto& reply : replies) {
            EXPECT_LE(reply.size(), sent.size()) << "type " << int(reply[0] & 0x0F);
            ++answers;
        }
        return replies;
    };
    // Junk of every size answers nothing.
    for (const std::size_t size : {0, 1, 17, 18, 100, 1077, 1078, 1079, 1200, 1500}) {
        std::vector<std::uint8_t> junk(size, 0x5A);
        if (!junk.empty()) {
            junk[0] = 0;
        }
        EXPECT_TRUE(exchange(junk).empty()) << size;
    }
    // A valid request gets a challenge; the response made from it gets a keep-alive.
    const auto token = token_for(server, options.config.private_key, 7);
    const auto request = write_connection_request(token);
    const auto replies = exchange({request.begin(), request.end()});
    ASSERT_EQ(replies.size(), 1U);
    const auto header = read_datagram_header(replies[0]);
    ASSERT_TRUE(header);
    ASSERT_EQ(header->type, packet_type::challenge);
    std::array<std::uint8_t, max_datagram_bytes> plain{};
    const auto size = open_packet(*header, replies[0], token.server_to_client_key, test_protocol, plain);
    ASSERT_TRUE(size);
    const auto challenge = read_challenge(std::span{plain}.first(*size));
    ASSERT_TRUE(challenge);
    std::vector<std::uint8_t> response(max_datagram_bytes);
    const auto data = write_response({challenge->challenge_sequence, challenge->token});
    response.resize(seal_clear_packet(packet_type::response, handshake_sequence_bit | 12345, data,
                                      token.client_to_server_key, test_protocol, response));
    const auto welcome = exchange(response);
    ASSERT_FALSE(welcome.empty());
    EXPECT_EQ(welcome[0][0] & 0x0F, static_cast<int>(packet_type::keep_alive));
    ASSERT_TRUE(run_until(io, [&] { return server.connection_count() == 1; }));
    // The server is full now: another client's request gets a denial, smaller than the request.
    raw_socket other{io};
    const auto second = write_connection_request(token_for(server, options.config.private_key, 8));
    other.send(std::vector<std::uint8_t>(second.begin(), second.end()), server.local_address());
    run_for(io, 20ms);
    const auto denial = other.drain();
    ASSERT_EQ(denial.size(), 1U);
    EXPECT_EQ(denial[0][0] & 0x0F, static_cast<int>(packet_type::connection_denied));
    EXPECT_LT(denial[0].size(), second.size());
    EXPECT_GE(answers, 2U);
}

TEST(UdpSockets, AFullServerDeniesAndTheClientSaysServerFull) {
    asio::io_context io;
    auto options = local_server_options(1);
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    client_events first_log;
    client_events second_log;
    udp_client first{io.get_executor(), {}, first_log};
    udp_client second{io.get_executor(), {}, second_log};
    ASSERT_TRUE(first.connect(token_for(server, options.config.private_key, 1)));
    ASSERT_TRUE(run_until(io, [&] { return first.state() == client_state::connected; }));
    ASSERT_TRUE(second.connect(token_for(server, options.config.private_key, 2)));
    ASSERT_TRUE(run_until(io, [&] { return second.state() == client_state::disconnected; }));
    EXPECT_EQ(second.error(), client_error::denied_server_full);
    EXPECT_GE(server.counters().dropped.value(drop_reason::server_full), 1U);
}

TEST(UdpSockets, AClientThatVanishesWithoutADisconnectTimesOut) {
    asio::io_context io;
    auto options = local_server_options();
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    client_events client_log;
    auto client = std::make_unique<udp_client>(io.get_executor(), udp_client_options{}, client_log);
    ASSERT_TRUE(client->connect(token_for(server, options.config.private_key, 1, 1)));
    ASSERT_TRUE(run_until(io, [&] { return server.connection_count() == 1; }));
    client.reset(); // gone: no disconnect packet
    ASSERT_TRUE(run_until(
        io, [&] { return !server_log.disconnected.empty(); }, 3s));
    EXPECT_EQ(server_log.disconnected[0].second.code, disconnect_code::timeout);
    EXPECT_EQ(server_log.disconnected[0].second.by, closed_by::local);
    EXPECT_EQ(server.connection_count(), 0U);
    EXPECT_EQ(server.counters().timeouts.load(), 1U);
}

TEST(UdpSockets, DisconnectReasonsArriveBothWays) {
    asio::io_context io;
    auto options = local_server_options();
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    client_events a_log;
    client_events b_log;
    udp_client a{io.get_executor(), {}, a_log};
    udp_client b{io.get_executor(), {}, b_log};
    ASSERT_TRUE(a.connect(token_for(server, options.config.private_key, 1)));
    ASSERT_TRUE(b.connect(token_for(server, options.config.private_key, 2)));
    ASSERT_TRUE(run_until(io, [&] { return server_log.connected.size() == 2; }));
    ASSERT_TRUE(run_until(
        io, [&] { return a.state() == client_state::connected && b.state() == client_state::connected; }));

    // Server -> client.
    const auto a_id =
        std::find_if(server_log.connected.begin(), server_log.connected.end(), [](const auto& c) {
            return c.client_id == 1;
        })->id;
    ASSERT_TRUE(server.disconnect(a_id, disconnect_code::kicked, "kicked by an admin: spam"));
    ASSERT_TRUE(run_until(io, [&] { return a.state() == client_state::disconnected; }));
    EXPECT_EQ(a.error(), client_error::disconnected_by_server);
    EXPECT_EQ(a.server_disconnect().code, disconnect_code::kicked);
    EXPECT_EQ(a.server_disconnect().message, "kicked by an admin: spam");

    // Client -> server.
    b.disconnect(disconnect_code::client_quit, "bye \xF0\x9F\x91\x8B");
    ASSERT_TRUE(run_until(io, [&] { return server_log.disconnected.size() == 2; }));
    const auto& info = server_log.disconnected[1].second;
    EXPECT_EQ(info.code, disconnect_code::client_quit);
    EXPECT_EQ(info.message, "bye \xF0\x9F\x91\x8B");
    EXPECT_EQ(info.by, closed_by::peer);
    EXPECT_EQ(server.connection_count(), 0U);
}

// A flood of valid requests (a dev-key server: anyone can mint tokens) from 200 source ports on
// 127.0.0.1, while a legitimate client on 127.0.0.2 connects: the tables stay within their bounds, the
// flooding IP is rate limited, and the client gets in.
TEST(UdpSockets, AFloodFromManySourcePortsLeavesRoomForALegitimateClient) {
    asio::io_context io;
    auto options = local_server_options();
    options.config.private_key = dev_private_key;
    options.config.max_pending_handshakes = 128;
    options.config.max_pending_per_ip = 32;
    server_events server_log;
    udp_server server{io, options, server_log};
    server.start();
    EXPECT_TRUE(server.uses_dev_key());

    std::vector<std::unique_ptr<raw_socket>> flood;
    for (int i = 0; i < 200; ++i) {
        flood.push_back(std::make_unique<raw_socket>(io));
    }
    dev_token_params params;
    params.protocol_id = test_protocol;
    params.server_addresses = {server.local_address()};
    std::vector<std::vector<std::uint8_t>> requests;
    for (int i = 0; i < 400; ++i) {
        const auto request = write_connection_request(*make_dev_token(params));
        requests.emplace_back(request.begin(), request.end());
    }

    client_events legit_log;
    udp_client_options legit_options;
    legit_options.bind_address = "127.0.0.2";
    udp_client legit{io.get_executor(), legit_options, legit_log};
    std::size_t max_pending = 0;
    std::size_t sent = 0;
    const auto flood_round = [&] {
        for (int burst = 0; burst < 50; ++burst, ++sent) {
            flood[sent % flood.size()]->send(requests[sent % requests.size()], server.local_address());
        }
        run_for(io, 2ms);
        max_pending = std::max(max_pending, server.table_sizes().pending_handshakes);
        for (auto& s : flood) {
            s->drain();
        }
    };
    for (int round = 0; round < 40; ++round) { // the flood is on before the client comes
        flood_round();
    }
    ASSERT_TRUE(legit.connect(*make_dev_token(params)));
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (legit.state() != client_state::connected && std::chrono::steady_clock::now() < deadline) {
        flood_round();
    }
    EXPECT_EQ(legit.state(), client_state::connected);
    EXPECT_GT(sent, 1000U);
    EXPECT_LE(max_pending, 128U);
    EXPECT_GT(server.counters().dropped.value(drop_reason::rate_limited), 0U);
    EXPECT_EQ(server.connection_count(), 1U);
}

TEST(UdpSockets, AServerBoundToAWildcardNeedsItsPublicAddress) {
    asio::io_context io;
    auto options = local_server_options();
    options.bind_address = "0.0.0.0";
    server_events log;
    EXPECT_THROW((udp_server{io, options, log}), std::invalid_argument);
    options.config.public_addresses = {*net_address::parse("127.0.0.1:1")};
    EXPECT_NO_THROW((udp_server{io, options, log}));
}

} // namespace

namespace {

// Clients on strands of an io_context run by two threads (as the bots run hundreds of clients), the
// server on its own io_context thread: each client says hello from on_connected, the server echoes, every
// client hears its echo. Calls reach each client through its strand only.
struct strand_client : client_handler {
    explicit strand_client(asio::io_context& io)
        : strand{asio::make_strand(io)} {}
    void on_connected(const net_address&) override {
        client->send(channel::reliable, text("hello from a strand"));
        client->flush();
    }
    void on_message(channel, std::span<const std::byte> m) override {
        if (std::string{reinterpret_cast<const char*>(m.data()), m.size()} == "hello from a strand") {
            echoed.store(true);
        }
    }
    asio::strand<asio::io_context::executor_type> strand;
    std::unique_ptr<udp_client> client;
    std::atomic<bool> echoed{false};
};

struct echo_server : server_handler {
    udp_server* server{nullptr};
    std::atomic<int> connected{0};
    void on_connected(const connection_info&) override { ++connected; }
    void on_message(connection_id id, channel ch, std::span<const std::byte> m) override {
        server->send(id, ch, m);
        server->flush(id);
    }
    void on_disconnected(connection_id, const disconnect_info&) override {}
};

TEST(UdpSockets, ClientsOnStrandsOfAMultiThreadedIoContext) {
    asio::io_context server_io;
    auto options = local_server_options();
    echo_server handler;
    udp_server server{server_io, options, handler};
    handler.server = &server;
    server.start();
    std::vector<connect_token> tokens;
    for (std::uint64_t i = 0; i < 4; ++i) {
        tokens.push_back(token_for(server, options.config.private_key, 100 + i));
    }
    auto server_guard = asio::make_work_guard(server_io);
    std::thread server_thread{[&] { server_io.run(); }};

    asio::io_context clients_io;
    auto clients_guard = asio::make_work_guard(clients_io);
    std::vector<std::unique_ptr<strand_client>> clients;
    for (std::size_t i = 0; i < 4; ++i) {
        auto c = std::make_unique<strand_client>(clients_io);
        c->client = std::make_unique<udp_client>(c->strand, udp_client_options{}, *c);
        asio::post(c->strand, [client = c->client.get(), token = tokens[i]] { client->connect(token); });
        clients.push_back(std::move(c));
    }
    std::thread a{[&] { clients_io.run(); }};
    std::thread b{[&] { clients_io.run(); }};
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline &&
           !std::all_of(clients.begin(), clients.end(), [](const auto& c) { return c->echoed.load(); })) {
        std::this_thread::sleep_for(5ms);
    }
    for (const auto& c : clients) {
        EXPECT_TRUE(c->echoed.load());
    }
    EXPECT_EQ(handler.connected.load(), 4);
    // Tear down on the owning threads: each client closes on its strand.
    std::atomic<int> closed{0};
    for (auto& c : clients) {
        asio::post(c->strand, [&closed, client = c->client.get()] {
            client->disconnect(10, "done");
            client->close();
            ++closed;
        });
    }
    while (closed.load() < 4 && std::chrono::steady_clock::now() < deadline + 5s) {
        std::this_thread::sleep_for(1ms);
    }
    clients_guard.reset();
    clients_io.stop();
    a.join();
    b.join();
    asio::post(server_io, [&] { server.stop(); });
    server_guard.reset();
    server_io.stop();
    server_thread.join();
}

// A client on an io_context of its own, run by another thread than the server's: what it receives is counted
// as it arrives, whatever the server's thread is doing.
struct counting_client : client_handler {
    void on_connected(const net_address&) override { connected.store(true); }
    void on_message(channel, std::span<const std::byte> m) override {
        std::lock_guard lock{mutex};
        received.emplace_back(reinterpret_cast<const char*>(m.data()), m.size());
        count.store(received.size());
    }
    void on_disconnected(client_error, const disconnect_info&) override {}
    std::atomic<bool> connected{false};
    std::atomic<std::size_t> count{0};
    std::mutex mutex;
    std::vector<std::string> received;
};

// With the sending thread, a handler that sends more datagrams than a batch holds (a tick's snapshots): none
// leaves before it returns (the thread would take the cores the handler needs), then all of them, in order.
TEST(UdpSockets, WithASendingThreadTheDatagramsAHandlerWritesLeaveOnceItReturns) {
    asio::io_context server_io;
    auto options = local_server_options();
    options.send_thread = true;
    server_events server_log;
    udp_server server{server_io, options, server_log};
    server.start();

    asio::io_context client_io;
    counting_client client_log;
    udp_client client{client_io.get_executor(), {}, client_log};
    asio::post(client_io, [&client, token = token_for(server, options.config.private_key, 77)] {
        client.connect(token);
    });
    // Stopped and joined on every way out, before the client goes: it is the client thread's until then.
    struct running_thread {
        asio::io_context& io;
        asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
        std::thread thread{[this] { io.run(); }};
        ~running_thread() {
            guard.reset();
            io.stop();
            thread.join();
        }
    } client_thread{client_io};
    ASSERT_TRUE(
        run_until(server_io, [&] { return server_log.connected.size() == 1 && client_log.connected; }));

    constexpr std::size_t datagrams = 150; // more than two batches (datagram_batch.hpp: 64)
    const auto id = server_log.connected[0].id;
    std::optional<std::size_t> arrived_while_handling;
    asio::post(server_io, [&] {
        for (std::size_t i = 0; i < datagrams; ++i) {
            server.send(id, channel::unreliable, text(std::to_string(i)));
            server.flush(id); // one datagram each
        }
        std::this_thread::sleep_for(100ms); // time enough for a sending thread to deliver what it was given
        arrived_while_handling = client_log.count.load();
    });
    ASSERT_TRUE(run_until(server_io, [&] { return client_log.count.load() == datagrams; }));
    ASSERT_TRUE(arrived_while_handling.has_value());
    EXPECT_EQ(*arrived_while_handling, 0U);
    {
        std::lock_guard lock{client_log.mutex};
        for (std::size_t i = 0; i < datagrams; ++i) {
            EXPECT_EQ(client_log.received[i], std::to_string(i));
        }
    }
    EXPECT_EQ(server.counters().send_failures.load(), 0U);
    server.stop();
}

} // namespace

namespace {

// IPv6: a server on [::1] and a dual-stack server on [::] (reached over IPv4 too); skipped where the
// machine has no IPv6 loopback.
bool ipv6_loopback_available() {
    asio::io_context io;
    asio::error_code ec;
    asio::ip::udp::socket probe{io};
    probe.open(asio::ip::udp::v6(), ec);
    if (!ec) {
        probe.bind(asio::ip::udp::endpoint{asio::ip::make_address("::1"), 0}, ec);
    }
    return !ec;
}

TEST(UdpSockets, ConnectsOverIpv6AndToADualStackServerOverIpv4) {
    if (!ipv6_loopback_available()) {
        GTEST_SKIP() << "no IPv6 loopback here";
    }
    asio::io_context io;
    auto options = local_server_options();
    options.bind_address = "::1";
    server_events v6_log;
    udp_server v6{io, options, v6_log};
    v6.start();
    EXPECT_EQ(v6.local_address().family, address_family::ipv6);
    client_events client_log;
    udp_client client{io.get_executor(), {}, client_log};
    ASSERT_TRUE(client.connect(token_for(v6, options.config.private_key, 1)));
    ASSERT_TRUE(run_until(io, [&] { return client.state() == client_state::connected; }));
    EXPECT_EQ(v6_log.connected.at(0).remote.family, address_family::ipv6);

    auto dual_options = local_server_options();
    dual_options.bind_address = "::";
    dual_options.config.public_addresses = {*net_address::parse("127.0.0.1:1")}; // set below, once bound
    server_events dual_log;
    udp_server dual{io, dual_options, dual_log};
    const auto port = dual.port();
    dual.core().set_public_addresses({net_address::ipv4({127, 0, 0, 1}, port)});
    dual.start();
    client_events v4_log;
    udp_client v4_client{io.get_executor(), {}, v4_log};
    token_params params;
    params.protocol_id = test_protocol;
    params.client_id = 2;
    params.server_addresses = {net_address::ipv4({127, 0, 0, 1}, port)};
    ASSERT_TRUE(v4_client.connect(*issue_token(params, dual_options.config.private_key)));
    ASSERT_TRUE(run_until(io, [&] { return v4_client.state() == client_state::connected; }));
    // The IPv4 client is seen as IPv4 (not ::ffff:127.0.0.1): tokens and per-IP limits see one form.
    EXPECT_EQ(dual_log.connected.at(0).remote.family, address_family::ipv4);
}

} // namespace

} // namespace udp_socket_test
