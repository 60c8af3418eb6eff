#pragma once

// The data of each packet type (docs/protocol.md, section 10.3), before encryption / after decryption,
// and the connection request, which is not encrypted. Readers check sizes and fields before anything
// else and refuse with a drop_reason; the crypto is packet_crypto.hpp's.
//
//   type  packet               data (in clear before sealing)                        data bytes
//   0     connection request   (not encrypted: see connection_request below)          1,078 in all
//   1     connection denied    reason (u8)                                            1
//   2     challenge            challenge sequence (u64), session salt (16), token,    421
//                              ciphers offered (u8)
//   3     response             challenge sequence (u64), token, cipher chosen (u8)   405
//                              (authenticated only)
//   4     keep-alive           nothing                                                0
//   5     payload              one link body                                          1 to 1,175
//   6     disconnect           reason code (u8), length (u8, <= 127), UTF-8 message   2 + length

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "challenge_token.hpp"
#include "connect_token.hpp"
#include "drop_reason.hpp"
#include "outcome.hpp"
#include "packet_crypto.hpp"
#include "protocol.hpp"

namespace ecsnet::transport {

// --- connection request (type 0): 1,078 bytes, not encrypted -------------------------------------------
//   0x00 | version info (13) | protocol id (u64) | token expire timestamp (u64) | token nonce (24) |
//   encrypted private token (1,024)

using connection_request_bytes_t = std::array<std::uint8_t, connection_request_bytes>;

[[nodiscard]] connection_request_bytes_t write_connection_request(const connect_token& token);

/// The fields of a request, pointing into the datagram.
struct connection_request_view {
    std::uint64_t protocol_id{};
    std::uint64_t expire_timestamp{};
    std::span<const std::uint8_t, token_nonce_bytes> nonce;
    std::span<const std::uint8_t, private_token_bytes> encrypted_private;
};

/// Checks size (malformed), prefix (bad_prefix) and version (wrong_version), nothing that needs a key.
[[nodiscard]] outcome<connection_request_view, drop_reason>
read_connection_request(std::span<const std::uint8_t> datagram) noexcept;

// --- connection denied (type 1) ---------------------------------------------------------------------------

enum class denial_reason : std::uint8_t {
    server_full = 1,      // every slot is taken
    client_id_in_use = 2, // a connection with this token's client id already exists
};
[[nodiscard]] std::string_view to_string(denial_reason reason) noexcept;

[[nodiscard]] outcome<denial_reason, drop_reason> read_denied(std::span<const std::uint8_t> data) noexcept;

// --- challenge (type 2) and response (type 3) ------------------------------------------------------------

inline constexpr std::size_t challenge_data_bytes = 8 + session_salt_bytes + challenge_token_bytes + 1; // 421
inline constexpr std::size_t response_data_bytes = 8 + challenge_token_bytes + 1;                       // 405

struct challenge_data {
    std::uint64_t challenge_sequence{};
    session_salt salt{};
    sealed_challenge token{};
    /// The ciphers the server runs (packet_crypto.hpp: bits of packet_cipher). A reader refuses a set
    /// without ChaCha20-Poly1305 or with unknown bits (malformed).
    std::uint8_t ciphers{1};
};
[[nodiscard]] std::array<std::uint8_t, challenge_data_bytes> write_challenge(const challenge_data& challenge);
[[nodiscard]] outcome<challenge_data, drop_reason>
read_challenge(std::span<const std::uint8_t> data) noexcept;

struct response_data {
    std::uint64_t challenge_sequence{};
    sealed_challenge token{};
    /// The client's choice among the challenge's ciphers (packet_cipher). A reader refuses an unknown one
    /// (malformed); the server refuses one it did not offer.
    packet_cipher cipher{packet_cipher::chacha20_poly1305};
};
[[nodiscard]] std::array<std::uint8_t, response_data_bytes> write_response(const response_data& response);
[[nodiscard]] outcome<response_data, drop_reason> read_response(std::span<const std::uint8_t> data) noexcept;

// --- disconnect (type 6) -----------------------------------------------------------------------------------

struct disconnect_data {
    std::uint8_t code{};
    std::string message;            // UTF-8, at most 127 bytes
    std::uint16_t retry_after_s{0}; // when the peer may reconnect, in seconds; 0: no hint
};
/// Writes code, length and message (cut to 127 bytes at a character boundary) into `out` (at least 129
/// bytes, 131 with a hint), then the retry hint (u16, little-endian) when it is not 0; returns the size.
std::size_t write_disconnect(std::uint8_t code, std::string_view message, std::span<std::uint8_t> out,
                             std::uint16_t retry_after_s = 0) noexcept;
/// Refuses a length that does not match the data (malformed): the data is code, length and message,
/// optionally followed by the 2-byte retry hint. Invalid UTF-8 in the message is replaced with '?' rather
/// than refused: the disconnect still ends the connection.
[[nodiscard]] outcome<disconnect_data, drop_reason> read_disconnect(std::span<const std::uint8_t> data);

/// `text` cut to at most `max_bytes` without splitting a UTF-8 character.
[[nodiscard]] std::string_view truncate_utf8(std::string_view text, std::size_t max_bytes) noexcept;
/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
[[nodiscard]] bool valid_utf8(std::string_view text) noexcept;

} // namespace ecsnet::transport
