#pragma once

// One client's TCP connection: framing, timers, the write queue, and its session state.
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

#include <asio.hpp>

#include <ecsnet/ecs/entity.hpp>
#include <ecsnet/proto/encoder.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/framing.hpp>
#include <ecsnet/proto/state.hpp>

#include "game_world.hpp"
#include "replicator.hpp"

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

class connection;
class counter;

/// Counters every connection adds its traffic to (bytes actually written to and read from sockets).
struct traffic_counters {
    counter* sent{nullptr};
    counter* received{nullptr};
};

/// What the server does with a connection's events (implemented by game_server).
class connection_handler {
public:
    virtual ~connection_handler() = default;
    /// A decoded frame from the client.
    virtual void on_message(connection& from, v1::Envelope& message) = 0;
    /// The frame of the newest snapshot for this client, or nullptr if it has nothing new to send.
    virtual std::shared_ptr<const std::string> next_snapshot(connection& to) = 0;
    /// The client left the game: the server decided to disconnect it (its Disconnect may still be on its
    /// way) or the connection dropped. Called once, before on_closed.
    virtual void on_left(connection& left) = 0;
    /// The socket is closed; called once.
    virtual void on_closed(connection& closed) = 0;
};

/// Where a client stands in the protocol, and what the server knows of it.
struct session {
    enum class phase { handshaking, playing, closing };
    phase state{phase::handshaking};
    client_id id{};
    std::string name;
    entity avatar{null_entity};
    std::unique_ptr<client_replication> replication; // what its replicator keeps of it (after the handshake)
    std::optional<proto::tick_type> acked;           // newest tick acked
    std::optional<proto::tick_type> sent;            // newest tick sent
    // Newest tick acked, or the first tick sent while none is: snapshots wait once `sent` is
    // server_options::max_unacked_ticks past it.
    std::optional<proto::tick_type> ack_anchor;
    std::uint32_t last_input_sequence{};
    std::vector<std::pair<client_input, std::string>> inputs; // received since the last tick (payload owned)
    v1::DisconnectReason close_reason{v1::DISCONNECT_REASON_UNSPECIFIED};
    std::string close_message;
    bool closed_by_peer{false};
    bool admitted{false}; // counted against max_clients (false for connections refused with SERVER_FULL)
};

class connection : public std::enable_shared_from_this<connection> {
public:
    connection(asio::ip::tcp::socket socket, connection_handler& handler, const connection_limits& limits,
               traffic_counters traffic = {});
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// Starts reading and arms the handshake timer.
    void start();
    /// Sends a control frame (queued behind what is already queued).
    void send(std::shared_ptr<const std::string> frame);
    void send(const v1::Envelope& message);
    /// Asks for a snapshot as soon as the write queue is empty (now, if it is).
    void want_snapshot();
    /// Sends Disconnect(reason, message), then closes (see the header comment). Idempotent.
    void disconnect(v1::DisconnectReason reason, std::string message);
    /// Closes at once, without telling the client.
    void abort();

    /// The handshake completed: the idle timer now applies instead of the handshake timer.
    void handshake_done();

    [[nodiscard]] session& state() noexcept { return session_; }
    [[nodiscard]] const session& state() const noexcept { return session_; }
    [[nodiscard]] const std::string& remote() const noexcept { return remote_; }
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
    std::string remote_;
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
    session session_;
};

} // namespace ecsnet::server
