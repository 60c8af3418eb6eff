// The packet header: sizes (3 bytes before any ack, 6 with a clean ack field), round trips of random
// headers (one encoding per header), and every refusal.

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ecsnet/transport/packet_header.hpp"
#include "ecsnet/transport/random.hpp"

namespace ecsnet::transport::packet_header_test {
namespace {

std::vector<std::byte> encode(const packet_header& h) {
    std::array<std::byte, max_header_bytes> buffer{};
    byte_writer out{buffer};
    write_header(out, h);
    EXPECT_EQ(out.size(), header_size(h));
    return {out.written().begin(), out.written().end()};
}

receive_error decode(const std::vector<std::byte>& bytes, packet_header& h) {
    byte_reader in{bytes};
    return read_header(in, h);
}

TEST(PacketHeader, IsCompactWhenNothingIsLost) {
    EXPECT_EQ(encode(packet_header{7, false, 0, 0, 0}).size(), 3U);
    EXPECT_EQ(encode(packet_header{7, true, 3, 0xFFFFFFFF, 0}).size(), 6U);
    EXPECT_EQ(encode(packet_header{7, true, 3, 0xFFFFFFFF, 1000}).size(), 7U);
    EXPECT_EQ(encode(packet_header{7, true, 3, 0x0000FFFF, 0}).size(), 8U);
    EXPECT_EQ(encode(packet_header{7, true, 3, 1, max_ack_delay_units}).size(), max_header_bytes);
    const auto bytes = encode(packet_header{0x1234, true, 0xABCD, 0xFFFF7FFF, 5});
    // flags: has_ack, ack_bits byte 1 present; sequence; ack; byte 1 of the bits; delay.
    EXPECT_EQ(bytes,
              (std::vector<std::byte>{std::byte{0x05}, std::byte{0x34}, std::byte{0x12}, std::byte{0xCD},
                                      std::byte{0xAB}, std::byte{0x7F}, std::byte{0x05}}));
}

TEST(PacketHeader, RandomHeadersRoundTrip) {
    sim_random rng{1};
    for (int i = 0; i < 100000; ++i) {
        packet_header h;
        h.sequence = static_cast<sequence_t>(rng.next());
        h.has_ack = rng.below(8) != 0;
        if (h.has_ack) {
            h.ack = static_cast<sequence_t>(rng.next());
            // Mostly-full fields, as on a real link, and random ones.
            h.ack_bits = rng.below(2) == 0 ? static_cast<std::uint32_t>(rng.next()) | 1U
                                           : ~(std::uint32_t{1} << (1 + rng.below(31)));
            h.ack_delay = static_cast<std::uint32_t>(rng.below(max_ack_delay_units + 1));
        }
        const auto bytes = encode(h);
        packet_header read;
        ASSERT_EQ(decode(bytes, read), receive_error::none);
        ASSERT_EQ(read, h);
    }
}

TEST(PacketHeader, RefusesEveryTruncation) {
    const auto bytes = encode(packet_header{1, true, 2, 0x00FF00F1, 4000});
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        packet_header h;
        EXPECT_EQ(decode({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)}, h),
                  receive_error::truncated)
            << n;
    }
}

TEST(PacketHeader, RefusesReservedBits) {
    auto bytes = encode(packet_header{1, true, 2, 0xFFFFFFFF, 0});
    bytes[0] |= std::byte{0x20};
    packet_header h;
    EXPECT_EQ(decode(bytes, h), receive_error::bad_header);
}

TEST(PacketHeader, RefusesAckFieldFlagsWithoutAnAck) {
    const std::vector<std::byte> bytes{std::byte{0x02}, std::byte{1}, std::byte{0}, std::byte{0}};
    packet_header h;
    EXPECT_EQ(decode(bytes, h), receive_error::bad_header);
}

TEST(PacketHeader, RefusesAnAckFieldByteOf0xFFSentAnyway) {
    // flags: has_ack + byte 0 present, and that byte is 0xFF (should have been left out).
    const std::vector<std::byte> bytes{std::byte{0x03}, std::byte{1},    std::byte{0}, std::byte{2},
                                       std::byte{0},    std::byte{0xFF}, std::byte{0}};
    packet_header h;
    EXPECT_EQ(decode(bytes, h), receive_error::bad_header);
}

TEST(PacketHeader, RefusesAnAckFieldWithoutItsOwnBit) {
    // Bit 0 is the ack itself, which was received.
    const auto bytes = encode(packet_header{1, true, 2, 0xFFFFFFFE, 0});
    packet_header h;
    EXPECT_EQ(decode(bytes, h), receive_error::bad_header);
}

TEST(PacketHeader, RefusesPaddedAndOverlongAckDelays) {
    packet_header h;
    // delay 0 written as 0x80 0x00
    EXPECT_EQ(decode({std::byte{0x01}, std::byte{1}, std::byte{0}, std::byte{2}, std::byte{0},
                      std::byte{0x80}, std::byte{0x00}},
                     h),
              receive_error::bad_varint);
    // a 4-byte delay (above 2^21 - 1)
    EXPECT_EQ(decode({std::byte{0x01}, std::byte{1}, std::byte{0}, std::byte{2}, std::byte{0},
                      std::byte{0x80}, std::byte{0x80}, std::byte{0x80}, std::byte{0x01}},
                     h),
              receive_error::bad_varint);
}

TEST(PacketHeader, AckDelayUnitsRoundDownAndCap) {
    EXPECT_EQ(to_ack_delay_units(std::chrono::microseconds{31}), 0U);
    EXPECT_EQ(to_ack_delay_units(std::chrono::microseconds{64}), 2U);
    EXPECT_EQ(to_ack_delay_units(std::chrono::hours{1}), max_ack_delay_units);
    EXPECT_EQ(to_ack_delay_units(std::chrono::microseconds{-5}), 0U);
}

} // namespace
} // namespace ecsnet::transport::packet_header_test
