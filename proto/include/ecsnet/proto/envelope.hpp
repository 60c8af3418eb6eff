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

/// Parses an Envelope that must hold `expected` and be exactly what this codec's deterministic serializer
/// writes: bytes that parse but are not that encoding (a bool of 2, a longer varint, fields out of the
/// serializer's order, a tag a flipped bit made unknown) are corrupt, even if they parse to the same message.
/// `scratch` holds the re-encoding (its memory reused from call to call). `what` names the message in errors
/// ("snapshot").
result<void> decode_canonical_envelope(std::string_view bytes, v1::Envelope::MessageCase expected,
                                       std::string_view what, v1::Envelope& out, std::string& scratch);

/// Serializes an Envelope (deterministically: equal messages give equal bytes).
[[nodiscard]] std::string encode_envelope(const v1::Envelope& envelope);
/// The same into `out` (replacing its contents, reusing its memory).
void serialize_into(const v1::Envelope& envelope, std::string& out);

/// Appends the frame (length prefix + serialized envelope) of `envelope` to `out`.
result<void> append_envelope_frame(std::string& out, const v1::Envelope& envelope);

/// What a snapshot's header says, read without decoding its body (thin clients ack from it).
struct snapshot_header_view {
    std::uint32_t tick{};
    std::int64_t time_offset_us{};
    bool full_state{};
};

/// The header of an Envelope holding a Snapshot or a ViewSnapshot; an error for anything else. A plain
/// ViewSnapshot (the server's form) is read from the wire format; anything else is parsed into `scratch`.
/// Either way the result is what a full parse would give.
result<snapshot_header_view> peek_snapshot_header(std::string_view bytes, v1::Envelope& scratch);
/// The same, always through a full parse into `scratch` (what peek_snapshot_header is tested against).
result<snapshot_header_view> parse_snapshot_header(std::string_view bytes, v1::Envelope& scratch);

/// The name of the set member ("snapshot", "ack"...), or "none".
[[nodiscard]] std::string_view message_name(const v1::Envelope& envelope) noexcept;

} // namespace ecsnet::proto
