// Envelopes: every message kind survives encode -> frame -> decode; bytes that are not an envelope, an
// envelope without a message, and random bytes give error values.

#include <array>

#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/framing.hpp"

namespace ecsnet::proto::envelope_test {
namespace {

std::vector<v1::Envelope> one_of_each() {
    std::vector<v1::Envelope> out(8);
    out[0].mutable_snapshot()->set_tick(10);
    out[0].mutable_snapshot()->set_columns("abc");
    out[0].mutable_snapshot()->set_check(5);
    out[1].mutable_ack()->set_tick(9);
    out[1].mutable_ack()->set_full_state_requested(true);
    out[2].mutable_input()->set_client_tick(11);
    out[2].mutable_input()->set_sequence(3);
    out[2].mutable_input()->set_payload(std::string("\0\1\2", 3));
    out[3].mutable_client_hello()->set_client_name("bob");
    out[4].mutable_server_welcome()->set_client_id(2);
    out[5].mutable_disconnect()->set_reason(v1::KICKED);
    out[6].mutable_ping()->set_sent_us(123);
    out[7].mutable_pong()->set_ping_sent_us(123);
    out[7].mutable_pong()->set_responder_time_us(456);
    return out;
}

TEST(Envelope, EveryMessageRoundTripsThroughFrames) {
    const auto messages = one_of_each();
    std::string stream;
    for (const auto& m : messages) {
        ASSERT_TRUE(append_envelope_frame(stream, m));
    }
    frame_decoder decoder;
    std::vector<v1::Envelope> got;
    ASSERT_TRUE(decoder.feed(stream, [&](std::string_view frame) {
        auto decoded = decode_envelope(frame);
        ASSERT_TRUE(decoded) << decoded.message();
        got.push_back(std::move(*decoded));
    }));
    ASSERT_EQ(got.size(), messages.size());
    const char* names[] = {"snapshot",       "ack",        "input", "client_hello",
                           "server_welcome", "disconnect", "ping",  "pong"};
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(encode_envelope(got[i]), encode_envelope(messages[i]));
        EXPECT_EQ(message_name(got[i]), names[i]);
    }
}

// What a mirror accepts: the kind it expects, in exactly the bytes the serializer writes. A bool written as
// 2 parses to the same message in the same length, so the bytes are compared, not only the sizes.
TEST(Envelope, ACanonicalDecodeRefusesOtherKindsAndOtherEncodingsOfTheSameMessage) {
    v1::Envelope envelope;
    envelope.mutable_snapshot()->set_tick(10);
    envelope.mutable_snapshot()->set_full_state(true);
    envelope.mutable_snapshot()->set_columns("abc");
    const auto bytes = encode_envelope(envelope);
    v1::Envelope out;
    std::string scratch;
    ASSERT_TRUE(decode_canonical_envelope(bytes, v1::Envelope::kSnapshot, "snapshot", out, scratch));
    EXPECT_EQ(encode_envelope(out), bytes);

    const auto other_kind =
        decode_canonical_envelope(bytes, v1::Envelope::kViewSnapshot, "view snapshot", out, scratch);
    EXPECT_EQ(other_kind.code(), errc::unexpected_message);
    EXPECT_EQ(other_kind.message(), "expected a view snapshot, got snapshot");

    const auto refused_as_not_canonical = [&](const std::string& changed) {
        ASSERT_TRUE(decode_envelope(changed, out)) << "the changed bytes still parse";
        const auto r = decode_canonical_envelope(changed, v1::Envelope::kSnapshot, "snapshot", out, scratch);
        EXPECT_EQ(r.code(), errc::malformed_message);
        EXPECT_EQ(r.message(), "snapshot envelope not in canonical form");
    };
    auto two = bytes;
    const auto flag = two.find(std::string_view{"\x10\x01", 2}); // field 2 (full_state), varint 1
    ASSERT_NE(flag, std::string::npos);
    two[flag + 1] = '\x02';
    refused_as_not_canonical(two);
    // An unknown field (a tag a flipped bit made unknown) where the serializer would not write it: unknown
    // fields go last.
    refused_as_not_canonical(std::string{"\x78\x01", 2} + bytes);
}

TEST(Envelope, BadBytesAreErrors) {
    EXPECT_EQ(decode_envelope("").code(), errc::empty_envelope);
    EXPECT_EQ(decode_envelope(std::string_view{"\x0a\x05\x08", 3}).code(), errc::malformed_message);
    EXPECT_EQ(decode_envelope("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff").code(),
              errc::malformed_message);
    // A field the envelope does not know, and nothing else: no message.
    EXPECT_EQ(decode_envelope(std::string_view{"\x78\x01", 2}).code(), errc::empty_envelope);
    EXPECT_EQ(message_name(v1::Envelope{}), "none");
}

TEST(Envelope, RandomBytesNeverCrash) {
    arena::scene_random rng{8};
    const auto valid = encode_envelope(one_of_each()[2]);
    std::size_t decoded = 0;
    for (int n = 0; n < 20000; ++n) {
        std::string bytes = n % 2 == 0 ? valid : std::string(rng.below(40), '\0');
        for (auto& ch : bytes) {
            if (n % 2 == 1 || rng.chance(0.1)) {
                ch = static_cast<char>(rng.below(256));
            }
        }
        auto r = decode_envelope(bytes);
        decoded += r ? 1 : 0;
        if (!r) {
            EXPECT_TRUE(r.code() == errc::malformed_message || r.code() == errc::empty_envelope);
        }
    }
    EXPECT_GT(decoded, 0U);
}

// ---- peek_snapshot_header against a full parse ----------------------------------------------------------

void put_varint(std::string& out, std::uint64_t v) {
    std::array<std::uint8_t, 10> bytes{};
    const auto* end = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(v, bytes.data());
    out.append(reinterpret_cast<const char*>(bytes.data()), static_cast<std::size_t>(end - bytes.data()));
}

void put_tag(std::string& out, std::uint32_t field, std::uint32_t wire_type) {
    put_varint(out, (std::uint64_t{field} << 3) | wire_type);
}

// The same tag in more bytes than it needs (continuation bits over zero groups), up to 10 in all.
void put_long_tag(std::string& out, std::uint32_t field, std::uint32_t wire_type, std::size_t extra) {
    auto v = (std::uint64_t{field} << 3) | wire_type;
    std::size_t written = 0;
    for (; v > 0x7F || written == 0; v >>= 7, ++written) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    }
    for (; extra > 1 && written < 9; --extra, ++written) {
        out.push_back(static_cast<char>(0x80));
    }
    out.push_back(static_cast<char>(v));
}

// A field of any wire type, its number and contents random (a known number with another type included).
void put_random_field(std::string& out, arena::scene_random& rng, std::uint32_t field) {
    const auto type = static_cast<std::uint32_t>(rng.below(20) == 0 ? 3 + rng.below(5) : rng.below(3));
    switch (type) {
    case 0:
        if (rng.chance(0.2)) {
            put_long_tag(out, field, 0, 1 + rng.below(9));
        } else {
            put_tag(out, field, 0);
        }
        put_varint(out, rng.chance(0.3) ? ~std::uint64_t{0} >> rng.below(64) : rng.below(1000));
        break;
    case 1:
    case 5: {
        put_tag(out, field, type);
        for (std::size_t i = 0; i < (type == 1 ? 8U : 4U); ++i) {
            out.push_back(static_cast<char>(rng.below(256)));
        }
        break;
    }
    case 2: {
        put_tag(out, field, 2);
        const auto n = rng.below(12);
        put_varint(out, n);
        for (std::size_t i = 0; i < n; ++i) {
            out.push_back(static_cast<char>(rng.below(256)));
        }
        break;
    }
    case 3: // a group, empty or not closed
        put_tag(out, field, 3);
        if (rng.chance(0.5)) {
            put_tag(out, field, 4);
        }
        break;
    default: // an end-group or an invalid wire type
        put_tag(out, field, type);
        break;
    }
}

// A ViewSnapshot (or a Snapshot, or another message) as the server writes it, then with fields added at
// random (known and unknown ones, repeated, of other wire types), then with bytes changed at random.
std::string random_envelope(arena::scene_random& rng) {
    v1::Envelope envelope;
    const auto form = rng.below(10);
    if (form < 7) {
        auto& v = *envelope.mutable_view_snapshot();
        v.set_tick(static_cast<std::uint32_t>(rng.chance(0.2) ? ~0U - rng.below(10) : rng.below(100000)));
        v.set_full_state(rng.chance(0.3));
        v.set_baseline_gap(static_cast<std::uint32_t>(rng.below(4)));
        v.set_time_offset_us(static_cast<std::int64_t>(rng.below(200000)) - 100000);
        v.set_body(std::string(rng.below(40), 'b'));
        if (rng.chance(0.5)) {
            v.set_checksum(rng.below(1U << 30));
        }
        v.set_check(static_cast<std::uint32_t>(rng.below(65536)));
    } else if (form < 9) {
        auto& s = *envelope.mutable_snapshot();
        s.set_tick(static_cast<std::uint32_t>(rng.below(100000)));
        s.set_time_offset_us(-static_cast<std::int64_t>(rng.below(1000)));
    } else {
        envelope.mutable_ack()->set_tick(7);
    }
    auto bytes = encode_envelope(envelope);
    if (rng.chance(0.5) && form < 7) {
        // Fields added inside the ViewSnapshot (its length rewritten), then maybe at the top level.
        std::string inner = envelope.view_snapshot().SerializeAsString();
        for (auto n = rng.below(4); n > 0; --n) {
            put_random_field(
                inner, rng,
                static_cast<std::uint32_t>(rng.chance(0.5) ? 1 + rng.below(8) : 8 + rng.below(3000)));
        }
        bytes.clear();
        put_tag(bytes, 9, 2);
        put_varint(bytes, inner.size());
        bytes += inner;
        if (rng.chance(0.2)) {
            put_random_field(bytes, rng, static_cast<std::uint32_t>(1 + rng.below(12)));
        }
    }
    if (rng.chance(0.4)) {
        for (auto n = 1 + rng.below(3); n > 0 && !bytes.empty(); --n) {
            const auto at = rng.below(bytes.size());
            switch (rng.below(3)) {
            case 0:
                bytes[at] = static_cast<char>(rng.below(256));
                break;
            case 1:
                bytes.resize(at);
                break;
            default:
                bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                             static_cast<char>(rng.below(256)));
                break;
            }
        }
    }
    return bytes;
}

TEST(Envelope, ASnapshotHeaderIsReadWithoutAParseAsAParseReadsIt) {
    v1::Envelope envelope;
    auto& view = *envelope.mutable_view_snapshot();
    view.set_tick(123456);
    view.set_full_state(true);
    view.set_time_offset_us(-4321);
    view.set_body("body bytes");
    view.set_check(99);
    v1::Envelope scratch;
    const auto header = peek_snapshot_header(encode_envelope(envelope), scratch);
    ASSERT_TRUE(header);
    EXPECT_EQ(header->tick, 123456U);
    EXPECT_TRUE(header->full_state);
    EXPECT_EQ(header->time_offset_us, -4321);
    // Not a snapshot: the parse's verdict.
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(3);
    EXPECT_EQ(peek_snapshot_header(encode_envelope(ack), scratch).code(), errc::unexpected_message);
    EXPECT_EQ(peek_snapshot_header("", scratch).code(), errc::empty_envelope);
    // Found by envelope_fuzz: a tag written in 10 bytes, which CodedInputStream reads and the parser
    // refuses; the peek refuses it too.
    const std::string long_tag{"\x4a\x10\x90\x10\x10\xf0\xbd\xfd\xa6\xcf\xce\xef\xef\x9f\x12\x00\x40\x00",
                               18};
    v1::Envelope parsed;
    ASSERT_FALSE(parse_snapshot_header(long_tag, parsed));
    EXPECT_EQ(peek_snapshot_header(long_tag, scratch).code(), parse_snapshot_header(long_tag, parsed).code());
}

// Differential, against the full parse (parse_snapshot_header): on envelopes as the server writes them,
// with fields added (unknown, repeated, of other wire types, groups) and bytes changed, the header read from
// the wire format is the parse's, and so is every error.
TEST(Envelope, ASnapshotHeaderPeekMatchesAFullParseOnRandomEnvelopes) {
    arena::scene_random rng{31};
    v1::Envelope scratch;
    v1::Envelope parsed;
    std::size_t read = 0;
    for (int n = 0; n < 30000; ++n) {
        const auto bytes = random_envelope(rng);
        const auto expected = parse_snapshot_header(bytes, parsed);
        const auto got = peek_snapshot_header(bytes, scratch);
        ASSERT_EQ(static_cast<bool>(got), static_cast<bool>(expected)) << "case " << n;
        if (!expected) {
            ASSERT_EQ(got.code(), expected.code()) << "case " << n;
            continue;
        }
        ++read;
        ASSERT_EQ(got->tick, expected->tick) << "case " << n;
        ASSERT_EQ(got->time_offset_us, expected->time_offset_us) << "case " << n;
        ASSERT_EQ(got->full_state, expected->full_state) << "case " << n;
    }
    EXPECT_GT(read, 15000U);
}

TEST(Envelope, SerializationIsDeterministic) {
    auto a = one_of_each()[4];
    EXPECT_EQ(encode_envelope(a), encode_envelope(a));
    v1::Envelope parsed;
    ASSERT_TRUE(decode_envelope(encode_envelope(a), parsed));
    EXPECT_EQ(encode_envelope(parsed), encode_envelope(a));
    EXPECT_EQ(to_string(errc::unknown_baseline), "unknown_baseline");
}

} // namespace
} // namespace ecsnet::proto::envelope_test
