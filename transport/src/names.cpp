// The stable names of the transport's enums (metric labels, log fields, test messages).

#include "ecsnet/transport/client_state.hpp"
#include "ecsnet/transport/drop_reason.hpp"
#include "ecsnet/transport/protocol.hpp"

namespace ecsnet::transport {

std::string_view to_string(drop_reason reason) noexcept {
    switch (reason) {
    case drop_reason::malformed:
        return "malformed";
    case drop_reason::bad_prefix:
        return "bad_prefix";
    case drop_reason::wrong_version:
        return "wrong_version";
    case drop_reason::wrong_protocol:
        return "wrong_protocol";
    case drop_reason::token_invalid:
        return "token_invalid";
    case drop_reason::token_expired:
        return "token_expired";
    case drop_reason::token_wrong_address:
        return "token_wrong_address";
    case drop_reason::token_reused:
        return "token_reused";
    case drop_reason::challenge_invalid:
        return "challenge_invalid";
    case drop_reason::replayed:
        return "replayed";
    case drop_reason::decrypt_failed:
        return "decrypt_failed";
    case drop_reason::rate_limited:
        return "rate_limited";
    case drop_reason::unknown_source:
        return "unknown_source";
    case drop_reason::server_full:
        return "server_full";
    case drop_reason::already_connected:
        return "already_connected";
    case drop_reason::unexpected:
        return "unexpected";
    case drop_reason::link_refused:
        return "link_refused";
    case drop_reason::count_:
        break;
    }
    return "unknown";
}

std::string_view to_string(packet_type type) noexcept {
    switch (type) {
    case packet_type::connection_request:
        return "connection_request";
    case packet_type::connection_denied:
        return "connection_denied";
    case packet_type::challenge:
        return "challenge";
    case packet_type::response:
        return "response";
    case packet_type::keep_alive:
        return "keep_alive";
    case packet_type::payload:
        return "payload";
    case packet_type::disconnect:
        return "disconnect";
    }
    return "unknown";
}

std::string_view to_string(client_state state) noexcept {
    switch (state) {
    case client_state::disconnected:
        return "disconnected";
    case client_state::sending_request:
        return "sending_request";
    case client_state::sending_response:
        return "sending_response";
    case client_state::connected:
        return "connected";
    }
    return "unknown";
}

std::string_view to_string(client_error error) noexcept {
    switch (error) {
    case client_error::none:
        return "none";
    case client_error::token_invalid:
        return "token_invalid";
    case client_error::token_expired:
        return "token_expired";
    case client_error::request_timed_out:
        return "request_timed_out";
    case client_error::response_timed_out:
        return "response_timed_out";
    case client_error::denied_server_full:
        return "denied_server_full";
    case client_error::denied_client_id_in_use:
        return "denied_client_id_in_use";
    case client_error::timed_out:
        return "timed_out";
    case client_error::disconnected_by_server:
        return "disconnected_by_server";
    case client_error::stalled:
        return "stalled";
    case client_error::protocol_error:
        return "protocol_error";
    }
    return "unknown";
}

} // namespace ecsnet::transport
