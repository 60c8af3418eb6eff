#pragma once

// Where a client's connection stands (docs/protocol.md, section 10.9), and why it is not connected.

#include <cstdint>
#include <string_view>

namespace ecsnet::transport {

enum class client_state : std::uint8_t {
    disconnected,     // before connect(), or after the connection ended: client_error says why
    sending_request,  // connection requests to the current server address, until a challenge
    sending_response, // responses, until the first keep-alive or payload
    connected,
};

enum class client_error : std::uint8_t {
    none = 0,                // never connected, or ended by the application's disconnect()
    token_invalid,           // the token does not read (malformed)
    token_expired,           // expired before the first request, or while still connecting
    request_timed_out,       // no challenge nor denial from any of the token's servers
    response_timed_out,      // a challenge, then no keep-alive in answer to the responses
    denied_server_full,      // the (last) server had no free slot
    denied_client_id_in_use, // the (last) server already has a connection with this client id
    timed_out,               // connected, then nothing from the server for the token's timeout
    disconnected_by_server,  // the server's disconnect: its code and message in disconnect_info
    stalled,                 // reliable data unacknowledged for the timeout
    protocol_error,          // the server kept sending link bodies the link refused as malformed
};

[[nodiscard]] std::string_view to_string(client_state state) noexcept;
[[nodiscard]] std::string_view to_string(client_error error) noexcept;

} // namespace ecsnet::transport
