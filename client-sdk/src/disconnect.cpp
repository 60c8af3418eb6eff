#include "ecsnet/client/disconnect.hpp"

namespace ecsnet::client {

std::string_view to_string(disconnect_reason reason) noexcept {
    switch (reason) {
    case disconnect_reason::none:
        return "none";
    case disconnect_reason::shutdown:
        return "shutdown";
    case disconnect_reason::protocol_error:
        return "protocol_error";
    case disconnect_reason::schema_mismatch:
        return "schema_mismatch";
    case disconnect_reason::version_mismatch:
        return "version_mismatch";
    case disconnect_reason::handshake_timeout:
        return "handshake_timeout";
    case disconnect_reason::timeout:
        return "timeout";
    case disconnect_reason::server_full:
        return "server_full";
    case disconnect_reason::slow_consumer:
        return "slow_consumer";
    case disconnect_reason::kicked:
        return "kicked";
    case disconnect_reason::client_quit:
        return "client_quit";
    case disconnect_reason::authentication_failed:
        return "authentication_failed";
    case disconnect_reason::budget_too_small:
        return "budget_too_small";
    case disconnect_reason::connect_failed:
        return "connect_failed";
    case disconnect_reason::connection_lost:
        return "connection_lost";
    }
    return "unknown";
}

std::string_view to_string(client_state state) noexcept {
    switch (state) {
    case client_state::idle:
        return "idle";
    case client_state::connecting:
        return "connecting";
    case client_state::handshaking:
        return "handshaking";
    case client_state::connected:
        return "connected";
    case client_state::disconnected:
        return "disconnected";
    }
    return "unknown";
}

disconnect_reason from_wire(v1::DisconnectReason reason) noexcept {
    const auto value = static_cast<int>(reason);
    if (value >= 1 && value <= last_wire_reason) { // the values both enums share
        return static_cast<disconnect_reason>(value);
    }
    return disconnect_reason::connection_lost;
}

} // namespace ecsnet::client
