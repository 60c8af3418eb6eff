// The handshake's packet data and challenge tokens: exact sizes, round trips, and refusals before any
// crypto (a wrong size or prefix), challenge tokens that only open for the address and key they were made
// for, key rotation, disconnect messages cut at character boundaries and sanitized.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/transport/challenge_token.hpp"
#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"

namespace handshake_packets_test {

namespace {

using namespace ecsnet::transport;
using namespace std::chrono_literals;

constexpr std::uint64_t protocol = 5;

connect_token some_token() {
    token_params params;
    params.protocol_id = protocol;
    params.client_id = 77;
    params.server_addresses = {*net_address::parse("127.0.0.1:9000")};
    auto token = issue_token(params, generate_key());
    EXPECT_TRUE(token);
    return *token;
}

TEST(ConnectionRequest, Is1078BytesAndReadsBack) {
    const auto token = some_token();
    const auto request = write_connection_request(token);
    ASSERT_EQ(request.size(), 1078U);
    EXPECT_EQ(request[0], 0);
    const auto view = read_connection_request(request);
    ASSERT_TRUE(view);
    EXPECT_EQ(view->protocol_id, protocol);
    EXPECT_EQ(view->expire_timestamp, token.expire_timestamp);
    EXPECT_TRUE(std::equal(view->nonce.begin(), view->nonce.end(), token.nonce.begin()));
    EXPECT_TRUE(std::equal(view->encrypted_private.begin(), view->encrypted_private.end(),
                           token.encrypted_private.begin()));
}

TEST(ConnectionRequest, AnyOtherSizeIsMalformed) {
    const auto request = write_connection_request(some_token());
    EXPECT_EQ(read_connection_request(std::span{request}.first(1077)).error(), drop_reason::malformed);
    EXPECT_EQ(read_connection_request(std::span{request}.first(1)).error(), drop_reason::malformed);
    std::vector<std::uint8_t> longer(request.begin(), request.end());
    longer.push_back(0);
    EXPECT_EQ(read_connection_request(longer).error(), drop_reason::malformed);
}

TEST(ConnectionRequest, NonZeroPrefixOrAnotherVersionIsRefused) {
    auto request = write_connection_request(some_token());
    request[0] = 1;
    EXPECT_EQ(read_connection_request(request).error(), drop_reason::bad_prefix);
    request[0] = 0;
    request[5] = 'X';
    EXPECT_EQ(read_connection_request(request).error(), drop_reason::wrong_version);
}

TEST(Denied, OneKnownReasonByte) {
    const std::array<std::uint8_t, 1> full{1};
    EXPECT_EQ(*read_denied(full), denial_reason::server_full);
    const std::array<std::uint8_t, 1> unknown{9};
    EXPECT_EQ(read_denied(unknown).error(), drop_reason::malformed);
    EXPECT_EQ(read_denied({}).error(), drop_reason::malformed);
    const std::array<std::uint8_t, 2> two{1, 0};
    EXPECT_EQ(read_denied(two).error(), drop_reason::malformed);
}

TEST(ChallengeAndResponse, RoundTripAtTheirExactSizes) {
    challenge_data challenge;
    challenge.challenge_sequence = 0x0102030405060708;
    challenge.salt[3] = 9;
    challenge.token[100] = 42;
    challenge.ciphers = known_ciphers;
    const auto bytes = write_challenge(challenge);
    ASSERT_EQ(bytes.size(), 421U);
    const auto read = read_challenge(bytes);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->challenge_sequence, challenge.challenge_sequence);
    EXPECT_EQ(read->salt, challenge.salt);
    EXPECT_EQ(read->token, challenge.token);
    EXPECT_EQ(read->ciphers, known_ciphers);
    EXPECT_EQ(read_challenge(std::span{bytes}.first(420)).error(), drop_reason::malformed);

    const auto response =
        write_response({challenge.challenge_sequence, challenge.token, packet_cipher::aes256_gcm});
    ASSERT_EQ(response.size(), 405U);
    const auto back = read_response(response);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->token, challenge.token);
    EXPECT_EQ(back->cipher, packet_cipher::aes256_gcm);
    EXPECT_EQ(read_response(std::span{response}.first(404)).error(), drop_reason::malformed);
}

// The cipher bytes: an offer must hold ChaCha20-Poly1305 and nothing unknown; a choice must be a cipher.
TEST(ChallengeAndResponse, CipherOffersAndChoicesOutsideTheKnownOnesAreMalformed) {
    challenge_data challenge;
    for (const std::uint8_t offer : {0x00, 0x02, 0x05, 0x80}) {
        challenge.ciphers = offer;
        EXPECT_EQ(read_challenge(write_challenge(challenge)).error(), drop_reason::malformed) << int{offer};
    }
    auto response = write_response({1, {}, packet_cipher::chacha20_poly1305});
    for (const std::uint8_t choice : {2, 7, 255}) {
        response.back() = choice;
        EXPECT_EQ(read_response(response).error(), drop_reason::malformed) << int{choice};
    }
    EXPECT_EQ(choose_cipher(known_ciphers, known_ciphers), packet_cipher::aes256_gcm);
    EXPECT_EQ(choose_cipher(0x01, known_ciphers), packet_cipher::chacha20_poly1305);
    EXPECT_EQ(choose_cipher(known_ciphers, 0x01), packet_cipher::chacha20_poly1305);
}

// The answers a server sends before a connection exists are smaller than the request they answer.
TEST(ChallengeAndResponse, PreConnectionAnswersAreSmallerThanARequest) {
    EXPECT_LT(sealed_size(~std::uint64_t{0}, challenge_data_bytes), connection_request_bytes);
    EXPECT_LT(sealed_size(~std::uint64_t{0}, 1), connection_request_bytes); // denied
    EXPECT_LT(sealed_size(~std::uint64_t{0}, 0),
              sealed_size(0, response_data_bytes)); // keep-alive < response
}

challenge_contents sample_contents() {
    challenge_contents contents;
    contents.client_id = 31337;
    contents.token_expire_timestamp = 1'800'000'000;
    contents.timeout_seconds = 10;
    contents.issued_ms = 123456;
    contents.mac[0] = 1;
    contents.salt[15] = 2;
    contents.client_to_server_key = generate_key();
    contents.server_to_client_key = generate_key();
    contents.user_data[255] = 3;
    return contents;
}

TEST(ChallengeToken, OpensOnlyForItsAddressKeyAndSequence) {
    const auto k = generate_key();
    const auto client = *net_address::parse("10.0.0.1:5000");
    const auto contents = sample_contents();
    const auto sealed = seal_challenge(contents, 17, client, protocol, k);
    const auto opened = open_challenge(sealed, 17, client, protocol, k);
    ASSERT_TRUE(opened);
    EXPECT_EQ(opened->client_id, contents.client_id);
    EXPECT_EQ(opened->token_expire_timestamp, contents.token_expire_timestamp);
    EXPECT_EQ(opened->issued_ms, contents.issued_ms);
    EXPECT_EQ(opened->mac, contents.mac);
    EXPECT_EQ(opened->salt, contents.salt);
    EXPECT_EQ(opened->client_to_server_key, contents.client_to_server_key);
    EXPECT_EQ(opened->user_data, contents.user_data);

    EXPECT_FALSE(
        open_challenge(sealed, 17, *net_address::parse("10.0.0.1:5001"), protocol, k)); // another port
    EXPECT_FALSE(open_challenge(sealed, 17, *net_address::parse("10.0.0.2:5000"), protocol, k)); // another IP
    EXPECT_FALSE(open_challenge(sealed, 18, client, protocol, k));
    EXPECT_FALSE(open_challenge(sealed, 17, client, protocol + 1, k));
    EXPECT_FALSE(open_challenge(sealed, 17, client, protocol, generate_key()));
    for (std::size_t i = 0; i < sealed.size(); ++i) {
        auto changed = sealed;
        changed[i] ^= 0x40;
        EXPECT_FALSE(open_challenge(changed, 17, client, protocol, k)) << i;
    }
}

TEST(ChallengeKeys, ATokenSurvivesOneRotationNotTwo) {
    const auto start = std::chrono::steady_clock::time_point{} + 1h;
    challenge_keys keys{10s, start};
    const auto client = *net_address::parse("10.0.0.1:5000");
    const auto first = keys.seal(sample_contents(), client, protocol);
    EXPECT_TRUE(keys.open(first.token, first.sequence, client, protocol));
    keys.rotate_if_due(start + 5s); // not due
    keys.rotate_if_due(start + 10s);
    EXPECT_TRUE(keys.open(first.token, first.sequence, client, protocol)); // under the previous key
    const auto second = keys.seal(sample_contents(), client, protocol);
    EXPECT_GT(second.sequence, first.sequence);
    EXPECT_TRUE(keys.open(second.token, second.sequence, client, protocol));
    keys.rotate_if_due(start + 20s);
    EXPECT_FALSE(keys.open(first.token, first.sequence, client, protocol)); // its key is gone
    EXPECT_TRUE(keys.open(second.token, second.sequence, client, protocol));
    EXPECT_FALSE(keys.open(second.token, second.sequence + 1000, client, protocol)); // never issued
}

TEST(Disconnect, RoundTripsCodeAndMessage) {
    std::array<std::uint8_t, 2 + max_disconnect_message_bytes> buffer{};
    const auto size = write_disconnect(9, "kicked: too many inputs", buffer);
    ASSERT_EQ(size, 2U + 23U);
    const auto read = read_disconnect(std::span{buffer}.first(size));
    ASSERT_TRUE(read);
    EXPECT_EQ(read->code, 9);
    EXPECT_EQ(read->message, "kicked: too many inputs");
}

TEST(Disconnect, TheRetryHintRoundTripsAndIsAbsentWhenZero) {
    std::array<std::uint8_t, 2 + max_disconnect_message_bytes + 2> buffer{};
    const auto size = write_disconnect(1, "server shutting down", buffer, 300);
    ASSERT_EQ(size, 2U + 20U + 2U);
    const auto read = read_disconnect(std::span{buffer}.first(size));
    ASSERT_TRUE(read);
    EXPECT_EQ(read->code, 1);
    EXPECT_EQ(read->message, "server shutting down");
    EXPECT_EQ(read->retry_after_s, 300);
    // Without a hint the packet is byte for byte what readers before the hint expect.
    const auto plain = write_disconnect(1, "server shutting down", buffer);
    ASSERT_EQ(plain, 2U + 20U);
    const auto old_form = read_disconnect(std::span{buffer}.first(plain));
    ASSERT_TRUE(old_form);
    EXPECT_EQ(old_form->retry_after_s, 0);
    // A hint needs its two bytes of room.
    std::array<std::uint8_t, 2 + max_disconnect_message_bytes> tight{};
    EXPECT_EQ(write_disconnect(1, "x", tight, 5), 0U);
}

TEST(Disconnect, LongMessagesAreCutAtACharacterBoundary) {
    std::string message;
    for (int i = 0; i < 100; ++i) {
        message += "\xC3\xA9"; // é, two bytes
    }
    std::array<std::uint8_t, 2 + max_disconnect_message_bytes> buffer{};
    const auto size = write_disconnect(1, message, buffer);
    ASSERT_EQ(size, 2U + 126U); // 63 characters: the 64th would need byte 128
    const auto read = read_disconnect(std::span{buffer}.first(size));
    ASSERT_TRUE(read);
    EXPECT_TRUE(valid_utf8(read->message));
    EXPECT_EQ(read->message.size(), 126U);
}

TEST(Disconnect, InvalidUtf8IsReplacedNotRefused) {
    const std::array<std::uint8_t, 6> data{3, 4, 'a', 0xFF, 0xC0, 'b'};
    const auto read = read_disconnect(data);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->code, 3);
    EXPECT_EQ(read->message, "a??b");
}

TEST(Disconnect, ALengthThatDoesNotMatchIsMalformed) {
    EXPECT_EQ(read_disconnect({}).error(), drop_reason::malformed);
    const std::array<std::uint8_t, 1> one{1};
    EXPECT_EQ(read_disconnect(one).error(), drop_reason::malformed);
    const std::array<std::uint8_t, 4> short_text{1, 3, 'a', 'b'};
    EXPECT_EQ(read_disconnect(short_text).error(), drop_reason::malformed);
    const std::array<std::uint8_t, 4> long_text{1, 1, 'a', 'b'};
    EXPECT_EQ(read_disconnect(long_text).error(), drop_reason::malformed);
    std::vector<std::uint8_t> too_long(2 + 128, 'x');
    too_long[1] = 128;
    EXPECT_EQ(read_disconnect(too_long).error(), drop_reason::malformed);
}

TEST(Utf8, ValidatorRefusesOverlongSurrogatesAndOutOfRange) {
    EXPECT_TRUE(valid_utf8("plain"));
    EXPECT_TRUE(valid_utf8("\xE2\x82\xAC"));      // €
    EXPECT_TRUE(valid_utf8("\xF0\x9F\x8E\xAE"));  // 🎮
    EXPECT_FALSE(valid_utf8("\xC0\xAF"));         // overlong /
    EXPECT_FALSE(valid_utf8("\xE0\x80\xAF"));     // overlong
    EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));     // surrogate
    EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80")); // above U+10FFFF
    EXPECT_FALSE(valid_utf8("\xE2\x82"));         // truncated
}

TEST(DevKey, IsTheDocumentedBytesAndIssuesTokensItOpens) {
    EXPECT_EQ(to_hex(dev_private_key), "4543534e45542d494e5345435552452d444556454c4f504d454e542d4b455921");
    EXPECT_TRUE(is_dev_key(dev_private_key));
    EXPECT_FALSE(is_dev_key(generate_key()));
    dev_token_params params;
    params.protocol_id = protocol;
    params.server_addresses = {*net_address::parse("127.0.0.1:7777")};
    const auto token = make_dev_token(params);
    ASSERT_TRUE(token);
    const auto opened = open_private_token(
        {token->protocol_id, token->expire_timestamp, token->nonce, token->encrypted_private},
        dev_private_key);
    ASSERT_TRUE(opened);
    EXPECT_NE(opened->client_id, 0U); // a random id when none was asked for
}

} // namespace

} // namespace handshake_packets_test
