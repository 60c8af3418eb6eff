#pragma once

// The server's side of the handshake (docs/protocol.md, section 10.10): checks connection requests and
// responses, issues challenges, and keeps the bounded tables that make a token usable once and from one
// address. It decides; server_core sends the answers and opens the connections.
//
// A request is checked in this order, cheapest first, and nothing is kept for it before its token has
// been opened: the source's budget (rate_limited), size and prefix (malformed, bad_prefix), version
// (wrong_version), protocol id (wrong_protocol), expiry (token_expired), the private token's seal and
// content (token_invalid), this server among the token's addresses (token_wrong_address), the token not
// used by a past connection nor claimed by another address (token_reused). Then the claim is recorded.
//
// A response: budget, exact size, the challenge token opening for this source address under one of the
// server's two challenge keys (challenge_invalid), the response's MAC under the token's client-to-server
// key (decrypt_failed), the challenge's age (challenge_invalid), the token's reuse (token_reused).

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "challenge_token.hpp"
#include "clock.hpp"
#include "connect_token.hpp"
#include "drop_reason.hpp"
#include "outcome.hpp"
#include "packet_crypto.hpp"
#include "packets.hpp"
#include "pending_handshakes.hpp"
#include "server_config.hpp"
#include "server_counters.hpp"
#include "source_rate_limiter.hpp"
#include "used_tokens.hpp"

namespace ecsnet::transport {

class handshake_handler {
public:
    handshake_handler(const server_config& config, server_counters& counters, clock::time_point now);

    /// The addresses a token must list (set once the socket is bound, when the config named none).
    void set_public_addresses(std::vector<net_address> addresses);
    [[nodiscard]] const std::vector<net_address>& public_addresses() const noexcept {
        return public_addresses_;
    }

    struct checked_request {
        private_token token;
        token_mac mac{};
        std::uint64_t expire_timestamp{};
    };
    /// Checks a connection request (type 0) and records its claim on the token.
    [[nodiscard]] outcome<checked_request, drop_reason> check_request(std::span<const std::uint8_t> datagram,
                                                                      const net_address& from,
                                                                      clock::time_point now,
                                                                      std::uint64_t unix_now);

    /// A challenge for a checked request, with a fresh session salt.
    [[nodiscard]] challenge_data make_challenge(const checked_request& request, const net_address& from,
                                                clock::time_point now);

    /// Checks a response (type 3); what its challenge token holds when it completes a handshake.
    [[nodiscard]] outcome<challenge_contents, drop_reason>
    check_response(const datagram_header& header, std::span<const std::uint8_t> datagram,
                   const net_address& from, clock::time_point now, std::uint64_t unix_now);

    /// A handshake became a connection: its token is now used.
    void connected(const challenge_contents& handshake, const net_address& from, std::uint64_t unix_now);

    /// Timers: challenge key rotation, pending entries older than the challenge lifetime.
    void update(clock::time_point now);

    [[nodiscard]] const pending_handshakes& pending() const noexcept { return pending_; }
    [[nodiscard]] const used_tokens& used() const noexcept { return used_; }
    [[nodiscard]] const source_rate_limiter& limiter() const noexcept { return limiter_; }

private:
    void sync_eviction_counters();

    std::uint64_t protocol_id_;
    std::uint8_t ciphers_; // offered in challenges
    key private_key_;
    std::vector<net_address> public_addresses_;
    std::chrono::milliseconds challenge_lifetime_;
    server_counters& counters_;
    clock::time_point epoch_; // challenge times are milliseconds since this
    challenge_keys keys_;
    pending_handshakes pending_;
    used_tokens used_;
    source_rate_limiter limiter_;
    clock::time_point last_expiry_{};
    std::uint64_t pending_evictions_seen_{0};
    std::uint64_t used_evictions_seen_{0};
};

} // namespace ecsnet::transport
