// envelope_decoder: a connection's messages decoded on an arena that is emptied every few messages.
// - every message decodes as proto::decode_envelope decodes it, through many emptyings, whatever the mix of
//   kinds and sizes (a payload moved out, as the server does with an Input's, included);
// - refused bytes are refused with the same error;
// - steady Acks and Inputs never take memory beyond the decoder's own block; a message of many parts
//   borrows some, returned at the next emptying.

#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/server/envelope_decoder.hpp"

namespace envelope_decoder_test {

namespace {

using namespace ecsnet;
using ecsnet::server::envelope_decoder;

std::string ack(std::uint32_t tick, bool full) {
    v1::Envelope e;
    e.mutable_ack()->set_tick(tick);
    e.mutable_ack()->set_full_state_requested(full);
    return proto::encode_envelope(e);
}

std::string input(std::uint32_t sequence, std::size_t payload_bytes) {
    v1::Envelope e;
    e.mutable_input()->set_sequence(sequence);
    e.mutable_input()->set_client_tick(sequence + 3);
    e.mutable_input()->set_payload(std::string(payload_bytes, static_cast<char>('a' + sequence % 26)));
    return proto::encode_envelope(e);
}

std::string hello(std::size_t token_bytes) {
    v1::Envelope e;
    e.mutable_client_hello()->set_protocol_version(1);
    e.mutable_client_hello()->set_connect_token(std::string(token_bytes, 'T'));
    e.mutable_client_hello()->set_client_name("bot");
    return proto::encode_envelope(e);
}

TEST(EnvelopeDecoder, DecodesEveryMessageAsDecodeEnvelopeDoes) {
    std::mt19937 random{15};
    envelope_decoder decoder;
    v1::Envelope expected;
    for (std::uint32_t i = 0; i < 2'000; ++i) {
        std::string bytes;
        switch (random() % 5) {
        case 0:
        case 1:
            bytes = ack(i, random() % 7 == 0);
            break;
        case 2:
        case 3:
            bytes = input(i, random() % 5 == 0 ? 3'000 : random() % 40);
            break;
        default:
            bytes = random() % 2 == 0 ? hello(random() % 4'000) : ack(0, false);
            break;
        }
        ASSERT_TRUE(proto::decode_envelope(bytes, expected));
        ASSERT_TRUE(decoder.decode(bytes)) << i;
        auto& message = decoder.message();
        ASSERT_EQ(message.message_case(), expected.message_case()) << i;
        ASSERT_EQ(message.SerializeAsString(), expected.SerializeAsString()) << i;
        if (message.has_input()) {
            const std::string payload = std::move(*message.mutable_input()->mutable_payload());
            EXPECT_EQ(payload, expected.input().payload());
        }
    }
}

TEST(EnvelopeDecoder, RefusesWhatDecodeEnvelopeRefuses) {
    envelope_decoder decoder;
    v1::Envelope scratch;
    const std::string unknown_field_only{"\xF8\x01\x05", 3}; // field 31, varint 5: no message set
    for (const std::string& bytes :
         {std::string{}, std::string{"\xFF\xFF\xFF", 3}, unknown_field_only, ack(9, false).substr(0, 1)}) {
        const auto expected = proto::decode_envelope(bytes, scratch);
        ASSERT_FALSE(expected);
        for (std::size_t round = 0; round < envelope_decoder::messages_per_reset + 1; ++round) {
            const auto decoded = decoder.decode(bytes);
            ASSERT_FALSE(decoded);
            EXPECT_EQ(decoded.code(), expected.code());
            ASSERT_TRUE(decoder.decode(ack(7, false))); // a good one after a refused one
            EXPECT_EQ(decoder.message().ack().tick(), 7U);
        }
    }
}

TEST(EnvelopeDecoder, SteadyTrafficStaysInTheDecodersBlock) {
    envelope_decoder decoder;
    const auto own = decoder.arena_bytes();
    for (std::uint32_t i = 0; i < 1'000; ++i) {
        ASSERT_TRUE(decoder.decode(i % 2 == 0 ? ack(i, false) : input(i, 12)));
        ASSERT_EQ(decoder.arena_bytes(), own) << i;
    }
    // 2,000 sub-messages (an InputStatus naming that many entities) take the arena well past its block.
    v1::Envelope many;
    for (std::uint32_t i = 0; i < 2'000; ++i) {
        many.mutable_input_status()->mutable_predicted()->add_entities()->set_index(i);
    }
    ASSERT_TRUE(decoder.decode(proto::encode_envelope(many)));
    EXPECT_EQ(decoder.message().input_status().predicted().entities_size(), 2'000);
    EXPECT_GT(decoder.arena_bytes(), own + 20'000);
    for (std::size_t i = 0; i < envelope_decoder::messages_per_reset; ++i) {
        ASSERT_TRUE(decoder.decode(ack(1, false)));
    }
    EXPECT_EQ(decoder.arena_bytes(), own);
}

} // namespace

} // namespace envelope_decoder_test
