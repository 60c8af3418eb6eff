#pragma once

// Where a client's connection stands, and why it ended.
//
// A disconnect reason is either the one the server sent in its Disconnect message (the first thirteen values,
// numbered like v1::DisconnectReason) or one the client decided locally: the same values where the meaning
// is the same (a malformed frame from the server is protocol_error, a welcome with another schema is
// schema_mismatch, no welcome in time is handshake_timeout, a silent server is timeout, close() is
// client_quit), and two of its own for transport failures (connect_failed, connection_lost).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ecsnet/v1/handshake.pb.h"

namespace ecsnet::client {

enum class client_state : std::uint8_t {
    idle,         // never connected
    connecting,   // resolving the host and opening the TCP connection
    handshaking,  // ClientHello sent, waiting for ServerWelcome
    connected,    // welcomed: snapshots flow
    disconnected, // ended; disconnect_reason() says why; connect() may be called again
};

/// The highest reason value shared with v1::DisconnectReason.
inline constexpr int last_wire_reason = 12;

enum class disconnect_reason : std::uint8_t {
    none = 0,
    // Sent by the server (v1::DisconnectReason values), or decided locally with the same meaning.
    shutdown = 1,
    protocol_error = 2,
    schema_mismatch = 3,
    version_mismatch = 4,
    handshake_timeout = 5,
    timeout = 6,
    server_full = 7,
    slow_consumer = 8,
    kicked = 9,
    client_quit = 10,
    authentication_failed = 11,
    budget_too_small = 12,
    // Local only.
    connect_failed = 100,  // the host did not resolve, or refused or did not answer the connection
    connection_lost = 101, // the connection closed or failed without a Disconnect from the server
};

/// A short stable name: "shutdown", "schema_mismatch", "connect_failed"...
[[nodiscard]] std::string_view to_string(disconnect_reason reason) noexcept;
[[nodiscard]] std::string_view to_string(client_state state) noexcept;

/// The client's reason for a server's wire reason (DISCONNECT_REASON_UNSPECIFIED and unknown values give
/// connection_lost: the server ended the session without saying why).
[[nodiscard]] disconnect_reason from_wire(v1::DisconnectReason reason) noexcept;

struct disconnect_info {
    disconnect_reason reason{disconnect_reason::none};
    /// True when the reason came in the server's Disconnect message, false when the client decided it.
    bool from_server{false};
    /// The server's message, or the local error's description.
    std::string message;
    /// When the server said the client may try to reconnect (a draining server's SHUTDOWN: it restarts,
    /// its world restored, in about this long); nothing when it gave no hint.
    std::optional<std::chrono::seconds> retry_after;
};

} // namespace ecsnet::client
