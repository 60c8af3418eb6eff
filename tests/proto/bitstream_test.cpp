// Bit stream: fixed-width values and exp-Golomb codes read back exactly; lengths as documented; reading
// past the end or an overlong code fails without touching memory outside the input.

#include <gtest/gtest.h>

#include <bit>
#include <string>
#include <vector>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/bitstream.hpp"

namespace ecsnet::proto::bitstream_test {
namespace {

TEST(BitStream, LeastSignificantBitFirst) {
    bit_writer w;
    w.put(1, 1);
    w.put(0, 1);
    w.put(0b11, 2);
    w.put(0xAB, 8);
    std::string out;
    w.append_to(out);
    ASSERT_EQ(out.size(), 2U);
    EXPECT_EQ(static_cast<unsigned char>(out[0]), 0b1011'1101);
    EXPECT_EQ(static_cast<unsigned char>(out[1]), 0b0000'1010);
}

TEST(BitStream, ExpGolombLengths) {
    for (unsigned k = 0; k < 8; ++k) {
        for (std::uint64_t n : {0ULL, 1ULL, 2ULL, 7ULL, 100ULL, 65535ULL, 1ULL << 32}) {
            bit_writer w;
            w.put_eg(n, k);
            const auto m = n + (1ULL << k);
            const auto expected = 2 * (std::bit_width(m) - 1) - k + 1;
            EXPECT_EQ(w.bit_size(), expected) << n << " k=" << k;
        }
    }
    bit_writer w;
    w.put_eg(0, 0);
    EXPECT_EQ(w.bit_size(), 1U);
}

TEST(BitStream, RandomSequencesReadBackExactly) {
    arena::scene_random rng{1};
    for (int round = 0; round < 300; ++round) {
        struct item {
            int kind;
            std::uint64_t value;
            unsigned width;
        };
        std::vector<item> items;
        bit_writer w;
        for (int n = 0; n < 200; ++n) {
            const int kind = static_cast<int>(rng.below(3));
            const unsigned width =
                kind == 0 ? static_cast<unsigned>(rng.below(58)) : static_cast<unsigned>(rng.below(20));
            std::uint64_t value = rng.next();
            if (kind == 0) {
                value = width == 0 ? 0 : (width == 64 ? value : value & ((1ULL << width) - 1));
                w.put(value, width);
            } else if (kind == 1) {
                value >>= 64 - 1 - rng.below(40);
                w.put_eg(value, width);
            } else {
                value &= 1;
                w.put_bit(value != 0);
            }
            items.push_back({kind, value, width});
        }
        std::string bytes;
        w.append_to(bytes);
        ASSERT_EQ(bytes.size(), (w.bit_size() + 7) / 8);
        bit_reader r{bytes};
        for (const auto& it : items) {
            const auto got = it.kind == 0 ? r.get(it.width) : it.kind == 1 ? r.get_eg(it.width) : r.get(1);
            ASSERT_EQ(got, it.value);
        }
        EXPECT_TRUE(r.ok());
        EXPECT_TRUE(r.at_padded_end());
    }
}

TEST(BitStream, ReadingPastTheEndFails) {
    bit_writer w;
    w.put(0x5, 3);
    std::string bytes;
    w.append_to(bytes);
    bit_reader r{bytes};
    EXPECT_EQ(r.get(3), 5U);
    EXPECT_EQ(r.get(5), 0U); // padding
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.get(1), 0U);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.get(8), 0U); // sticky
    EXPECT_FALSE(r.at_padded_end());
}

TEST(BitStream, OverlongOrTruncatedExpGolombFails) {
    const std::string zeros(16, '\0');
    bit_reader all_zero{zeros};
    all_zero.get_eg(0);
    EXPECT_FALSE(all_zero.ok());

    bit_writer w;
    w.put_eg(1000000, 2);
    std::string bytes;
    w.append_to(bytes);
    for (std::size_t size = 0; size + 1 < bytes.size(); ++size) {
        bit_reader r{std::string_view{bytes}.substr(0, size)};
        r.get_eg(2);
        EXPECT_FALSE(r.ok()) << size;
    }
    bit_reader empty{""};
    empty.get_eg(0);
    EXPECT_FALSE(empty.ok());
}

TEST(BitStream, PaddingMustBeZero) {
    bit_reader r{std::string_view{"\x03", 1}};
    EXPECT_EQ(r.get(1), 1U);
    EXPECT_FALSE(r.at_padded_end());
}

TEST(BitStream, ZigzagAndSignExtension) {
    EXPECT_EQ(zigzag(0), 0U);
    EXPECT_EQ(zigzag(-1), 1U);
    EXPECT_EQ(zigzag(1), 2U);
    EXPECT_EQ(zigzag(-2), 3U);
    for (std::int64_t v :
         std::initializer_list<std::int64_t>{0, 1, -1, 123456789, -987654321, INT64_MIN, INT64_MAX}) {
        EXPECT_EQ(unzigzag(zigzag(v)), v);
    }
    EXPECT_EQ(sign_extend(0xFFF, 12), -1);
    EXPECT_EQ(sign_extend(0x800, 12), -2048);
    EXPECT_EQ(sign_extend(0x7FF, 12), 2047);
    EXPECT_EQ(sign_extend(0xFFFFFFFFU, 32), -1);
}

} // namespace
} // namespace ecsnet::proto::bitstream_test
