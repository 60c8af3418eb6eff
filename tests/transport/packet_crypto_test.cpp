// Packet encryption: sequences on 1 to 8 bytes, round trips, and refusals: every byte of a sealed packet
// flipped, another key, another protocol id, a packet turned into another type, truncated and oversized
// datagrams. Clear (authenticated-only) packets the same way.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/session_keys.hpp"

namespace packet_crypto_test {

namespace {

using namespace ecsnet::transport;

constexpr std::uint64_t protocol = 99;

std::vector<std::uint8_t> sealed(packet_type type, std::uint64_t sequence,
                                 const std::vector<std::uint8_t>& data, const key& k) {
    std::vector<std::uint8_t> out(max_datagram_bytes + 64);
    const auto size = seal_packet(type, sequence, data, k, protocol, out);
    out.resize(size);
    return out;
}

std::optional<std::vector<std::uint8_t>> opened(std::span<const std::uint8_t> datagram, const key& k,
                                                std::uint64_t protocol_id = protocol) {
    const auto header = read_datagram_header(datagram);
    if (!header) {
        return std::nullopt;
    }
    std::vector<std::uint8_t> out(max_datagram_bytes);
    const auto size = open_packet(*header, datagram, k, protocol_id, out);
    if (!size) {
        return std::nullopt;
    }
    out.resize(*size);
    return out;
}

TEST(PacketCrypto, SequenceBytesOmitHighZeroBytes) {
    EXPECT_EQ(sequence_bytes(0), 1U);
    EXPECT_EQ(sequence_bytes(255), 1U);
    EXPECT_EQ(sequence_bytes(256), 2U);
    EXPECT_EQ(sequence_bytes(1000), 2U);
    EXPECT_EQ(sequence_bytes(0xFFFFFF), 3U);
    EXPECT_EQ(sequence_bytes(~std::uint64_t{0}), 8U);
    EXPECT_EQ(sequence_bytes(handshake_sequence_bit), 8U);
}

TEST(PacketCrypto, RoundTripsAtEverySequenceLength) {
    const auto k = generate_key();
    const std::vector<std::uint8_t> data{1, 2, 3, 4, 5};
    for (std::size_t bytes = 1; bytes <= 8; ++bytes) {
        const std::uint64_t sequence = bytes == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * bytes)) - 1;
        const auto packet = sealed(packet_type::payload, sequence, data, k);
        ASSERT_EQ(packet.size(), 1 + bytes + data.size() + 16);
        EXPECT_EQ(packet[0], (bytes << 4) | 5U);
        const auto header = read_datagram_header(packet);
        ASSERT_TRUE(header);
        EXPECT_EQ(header->sequence, sequence);
        EXPECT_EQ(header->type, packet_type::payload);
        const auto back = opened(packet, k);
        ASSERT_TRUE(back);
        EXPECT_EQ(*back, data);
    }
}

TEST(PacketCrypto, FullSizePayloadFitsInOneDatagram) {
    const auto k = generate_key();
    const std::vector<std::uint8_t> data(max_payload_bytes, 0xAB);
    const auto packet = sealed(packet_type::payload, ~std::uint64_t{0} >> 1, data, k);
    EXPECT_EQ(packet.size(), max_datagram_bytes);
    EXPECT_TRUE(opened(packet, k));
}

TEST(PacketCrypto, EveryByteFlippedIsRefused) {
    const auto k = generate_key();
    const auto packet = sealed(packet_type::payload, 1234, {10, 20, 30, 40, 50, 60, 70}, k);
    for (std::size_t i = 0; i < packet.size(); ++i) {
        for (const std::uint8_t mask : {0x01, 0x80, 0xFF}) {
            auto changed = packet;
            changed[i] ^= mask;
            EXPECT_FALSE(opened(changed, k)) << "byte " << i << " mask " << int(mask);
        }
    }
}

TEST(PacketCrypto, AnotherKeyIsRefused) {
    const auto packet = sealed(packet_type::keep_alive, 7, {}, generate_key());
    EXPECT_FALSE(opened(packet, generate_key()));
}

TEST(PacketCrypto, AnotherProtocolIdIsRefused) {
    const auto k = generate_key();
    const auto packet = sealed(packet_type::keep_alive, 7, {}, k);
    EXPECT_TRUE(opened(packet, k));
    EXPECT_FALSE(opened(packet, k, protocol + 1));
}

TEST(PacketCrypto, APacketTurnedIntoAnotherTypeIsRefused) {
    const auto k = generate_key();
    auto packet = sealed(packet_type::payload, 7, {1, 2, 3}, k);
    packet[0] =
        static_cast<std::uint8_t>((packet[0] & 0xF0) | static_cast<std::uint8_t>(packet_type::disconnect));
    const auto header = read_datagram_header(packet);
    ASSERT_TRUE(header);
    EXPECT_FALSE(opened(packet, k));
}

// AES-256-GCM where the CPU runs it: the same layout, and neither cipher opens the other's packets.
TEST(PacketCrypto, EachCipherRoundTripsAndNeitherOpensTheOther) {
    ASSERT_NE(available_ciphers() & cipher_bit(packet_cipher::chacha20_poly1305), 0);
    if ((available_ciphers() & cipher_bit(packet_cipher::aes256_gcm)) == 0) {
        GTEST_SKIP() << "no AES-NI here: only ChaCha20-Poly1305";
    }
    const auto k = generate_key();
    std::vector<std::uint8_t> data(1100);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>(i * 7);
    }
    for (const auto cipher : {packet_cipher::chacha20_poly1305, packet_cipher::aes256_gcm}) {
        std::array<std::uint8_t, max_datagram_bytes> sealed{};
        const auto size = seal_packet(packet_type::payload, 77, data, k, 5, sealed, cipher);
        ASSERT_EQ(size, sealed_size(77, data.size()));
        const std::span<const std::uint8_t> datagram{sealed.data(), size};
        const auto header = read_datagram_header(datagram);
        ASSERT_TRUE(header);
        std::array<std::uint8_t, max_datagram_bytes> plain{};
        const auto opened = open_packet(*header, datagram, k, 5, plain, cipher);
        ASSERT_TRUE(opened);
        EXPECT_TRUE(std::equal(data.begin(), data.end(), plain.begin()));
        const auto other = cipher == packet_cipher::aes256_gcm ? packet_cipher::chacha20_poly1305
                                                               : packet_cipher::aes256_gcm;
        EXPECT_FALSE(open_packet(*header, datagram, k, 5, plain, other));
    }
}

// A prepared key (AES-256-GCM's state computed once) seals the very bytes the key-taking function does, and
// each opens the other's packets; another key or a flipped byte is refused.
TEST(PacketCrypto, PreparedKeysSealAndOpenAsTheirKeysDo) {
    const auto k = generate_key();
    const auto other_key = generate_key();
    std::vector<std::uint8_t> data(300);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>(i * 13);
    }
    for (const auto cipher : {packet_cipher::chacha20_poly1305, packet_cipher::aes256_gcm}) {
        if ((available_ciphers() & cipher_bit(cipher)) == 0) {
            continue;
        }
        const packet_key prepared{k, cipher};
        const packet_key wrong{other_key, cipher};
        EXPECT_EQ(prepared.cipher(), cipher);
        for (const std::uint64_t sequence : {std::uint64_t{0}, std::uint64_t{300}, std::uint64_t{1} << 40}) {
            std::array<std::uint8_t, max_datagram_bytes> by_key{};
            std::array<std::uint8_t, max_datagram_bytes> by_prepared{};
            const auto size = seal_packet(packet_type::payload, sequence, data, k, 5, by_key, cipher);
            ASSERT_EQ(seal_packet(packet_type::payload, sequence, data, prepared, 5, by_prepared), size);
            EXPECT_EQ(by_key, by_prepared);

            const std::span<const std::uint8_t> datagram{by_prepared.data(), size};
            const auto header = read_datagram_header(datagram);
            ASSERT_TRUE(header);
            std::array<std::uint8_t, max_datagram_bytes> plain{};
            ASSERT_EQ(open_packet(*header, datagram, prepared, 5, plain), data.size());
            EXPECT_TRUE(std::equal(data.begin(), data.end(), plain.begin()));
            EXPECT_FALSE(open_packet(*header, datagram, wrong, 5, plain));
            EXPECT_FALSE(open_packet(*header, datagram, prepared, 6, plain));
            by_prepared[size - 1] ^= 1;
            EXPECT_FALSE(open_packet(*header, datagram, prepared, 5, plain));
        }
    }
}

TEST(PacketCrypto, PreparedKeysRefuseOutputsTooSmall) {
    const packet_key prepared{generate_key(), packet_cipher::chacha20_poly1305};
    const std::vector<std::uint8_t> data(40, 7);
    std::vector<std::uint8_t> out(sealed_size(1, data.size()) - 1);
    EXPECT_EQ(seal_packet(packet_type::payload, 1, data, prepared, 5, out), 0U);
}

TEST(PacketCrypto, BadPrefixesAreRefusedBeforeAnyCrypto) {
    std::vector<std::uint8_t> packet(40, 0);
    for (const std::uint8_t prefix : {0x10, 0x17, 0x1F, 0x05, 0x95, 0xF5}) { // type 0, 7, 15; 0 or 9+ bytes
        packet[0] = prefix;
        EXPECT_EQ(read_datagram_header(packet).error(), drop_reason::bad_prefix) << int(prefix);
    }
}

TEST(PacketCrypto, TruncatedAndOversizedDatagramsAreMalformed) {
    const auto k = generate_key();
    const auto packet = sealed(packet_type::keep_alive, 70000, {}, k); // 3 sequence bytes: 20 bytes
    for (std::size_t size = 1; size < packet.size(); ++size) {
        EXPECT_FALSE(opened(std::span{packet}.first(size), k)) << size;
    }
    EXPECT_EQ(read_datagram_header(std::span{packet}.first(19)).error(), drop_reason::malformed);
    EXPECT_EQ(read_datagram_header({}).error(), drop_reason::malformed);
    std::vector<std::uint8_t> big(max_datagram_bytes + 1, 0);
    big[0] = 0x15;
    EXPECT_EQ(read_datagram_header(big).error(), drop_reason::malformed);
}

TEST(PacketCrypto, ClearPacketsAuthenticateTheirData) {
    const auto k = generate_key();
    const std::vector<std::uint8_t> data{9, 8, 7, 6, 5};
    std::vector<std::uint8_t> packet(64);
    packet.resize(
        seal_clear_packet(packet_type::response, handshake_sequence_bit | 77, data, k, protocol, packet));
    ASSERT_EQ(packet.size(), 1 + 8 + data.size() + 16);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), packet.begin() + 9)); // in clear
    const auto header = read_datagram_header(packet);
    ASSERT_TRUE(header);
    EXPECT_TRUE(verify_clear_packet(*header, packet, k, protocol));
    EXPECT_FALSE(verify_clear_packet(*header, packet, generate_key(), protocol));
    EXPECT_FALSE(verify_clear_packet(*header, packet, k, protocol + 1));
    for (std::size_t i = 0; i < packet.size(); ++i) {
        auto changed = packet;
        changed[i] ^= 0x01;
        const auto changed_header = read_datagram_header(changed);
        EXPECT_FALSE(changed_header && verify_clear_packet(*changed_header, changed, k, protocol)) << i;
    }
}

TEST(SessionKeys, DependOnTheSaltAndDifferPerDirection) {
    const auto c2s = generate_key();
    const auto s2c = generate_key();
    const session_salt a{1};
    const session_salt b{2};
    const auto first = derive_session_keys(c2s, s2c, a);
    const auto again = derive_session_keys(c2s, s2c, a);
    const auto other = derive_session_keys(c2s, s2c, b);
    EXPECT_EQ(first.client_to_server, again.client_to_server);
    EXPECT_EQ(first.server_to_client, again.server_to_client);
    EXPECT_NE(first.client_to_server, other.client_to_server);
    EXPECT_NE(first.server_to_client, other.server_to_client);
    EXPECT_NE(first.client_to_server, c2s);
    EXPECT_NE(first.client_to_server, first.server_to_client);
    // Even with equal token keys, the two directions get different keys (different labels).
    const auto same = derive_session_keys(c2s, c2s, a);
    EXPECT_NE(same.client_to_server, same.server_to_client);
}

} // namespace

namespace {

std::string hex(std::span<const std::uint8_t> bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const auto b : bytes) {
        out += digits[b >> 4];
        out += digits[b & 0x0F];
    }
    return out;
}

// The vectors of docs/protocol.md 10.15, checked against an independent implementation when they were
// written (Python: OpenSSL's ChaCha20-Poly1305 through `cryptography`, hashlib's BLAKE2b).
TEST(ProtocolVectors, PacketsAndSessionKeysMatchTheDocumentedBytes) {
    key k{};
    for (std::size_t i = 0; i < k.size(); ++i) {
        k[i] = static_cast<std::uint8_t>(i);
    }
    const std::vector<std::uint8_t> hello{'h', 'e', 'l', 'l', 'o'};
    std::array<std::uint8_t, max_datagram_bytes> out{};
    const auto payload = seal_packet(packet_type::payload, 1000, hello, k, 0x1122334455667788ULL, out);
    EXPECT_EQ(hex(std::span{out}.first(payload)), "25e80348e2568aa74223b33c2b2f508094a9d0a71864a6b1");
    const auto response =
        seal_clear_packet(packet_type::response, 0x8000000000000001ULL, hello, k, 0x1122334455667788ULL, out);
    EXPECT_EQ(hex(std::span{out}.first(response)),
              "83010000000000008068656c6c6fd5f49f885edc0da413d02e9a2207f7c4");

    key c2s{};
    key s2c{};
    session_salt salt{};
    for (std::size_t i = 0; i < 32; ++i) {
        c2s[i] = static_cast<std::uint8_t>(i);
        s2c[i] = static_cast<std::uint8_t>(0x80 + i);
    }
    for (std::size_t i = 0; i < 16; ++i) {
        salt[i] = static_cast<std::uint8_t>(0xA0 + i);
    }
    const auto keys = derive_session_keys(c2s, s2c, salt);
    EXPECT_EQ(to_hex(keys.client_to_server),
              "56b821316090a1baea5859479bc2d1df6e21a5f134bceac1ce2d20b58dbc3b67");
    EXPECT_EQ(to_hex(keys.server_to_client),
              "94cb68d6ff410b2ef45ffbad32373dc442f69823886ba0937a70f50aab9511c7");
}

} // namespace

} // namespace packet_crypto_test
