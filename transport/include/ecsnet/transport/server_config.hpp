#pragma once

// What a server is configured with (server_core and udp_server). The defaults suit a game server of a
// few hundred players; every table a stranger can make the server fill has a bound here.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "address.hpp"
#include "key.hpp"
#include "link_config.hpp"

namespace ecsnet::transport {

struct server_config {
    /// The game's protocol id: requests for another are refused (wrong_protocol).
    std::uint64_t protocol_id{};
    /// The studio's private key, shared with its backend (dev_private_key for --insecure-dev).
    key private_key{};
    /// The addresses clients reach this server at; a token must list one of them (token_wrong_address).
    /// Empty: the address the socket is bound to (which must then not be a wildcard like 0.0.0.0).
    std::vector<net_address> public_addresses;
    /// Connected clients at most; requests beyond get a denial (server_full).
    std::size_t max_clients{256};

    /// Silence that ends a connection. Zero: each token's own timeout.
    std::chrono::seconds timeout{0};
    /// A keep-alive goes to a peer nothing else was sent to for this long.
    std::chrono::milliseconds keep_alive_interval{100};
    /// Copies of a disconnect packet sent (each under its own sequence), so that one arrives.
    std::size_t disconnect_packets{8};

    /// The packet ciphers offered to clients (bits of packet_cipher, packet_crypto.hpp), among those this
    /// machine runs; ChaCha20-Poly1305 is always offered. 0: every one this machine runs.
    std::uint8_t ciphers{0};
    /// A challenge is accepted back for this long after it was issued.
    std::chrono::milliseconds challenge_lifetime{std::chrono::seconds{10}};
    /// The challenge key is replaced this often (the previous one still opens challenges in flight).
    std::chrono::milliseconds challenge_key_rotation{std::chrono::seconds{30}};

    /// Handshakes in progress remembered (token -> source address), overall and per source IP.
    std::size_t max_pending_handshakes{4096};
    std::size_t max_pending_per_ip{64};
    /// Tokens that connected, remembered until they expire so that none connects twice.
    std::size_t max_used_tokens{16384};
    /// Handshake packets (requests and responses) accepted per source IP: a token bucket checked before
    /// any crypto. 0: no limit.
    double handshake_packets_per_second_per_ip{200};
    double handshake_burst_per_ip{400};
    std::size_t max_rate_limited_ips{16384};

    /// Each connection's link.
    link_config link{};
    /// A connection whose peer sends more authenticated bodies than this that its link refuses as
    /// malformed (a broken or incompatible peer: strangers cannot get past the MAC) is ended with
    /// disconnect_code::protocol_error.
    std::size_t max_malformed_bodies{16};

    /// The unix time in seconds (token expiry); unset: the system clock. For tests.
    std::function<std::uint64_t()> unix_clock;
};

} // namespace ecsnet::transport
