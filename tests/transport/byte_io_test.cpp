// Byte I/O: little-endian integers, canonical varints (what a reader refuses), reads never past the end.

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ecsnet/transport/byte_io.hpp"

namespace ecsnet::transport::byte_io_test {
namespace {

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (int v : values) {
        out.push_back(static_cast<std::byte>(v));
    }
    return out;
}

TEST(ByteIo, WritesLittleEndianAndVarints) {
    std::array<std::byte, 32> buffer{};
    byte_writer out{buffer};
    out.put_u8(0xAB);
    out.put_u16(0x1234);
    out.put_varint(0);
    out.put_varint(127);
    out.put_varint(128);
    out.put_varint(300);
    out.put_varint(max_varint_value);
    EXPECT_EQ(std::vector<std::byte>(out.written().begin(), out.written().end()),
              bytes_of({0xAB, 0x34, 0x12, 0x00, 0x7F, 0x80, 0x01, 0xAC, 0x02, 0xFF, 0xFF, 0xFF, 0x7F}));
    EXPECT_EQ(varint_size(0), 1U);
    EXPECT_EQ(varint_size(127), 1U);
    EXPECT_EQ(varint_size(128), 2U);
    EXPECT_EQ(varint_size(16383), 2U);
    EXPECT_EQ(varint_size(16384), 3U);
    EXPECT_EQ(varint_size(max_varint_value), 4U);
}

TEST(ByteIo, VarintsRoundTrip) {
    std::array<std::byte, 4> buffer{};
    for (std::uint32_t value :
         {0U, 1U, 127U, 128U, 255U, 16383U, 16384U, 2097151U, 2097152U, max_varint_value}) {
        byte_writer out{buffer};
        out.put_varint(value);
        ASSERT_EQ(out.size(), varint_size(value));
        byte_reader in{out.written()};
        std::uint32_t read = 0;
        ASSERT_EQ(in.get_varint(read), varint_status::ok);
        EXPECT_EQ(read, value);
        EXPECT_TRUE(in.empty());
    }
}

TEST(ByteIo, RefusesPaddedLongAndTruncatedVarints) {
    std::uint32_t value = 0;
    {
        const auto b = bytes_of({0x80, 0x00}); // 0 written in two bytes
        byte_reader in{b};
        EXPECT_EQ(in.get_varint(value), varint_status::not_minimal);
    }
    {
        const auto b = bytes_of({0xFF, 0xFF, 0xFF, 0xFF, 0x01}); // five bytes
        byte_reader in{b};
        EXPECT_EQ(in.get_varint(value), varint_status::too_long);
    }
    {
        const auto b = bytes_of({0x80, 0x80});
        byte_reader in{b};
        EXPECT_EQ(in.get_varint(value), varint_status::truncated);
    }
    {
        byte_reader in{std::span<const std::byte>{}};
        EXPECT_EQ(in.get_varint(value), varint_status::truncated);
    }
}

TEST(ByteIo, ReaderNeverReadsPastTheEnd) {
    const auto b = bytes_of({1, 2, 3});
    byte_reader in{b};
    std::uint16_t u16 = 0;
    std::uint8_t u8 = 0;
    std::span<const std::byte> run;
    EXPECT_FALSE(in.get_bytes(4, run));
    EXPECT_TRUE(in.get_u16(u16));
    EXPECT_EQ(u16, 0x0201);
    EXPECT_FALSE(in.get_u16(u16));
    EXPECT_TRUE(in.get_u8(u8));
    EXPECT_FALSE(in.get_u8(u8));
    EXPECT_TRUE(in.get_bytes(0, run));
    EXPECT_TRUE(in.empty());
}

} // namespace
} // namespace ecsnet::transport::byte_io_test
