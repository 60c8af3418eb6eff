#include "ecsnet/transport/server_core.hpp"

#include <sodium.h>

#include <stdexcept>
#include <string>

#include "byte_spans.hpp"
#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/disconnect_code.hpp"
#include "sodium_init.hpp"

namespace ecsnet::transport {

using detail::as_bytes_of;
using detail::as_u8;

namespace {

server_config checked(server_config config) {
    if (config.max_clients == 0) {
        throw std::invalid_argument{"server_config::max_clients must be at least 1"};
    }
    if (config.disconnect_packets == 0) {
        throw std::invalid_argument{"server_config::disconnect_packets must be at least 1"};
    }
    if (config.keep_alive_interval.count() <= 0 || config.challenge_lifetime.count() <= 0 ||
        config.challenge_key_rotation.count() <= 0) {
        throw std::invalid_argument{"server_config: intervals must be positive"};
    }
    if (config.link.max_body_bytes > max_payload_bytes) {
        throw std::invalid_argument{"server_config::link.max_body_bytes above " +
                                    std::to_string(max_payload_bytes)};
    }
    return config;
}

std::uint64_t random_handshake_sequence() {
    std::uint64_t sequence = 0;
    randombytes_buf(&sequence, sizeof sequence);
    return sequence | handshake_sequence_bit;
}

} // namespace

struct server_core::collect_guard {
    explicit collect_guard(server_core& core)
        : core_{core} {
        ++core_.depth_;
    }
    ~collect_guard() {
        if (--core_.depth_ == 0) {
            core_.connections_.collect();
        }
    }
    collect_guard(const collect_guard&) = delete;
    collect_guard& operator=(const collect_guard&) = delete;

private:
    server_core& core_;
};

server_core::server_core(server_config config, server_handler& handler, send_function send,
                         clock::time_point now)
    : config_{checked(std::move(config))}
    , handler_{handler}
    , send_{std::move(send)}
    , handshake_{config_, counters_, now}
    , connections_{config_.max_clients}
    , dev_key_{is_dev_key(config_.private_key)} {
    ensure_sodium();
}

void server_core::set_public_addresses(std::vector<net_address> addresses) {
    config_.public_addresses = addresses;
    handshake_.set_public_addresses(std::move(addresses));
}

std::uint64_t server_core::unix_now() const {
    return config_.unix_clock ? config_.unix_clock() : transport::unix_now();
}

void server_core::drop(drop_reason reason, const net_address& from) {
    counters_.dropped.add(reason);
    handler_.on_dropped(reason, from);
}

void server_core::emit(const net_address& to, std::span<const std::uint8_t> datagram) {
    bump(counters_.datagrams_sent);
    bump(counters_.bytes_sent, datagram.size());
    send_(to, datagram);
}

void server_core::receive(std::span<const std::uint8_t> datagram, const net_address& from,
                          clock::time_point now) {
    collect_guard guard{*this};
    bump(counters_.datagrams_received);
    bump(counters_.bytes_received, datagram.size());
    if (datagram.empty() || datagram.size() > max_datagram_bytes) {
        drop(drop_reason::malformed, from);
        return;
    }
    auto* connection = connections_.find(from);
    if (datagram[0] == static_cast<std::uint8_t>(packet_type::connection_request)) {
        if (connection != nullptr) {
            drop(drop_reason::already_connected, from);
            return;
        }
        on_request(datagram, from, now);
        return;
    }
    const auto header = read_datagram_header(datagram);
    if (!header) {
        drop(header.error(), from);
        return;
    }
    switch (header->type) {
    case packet_type::response:
        if (connection != nullptr) {
            // A response repeated while our first keep-alive was on its way: answer with a keep-alive
            // (smaller than the response) until the client shows it knows it is connected.
            if (!connection->confirmed() &&
                datagram.size() == header->size + response_data_bytes + mac_bytes) {
                send_on(*connection, packet_type::keep_alive, {}, now);
                connection->count_keep_alive();
            }
            drop(drop_reason::already_connected, from);
            return;
        }
        on_response(*header, datagram, from, now);
        return;
    case packet_type::keep_alive:
    case packet_type::payload:
    case packet_type::disconnect:
        if (connection == nullptr) {
            drop(drop_reason::unknown_source, from);
            return;
        }
        on_connection_packet(*connection, *header, datagram, now);
        return;
    case packet_type::connection_request: // not reachable: prefix 0 is handled above
    case packet_type::connection_denied:
    case packet_type::challenge:
        break;
    }
    drop(drop_reason::bad_prefix, from); // packets only a server sends
}

void server_core::prefetch(const net_address& from) const noexcept {
    if (const auto* connection = connections_.find(from)) {
        connection->prefetch_receive();
    }
}

void server_core::prefetch_send(connection_id id) const noexcept {
    if (const auto* connection = connections_.find(id)) {
        connection->prefetch_send();
    }
}

void server_core::on_request(std::span<const std::uint8_t> datagram, const net_address& from,
                             clock::time_point now) {
    const auto checked_request = handshake_.check_request(datagram, from, now, unix_now());
    if (!checked_request) {
        drop(checked_request.error(), from);
        return;
    }
    const auto& s2c = checked_request->token.server_to_client_key;
    if (connections_.client_id_in_use(checked_request->token.client_id)) {
        deny(denial_reason::client_id_in_use, s2c, from);
        drop(drop_reason::already_connected, from);
        return;
    }
    if (connections_.full()) {
        deny(denial_reason::server_full, s2c, from);
        drop(drop_reason::server_full, from);
        return;
    }
    const auto challenge = handshake_.make_challenge(*checked_request, from, now);
    const auto data = write_challenge(challenge);
    send_handshake(packet_type::challenge, data, s2c, from);
    bump(counters_.challenges_sent);
}

void server_core::on_response(const datagram_header& header, std::span<const std::uint8_t> datagram,
                              const net_address& from, clock::time_point now) {
    const auto unix = unix_now();
    auto handshake = handshake_.check_response(header, datagram, from, now, unix);
    if (!handshake) {
        drop(handshake.error(), from);
        return;
    }
    if (connections_.client_id_in_use(handshake->client_id)) {
        deny(denial_reason::client_id_in_use, handshake->server_to_client_key, from);
        drop(drop_reason::already_connected, from);
        return;
    }
    if (connections_.full()) {
        deny(denial_reason::server_full, handshake->server_to_client_key, from);
        drop(drop_reason::server_full, from);
        return;
    }
    const auto timeout = config_.timeout.count() > 0
                             ? clock::duration{config_.timeout}
                             : clock::duration{std::chrono::seconds{handshake->timeout_seconds}};
    auto& connection = connections_.add(std::make_unique<server_connection>(
        connections_.next_id(), *handshake, from, timeout, config_.link, now));
    handshake_.connected(*handshake, from, unix);
    sodium_memzero(handshake->client_to_server_key.data(), key_bytes);
    sodium_memzero(handshake->server_to_client_key.data(), key_bytes);
    bump(counters_.connections_opened);
    // The first keep-alive tells the client it is connected (and proves the server derived its keys).
    send_on(connection, packet_type::keep_alive, {}, now);
    connection.count_keep_alive();
    schedule_visit(connection, now);
    handler_.on_connected(
        {connection.id(), connection.client_id(), connection.user_data(), connection.remote()});
}

void server_core::on_connection_packet(server_connection& connection, const datagram_header& header,
                                       std::span<const std::uint8_t> datagram, clock::time_point now) {
    const auto data_size = datagram.size() - header.size - mac_bytes;
    // Sizes first: no crypto for a packet that cannot be valid.
    const bool size_ok =
        (header.type == packet_type::keep_alive && data_size == 0) ||
        (header.type == packet_type::payload && data_size >= 1 && data_size <= config_.link.max_body_bytes) ||
        (header.type == packet_type::disconnect && data_size >= 2 &&
         data_size <= 2 + max_disconnect_message_bytes);
    if (!size_ok) {
        drop(drop_reason::malformed, connection.remote());
        return;
    }
    const auto opened = connection.open(header, datagram, config_.protocol_id, plain_, now);
    if (!opened) {
        drop(opened.error(), connection.remote());
        return;
    }
    const std::span<const std::uint8_t> data{plain_.data(), *opened};
    switch (header.type) {
    case packet_type::keep_alive:
        schedule_visit(connection, now); // its timeout moved
        return;
    case packet_type::payload: {
        const auto id = connection.id();
        connection.receiving = true;
        const auto result = connection.link().receive(
            as_bytes_of(data), now, [&](channel ch, std::span<const std::byte> message) {
                if (connections_.find(id) != nullptr) { // the handler may have disconnected it meanwhile
                    handler_.on_message(id, ch, message);
                }
            });
        connection.receiving = false;
        if (result.malformed()) {
            drop(drop_reason::link_refused, connection.remote());
            if (++connection.malformed_bodies > config_.max_malformed_bodies &&
                connections_.find(id) != nullptr) {
                close(connection, disconnect_code::protocol_error, "malformed link bodies", closed_by::local,
                      now);
                return;
            }
        }
        if (connections_.find(id) == nullptr) {
            return;
        }
        if (connection.flush_pending) {
            write_link_packets(connection, now);
        } else {
            schedule_visit(connection, now); // its timeout moved, and its link may owe an ack
        }
        return;
    }
    case packet_type::disconnect: {
        const auto info = read_disconnect(data);
        if (!info) {
            drop(info.error(), connection.remote());
            return;
        }
        close(connection, info->code, info->message, closed_by::peer, now);
        return;
    }
    default:
        return;
    }
}

void server_core::deny(denial_reason reason, const key& server_to_client, const net_address& to) {
    const std::array<std::uint8_t, 1> data{static_cast<std::uint8_t>(reason)};
    send_handshake(packet_type::connection_denied, data, server_to_client, to);
    bump(counters_.denials_sent);
}

void server_core::send_handshake(packet_type type, std::span<const std::uint8_t> data, const key& k,
                                 const net_address& to) {
    const auto size = seal_packet(type, random_handshake_sequence(), data, k, config_.protocol_id, out_);
    emit(to, std::span{out_}.first(size));
}

void server_core::send_on(server_connection& connection, packet_type type, std::span<const std::uint8_t> data,
                          clock::time_point now) {
    const auto size = connection.seal(type, data, config_.protocol_id, out_, now);
    if (size != 0) {
        emit(connection.remote(), std::span{out_}.first(size));
    }
}

void server_core::write_link_packets(server_connection& connection, clock::time_point now) {
    if (connection.receiving) {
        connection.flush_pending = true; // done when the delivery returns
        return;
    }
    connection.flush_pending = false;
    connection.link().write_packets(now, [&](std::span<const std::byte> body) {
        if (body.empty() || body.size() > max_payload_bytes) {
            return; // the link never writes these; a config check makes sure
        }
        send_on(connection, packet_type::payload, as_u8(body), now);
    });
    schedule_visit(connection, now);
}

void server_core::schedule_visit(const server_connection& connection, clock::time_point now) {
    if (!connection.removed) {
        visits_.set_due(connection.id(), connection.next_visit(now, config_.keep_alive_interval));
    }
}

send_status server_core::send(connection_id id, channel ch, std::span<const std::byte> message,
                              clock::time_point now) {
    auto* connection = connections_.find(id);
    if (connection == nullptr) {
        return send_status::queue_full;
    }
    const auto status = connection->link().send(ch, message, now);
    visits_.set_due(id, now); // written by the next flush, or by the next update if none comes
    return status;
}

void server_core::flush(connection_id id, clock::time_point now) {
    collect_guard guard{*this};
    if (auto* connection = connections_.find(id)) {
        write_link_packets(*connection, now);
    }
}

void server_core::flush_all(clock::time_point now) {
    collect_guard guard{*this};
    for (auto* connection : connections_.all()) {
        if (!connection->removed) {
            write_link_packets(*connection, now);
        }
    }
}

void server_core::update(clock::time_point now) {
    collect_guard guard{*this};
    handshake_.update(now);
    // Only the connections one of whose timers may fire (visit_schedule.hpp).
    due_.clear();
    visits_.take_due(now, due_);
    for (const auto id : due_) {
        auto* connection = connections_.find(id);
        if (connection == nullptr) {
            continue; // closed by a handler during this loop
        }
        if (connection->timed_out(now)) {
            bump(counters_.timeouts);
            const auto seconds =
                std::chrono::duration_cast<std::chrono::seconds>(connection->timeout()).count();
            close(*connection, disconnect_code::timeout,
                  "no packet from the client for " + std::to_string(seconds) + " s", closed_by::local, now);
            continue;
        }
        if (connection->stalled(now)) {
            close(*connection, disconnect_code::slow_consumer, "reliable data unacknowledged for too long",
                  closed_by::local, now);
            continue;
        }
        if (connection->link().wants_to_send(now)) {
            write_link_packets(*connection, now);
        }
        if (connection->keep_alive_due(now, config_.keep_alive_interval)) {
            send_on(*connection, packet_type::keep_alive, {}, now);
            connection->count_keep_alive();
        }
        schedule_visit(*connection, now);
    }
}

bool server_core::disconnect(connection_id id, std::uint8_t code, std::string_view message,
                             clock::time_point now, std::uint16_t retry_after_s) {
    collect_guard guard{*this};
    auto* connection = connections_.find(id);
    if (connection == nullptr) {
        return false;
    }
    close(*connection, code, message, closed_by::local, now, retry_after_s);
    return true;
}

void server_core::disconnect_all(std::uint8_t code, std::string_view message, clock::time_point now,
                                 std::uint16_t retry_after_s) {
    collect_guard guard{*this};
    for (auto* connection : connections_.all()) {
        if (!connection->removed) {
            close(*connection, code, message, closed_by::local, now, retry_after_s);
        }
    }
}

void server_core::close(server_connection& connection, std::uint8_t code, std::string_view message,
                        closed_by by, clock::time_point now, std::uint16_t retry_after_s) {
    if (by == closed_by::local) {
        std::array<std::uint8_t, 2 + max_disconnect_message_bytes + 2> data{};
        const auto size = write_disconnect(code, message, data, retry_after_s);
        for (std::size_t i = 0; i < config_.disconnect_packets; ++i) {
            send_on(connection, packet_type::disconnect, std::span{data}.first(size), now);
        }
    }
    const auto id = connection.id();
    disconnect_info info{code, std::string{truncate_utf8(message, max_disconnect_message_bytes)}, by,
                         retry_after_s};
    connections_.remove(id); // the slot is free from here; the object lives until the outermost call returns
    visits_.forget(id);
    bump(counters_.connections_closed);
    handler_.on_disconnected(id, info);
}

std::optional<connection_stats> server_core::stats(connection_id id, clock::time_point now) const {
    const auto* connection = connections_.find(id);
    if (connection == nullptr) {
        return std::nullopt;
    }
    return connection->stats(now);
}

std::optional<connection_info> server_core::info(connection_id id) const {
    const auto* connection = connections_.find(id);
    if (connection == nullptr) {
        return std::nullopt;
    }
    return connection_info{connection->id(), connection->client_id(), connection->user_data(),
                           connection->remote()};
}

server_table_sizes server_core::table_sizes() const noexcept {
    return {connections_.size(), handshake_.pending().size(), handshake_.used().size(),
            handshake_.limiter().size()};
}

} // namespace ecsnet::transport
