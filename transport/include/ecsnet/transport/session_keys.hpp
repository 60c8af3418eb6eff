#pragma once

// A connection's packet keys (docs/protocol.md, section 10.7). A token's two keys are used as they are
// only for the handshake; once connected, each direction uses a key derived from the token's key and a
// random salt the server draws for the connection:
//
//   session key = BLAKE2b-256(key = token key, message = label (16 bytes) || salt (16 bytes))
//   labels: "ecsnet c2s key 1" for client to server, "ecsnet s2c key 1" for server to client
//
// Both sides count sequences from 0 under the session keys, so a token that ends up connecting twice
// (to two of the servers it lists, or to one that forgot it) never reuses a (key, nonce) pair.

#include <array>
#include <cstdint>
#include <span>

#include "key.hpp"
#include "protocol.hpp"

namespace ecsnet::transport {

using session_salt = std::array<std::uint8_t, session_salt_bytes>;

struct session_keys {
    key client_to_server{};
    key server_to_client{};
};

[[nodiscard]] session_keys derive_session_keys(const key& token_client_to_server,
                                               const key& token_server_to_client,
                                               const session_salt& salt) noexcept;

} // namespace ecsnet::transport
