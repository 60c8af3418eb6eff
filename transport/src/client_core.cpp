#include "ecsnet/transport/client_core.hpp"

#include <sodium.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "byte_spans.hpp"
#include "ecsnet/transport/disconnect_code.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "sodium_init.hpp"

namespace ecsnet::transport {

using detail::as_bytes_of;
using detail::as_u8;

namespace {

std::uint64_t random_handshake_sequence() {
    std::uint64_t sequence = 0;
    randombytes_buf(&sequence, sizeof sequence);
    return sequence | handshake_sequence_bit;
}

} // namespace

struct client_core::depth_guard {
    explicit depth_guard(client_core& core)
        : core_{core} {
        ++core_.depth_;
    }
    ~depth_guard() {
        if (--core_.depth_ == 0) {
            core_.retired_.clear();
        }
    }
    depth_guard(const depth_guard&) = delete;
    depth_guard& operator=(const depth_guard&) = delete;

private:
    client_core& core_;
};

client_core::client_core(client_config config, client_handler& handler, send_function send)
    : config_{std::move(config)}
    , handler_{handler}
    , send_{std::move(send)} {
    ensure_sodium();
    if (config_.handshake_resend_interval.count() <= 0 || config_.keep_alive_interval.count() <= 0) {
        throw std::invalid_argument{"client_config: intervals must be positive"};
    }
    if (config_.link.max_body_bytes > max_payload_bytes) {
        throw std::invalid_argument{"client_config::link.max_body_bytes above " +
                                    std::to_string(max_payload_bytes)};
    }
}

std::uint64_t client_core::unix_now() const {
    return config_.unix_clock ? config_.unix_clock() : transport::unix_now();
}

clock::duration client_core::handshake_timeout() const {
    if (config_.handshake_timeout) {
        return *config_.handshake_timeout;
    }
    return std::chrono::seconds{token_ ? token_->timeout_seconds : 10};
}

void client_core::drop(drop_reason reason) {
    dropped_.add(reason);
    handler_.on_dropped(reason);
}

void client_core::emit(std::span<const std::uint8_t> datagram) {
    if (!token_) {
        return;
    }
    ++datagrams_sent_;
    bytes_sent_ += datagram.size();
    send_(token_->server_addresses[address_index_], datagram);
}

bool client_core::connect(std::span<const std::uint8_t> token_bytes, clock::time_point now) {
    const auto token = read_token(token_bytes);
    if (!token) {
        depth_guard guard{*this};
        if (link_) {
            retired_.push_back(std::move(link_));
        }
        token_.reset();
        state_ = client_state::disconnected;
        fail(client_error::token_invalid);
        return false;
    }
    return connect(*token, now);
}

bool client_core::connect(const connect_token& token, clock::time_point now) {
    depth_guard guard{*this};
    if (link_) {
        retired_.push_back(std::move(link_));
    }
    token_ = token;
    state_ = client_state::disconnected;
    error_ = client_error::none;
    server_disconnect_ = {};
    last_failure_ = client_error::none;
    challenge_.reset();
    if (token.server_addresses.empty() || token.create_timestamp > token.expire_timestamp) {
        fail(client_error::token_invalid);
        return false;
    }
    // Checked locally before anything is sent: an expired token cannot succeed.
    if (unix_now() >= token.expire_timestamp) {
        fail(client_error::token_expired);
        return false;
    }
    request_ = write_connection_request(token);
    // The token's lifetime, capped at a day (a lifetime near 2^64 seconds would overflow the clock).
    const auto lifetime = std::min<std::uint64_t>(token.expire_timestamp - token.create_timestamp, 86'400);
    attempt_deadline_ = now + std::chrono::seconds{static_cast<std::int64_t>(lifetime)};
    datagrams_sent_ = datagrams_received_ = bytes_sent_ = bytes_received_ = keep_alives_sent_ = 0;
    start_address(0, now);
    return true;
}

void client_core::start_address(std::size_t index, clock::time_point now) {
    address_index_ = index;
    state_ = client_state::sending_request;
    challenge_.reset();
    step_started_ = now;
    send_request(now);
}

void client_core::next_address_or_fail(client_error error, clock::time_point now) {
    // A denial says more than a silence: keep it as the reason if every later address stays silent.
    if (last_failure_ == client_error::none || error == client_error::denied_server_full ||
        error == client_error::denied_client_id_in_use || error == client_error::response_timed_out) {
        last_failure_ = error;
    }
    if (token_ && address_index_ + 1 < token_->server_addresses.size()) {
        start_address(address_index_ + 1, now);
        return;
    }
    fail(last_failure_);
}

void client_core::fail(client_error error, const disconnect_info& info) {
    state_ = client_state::disconnected;
    error_ = error;
    if (link_) {
        retired_.push_back(std::move(link_));
    }
    challenge_.reset();
    send_key_.reset();
    receive_key_.reset();
    handler_.on_disconnected(error, info);
}

void client_core::send_request(clock::time_point now) {
    last_handshake_sent_ = now;
    emit(request_);
}

void client_core::send_response(clock::time_point now) {
    last_handshake_sent_ = now;
    const auto data = write_response({challenge_->challenge_sequence, challenge_->token, cipher_});
    const auto size = seal_clear_packet(packet_type::response, random_handshake_sequence(), data,
                                        token_->client_to_server_key, token_->protocol_id, out_);
    emit(std::span{out_}.first(size));
}

void client_core::send_connection_packet(packet_type type, std::span<const std::uint8_t> data,
                                         clock::time_point now) {
    const auto size =
        send_key_ ? seal_packet(type, next_sequence_, data, *send_key_, token_->protocol_id, out_) : 0;
    if (size == 0) {
        return;
    }
    ++next_sequence_;
    last_sent_ = now;
    emit(std::span{out_}.first(size));
}

void client_core::write_link_packets(clock::time_point now) {
    if (state_ != client_state::connected || !link_) {
        return;
    }
    if (receiving_) {
        flush_pending_ = true;
        return;
    }
    flush_pending_ = false;
    link_->write_packets(now, [&](std::span<const std::byte> body) {
        if (!body.empty() && body.size() <= max_payload_bytes) {
            send_connection_packet(packet_type::payload, as_u8(body), now);
        }
    });
}

void client_core::receive(std::span<const std::uint8_t> datagram, const net_address& from,
                          clock::time_point now) {
    depth_guard guard{*this};
    if (state_ == client_state::disconnected || !token_) {
        drop(drop_reason::unexpected);
        return;
    }
    if (from.normalized() != token_->server_addresses[address_index_].normalized()) {
        drop(drop_reason::unknown_source);
        return;
    }
    const auto header = read_datagram_header(datagram);
    if (!header) {
        drop(header.error());
        return;
    }
    const auto data_size = datagram.size() - header->size - mac_bytes;
    switch (header->type) {
    case packet_type::connection_denied:
    case packet_type::challenge: {
        const bool denied = header->type == packet_type::connection_denied;
        if (state_ != client_state::sending_request &&
            !(denied && state_ == client_state::sending_response)) {
            drop(drop_reason::unexpected);
            return;
        }
        if (data_size != (denied ? 1 : challenge_data_bytes) ||
            (header->sequence & handshake_sequence_bit) == 0) {
            drop(drop_reason::malformed);
            return;
        }
        const auto size =
            open_packet(*header, datagram, token_->server_to_client_key, token_->protocol_id, plain_);
        if (!size) {
            drop(drop_reason::decrypt_failed);
            return;
        }
        const std::span<const std::uint8_t> data{plain_.data(), *size};
        ++datagrams_received_;
        bytes_received_ += datagram.size();
        if (denied) {
            const auto reason = read_denied(data);
            if (!reason) {
                drop(reason.error());
                return;
            }
            next_address_or_fail(*reason == denial_reason::server_full
                                     ? client_error::denied_server_full
                                     : client_error::denied_client_id_in_use,
                                 now);
            return;
        }
        const auto challenge = read_challenge(data);
        if (!challenge) {
            drop(challenge.error());
            return;
        }
        challenge_ = *challenge;
        cipher_ = choose_cipher(challenge->ciphers, usable_ciphers(config_.ciphers));
        auto keys =
            derive_session_keys(token_->client_to_server_key, token_->server_to_client_key, challenge->salt);
        send_key_.emplace(keys.client_to_server, cipher_);
        receive_key_.emplace(keys.server_to_client, cipher_);
        sodium_memzero(&keys, sizeof keys);
        replay_ = replay_window{};
        next_sequence_ = 0;
        state_ = client_state::sending_response;
        step_started_ = now;
        send_response(now);
        return;
    }
    case packet_type::keep_alive:
    case packet_type::payload:
    case packet_type::disconnect: {
        if (state_ != client_state::sending_response && state_ != client_state::connected) {
            drop(drop_reason::unexpected);
            return;
        }
        const bool size_ok = (header->type == packet_type::keep_alive && data_size == 0) ||
                             (header->type == packet_type::payload && data_size >= 1 &&
                              data_size <= config_.link.max_body_bytes) ||
                             (header->type == packet_type::disconnect && data_size >= 2 &&
                              data_size <= 2 + max_disconnect_message_bytes);
        if (!size_ok || (header->sequence & handshake_sequence_bit) != 0) {
            drop(drop_reason::malformed);
            return;
        }
        on_session_packet(*header, datagram, now);
        return;
    }
    case packet_type::connection_request:
    case packet_type::response:
        break;
    }
    drop(drop_reason::bad_prefix); // packets only a client sends
}

void client_core::on_session_packet(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                    clock::time_point now) {
    if (!replay_.check(header.sequence)) {
        drop(drop_reason::replayed);
        return;
    }
    const auto size = receive_key_ ? open_packet(header, datagram, *receive_key_, token_->protocol_id, plain_)
                                   : std::nullopt;
    if (!size) {
        drop(drop_reason::decrypt_failed);
        return;
    }
    replay_.accept(header.sequence);
    ++datagrams_received_;
    bytes_received_ += datagram.size();
    last_received_ = now;
    if (state_ == client_state::sending_response) {
        became_connected(now);
        if (state_ != client_state::connected) {
            return; // the handler ended it from on_connected
        }
    }
    const std::span<const std::uint8_t> data{plain_.data(), *size};
    switch (header.type) {
    case packet_type::payload: {
        auto* current = link_.get();
        receiving_ = true;
        const auto result =
            current->receive(as_bytes_of(data), now, [&](channel ch, std::span<const std::byte> m) {
                if (link_.get() == current) { // not ended by the handler meanwhile
                    handler_.on_message(ch, m);
                }
            });
        receiving_ = false;
        if (result.malformed()) {
            drop(drop_reason::link_refused);
            if (++malformed_bodies_ > config_.max_malformed_bodies && link_.get() == current) {
                fail(client_error::protocol_error,
                     {disconnect_code::protocol_error, "malformed link bodies from the server",
                      closed_by::local, 0});
                return;
            }
        }
        if (flush_pending_ && link_.get() == current) {
            write_link_packets(now);
        }
        if (link_.get() == current) {
            handler_.on_delivered();
        }
        return;
    }
    case packet_type::disconnect: {
        auto info = read_disconnect(data);
        if (!info) {
            drop(info.error());
            return;
        }
        server_disconnect_ = {info->code, std::move(info->message), closed_by::peer, info->retry_after_s};
        fail(client_error::disconnected_by_server, server_disconnect_);
        return;
    }
    default:
        return; // keep-alive: last_received_ is all it changes
    }
}

void client_core::became_connected(clock::time_point now) {
    state_ = client_state::connected;
    malformed_bodies_ = 0;
    link_ = std::make_unique<transport::link>(config_.link);
    connected_at_ = now;
    last_received_ = now;
    challenge_.reset();
    // An immediate keep-alive tells the server we know we are connected (it stops answering responses).
    send_connection_packet(packet_type::keep_alive, {}, now);
    ++keep_alives_sent_;
    handler_.on_connected(token_->server_addresses[address_index_]);
}

void client_core::update(clock::time_point now) {
    depth_guard guard{*this};
    switch (state_) {
    case client_state::disconnected:
        return;
    case client_state::sending_request:
    case client_state::sending_response: {
        const bool requesting = state_ == client_state::sending_request;
        if (now >= attempt_deadline_) {
            fail(client_error::token_expired);
            return;
        }
        if (now - step_started_ >= handshake_timeout()) {
            next_address_or_fail(
                requesting ? client_error::request_timed_out : client_error::response_timed_out, now);
            return;
        }
        if (now - last_handshake_sent_ >= config_.handshake_resend_interval) {
            requesting ? send_request(now) : send_response(now);
        }
        return;
    }
    case client_state::connected: {
        const auto timeout = std::chrono::seconds{token_->timeout_seconds};
        if (now - last_received_ > timeout) {
            fail(client_error::timed_out,
                 {disconnect_code::timeout,
                  "no packet from the server for " + std::to_string(token_->timeout_seconds) + " s",
                  closed_by::local, 0});
            return;
        }
        if (link_->oldest_unacked_reliable_age(now) > timeout) {
            fail(client_error::stalled, {disconnect_code::slow_consumer,
                                         "reliable data unacknowledged for too long", closed_by::local, 0});
            return;
        }
        if (link_->wants_to_send(now)) {
            write_link_packets(now);
        }
        if (state_ == client_state::connected && now - last_sent_ >= config_.keep_alive_interval) {
            send_connection_packet(packet_type::keep_alive, {}, now);
            ++keep_alives_sent_;
        }
        return;
    }
    }
}

std::optional<clock::time_point> client_core::next_wakeup(clock::time_point now) const {
    switch (state_) {
    case client_state::disconnected:
        return std::nullopt;
    case client_state::sending_request:
    case client_state::sending_response:
        return std::min({attempt_deadline_, step_started_ + handshake_timeout(),
                         last_handshake_sent_ + config_.handshake_resend_interval});
    case client_state::connected: {
        auto due = std::min(last_received_ + std::chrono::seconds{token_->timeout_seconds},
                            last_sent_ + config_.keep_alive_interval);
        if (const auto link_due = link_->next_send_time(now)) {
            due = std::min(due, *link_due);
        }
        return due;
    }
    }
    return std::nullopt;
}

send_status client_core::send(channel ch, std::span<const std::byte> message, clock::time_point now) {
    if (state_ != client_state::connected || !link_) {
        return send_status::queue_full;
    }
    return link_->send(ch, message, now);
}

void client_core::flush(clock::time_point now) {
    depth_guard guard{*this};
    write_link_packets(now);
}

void client_core::disconnect(std::uint8_t code, std::string_view message, clock::time_point now) {
    depth_guard guard{*this};
    if (state_ == client_state::connected) {
        std::array<std::uint8_t, 2 + max_disconnect_message_bytes> data{};
        const auto size = write_disconnect(code, message, data);
        for (std::size_t i = 0; i < std::max<std::size_t>(config_.disconnect_packets, 1); ++i) {
            send_connection_packet(packet_type::disconnect, std::span{data}.first(size), now);
        }
    }
    state_ = client_state::disconnected;
    error_ = client_error::none;
    if (link_) {
        retired_.push_back(std::move(link_));
    }
    challenge_.reset();
}

std::optional<net_address> client_core::server_address() const {
    if (!token_) {
        return std::nullopt;
    }
    return token_->server_addresses[address_index_];
}

connection_stats client_core::stats(clock::time_point now) const {
    connection_stats out;
    if (token_) {
        out.remote = token_->server_addresses[address_index_];
    }
    if (link_) {
        out.link = link_->stats();
    }
    out.datagrams_sent = datagrams_sent_;
    out.datagrams_received = datagrams_received_;
    out.bytes_sent = bytes_sent_;
    out.bytes_received = bytes_received_;
    out.keep_alives_sent = keep_alives_sent_;
    out.cipher = cipher_;
    if (state_ == client_state::connected) {
        out.connected_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - connected_at_);
        out.since_last_received = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_received_);
    }
    return out;
}

} // namespace ecsnet::transport
