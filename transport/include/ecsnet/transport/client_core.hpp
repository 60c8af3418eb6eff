#pragma once

// A client's side of the transport without sockets (docs/protocol.md, section 10.9): connect with a
// token, then datagrams in (receive), datagrams out (the send function), timers (update), messages.
// udp_client puts it on an Asio socket; tests drive it directly. Time is passed in.
//
// The state machine: connect() checks the token (token_invalid, token_expired against the local clock)
// and starts sending connection requests to the token's first server address, every
// handshake_resend_interval. A challenge moves it to sending responses; the first keep-alive or payload
// under the session keys makes it connected. A denial, or no answer within the handshake timeout (the
// token's by default), moves on to the next address; after the last one the error says which step
// failed. The whole attempt ends when the token expires (measured from connect() with the token's
// lifetime, so a skewed clock does not matter). Connected, it sends keep-alives when idle, times out
// after the token's timeout without a packet, and ends on the server's disconnect (its code and message).
//
// Not thread-safe: one thread (or strand) calls everything.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "channel.hpp"
#include "client_config.hpp"
#include "client_handler.hpp"
#include "client_state.hpp"
#include "clock.hpp"
#include "connect_token.hpp"
#include "connection_stats.hpp"
#include "drop_reason.hpp"
#include "link.hpp"
#include "packet_crypto.hpp"
#include "packets.hpp"
#include "replay_window.hpp"
#include "session_keys.hpp"

namespace ecsnet::transport {

class client_core {
public:
    using send_function = std::function<void(const net_address& to, std::span<const std::uint8_t> datagram)>;

    client_core(client_config config, client_handler& handler, send_function send);

    /// Starts connecting with a token (its 2,048-byte form, or read already). False when the token is
    /// refused at once (error() says why; on_disconnected is called too). A connection in progress or
    /// established is dropped first (without disconnect packets: call disconnect() for those).
    bool connect(std::span<const std::uint8_t> token_bytes, clock::time_point now);
    bool connect(const connect_token& token, clock::time_point now);

    void receive(std::span<const std::uint8_t> datagram, const net_address& from, clock::time_point now);
    /// Timers: resends of requests and responses, timeouts, keep-alives, the link's resends and acks.
    void update(clock::time_point now);
    /// When update() next has something to do (a handshake resend or timeout, a link resend or ack, a
    /// keep-alive, the connection's timeout), or nothing while disconnected: a socket owner sleeps until
    /// then instead of polling (thousands of clients in one process, as the bots run them).
    [[nodiscard]] std::optional<clock::time_point> next_wakeup(clock::time_point now) const;

    /// Queues a message (connected only; otherwise queue_full and nothing is queued).
    send_status send(channel ch, std::span<const std::byte> message, clock::time_point now);
    /// Sends what the link has due now.
    void flush(clock::time_point now);
    /// Ends the connection (or the attempt): disconnect packets with `code` and `message` when connected,
    /// then disconnected with error none. on_disconnected is not called for it.
    void disconnect(std::uint8_t code, std::string_view message, clock::time_point now);

    [[nodiscard]] client_state state() const noexcept { return state_; }
    /// Whether a received datagram's messages are being handed over: what is sent meanwhile leaves in one
    /// packet at its end (then client_handler::on_delivered()).
    [[nodiscard]] bool delivering() const noexcept { return receiving_; }
    [[nodiscard]] client_error error() const noexcept { return error_; }
    /// The server's disconnect (code, message) when error() is disconnected_by_server.
    [[nodiscard]] const disconnect_info& server_disconnect() const noexcept { return server_disconnect_; }
    /// The server address being tried or connected to.
    [[nodiscard]] std::optional<net_address> server_address() const;
    [[nodiscard]] connection_stats stats(clock::time_point now) const;
    [[nodiscard]] const drop_counters& dropped() const noexcept { return dropped_; }
    [[nodiscard]] const client_config& config() const noexcept { return config_; }

private:
    void drop(drop_reason reason);
    void start_address(std::size_t index, clock::time_point now);
    void next_address_or_fail(client_error error, clock::time_point now);
    void fail(client_error error, const disconnect_info& info = {});
    void send_request(clock::time_point now);
    void send_response(clock::time_point now);
    void send_connection_packet(packet_type type, std::span<const std::uint8_t> data, clock::time_point now);
    void write_link_packets(clock::time_point now);
    void on_session_packet(const datagram_header& header, std::span<const std::uint8_t> datagram,
                           clock::time_point now);
    void became_connected(clock::time_point now);
    void emit(std::span<const std::uint8_t> datagram);
    [[nodiscard]] std::uint64_t unix_now() const;
    [[nodiscard]] clock::duration handshake_timeout() const;

    client_config config_;
    client_handler& handler_;
    send_function send_;
    drop_counters dropped_;

    client_state state_{client_state::disconnected};
    client_error error_{client_error::none};
    disconnect_info server_disconnect_;
    std::optional<connect_token> token_;
    connection_request_bytes_t request_{};
    std::size_t address_index_{0};
    client_error last_failure_{client_error::none}; // the most telling failure among the addresses tried
    clock::time_point attempt_deadline_{};          // the token's lifetime, from connect()
    clock::time_point step_started_{};              // when the current handshake step began
    clock::time_point last_handshake_sent_{};

    std::optional<challenge_data> challenge_;
    packet_cipher cipher_{packet_cipher::chacha20_poly1305}; // chosen from the challenge's offer
    // The session's keys, prepared for the cipher once (AES-256-GCM's key schedule: a few hundred
    // instructions a packet otherwise); set from the challenge on, wiped when the connection ends.
    std::optional<packet_key> send_key_;    // client to server
    std::optional<packet_key> receive_key_; // server to client
    std::uint64_t next_sequence_{0};
    replay_window replay_;
    std::unique_ptr<transport::link> link_;
    // Links of ended connections, destroyed when the outermost call returns (a handler may end the
    // connection from inside on_message, while the link is delivering).
    std::vector<std::unique_ptr<transport::link>> retired_;
    int depth_{0};
    bool receiving_{false}; // the link is delivering: writing on it waits (see server_connection.hpp)
    bool flush_pending_{false};
    struct depth_guard;
    clock::time_point connected_at_{};
    clock::time_point last_received_{};
    clock::time_point last_sent_{};
    std::uint64_t datagrams_sent_{0}, datagrams_received_{0}, bytes_sent_{0}, bytes_received_{0};
    std::uint64_t keep_alives_sent_{0};
    std::size_t malformed_bodies_{0};
    std::array<std::uint8_t, max_datagram_bytes> plain_{};
    std::array<std::uint8_t, max_datagram_bytes> out_{};
};

} // namespace ecsnet::transport
