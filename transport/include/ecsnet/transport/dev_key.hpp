#pragma once

// Development mode: a private key everyone knows, so that a client can make its own token and join a
// server without a backend. A server started with it (`--insecure-dev`) accepts anyone who can reach it:
// for local development and tests only, never for a public server. udp_server::uses_dev_key() says
// whether a server runs with it, so that its owner can warn at start.
//
// The key is the 32 ASCII bytes "ECSNET-INSECURE-DEVELOPMENT-KEY!" (hex 4543534e45542d494e5345435552452d
// 444556454c4f504d454e542d4b455921), documented in docs/protocol.md so that clients in other languages
// can make dev tokens too.

#include <cstdint>
#include <vector>

#include "address.hpp"
#include "connect_token.hpp"
#include "key.hpp"

namespace ecsnet::transport {

inline constexpr key dev_private_key{'E', 'C', 'S', 'N', 'E', 'T', '-', 'I', 'N', 'S', 'E',
                                     'C', 'U', 'R', 'E', '-', 'D', 'E', 'V', 'E', 'L', 'O',
                                     'P', 'M', 'E', 'N', 'T', '-', 'K', 'E', 'Y', '!'};

/// Whether `k` is the development key (constant time, like every key comparison here).
[[nodiscard]] bool is_dev_key(const key& k) noexcept;

/// What a client decides for its own development token.
struct dev_token_params {
    std::uint64_t protocol_id{};
    std::vector<net_address> server_addresses; // the server(s) to join
    std::uint64_t client_id{};                 // 0: a random id
    std::uint32_t expire_seconds{60};
    std::uint32_t timeout_seconds{10};
    transport::user_data user_data{};
};

/// A token issued with the development key.
[[nodiscard]] outcome<connect_token, token_error> make_dev_token(const dev_token_params& params);

} // namespace ecsnet::transport
