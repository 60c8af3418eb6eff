// Connect tokens: issue, serialize (bytes and base64), read, open the private part. Every malformed input
// is refused with its own reason; a token changed anywhere the server reads it does not open; random
// tokens round-trip exactly (seeded loop against the parameters they were issued from).

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/packets.hpp"

namespace connect_token_test {

namespace {

using namespace ecsnet::transport;

constexpr std::uint64_t protocol = 0x45435301;

token_params basic_params() {
    token_params params;
    params.protocol_id = protocol;
    params.client_id = 1234;
    params.server_addresses = {*net_address::parse("127.0.0.1:7777"),
                               *net_address::parse("[2001:db8::7]:40000")};
    params.expire_seconds = 30;
    params.timeout_seconds = 12;
    for (std::size_t i = 0; i < params.user_data.size(); ++i) {
        params.user_data[i] = static_cast<std::uint8_t>(i * 7);
    }
    params.now_unix = 1'700'000'000;
    return params;
}

sealed_private_token sealed_of(const connect_token& token) {
    return {token.protocol_id, token.expire_timestamp, token.nonce, token.encrypted_private};
}

TEST(ConnectToken, IssuedTokenReadsBackFromBytesAndBase64) {
    const auto key = generate_key();
    const auto params = basic_params();
    const auto token = issue_token(params, key);
    ASSERT_TRUE(token) << to_string(token.error());
    EXPECT_EQ(token->create_timestamp, 1'700'000'000U);
    EXPECT_EQ(token->expire_timestamp, 1'700'000'030U);
    EXPECT_NE(token->client_to_server_key, token->server_to_client_key);

    const auto bytes = serialize(*token);
    const auto from_bytes = read_token(bytes);
    ASSERT_TRUE(from_bytes) << to_string(from_bytes.error());
    const auto text = to_base64(*token);
    EXPECT_EQ(text.size(), 2731U);
    EXPECT_EQ(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              std::string::npos);
    const auto from_text = read_token_base64(text);
    ASSERT_TRUE(from_text) << to_string(from_text.error());

    for (const auto* read : {&*from_bytes, &*from_text}) {
        EXPECT_EQ(read->protocol_id, protocol);
        EXPECT_EQ(read->create_timestamp, token->create_timestamp);
        EXPECT_EQ(read->expire_timestamp, token->expire_timestamp);
        EXPECT_EQ(read->nonce, token->nonce);
        EXPECT_EQ(read->encrypted_private, token->encrypted_private);
        EXPECT_EQ(read->timeout_seconds, 12U);
        EXPECT_EQ(read->server_addresses, params.server_addresses);
        EXPECT_EQ(read->client_to_server_key, token->client_to_server_key);
        EXPECT_EQ(read->server_to_client_key, token->server_to_client_key);
    }

    const auto opened = open_private_token(sealed_of(*from_text), key);
    ASSERT_TRUE(opened) << to_string(opened.error());
    EXPECT_EQ(opened->client_id, 1234U);
    EXPECT_EQ(opened->timeout_seconds, 12U);
    EXPECT_EQ(opened->server_addresses, params.server_addresses);
    EXPECT_EQ(opened->client_to_server_key, token->client_to_server_key);
    EXPECT_EQ(opened->server_to_client_key, token->server_to_client_key);
    EXPECT_EQ(opened->user_data, params.user_data);
}

TEST(ConnectToken, Base64WithLineBreaksAndSpacesStillReads) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    auto text = to_base64(*token);
    for (std::size_t at = 76; at < text.size(); at += 78) {
        text.insert(at, "\r\n");
    }
    text = "  " + text + "\n";
    const auto read = read_token_base64(text);
    ASSERT_TRUE(read) << to_string(read.error());
    EXPECT_EQ(read->encrypted_private, token->encrypted_private);
}

TEST(ConnectToken, WrongKeyDoesNotOpen) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    const auto opened = open_private_token(sealed_of(*token), generate_key());
    EXPECT_EQ(opened.error(), token_error::decrypt_failed);
}

TEST(ConnectToken, AnotherProtocolIdOrExpiryDoesNotOpen) {
    const auto key = generate_key();
    const auto token = issue_token(basic_params(), key);
    ASSERT_TRUE(token);
    auto sealed = sealed_of(*token);
    sealed.protocol_id += 1;
    EXPECT_EQ(open_private_token(sealed, key).error(), token_error::decrypt_failed);
    sealed = sealed_of(*token);
    sealed.expire_timestamp += 3600; // a client extending its token
    EXPECT_EQ(open_private_token(sealed, key).error(), token_error::decrypt_failed);
}

// Every byte of the connection request a client would send, flipped: either the request no longer
// parses, or its private token no longer opens. Nothing the server reads can be changed unnoticed.
TEST(ConnectToken, EveryByteOfTheRequestFlippedIsRefused) {
    const auto key = generate_key();
    const auto token = issue_token(basic_params(), key);
    ASSERT_TRUE(token);
    const auto request = write_connection_request(*token);
    for (std::size_t i = 0; i < request.size(); ++i) {
        auto changed = request;
        changed[i] ^= 0x01;
        const auto view = read_connection_request(changed);
        if (!view) {
            continue;
        }
        const auto opened = open_private_token(
            {view->protocol_id, view->expire_timestamp, view->nonce, view->encrypted_private}, key);
        EXPECT_FALSE(opened) << "byte " << i << " flipped still opens";
    }
}

TEST(ConnectToken, WrongSizesAreRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    const auto bytes = serialize(*token);
    EXPECT_EQ(read_token(std::span{bytes}.first(2047)).error(), token_error::wrong_size);
    std::vector<std::uint8_t> longer(bytes.begin(), bytes.end());
    longer.push_back(0);
    EXPECT_EQ(read_token(longer).error(), token_error::wrong_size);
    EXPECT_EQ(read_token({}).error(), token_error::wrong_size);
    EXPECT_EQ(read_token_base64("").error(), token_error::wrong_size);
    EXPECT_EQ(read_token_base64(to_base64(*token) + "AAAA").error(), token_error::wrong_size);
    EXPECT_EQ(read_token_base64(std::string(20000, 'A')).error(), token_error::wrong_size);
}

TEST(ConnectToken, CharactersOutsideTheAlphabetAreRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    auto text = to_base64(*token);
    for (const char bad : {'+', '/', '=', '*', '\0', '\x80'}) {
        auto changed = text;
        changed[100] = bad;
        EXPECT_EQ(read_token_base64(changed).error(), token_error::bad_base64) << int(bad);
    }
}

// Offsets in the 2,048-byte form (docs/protocol.md 10.2).
constexpr std::size_t offset_create = 13 + 8;
constexpr std::size_t offset_expire = offset_create + 8;
constexpr std::size_t offset_timeout = offset_expire + 8 + 24 + 1024;
constexpr std::size_t offset_count = offset_timeout + 4;
constexpr std::size_t offset_first_address = offset_count + 4;

void put_u32(std::span<std::uint8_t> at, std::uint32_t value) {
    for (std::size_t i = 0; i < 4; ++i) {
        at[i] = static_cast<std::uint8_t>(value >> (8 * i));
    }
}

TEST(ConnectToken, AnotherVersionIsRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    auto bytes = serialize(*token);
    bytes[11] = '2';
    EXPECT_EQ(read_token(bytes).error(), token_error::bad_version);
}

TEST(ConnectToken, CreatedAfterItExpiresIsRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    auto bytes = serialize(*token);
    std::copy_n(bytes.begin() + offset_expire, 8, bytes.begin() + offset_create);
    bytes[offset_create] += 1;
    EXPECT_EQ(read_token(bytes).error(), token_error::bad_timestamps);
}

TEST(ConnectToken, TimeoutOutOfRangeIsRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    for (const std::uint32_t timeout : {0U, 3601U, 0xFFFFFFFFU}) {
        auto bytes = serialize(*token);
        put_u32(std::span{bytes}.subspan(offset_timeout), timeout);
        EXPECT_EQ(read_token(bytes).error(), token_error::bad_timeout) << timeout;
    }
}

TEST(ConnectToken, AddressCountOutOfRangeIsRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    for (const std::uint32_t count : {0U, 33U, 0xFFFFFFFFU}) {
        auto bytes = serialize(*token);
        put_u32(std::span{bytes}.subspan(offset_count), count);
        EXPECT_EQ(read_token(bytes).error(), token_error::bad_address_count) << count;
    }
}

TEST(ConnectToken, UnknownAddressTypeIsRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    for (const std::uint8_t type : {0, 3, 255}) {
        auto bytes = serialize(*token);
        bytes[offset_first_address] = type;
        EXPECT_EQ(read_token(bytes).error(), token_error::bad_address) << int(type);
    }
}

TEST(ConnectToken, PortZeroIsRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    auto bytes = serialize(*token);
    bytes[offset_first_address + 5] = 0; // 127.0.0.1:7777's port, little-endian
    bytes[offset_first_address + 6] = 0;
    EXPECT_EQ(read_token(bytes).error(), token_error::bad_address);
}

TEST(ConnectToken, NonZeroPaddingIsRefused) {
    const auto token = issue_token(basic_params(), generate_key());
    ASSERT_TRUE(token);
    auto bytes = serialize(*token);
    bytes[connect_token_bytes - 1] = 1;
    EXPECT_EQ(read_token(bytes).error(), token_error::bad_padding);
}

TEST(ConnectToken, IssueRefusesParametersOutOfRange) {
    const auto key = generate_key();
    auto params = basic_params();
    params.server_addresses.clear();
    EXPECT_EQ(issue_token(params, key).error(), token_error::bad_address_count);
    params.server_addresses.assign(33, *net_address::parse("10.0.0.1:1"));
    EXPECT_EQ(issue_token(params, key).error(), token_error::bad_address_count);
    params.server_addresses = {net_address{}};
    EXPECT_EQ(issue_token(params, key).error(), token_error::bad_address);
    params = basic_params();
    params.timeout_seconds = 0;
    EXPECT_EQ(issue_token(params, key).error(), token_error::bad_timeout);
    params = basic_params();
    params.expire_seconds = 0;
    EXPECT_EQ(issue_token(params, key).error(), token_error::expired);
}

TEST(ConnectToken, PrivatePlaintextOfTheWrongSizeOrWithPaddingIsRefused) {
    std::vector<std::uint8_t> plaintext(1008, 0);
    EXPECT_EQ(parse_private_token(std::span{plaintext}.first(1007)).error(), token_error::wrong_size);
    plaintext[8] = 10; // timeout 10
    plaintext[12] = 1; // one address
    plaintext[16] = 1; // IPv4 1.2.3.4:5
    plaintext[17] = 1;
    plaintext[18] = 2;
    plaintext[19] = 3;
    plaintext[20] = 4;
    plaintext[21] = 5;
    ASSERT_TRUE(parse_private_token(plaintext));
    plaintext.back() = 9;
    EXPECT_EQ(parse_private_token(plaintext).error(), token_error::bad_padding);
}

// Seeded loop: random parameters (1 to 32 addresses of both families, random ids, user data, times) give
// tokens that read back exactly, from bytes and from base64, and open to the same private content.
TEST(ConnectToken, RandomTokensRoundTrip) {
    std::mt19937_64 random{20240611};
    const auto key = generate_key();
    for (int round = 0; round < 200; ++round) {
        token_params params;
        params.protocol_id = random();
        params.client_id = random();
        params.expire_seconds = 1 + static_cast<std::uint32_t>(random() % 100000);
        params.timeout_seconds = 1 + static_cast<std::uint32_t>(random() % 3600);
        params.now_unix = random() % (std::uint64_t{1} << 40);
        const auto count = 1 + random() % 32;
        for (std::uint64_t i = 0; i < count; ++i) {
            const auto port = static_cast<std::uint16_t>(1 + random() % 65535);
            if (random() % 2 == 0) {
                params.server_addresses.push_back(net_address::ipv4(
                    {static_cast<std::uint8_t>(random()), static_cast<std::uint8_t>(random()),
                     static_cast<std::uint8_t>(random()), static_cast<std::uint8_t>(random())},
                    port));
            } else {
                std::array<std::uint8_t, 16> ip{};
                ip[0] = 0x20; // not IPv4-mapped
                for (std::size_t b = 1; b < 16; ++b) {
                    ip[b] = static_cast<std::uint8_t>(random());
                }
                params.server_addresses.push_back(net_address::ipv6(ip, port));
            }
        }
        for (auto& byte : params.user_data) {
            byte = static_cast<std::uint8_t>(random());
        }
        const auto token = issue_token(params, key);
        ASSERT_TRUE(token) << to_string(token.error());
        const auto read = read_token_base64(to_base64(*token));
        ASSERT_TRUE(read) << to_string(read.error());
        EXPECT_EQ(read->server_addresses, params.server_addresses);
        EXPECT_EQ(read->timeout_seconds, params.timeout_seconds);
        EXPECT_EQ(read->expire_timestamp, *params.now_unix + params.expire_seconds);
        EXPECT_EQ(serialize(*read), serialize(*token));
        const auto opened = open_private_token(sealed_of(*read), key);
        ASSERT_TRUE(opened) << to_string(opened.error());
        EXPECT_EQ(opened->client_id, params.client_id);
        EXPECT_EQ(opened->server_addresses, params.server_addresses);
        EXPECT_EQ(opened->user_data, params.user_data);
        EXPECT_EQ(opened->timeout_seconds, params.timeout_seconds);
    }
}

TEST(ConnectToken, TwoTokensForTheSameClientDiffer) {
    const auto key = generate_key();
    const auto a = issue_token(basic_params(), key);
    const auto b = issue_token(basic_params(), key);
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->nonce, b->nonce);
    EXPECT_NE(a->client_to_server_key, b->client_to_server_key);
    EXPECT_FALSE(std::equal(a->mac().begin(), a->mac().end(), b->mac().begin()));
}

} // namespace

} // namespace connect_token_test
