#pragma once

// One client's TCP connection (a client_link): framing, timers, the write queue.
//
// Reading: bytes go through the frame decoder (the oversized length prefix is refused before anything is
// allocated for it) and each frame is decoded as an Envelope and handed to the handler. A malformed frame
// ends the connection with PROTOCOL_ERROR.
// Writing: one write in flight. Control frames (welcome, pong, disconnect) are queued; snapshots are not:
// when the queue drains and a snapshot is wanted, the handler encodes the newest tick for this client right
// then (against its newest acked baseline), so a slow client gets fewer, larger deltas instead of a growing
// queue. Bytes held for the client beyond `max_unsent_bytes`, or a write that makes no progress for
// `write_stall_timeout` (a client that stopped reading), end the connection with SLOW_CONSUMER.
// Timers: the handshake must complete within `handshake_timeout` (HANDSHAKE_TIMEOUT); any frame resets the
// idle timer (`idle_timeout`, TIMEOUT).
// Closing: disconnect() queues a Disconnect frame, stops reading, and closes once it is written or after
// `close_grace`, whichever comes first. The handler hears once that the client left (on_left, when the
// disconnect is decided or the connection drops) and once that the socket closed (on_closed).
//
// Everything runs on the server's io_context thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio/error_code.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <ecsnet/ecs/entity.hpp>
#include <ecsnet/proto/encoder.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/framing.hpp>
#include <ecsnet/proto/state.hpp>

#include "client_link.hpp"

namespace ecsnet::server {

struct connection_limits {
    std::chrono::milliseconds handshake_timeout{5000};
    std::chrono::milliseconds idle_timeout{10'000};
    std::chrono::milliseconds write_stall_timeout{3000};
    std::chrono::milliseconds close_grace{1000};
    std::size_t max_unsent_bytes{std::size_t{1} << 20};
    std::size_t max_frame_size{std::size_t{1} << 20};
    int socket_send_buffer{512 * 1024};
};

class counter;

/// Counters every connection adds its traffic to (bytes actually written to and read from sockets).
struct traffic_counters {
    counter* sent{nullptr};
    counter* received{nullptr};
};

class tcp_connection final : public client_link, public std::enable_shared_from_this<tcp_connection> {
public:
    tcp_connection(asio::ip::tcp::socket socket, connection_handler& handler, const connection_limits& limits,
                   traffic_counters traffic = {});

    /// Starts reading and arms the handshake timer.
    void start();
    [[nodiscard]] std::string_view transport() const noexcept override { return "tcp"; }
    /// Sends a control frame (queued behind what is already queued).
    void send(std::shared_ptr<const std::string> frame);
    void send(const v1::Envelope& message) override;
    /// Asks for a snapshot as soon as the write queue is empty (now, if it is).
    void want_snapshot() override;
    /// Sends Disconnect(reason, message), then closes (see the header comment). Idempotent.
    void disconnect(v1::DisconnectReason reason, std::string message) override;
    /// Closes at once, without telling the client.
    void abort() override;

    /// The handshake completed: the idle timer now applies instead of the handshake timer.
    void handshake_done() override;
    [[nodiscard]] link_measures measures() const override;
    /// The frame and the TCP/IP headers of its segment (with timestamps: 52 bytes).
    [[nodiscard]] std::size_t wire_bytes(const outgoing_snapshot& snapshot) const noexcept override {
        return snapshot.frame->size() + 52;
    }

    [[nodiscard]] bool open() const noexcept { return !closed_; }
    /// Bytes queued for this client and not yet accepted by its socket.
    [[nodiscard]] std::size_t unsent_bytes() const noexcept { return unsent_; }
    [[nodiscard]] std::uint64_t bytes_received() const noexcept { return received_; }
    [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return sent_; }

private:
    void read();
    // The socket failed or the client closed it: CLIENT_QUIT, then close().
    void lost(const asio::error_code& ec);
    void on_read(std::size_t count);
    void write();
    void on_write(std::size_t count);
    void arm_idle();
    void arm_stall();
    // After the Disconnect frame is out: half-close, drain what the client still sends, then close, so the
    // client reads its reason instead of a reset.
    void linger();
    void leave();
    void close();

    asio::ip::tcp::socket socket_;
    connection_handler& handler_;
    const connection_limits& limits_;
    traffic_counters traffic_;
    proto::frame_decoder decoder_;
    std::vector<char> read_buffer_;
    v1::Envelope message_; // reused for every decoded frame

    std::deque<std::shared_ptr<const std::string>> queue_;
    std::size_t front_offset_{}; // bytes of queue_.front() already written
    bool writing_{false};
    bool snapshot_wanted_{false};
    bool closing_{false};
    bool lingering_{false};
    bool left_{false};
    bool closed_{false};
    std::size_t unsent_{};
    std::uint64_t received_{};
    std::uint64_t sent_{};

    asio::steady_timer handshake_timer_;
    asio::steady_timer idle_timer_;
    asio::steady_timer stall_timer_;
    asio::steady_timer grace_timer_;
};

} // namespace ecsnet::server
