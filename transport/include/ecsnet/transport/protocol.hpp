#pragma once

// The constants of the datagram transport's wire format (docs/protocol.md, section 10): sizes, the
// version string, and the packet types carried in the low 4 bits of every datagram's prefix byte.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ecsnet::transport {

/// "ECSNET UDP 1" and a terminating zero: the first 13 bytes of a token and of a connection request, and
/// part of every packet's associated data. Another version of the protocol changes this string.
inline constexpr std::array<std::uint8_t, 13> version_info{'E', 'C', 'S', 'N', 'E', 'T', ' ',
                                                           'U', 'D', 'P', ' ', '1', '\0'};

inline constexpr std::size_t key_bytes = 32;        // every symmetric key (token, packet, challenge)
inline constexpr std::size_t mac_bytes = 16;        // Poly1305 tag
inline constexpr std::size_t user_data_bytes = 256; // opaque to the transport, from the backend to the server
inline constexpr std::size_t max_token_servers = 32;

inline constexpr std::size_t connect_token_bytes = 2048;  // a serialized token, zero padded
inline constexpr std::size_t private_token_bytes = 1024;  // its encrypted private part, MAC included
inline constexpr std::size_t token_nonce_bytes = 24;      // XChaCha20-Poly1305 nonce
inline constexpr std::size_t session_salt_bytes = 16;     // the server's per-connection key salt
inline constexpr std::size_t challenge_token_bytes = 396; // sealed challenge token, MAC included

/// A whole UDP payload never exceeds this (no IP fragmentation on common paths).
inline constexpr std::size_t max_datagram_bytes = 1200;
/// Prefix byte + at most 8 sequence bytes.
inline constexpr std::size_t max_packet_header_bytes = 9;
/// The largest body a payload packet carries: 1200 - 9 - 16 = 1175 (link_config::max_body_bytes).
inline constexpr std::size_t max_payload_bytes = max_datagram_bytes - max_packet_header_bytes - mac_bytes;

/// A connection request's exact size. Every other packet a server sends before a connection exists
/// (challenge, denied) is smaller, so a spoofed request never buys a bigger answer.
inline constexpr std::size_t connection_request_bytes =
    1 + 13 + 8 + 8 + token_nonce_bytes + private_token_bytes;

/// The longest message a disconnect packet carries (UTF-8, cut at a character boundary).
inline constexpr std::size_t max_disconnect_message_bytes = 127;

/// A connect token's identity: the MAC of its sealed private part.
using token_mac = std::array<std::uint8_t, mac_bytes>;

/// The low 4 bits of a datagram's first byte.
enum class packet_type : std::uint8_t {
    connection_request = 0,
    connection_denied = 1,
    challenge = 2,
    response = 3,
    keep_alive = 4,
    payload = 5,
    disconnect = 6,
};
inline constexpr std::uint8_t packet_type_count = 7;

/// Handshake packets (denied, challenge, response) carry a random sequence with this bit set; connection
/// packets (keep-alive, payload, disconnect) count from 0 and never set it. See packet_crypto.hpp.
inline constexpr std::uint64_t handshake_sequence_bit = std::uint64_t{1} << 63;

[[nodiscard]] std::string_view to_string(packet_type type) noexcept;

} // namespace ecsnet::transport
