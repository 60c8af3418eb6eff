#pragma once

// Connect tokens (docs/protocol.md, section 10.2): what a studio's backend gives an authenticated client
// so that it can connect to one of its servers, in the way of netcode.io.
//
// A token has a private part, sealed with XChaCha20-Poly1305 under the studio's private key (which only
// the backend and the servers hold), and a public part the client reads. The private part names the
// client, the servers it may join, its timeout, the two per-direction keys and 256 bytes of user data
// for the server; its expiry, protocol id and version are bound to it as associated data, so none of
// them can be changed without the server noticing. The public part repeats what the client needs: the
// server addresses, the timeout and the keys (the client learns them over the backend's HTTPS).
//
// Serialized, a token is 2,048 bytes (zero padded, the padding checked); printable, it is that in
// base64 (URL-safe alphabet, no padding: 2,731 characters). Decoders refuse anything malformed with a
// token_error saying why; nothing they read throws.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "address.hpp"
#include "key.hpp"
#include "outcome.hpp"
#include "protocol.hpp"

namespace ecsnet::transport {

enum class token_error : std::uint8_t {
    none = 0,
    wrong_size,        // not 2,048 bytes (or base64 that does not decode to 2,048 bytes)
    bad_base64,        // characters outside the URL-safe base64 alphabet
    bad_version,       // not "ECSNET UDP 1"
    bad_timestamps,    // created after it expires
    bad_timeout,       // a timeout outside [1, 3600] seconds
    bad_address_count, // no server address, or more than 32
    bad_address,       // an address type other than IPv4 (1) or IPv6 (2)
    bad_padding,       // non-zero bytes after the content
    decrypt_failed,    // the private part does not open with this key, protocol id and expiry
    expired,           // issue: an expiry of 0 seconds; connect: the token's expiry has passed
    bad_parameters,    // issue: a parameter out of range (no address, an unset address...)
};

/// A short stable name: "wrong_size", "decrypt_failed"...
[[nodiscard]] std::string_view to_string(token_error error) noexcept;

using user_data = std::array<std::uint8_t, user_data_bytes>;

/// The private part, once opened by a server.
struct private_token {
    std::uint64_t client_id{};
    std::uint32_t timeout_seconds{};
    std::vector<net_address> server_addresses; // 1 to 32
    key client_to_server_key{};
    key server_to_client_key{};
    transport::user_data user_data{};
};

/// The public part, what a client reads; `encrypted_private` is opaque to it.
struct connect_token {
    std::uint64_t protocol_id{};
    std::uint64_t create_timestamp{}; // unix seconds
    std::uint64_t expire_timestamp{}; // unix seconds
    std::array<std::uint8_t, token_nonce_bytes> nonce{};
    std::array<std::uint8_t, private_token_bytes> encrypted_private{};
    std::uint32_t timeout_seconds{};
    std::vector<net_address> server_addresses; // 1 to 32, in the order to try them
    key client_to_server_key{};
    key server_to_client_key{};

    /// The private part's MAC: what identifies a token in a server's table of used tokens.
    [[nodiscard]] std::span<const std::uint8_t, mac_bytes> mac() const noexcept {
        return std::span<const std::uint8_t, mac_bytes>{
            encrypted_private.data() + private_token_bytes - mac_bytes, mac_bytes};
    }
};

/// What a backend decides when it issues a token.
struct token_params {
    std::uint64_t protocol_id{};
    std::uint64_t client_id{};
    std::vector<net_address> server_addresses; // 1 to 32
    std::uint32_t expire_seconds{30};          // from now; at least 1
    std::uint32_t timeout_seconds{10};         // silence before either side drops the connection, 1 to 3600
    transport::user_data user_data{};
    /// The current unix time in seconds; unset: the system clock.
    std::optional<std::uint64_t> now_unix;
};

inline constexpr std::uint32_t max_token_timeout_seconds = 3600;

/// Issues a token with fresh random keys and nonce, its private part sealed with `private_key`.
[[nodiscard]] outcome<connect_token, token_error> issue_token(const token_params& params,
                                                              const key& private_key);

/// The 2,048-byte form.
[[nodiscard]] std::array<std::uint8_t, connect_token_bytes> serialize(const connect_token& token);
/// The printable form: serialize() in URL-safe base64 without padding.
[[nodiscard]] std::string to_base64(const connect_token& token);

/// Reads the 2,048-byte form, checking everything a client can check (not the private part).
[[nodiscard]] outcome<connect_token, token_error> read_token(std::span<const std::uint8_t> bytes);
/// Reads the printable form (whitespace ignored, so a token pasted with line breaks still reads).
[[nodiscard]] outcome<connect_token, token_error> read_token_base64(std::string_view text);

/// What the server needs to open a private part: the fields of a connection request.
struct sealed_private_token {
    std::uint64_t protocol_id{};
    std::uint64_t expire_timestamp{};
    std::span<const std::uint8_t, token_nonce_bytes> nonce;
    std::span<const std::uint8_t, private_token_bytes> encrypted;
};

/// Opens and reads a private part (decrypt_failed for a forged or altered one: wrong key, another
/// protocol id or expiry, any bit changed).
[[nodiscard]] outcome<private_token, token_error> open_private_token(const sealed_private_token& sealed,
                                                                     const key& private_key);

/// Reads a private part's plaintext (1,008 bytes). open_private_token's second half; exposed for fuzzing.
[[nodiscard]] outcome<private_token, token_error>
parse_private_token(std::span<const std::uint8_t> plaintext);

/// The current unix time in seconds (the system clock).
[[nodiscard]] std::uint64_t unix_now() noexcept;

} // namespace ecsnet::transport
