#include "ecsnet/proto/envelope.hpp"

#include <limits>
#include <optional>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include "ecsnet/proto/framing.hpp"

namespace ecsnet::proto {

std::string_view to_string(errc code) noexcept {
    switch (code) {
    case errc::frame_too_large:
        return "frame_too_large";
    case errc::bad_length_prefix:
        return "bad_length_prefix";
    case errc::malformed_message:
        return "malformed_message";
    case errc::empty_envelope:
        return "empty_envelope";
    case errc::unexpected_message:
        return "unexpected_message";
    case errc::version_mismatch:
        return "version_mismatch";
    case errc::schema_mismatch:
        return "schema_mismatch";
    case errc::stale_snapshot:
        return "stale_snapshot";
    case errc::unknown_baseline:
        return "unknown_baseline";
    case errc::bad_header:
        return "bad_header";
    case errc::header_check_failed:
        return "header_check_failed";
    case errc::malformed_columns:
        return "malformed_columns";
    case errc::inconsistent_delta:
        return "inconsistent_delta";
    case errc::checksum_mismatch:
        return "checksum_mismatch";
    case errc::limit_exceeded:
        return "limit_exceeded";
    }
    return "unknown";
}

result<void> decode_envelope(std::string_view bytes, v1::Envelope& out) {
    out.Clear();
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        return make_error(errc::frame_too_large, "envelope of " + std::to_string(bytes.size()) + " bytes");
    }
    if (!out.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        out.Clear();
        return make_error(errc::malformed_message,
                          "malformed envelope (" + std::to_string(bytes.size()) + " bytes)");
    }
    if (out.message_case() == v1::Envelope::MESSAGE_NOT_SET) {
        out.Clear();
        return make_error(errc::empty_envelope, "envelope without a message");
    }
    return {};
}

result<v1::Envelope> decode_envelope(std::string_view bytes) {
    v1::Envelope envelope;
    if (auto status = decode_envelope(bytes, envelope); !status) {
        return status.error_value();
    }
    return envelope;
}

result<void> decode_canonical_envelope(std::string_view bytes, v1::Envelope::MessageCase expected,
                                       std::string_view what, v1::Envelope& out, std::string& scratch) {
    if (auto decoded = decode_envelope(bytes, out); !decoded) {
        return decoded;
    }
    if (out.message_case() != expected) {
        return make_error(errc::unexpected_message,
                          "expected a " + std::string{what} + ", got " + std::string{message_name(out)});
    }
    // Sizes first: most corrupt bytes differ in length, and then nothing is serialized.
    if (out.ByteSizeLong() != bytes.size()) {
        return make_error(errc::malformed_message, std::string{what} + " envelope not in canonical form");
    }
    serialize_into(out, scratch);
    if (scratch != bytes) {
        return make_error(errc::malformed_message, std::string{what} + " envelope not in canonical form");
    }
    return {};
}

std::string encode_envelope(const v1::Envelope& envelope) {
    std::string out;
    serialize_into(envelope, out);
    return out;
}

void serialize_into(const v1::Envelope& envelope, std::string& out) {
    // Sized once, written in place (a StringOutputStream would grow and zero-fill the string as it goes).
    const auto size = envelope.ByteSizeLong();
    out.resize(size);
    google::protobuf::io::ArrayOutputStream stream{out.data(), static_cast<int>(size)};
    google::protobuf::io::CodedOutputStream coded{&stream};
    coded.SetSerializationDeterministic(true);
    envelope.SerializeWithCachedSizes(&coded);
}

result<void> append_envelope_frame(std::string& out, const v1::Envelope& envelope) {
    return append_frame(out, encode_envelope(envelope));
}

namespace {

// A varint of at most `most` bytes. Longer ones are left to the parser: where a varint runs long,
// CodedInputStream and the parser disagree (a 10-byte tag is read by the one and refused by the other).
bool read_short_varint(google::protobuf::io::CodedInputStream& in, int most, std::uint64_t& value) {
    const int before = in.CurrentPosition();
    return in.ReadVarint64(&value) && in.CurrentPosition() - before <= most;
}

// The header of an Envelope whose only field is a ViewSnapshot, read from the wire format: what a thin
// client does with every snapshot, where parsing the message (its oneof cleared, a ViewSnapshot and a body
// string allocated) was most of the work (bench/RESULTS.md, twenty-fourth pass). nullopt for anything but
// that plain form (groups, long varints, trailing fields...), which the caller then parses: nothing
// protobuf would refuse is read here, and what is read here protobuf reads alike (the last of repeated
// scalars wins, a known field with another wire type is an unknown field). envelope_fuzz checks it.
std::optional<snapshot_header_view> read_plain_view_header(std::string_view bytes) {
    using google::protobuf::internal::WireFormatLite;
    constexpr std::uint8_t view_snapshot_tag = WireFormatLite::MakeTag(
        v1::Envelope::kViewSnapshotFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    constexpr int most_tag_bytes = 4;    // field numbers up to 2^25
    constexpr int most_length_bytes = 4; // lengths up to 2^28
    constexpr int most_value_bytes = 9;  // values up to 2^63
    if (bytes.empty() || bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
        static_cast<std::uint8_t>(bytes.front()) != view_snapshot_tag) {
        return std::nullopt;
    }
    google::protobuf::io::CodedInputStream in{reinterpret_cast<const std::uint8_t*>(bytes.data()) + 1,
                                              static_cast<int>(bytes.size() - 1)};
    const auto end = static_cast<int>(bytes.size() - 1);
    std::uint64_t length = 0;
    if (!read_short_varint(in, most_length_bytes, length) ||
        static_cast<std::uint64_t>(in.CurrentPosition()) + length != static_cast<std::uint64_t>(end)) {
        return std::nullopt; // not one ViewSnapshot spanning the envelope
    }
    snapshot_header_view header;
    while (in.CurrentPosition() < end) {
        std::uint64_t tag = 0;
        std::uint64_t value = 0;
        if (!read_short_varint(in, most_tag_bytes, tag) || (tag >> 3) == 0) {
            return std::nullopt;
        }
        const auto field = static_cast<int>(tag >> 3);
        switch (static_cast<WireFormatLite::WireType>(tag & 7)) {
        case WireFormatLite::WIRETYPE_VARINT:
            if (!read_short_varint(in, most_value_bytes, value)) {
                return std::nullopt;
            }
            if (field == v1::ViewSnapshot::kTickFieldNumber) {
                header.tick = static_cast<std::uint32_t>(value);
            } else if (field == v1::ViewSnapshot::kFullStateFieldNumber) {
                header.full_state = value != 0;
            } else if (field == v1::ViewSnapshot::kTimeOffsetUsFieldNumber) {
                header.time_offset_us = WireFormatLite::ZigZagDecode64(value);
            }
            break;
        case WireFormatLite::WIRETYPE_FIXED64:
            if (!in.Skip(8)) {
                return std::nullopt;
            }
            break;
        case WireFormatLite::WIRETYPE_FIXED32:
            if (!in.Skip(4)) {
                return std::nullopt;
            }
            break;
        case WireFormatLite::WIRETYPE_LENGTH_DELIMITED:
            if (!read_short_varint(in, most_length_bytes, value) || !in.Skip(static_cast<int>(value))) {
                return std::nullopt;
            }
            break;
        default: // groups, and wire types that do not exist
            return std::nullopt;
        }
    }
    return header;
}

} // namespace

result<snapshot_header_view> peek_snapshot_header(std::string_view bytes, v1::Envelope& scratch) {
    if (const auto header = read_plain_view_header(bytes)) {
        return *header;
    }
    return parse_snapshot_header(bytes, scratch);
}

result<snapshot_header_view> parse_snapshot_header(std::string_view bytes, v1::Envelope& scratch) {
    if (auto decoded = decode_envelope(bytes, scratch); !decoded) {
        return decoded.error_value();
    }
    if (scratch.has_snapshot()) {
        const auto& s = scratch.snapshot();
        return snapshot_header_view{s.tick(), s.time_offset_us(), s.full_state()};
    }
    if (scratch.has_view_snapshot()) {
        const auto& s = scratch.view_snapshot();
        return snapshot_header_view{s.tick(), s.time_offset_us(), s.full_state()};
    }
    return make_error(errc::unexpected_message,
                      "expected a snapshot, got " + std::string{message_name(scratch)});
}

std::string_view message_name(const v1::Envelope& envelope) noexcept {
    switch (envelope.message_case()) {
    case v1::Envelope::kSnapshot:
        return "snapshot";
    case v1::Envelope::kAck:
        return "ack";
    case v1::Envelope::kInput:
        return "input";
    case v1::Envelope::kClientHello:
        return "client_hello";
    case v1::Envelope::kServerWelcome:
        return "server_welcome";
    case v1::Envelope::kDisconnect:
        return "disconnect";
    case v1::Envelope::kPing:
        return "ping";
    case v1::Envelope::kPong:
        return "pong";
    case v1::Envelope::kViewSnapshot:
        return "view_snapshot";
    case v1::Envelope::kInputStatus:
        return "input_status";
    case v1::Envelope::MESSAGE_NOT_SET:
        break;
    }
    return "none";
}

} // namespace ecsnet::proto
