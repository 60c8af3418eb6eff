// Envelopes: every message kind survives encode -> frame -> decode; bytes that are not an envelope, an
// envelope without a message, and random bytes give error values.

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
