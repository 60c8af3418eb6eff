#pragma once

// Connect tokens on the TCP transport (the UDP transport checks its own, transport/handshake_handler.hpp):
// the ClientHello of a server that is not in development mode must carry a token the studio's backend
// issued (docs/protocol.md, section 10) for this server's protocol, naming one of its addresses, not
// expired, and not used before. TCP gives no encryption: the token authenticates the client, it does not
// hide the session. A bounded table remembers used tokens until they expire.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ecsnet/transport/address.hpp>
#include <ecsnet/transport/connect_token.hpp>
#include <ecsnet/transport/key.hpp>

namespace ecsnet::server {

class token_checker {
public:
    token_checker(transport::key key, std::uint64_t protocol_id,
                  std::vector<transport::net_address> addresses, std::size_t max_used = 16384);

    /// The token's client id, or why it is refused. `now_unix`: seconds.
    [[nodiscard]] std::optional<std::string> check(std::string_view token, std::uint64_t now_unix,
                                                   std::uint64_t* client_id = nullptr);

private:
    transport::key key_;
    std::uint64_t protocol_id_;
    std::vector<transport::net_address> addresses_;
    std::size_t max_used_;
    std::map<std::string, std::uint64_t> used_; // MAC -> expiry (unix seconds)
};

} // namespace ecsnet::server
