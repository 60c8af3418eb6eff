#pragma once

// The reason code a disconnect packet carries (one byte) and the owner sees. The owner may send any value;
// the transport uses these itself, numbered like the replication protocol's DisconnectReason
// (proto/ecsnet/v1/handshake.proto) so that a server can pass them through unchanged.

#include <cstdint>

namespace ecsnet::transport::disconnect_code {

inline constexpr std::uint8_t unspecified = 0;
inline constexpr std::uint8_t shutdown = 1;       // the server is stopping
inline constexpr std::uint8_t protocol_error = 2; // the peer kept sending bodies the link refused
inline constexpr std::uint8_t timeout = 6;        // nothing received for the connection's timeout
inline constexpr std::uint8_t server_full = 7;
inline constexpr std::uint8_t slow_consumer = 8; // reliable data unacknowledged for the connection's timeout
inline constexpr std::uint8_t kicked = 9;
inline constexpr std::uint8_t client_quit = 10; // udp_client::disconnect's default

} // namespace ecsnet::transport::disconnect_code
