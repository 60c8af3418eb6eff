#pragma once

// Envelopes: the one protobuf message of a frame (proto/ecsnet/v1/envelope.proto). Decoding checks that
// the bytes parse and that exactly one member of the oneof is set; it never throws on bad bytes.

#include <cstddef>
#include <string>
#include <string_view>

#include "ecsnet/v1/envelope.pb.h"
#include "result.hpp"

namespace ecsnet::proto {

/// The protocol version this build speaks (ClientHello / ServerWelcome.protocol_version).
inline constexpr std::uint32_t protocol_version = 1;

/// Parses one Envelope from a frame's payload.
result<v1::Envelope> decode_envelope(std::string_view bytes);

/// Parses into an existing Envelope (reusing its memory); on failure `out` is left cleared.
result<void> decode_envelope(std::string_view bytes, v1::Envelope& out);

/// Serializes an Envelope (deterministically: equal messages give equal bytes).
[[nodiscard]] std::string encode_envelope(const v1::Envelope& envelope);
/// The same into `out` (replacing its contents, reusing its memory).
void serialize_into(const v1::Envelope& envelope, std::string& out);

/// Appends the frame (length prefix + serialized envelope) of `envelope` to `out`.
result<void> append_envelope_frame(std::string& out, const v1::Envelope& envelope);

/// The name of the set member ("snapshot", "ack"...), or "none".
[[nodiscard]] std::string_view message_name(const v1::Envelope& envelope) noexcept;

} // namespace ecsnet::proto
