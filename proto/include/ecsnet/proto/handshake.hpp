#pragma once

// Building and checking the handshake messages (docs/protocol.md, "Handshake"). The transport sends them;
// the codec decides. A server receiving a ClientHello calls check_client_hello: on an error it answers
// make_disconnect(reason_for(error), error.message) and closes; otherwise it answers make_server_welcome.
// A client receiving the welcome calls check_server_welcome before applying snapshots.
//
// Schema mismatches name what differs where they can: a component missing on one side, declared in another
// order, or a field with another encoding, width, range or prediction ("component 'Transform' differs:
// field 'yaw' is angle/12 bits on the server, angle/10 bits on the client").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ecsnet/v1/envelope.pb.h"
#include "result.hpp"
#include "schema.hpp"
#include "state.hpp"

namespace ecsnet::proto {

/// The most bytes of a client name kept (cut at a UTF-8 character boundary).
inline constexpr std::size_t max_client_name = 64;

[[nodiscard]] v1::Envelope make_client_hello(const schema_layout& layout, std::string_view connect_token,
                                             std::string_view client_name);

struct welcome_info {
    std::uint32_t client_id{};
    std::uint32_t tick_rate{30};
    tick_type current_tick{};
    std::optional<net_entity> own_entity;
    std::uint64_t server_epoch_unix_us{};
    std::uint32_t history_ticks{32};
};

[[nodiscard]] v1::Envelope make_server_welcome(const schema_layout& layout, const welcome_info& info);

/// `retry_after_seconds`: when the client may try to reconnect (a draining server's SHUTDOWN); 0: no hint.
[[nodiscard]] v1::Envelope make_disconnect(v1::DisconnectReason reason, std::string_view message,
                                           std::uint32_t retry_after_seconds = 0);

/// Server side: accepts a ClientHello whose protocol version and schema match, or says why not
/// (errc::version_mismatch, errc::schema_mismatch).
result<void> check_client_hello(const v1::ClientHello& hello, const schema_layout& server);

/// Client side: accepts a ServerWelcome whose protocol version and schema match the client's.
result<void> check_server_welcome(const v1::ServerWelcome& welcome, const schema_layout& client);

/// The first difference between two layouts, in words ("" when they are equal). `ours` and `theirs` name
/// the sides in the message ("server", "client").
[[nodiscard]] std::string describe_difference(const schema_layout& ours, const schema_layout& theirs,
                                              std::string_view ours_name, std::string_view theirs_name);

/// The Disconnect reason for a handshake or decoding error.
[[nodiscard]] v1::DisconnectReason reason_for(const error& e) noexcept;

/// The client name of a hello, cut to max_client_name bytes at a character boundary.
[[nodiscard]] std::string_view client_name(const v1::ClientHello& hello) noexcept;

} // namespace ecsnet::proto
