#include "ecsnet/transport/handshake_handler.hpp"

#include <sodium.h>

#include <algorithm>

#include "sodium_init.hpp"

namespace ecsnet::transport {

handshake_handler::handshake_handler(const server_config& config, server_counters& counters,
                                     clock::time_point now)
    : protocol_id_{config.protocol_id}
    , ciphers_{usable_ciphers(config.ciphers)}
    , private_key_{config.private_key}
    , challenge_lifetime_{config.challenge_lifetime}
    , counters_{counters}
    , epoch_{now}
    , keys_{config.challenge_key_rotation, now}
    , pending_{config.max_pending_handshakes, config.max_pending_per_ip}
    , used_{config.max_used_tokens}
    , limiter_{config.handshake_packets_per_second_per_ip, config.handshake_burst_per_ip,
               config.max_rate_limited_ips} {
    ensure_sodium();
    set_public_addresses(config.public_addresses);
}

void handshake_handler::set_public_addresses(std::vector<net_address> addresses) {
    for (auto& address : addresses) {
        address = address.normalized();
    }
    public_addresses_ = std::move(addresses);
}

outcome<handshake_handler::checked_request, drop_reason>
handshake_handler::check_request(std::span<const std::uint8_t> datagram, const net_address& from,
                                 clock::time_point now, std::uint64_t unix_now) {
    if (!limiter_.allow(from, now)) {
        return drop_reason::rate_limited;
    }
    const auto request = read_connection_request(datagram);
    if (!request) {
        return request.error();
    }
    if (request->protocol_id != protocol_id_) {
        return drop_reason::wrong_protocol;
    }
    if (request->expire_timestamp <= unix_now) {
        return drop_reason::token_expired;
    }
    auto token = open_private_token(
        {request->protocol_id, request->expire_timestamp, request->nonce, request->encrypted_private},
        private_key_);
    if (!token) {
        return drop_reason::token_invalid;
    }
    const bool names_this_server = std::any_of(
        token->server_addresses.begin(), token->server_addresses.end(), [&](const net_address& a) {
            return std::find(public_addresses_.begin(), public_addresses_.end(), a.normalized()) !=
                   public_addresses_.end();
        });
    if (!names_this_server) {
        return drop_reason::token_wrong_address;
    }
    checked_request checked{std::move(*token), {}, request->expire_timestamp};
    std::copy(request->encrypted_private.end() - mac_bytes, request->encrypted_private.end(),
              checked.mac.begin());
    if (used_.contains(checked.mac, unix_now)) {
        return drop_reason::token_reused;
    }
    const auto claim = pending_.claim(checked.mac, from, now);
    sync_eviction_counters();
    if (claim == pending_handshakes::claim_result::other_address) {
        return drop_reason::token_reused;
    }
    return checked;
}

challenge_data handshake_handler::make_challenge(const checked_request& request, const net_address& from,
                                                 clock::time_point now) {
    challenge_contents contents;
    contents.client_id = request.token.client_id;
    contents.token_expire_timestamp = request.expire_timestamp;
    contents.timeout_seconds = request.token.timeout_seconds;
    contents.issued_ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - epoch_).count());
    contents.mac = request.mac;
    randombytes_buf(contents.salt.data(), contents.salt.size());
    contents.client_to_server_key = request.token.client_to_server_key;
    contents.server_to_client_key = request.token.server_to_client_key;
    contents.user_data = request.token.user_data;
    const auto issued = keys_.seal(contents, from, protocol_id_);
    challenge_data challenge{issued.sequence, contents.salt, issued.token, ciphers_};
    sodium_memzero(contents.client_to_server_key.data(), contents.client_to_server_key.size());
    sodium_memzero(contents.server_to_client_key.data(), contents.server_to_client_key.size());
    return challenge;
}

outcome<challenge_contents, drop_reason>
handshake_handler::check_response(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                  const net_address& from, clock::time_point now, std::uint64_t unix_now) {
    if (!limiter_.allow(from, now)) {
        return drop_reason::rate_limited;
    }
    if (datagram.size() != header.size + response_data_bytes + mac_bytes) {
        return drop_reason::malformed;
    }
    const auto response = read_response(datagram.subspan(header.size, response_data_bytes));
    if (!response) {
        return response.error();
    }
    auto contents = keys_.open(response->token, response->challenge_sequence, from, protocol_id_);
    if (!contents) {
        return drop_reason::challenge_invalid;
    }
    if (!verify_clear_packet(header, datagram, contents->client_to_server_key, protocol_id_)) {
        return drop_reason::decrypt_failed;
    }
    if ((ciphers_ & cipher_bit(response->cipher)) == 0) {
        return drop_reason::malformed; // a cipher this server did not offer
    }
    contents->cipher = response->cipher;
    const auto age_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - epoch_).count() -
                        std::int64_t(contents->issued_ms);
    if (age_ms < 0 || age_ms > challenge_lifetime_.count()) {
        return drop_reason::challenge_invalid;
    }
    if (used_.contains(contents->mac, unix_now)) {
        return drop_reason::token_reused;
    }
    if (const auto* owner = pending_.owner(contents->mac); owner != nullptr && *owner != from) {
        return drop_reason::token_reused;
    }
    return std::move(*contents);
}

void handshake_handler::connected(const challenge_contents& handshake, const net_address& from,
                                  std::uint64_t unix_now) {
    pending_.erase(handshake.mac);
    used_.add(handshake.mac, from, handshake.token_expire_timestamp, unix_now);
    sync_eviction_counters();
}

void handshake_handler::update(clock::time_point now) {
    keys_.rotate_if_due(now);
    // The expiry walk visits the table: every 100 ms is often enough (entries only need to go eventually;
    // the limits bound the table meanwhile).
    if (now - last_expiry_ >= std::chrono::milliseconds{100}) {
        last_expiry_ = now;
        pending_.expire(now - challenge_lifetime_);
    }
}

void handshake_handler::sync_eviction_counters() {
    bump(counters_.pending_evicted, pending_.evictions() - pending_evictions_seen_);
    pending_evictions_seen_ = pending_.evictions();
    bump(counters_.used_tokens_evicted, used_.evictions() - used_evictions_seen_);
    used_evictions_seen_ = used_.evictions();
}

} // namespace ecsnet::transport
