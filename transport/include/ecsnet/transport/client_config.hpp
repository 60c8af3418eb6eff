#pragma once

// What a client is configured with (client_core and udp_client).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "link_config.hpp"

namespace ecsnet::transport {

struct client_config {
    /// Requests and responses are repeated this often until answered (netcode.io: 10 Hz).
    std::chrono::milliseconds handshake_resend_interval{100};
    /// A keep-alive goes out when nothing else was sent for this long.
    std::chrono::milliseconds keep_alive_interval{100};
    /// How long each server address gets to answer, per handshake step; unset: the token's timeout.
    std::optional<std::chrono::milliseconds> handshake_timeout;
    /// The packet ciphers the client may choose (bits of packet_cipher, packet_crypto.hpp), among those
    /// this machine runs; ChaCha20-Poly1305 is always allowed. 0: every one this machine runs.
    std::uint8_t ciphers{0};
    /// Copies of the disconnect packet disconnect() sends.
    std::size_t disconnect_packets{8};
    /// The link (peers must agree on its limits: give the server's).
    link_config link{};
    /// More authenticated bodies than this refused by the link as malformed end the connection
    /// (client_error::protocol_error).
    std::size_t max_malformed_bodies{16};
    /// The unix time in seconds (token expiry); unset: the system clock. For tests.
    std::function<std::uint64_t()> unix_clock;
};

} // namespace ecsnet::transport
