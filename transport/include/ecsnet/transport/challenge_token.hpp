#pragma once

// Challenge tokens (docs/protocol.md, section 10.6): what a server sends in answer to a valid connection
// request and expects back, unchanged, in the response. It proves that the client receives packets at the
// address it sends from (a spoofed source never sees the challenge).
//
// Unlike netcode.io's, the server keeps nothing per challenge: the token carries everything the server
// needs to finish the handshake (the client's id, keys, user data, timeout, the token's MAC and expiry,
// the connection's session salt, when it was issued), sealed with ChaCha20-Poly1305 (IETF) under a key
// only the server knows, with the client's address in the associated data. A flood of requests therefore
// costs the server no memory per challenge, and a challenge echoed from another address does not open.
//
// The key is random, drawn at start and replaced every `rotation` (the previous one still opens tokens
// issued under it, so a challenge in flight survives a rotation). The nonce is a 64-bit sequence that
// counts every challenge issued by this server (never reset, so never reused under either key); a token's
// sequence tells which key sealed it.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

#include "address.hpp"
#include "connect_token.hpp"
#include "key.hpp"
#include "packet_crypto.hpp"
#include "protocol.hpp"
#include "session_keys.hpp"

namespace ecsnet::transport {

using sealed_challenge = std::array<std::uint8_t, challenge_token_bytes>;
/// What a challenge token holds (380 bytes in clear; 396 sealed).
struct challenge_contents {
    std::uint64_t client_id{};
    std::uint64_t token_expire_timestamp{}; // unix seconds
    std::uint32_t timeout_seconds{};
    std::uint64_t issued_ms{}; // the server's monotonic clock, milliseconds
    token_mac mac{};           // the connect token's private MAC (its identity in the used-token table)
    session_salt salt{};
    key client_to_server_key{};
    key server_to_client_key{};
    transport::user_data user_data{};
    /// Not sealed: the cipher the client chose in its response (handshake_handler::check_response).
    packet_cipher cipher{packet_cipher::chacha20_poly1305};
};

/// Seals `contents` for `client` under `k` with nonce `sequence`.
[[nodiscard]] sealed_challenge seal_challenge(const challenge_contents& contents, std::uint64_t sequence,
                                              const net_address& client, std::uint64_t protocol_id,
                                              const key& k);

/// Opens a challenge token; nullopt when it was not sealed by `k` for `client` under `sequence`.
[[nodiscard]] std::optional<challenge_contents> open_challenge(std::span<const std::uint8_t> sealed,
                                                               std::uint64_t sequence,
                                                               const net_address& client,
                                                               std::uint64_t protocol_id, const key& k);

/// The server's challenge keys: the current one, the one before, and the sequence counter.
class challenge_keys {
public:
    using clock = std::chrono::steady_clock;

    challenge_keys(std::chrono::milliseconds rotation, clock::time_point now);

    /// Replaces the key when `rotation` has passed since the last replacement.
    void rotate_if_due(clock::time_point now);

    struct issued {
        std::uint64_t sequence;
        sealed_challenge token;
    };
    [[nodiscard]] issued seal(const challenge_contents& contents, const net_address& client,
                              std::uint64_t protocol_id);
    [[nodiscard]] std::optional<challenge_contents> open(std::span<const std::uint8_t> sealed,
                                                         std::uint64_t sequence, const net_address& client,
                                                         std::uint64_t protocol_id) const;

private:
    std::chrono::milliseconds rotation_;
    clock::time_point rotated_at_;
    key current_{};
    key previous_{};
    bool has_previous_{false};
    std::uint64_t next_sequence_{0};
    std::uint64_t current_first_sequence_{0}; // sequences below this were sealed by previous_ (or older keys)
    std::uint64_t previous_first_sequence_{0};
};

} // namespace ecsnet::transport
