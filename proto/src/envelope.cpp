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

// The header of an Envelope whose only field is a ViewSnapshot, read from the wire format: what a thin
// client does with every snapshot, where parsing the message (its oneof cleared, a ViewSnapshot and a body
// string allocated) was most of the work (bench/RESULTS.md). nullopt for anything else, groups included,
// and the caller then parses: whatever protobuf would refuse is never read here, and what is read here
// protobuf would read alike (the last of repeated scalars wins, a known field with another wire type is an
// unknown field).
std::optional<snapshot_header_view> read_plain_view_header(std::string_view bytes) {
    using google::protobuf::internal::WireFormatLite;
    constexpr auto length_delimited = WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    constexpr auto varint = WireFormatLite::WIRETYPE_VARINT;
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        return std::nullopt;
    }
    google::protobuf::io::CodedInputStream in{reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                              static_cast<int>(bytes.size())};
    std::uint32_t length = 0;
    if (in.ReadTag() != WireFormatLite::MakeTag(v1::Envelope::kViewSnapshotFieldNumber, length_delimited) ||
        !in.ReadVarint32(&length) ||
        static_cast<std::size_t>(in.CurrentPosition()) + length != bytes.size()) {
        return std::nullopt; // not one ViewSnapshot spanning the envelope
    }
    snapshot_header_view header;
    while (static_cast<std::size_t>(in.CurrentPosition()) < bytes.size()) {
        const auto tag = in.ReadTag();
        std::uint64_t value = 0;
        switch (tag) {
        case WireFormatLite::MakeTag(v1::ViewSnapshot::kTickFieldNumber, varint): {
            std::uint32_t tick = 0;
            if (!in.ReadVarint32(&tick)) {
                return std::nullopt;
            }
            header.tick = tick;
            break;
        }
        case WireFormatLite::MakeTag(v1::ViewSnapshot::kFullStateFieldNumber, varint):
            if (!in.ReadVarint64(&value)) {
                return std::nullopt;
            }
            header.full_state = value != 0;
            break;
        case WireFormatLite::MakeTag(v1::ViewSnapshot::kTimeOffsetUsFieldNumber, varint):
            if (!in.ReadVarint64(&value)) {
                return std::nullopt;
            }
            header.time_offset_us = WireFormatLite::ZigZagDecode64(value);
            break;
        default: {
            const auto type = WireFormatLite::GetTagWireType(tag);
            if (tag == 0 || type == WireFormatLite::WIRETYPE_START_GROUP ||
                type == WireFormatLite::WIRETYPE_END_GROUP || !WireFormatLite::SkipField(&in, tag)) {
                return std::nullopt;
            }
            break;
        }
        }
    }
    return header;
}

} // namespace

result<snapshot_header_view> peek_snapshot_header(std::string_view bytes, v1::Envelope& scratch) {
    if (const auto header = read_plain_view_header(bytes)) {
        return *header;
    }
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
