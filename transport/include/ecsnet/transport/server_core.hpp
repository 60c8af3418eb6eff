#pragma once

// A server's side of the transport without sockets: datagrams in (receive), datagrams out (the send
// function), timers (update), messages to and from its clients. udp_server puts it on an Asio socket;
// tests and fuzzers drive it directly. Time is passed in.
//
// What it guarantees (docs/protocol.md, section 10):
// - before a source has proven it receives at its address (a valid response to a challenge), the server
//   sends it only challenges and denials, each smaller than the request it answers: no amplification;
// - a flood from many sources costs bounded memory: the pending-handshake, used-token and rate-limit
//   tables have fixed capacities (server_config), and challenges keep no state on the server;
// - every datagram it does not act on is counted under one drop_reason, and reported to
//   server_handler::on_dropped; it never logs;
// - connected clients get their link's bodies encrypted under per-connection session keys, replay
//   protection, keep-alives when idle, and a disconnect with a reason on timeout or when asked.
//
// Not thread-safe: one thread (the one running udp_server's io_context) calls everything. The counters
// are atomics, readable from any thread.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "channel.hpp"
#include "clock.hpp"
#include "connection_manager.hpp"
#include "connection_stats.hpp"
#include "handshake_handler.hpp"
#include "server_config.hpp"
#include "server_counters.hpp"
#include "server_handler.hpp"
#include "visit_schedule.hpp"

namespace ecsnet::transport {

/// How much of each bounded table is in use (to check that a flood stays within the configuration).
struct server_table_sizes {
    std::size_t connections{};
    std::size_t pending_handshakes{};
    std::size_t used_tokens{};
    std::size_t rate_limited_ips{};
};

class server_core {
public:
    using send_function = std::function<void(const net_address& to, std::span<const std::uint8_t> datagram)>;

    /// Throws std::invalid_argument for a config that cannot work (no slot, no disconnect packet...).
    server_core(server_config config, server_handler& handler, send_function send, clock::time_point now);

    /// The addresses tokens must name, when the config named none (udp_server sets its bound address).
    void set_public_addresses(std::vector<net_address> addresses);

    /// One datagram from `from`.
    void receive(std::span<const std::uint8_t> datagram, const net_address& from, clock::time_point now);
    /// Asks for the state a datagram from `from` will read, without waiting for it: a caller holding a batch
    /// of datagrams calls it for the next one while the current one is received (a thousand clients'
    /// connections are cold in cache). Only a hint: receive() does not depend on it.
    void prefetch(const net_address& from) const noexcept;
    /// Likewise for what send() and flush() to a connection will read: a caller sending to many
    /// connections in turn calls it a few connections ahead. Only a hint.
    void prefetch_send(connection_id id) const noexcept;
    /// Timers: timeouts, stalled links, keep-alives, the links' resends and acks, challenge key rotation.
    /// Call every few milliseconds.
    void update(clock::time_point now);

    /// Queues a message on a connection's link (what the link answers). An unknown or closed connection:
    /// queue_full, nothing queued.
    send_status send(connection_id id, channel ch, std::span<const std::byte> message, clock::time_point now);
    /// Sends what a connection's link has due now (call once per tick after queuing its messages).
    void flush(connection_id id, clock::time_point now);
    void flush_all(clock::time_point now);
    /// Ends a connection: its disconnect packets go out (code and message), on_disconnected is called
    /// (closed_by::local) and its slot is free. False if there is no such connection. `retry_after_s`: a
    /// hint of when the client may reconnect (0: none; packets.hpp).
    bool disconnect(connection_id id, std::uint8_t code, std::string_view message, clock::time_point now,
                    std::uint16_t retry_after_s = 0);
    void disconnect_all(std::uint8_t code, std::string_view message, clock::time_point now,
                        std::uint16_t retry_after_s = 0);

    [[nodiscard]] std::optional<connection_stats> stats(connection_id id, clock::time_point now) const;
    [[nodiscard]] std::optional<connection_info> info(connection_id id) const;
    [[nodiscard]] std::size_t connection_count() const noexcept { return connections_.size(); }
    [[nodiscard]] const server_counters& counters() const noexcept { return counters_; }
    [[nodiscard]] server_table_sizes table_sizes() const noexcept;
    /// Whether this server accepts tokens made with the public development key (--insecure-dev).
    [[nodiscard]] bool uses_dev_key() const noexcept { return dev_key_; }
    [[nodiscard]] const server_config& config() const noexcept { return config_; }
    /// The socket did not take a datagram the core wrote (udp_server counts it here).
    void count_send_failure() noexcept { bump(counters_.send_failures); }

private:
    void drop(drop_reason reason, const net_address& from);
    void on_request(std::span<const std::uint8_t> datagram, const net_address& from, clock::time_point now);
    void on_response(const datagram_header& header, std::span<const std::uint8_t> datagram,
                     const net_address& from, clock::time_point now);
    void on_connection_packet(server_connection& connection, const datagram_header& header,
                              std::span<const std::uint8_t> datagram, clock::time_point now);
    void deny(denial_reason reason, const key& server_to_client, const net_address& to);
    void send_handshake(packet_type type, std::span<const std::uint8_t> data, const key& k,
                        const net_address& to);
    void send_on(server_connection& connection, packet_type type, std::span<const std::uint8_t> data,
                 clock::time_point now);
    void write_link_packets(server_connection& connection, clock::time_point now);
    // Tells the schedule when the connection's timers next need a visit (after anything that moves them).
    void schedule_visit(const server_connection& connection, clock::time_point now);
    void close(server_connection& connection, std::uint8_t code, std::string_view message, closed_by by,
               clock::time_point now, std::uint16_t retry_after_s = 0);
    void emit(const net_address& to, std::span<const std::uint8_t> datagram);
    [[nodiscard]] std::uint64_t unix_now() const;
    // Destroys the connections removed during the current call, once nothing up the stack uses them.
    struct collect_guard;

    server_config config_;
    server_handler& handler_;
    send_function send_;
    server_counters counters_;
    handshake_handler handshake_;
    connection_manager connections_;
    visit_schedule visits_;
    std::vector<connection_id> due_; // update()'s, kept for its buffer
    bool dev_key_;
    int depth_{0}; // nesting of public calls (a handler calling back in): collect at the outermost
    std::array<std::uint8_t, max_datagram_bytes> plain_{};
    std::array<std::uint8_t, max_datagram_bytes> out_{};
};

} // namespace ecsnet::transport
