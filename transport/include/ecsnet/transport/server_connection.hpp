#pragma once

// One client connected to a server: its address and identity, its session keys and packet sequence, the
// replay window of what it sent, its link, its timers and counts. The server_core decides what to do
// with it; this class seals and opens its packets and answers questions about its timers.

#include <chrono>
#include <cstdint>
#include <span>

#include "challenge_token.hpp"
#include "clock.hpp"
#include "connection_stats.hpp"
#include "drop_reason.hpp"
#include "link.hpp"
#include "outcome.hpp"
#include "packet_crypto.hpp"
#include "replay_window.hpp"
#include "server_handler.hpp"
#include "session_keys.hpp"

namespace ecsnet::transport {

class server_connection {
public:
    server_connection(connection_id id, const challenge_contents& handshake, const net_address& remote,
                      clock::duration timeout, const link_config& link_config, clock::time_point now);

    [[nodiscard]] connection_id id() const noexcept { return id_; }
    [[nodiscard]] std::uint64_t client_id() const noexcept { return client_id_; }
    [[nodiscard]] const net_address& remote() const noexcept { return remote_; }
    [[nodiscard]] const transport::user_data& user_data() const noexcept { return user_data_; }
    [[nodiscard]] const token_mac& mac() const noexcept { return mac_; }
    [[nodiscard]] transport::link& link() noexcept { return link_; }

    /// Seals `data` as a packet of `type` under the next sequence; returns its size (0: `out` too small).
    std::size_t seal(packet_type type, std::span<const std::uint8_t> data, std::uint64_t protocol_id,
                     std::span<std::uint8_t> out, clock::time_point now);
    /// Replay check, decryption, then the sequence is recorded: the data's size, or why it was refused
    /// (replayed, decrypt_failed, malformed for a handshake-range sequence).
    [[nodiscard]] outcome<std::size_t, drop_reason> open(const datagram_header& header,
                                                         std::span<const std::uint8_t> datagram,
                                                         std::uint64_t protocol_id,
                                                         std::span<std::uint8_t> out, clock::time_point now);

    /// Asks for what open() and the link's receive() read (the replay window, the receive key, the link's
    /// receive state) without waiting for it: a server handling a batch of datagrams asks for the next
    /// one's connection while it handles one, since a thousand clients' connections are cold in cache.
    void prefetch_receive() const noexcept;
    /// Likewise for what seal() and the link's send() and write_packets() read: a server sending a tick's
    /// snapshots asks for a connection's a few clients ahead.
    void prefetch_send() const noexcept;

    /// Nothing authenticated received for the timeout.
    [[nodiscard]] bool timed_out(clock::time_point now) const noexcept {
        return now - last_received_ > timeout_;
    }
    [[nodiscard]] bool keep_alive_due(clock::time_point now, clock::duration interval) const noexcept {
        return now - last_sent_ >= interval;
    }
    /// Reliable data unacknowledged for the timeout: the peer is alive but its link stopped acking.
    [[nodiscard]] bool stalled(clock::time_point now) const {
        return link_.oldest_unacked_reliable_age(now) > timeout_;
    }
    /// The earliest time one of the timers above, or the link's (an ack owed, a resend), may fire: when
    /// the server's timer should visit it next (visit_schedule.hpp). Later than `now` unless one is due.
    [[nodiscard]] clock::time_point next_visit(clock::time_point now,
                                               clock::duration keep_alive_interval) const;
    /// Whether the client has sent anything under the session keys yet (it knows it is connected).
    [[nodiscard]] bool confirmed() const noexcept { return confirmed_; }
    [[nodiscard]] clock::duration timeout() const noexcept { return timeout_; }
    void count_keep_alive() noexcept { ++keep_alives_sent_; }

    /// While the link delivers a body's messages, writing on it must wait (the link does not allow it):
    /// a flush asked for meanwhile is remembered and done when the delivery returns.
    bool receiving{false};
    bool flush_pending{false};
    /// Taken out of the connection manager (closed), and alive only until its collect().
    bool removed{false};
    /// Authenticated bodies the link refused as malformed (server_config::max_malformed_bodies).
    std::size_t malformed_bodies{0};

    [[nodiscard]] connection_stats stats(clock::time_point now) const;

private:
    server_connection(connection_id id, const challenge_contents& handshake, const session_keys& keys,
                      const net_address& remote, clock::duration timeout, const link_config& link_config,
                      clock::time_point now);

    connection_id id_;
    // What every packet and every timer visit reads, together at the front (the link is ~21 KB).
    clock::duration timeout_;
    clock::time_point last_received_;
    clock::time_point last_sent_;
    std::uint64_t next_sequence_{0};
    bool confirmed_{false};
    std::uint64_t datagrams_sent_{0}, datagrams_received_{0}, bytes_sent_{0}, bytes_received_{0};
    replay_window replay_;
    // The session keys (session_keys.hpp) under the cipher chosen in the handshake, prepared once.
    packet_key send_key_;    // server to client
    packet_key receive_key_; // client to server
    transport::link link_;
    // Read for lookups, handlers and statistics.
    std::uint64_t client_id_;
    net_address remote_;
    transport::user_data user_data_;
    token_mac mac_;
    clock::time_point connected_at_;
    std::uint64_t keep_alives_sent_{0};
};

} // namespace ecsnet::transport
