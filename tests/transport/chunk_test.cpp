// Chunk encodings: each writer's output read back, and every refusal of the reader that needs no link
// state (unknown type, empty run, message too big, length past the end, bad fragments, bad fragment acks).

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ecsnet/transport/chunk.hpp"
#include "ecsnet/transport/packet_header.hpp"

namespace ecsnet::transport::chunk_test {
namespace {

const chunk_limits limits{1175, 256 * 1024, 256, 1024};

std::vector<std::byte> filled(std::size_t n, int seed) {
    std::vector<std::byte> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(seed)) & 0xFF);
    }
    return out;
}

receive_error read_one(const std::vector<std::byte>& bytes, chunk& c) {
    byte_reader in{bytes};
    const auto error = read_chunk(in, limits, c);
    if (error == receive_error::none) {
        EXPECT_TRUE(in.empty());
    }
    return error;
}

TEST(Chunk, RunsRoundTrip) {
    std::array<std::byte, 600> buffer{};
    byte_writer out{buffer};
    run_writer run;
    run.begin(out, chunk_type::reliable, 65534);
    const auto a = filled(0, 1);
    const auto b = filled(130, 2);
    const auto c = filled(5, 3);
    run.add(out, a);
    run.add(out, b);
    run.add(out, c);
    EXPECT_EQ(run.next_id(), 1);
    run.finish(out);
    EXPECT_EQ(out.size(), run_header_bytes + run_writer::message_size(0) + run_writer::message_size(130) +
                              run_writer::message_size(5));
    chunk read;
    const std::vector<std::byte> bytes{out.written().begin(), out.written().end()}; // read's views point here
    ASSERT_EQ(read_one(bytes, read), receive_error::none);
    EXPECT_EQ(read.type, chunk_type::reliable);
    EXPECT_EQ(read.run.first_id, 65534);
    EXPECT_EQ(read.run.count, 3U);
    std::vector<std::vector<std::byte>> messages;
    for_each_message(read.run,
                     [&](std::span<const std::byte> m) { messages.emplace_back(m.begin(), m.end()); });
    EXPECT_EQ(messages, (std::vector<std::vector<std::byte>>{a, b, c}));
}

TEST(Chunk, FragmentsAndFragmentAcksRoundTrip) {
    std::array<std::byte, 1200> buffer{};
    const auto data = filled(1000, 4);
    byte_writer out{buffer};
    // total 2,500 in fragments of 1,000: fragment 2 holds the last 500 bytes.
    write_fragment(out, chunk_type::unreliable_fragment, 9, 2500, 1000, 2, std::span{data}.first(500));
    EXPECT_EQ(out.size(), fragment_chunk_size(2500, 1000, 2));
    chunk read;
    const std::vector<std::byte> bytes{out.written().begin(), out.written().end()}; // read's views point here
    ASSERT_EQ(read_one(bytes, read), receive_error::none);
    EXPECT_EQ(read.type, chunk_type::unreliable_fragment);
    EXPECT_EQ(read.frag.id, 9);
    EXPECT_EQ(read.frag.count, 3U);
    EXPECT_EQ(read.frag.index, 2U);
    EXPECT_EQ(read.frag.data.size(), 500U);

    byte_writer ack_out{buffer};
    const std::array<std::byte, 2> bitmap{std::byte{0x05}, std::byte{0x80}};
    write_fragment_ack(ack_out, 77, 10, bitmap);
    const std::vector<std::byte> ack_bytes{ack_out.written().begin(), ack_out.written().end()};
    ASSERT_EQ(read_one(ack_bytes, read), receive_error::none);
    EXPECT_EQ(read.type, chunk_type::fragment_ack);
    EXPECT_EQ(read.ack.id, 77);
    EXPECT_EQ(read.ack.first_missing, 10U);
    EXPECT_TRUE(bitmap_bit(read.ack.bitmap, 0));  // fragment 11
    EXPECT_FALSE(bitmap_bit(read.ack.bitmap, 1)); // fragment 12
    EXPECT_TRUE(bitmap_bit(read.ack.bitmap, 2));
    EXPECT_TRUE(bitmap_bit(read.ack.bitmap, 15));
    EXPECT_FALSE(bitmap_bit(read.ack.bitmap, 16));

    byte_writer u{buffer};
    write_unreliable(u, std::span{data}.first(300));
    EXPECT_EQ(u.size(), unreliable_chunk_size(300));
    const std::vector<std::byte> u_bytes{u.written().begin(), u.written().end()};
    ASSERT_EQ(read_one(u_bytes, read), receive_error::none);
    EXPECT_EQ(read.message.size(), 300U);
}

std::vector<std::byte> raw(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (int v : values) {
        out.push_back(static_cast<std::byte>(v));
    }
    return out;
}

TEST(Chunk, RefusesUnknownTypes) {
    chunk c;
    for (int type : {0x00, 0x07, 0x40, 0xFF}) {
        EXPECT_EQ(read_one(raw({type, 0, 0, 0}), c), receive_error::unknown_chunk) << type;
    }
}

TEST(Chunk, RefusesEmptyRunsAndTruncatedRunHeaders) {
    chunk c;
    EXPECT_EQ(read_one(raw({0x01, 0, 0, 0}), c), receive_error::empty_run);
    EXPECT_EQ(read_one(raw({0x06, 0, 0}), c), receive_error::truncated);
}

TEST(Chunk, RefusesLengthsPastTheEnd) {
    chunk c;
    EXPECT_EQ(read_one(raw({0x01, 0, 0, 1, 5, 1, 2, 3}), c), receive_error::length_past_end);
    EXPECT_EQ(read_one(raw({0x04, 3, 1, 2}), c), receive_error::length_past_end);
    // A fragment's implied length (1,000 bytes) past the end.
    EXPECT_EQ(read_one(raw({0x05, 0, 0, 0xD0, 0x0F, 0xE8, 0x07, 0, 1, 2, 3}), c),
              receive_error::length_past_end);
}

TEST(Chunk, RefusesMessagesAboveTheirLimits) {
    chunk c;
    // A redundant message of 257 bytes (limit 256), before looking for its bytes.
    EXPECT_EQ(read_one(raw({0x06, 0, 0, 1, 0x81, 0x02}), c), receive_error::message_too_big);
    // An unreliable message of 256 KiB + 1.
    EXPECT_EQ(read_one(raw({0x04, 0x81, 0x80, 0x10}), c), receive_error::message_too_big);
    // A fragment announcing a total of 256 KiB + 1.
    EXPECT_EQ(read_one(raw({0x05, 0, 0, 0x81, 0x80, 0x10, 0xE8, 0x07, 0}), c),
              receive_error::message_too_big);
}

TEST(Chunk, RefusesBadFragments) {
    chunk c;
    // index 3 of 3 fragments (total 2,500 in 1,000s)
    EXPECT_EQ(read_one(raw({0x02, 0, 0, 0xC4, 0x13, 0xE8, 0x07, 3}), c), receive_error::bad_fragment);
    // fragment size 0
    EXPECT_EQ(read_one(raw({0x02, 0, 0, 0xC4, 0x13, 0, 0}), c), receive_error::bad_fragment);
    // fragment size above a body
    EXPECT_EQ(read_one(raw({0x02, 0, 0, 0xC4, 0x13, 0xB0, 0x09, 0}), c), receive_error::bad_fragment);
    // total 0
    EXPECT_EQ(read_one(raw({0x05, 0, 0, 0, 0x01, 0}), c), receive_error::bad_fragment);
    // 256 KiB in 1-byte fragments: 262,144 fragments, above max_fragments (refused before any allocation)
    EXPECT_EQ(read_one(raw({0x05, 0, 0, 0x80, 0x80, 0x10, 0x01, 0}), c), receive_error::bad_fragment);
    // padded varint
    EXPECT_EQ(read_one(raw({0x05, 0, 0, 0x85, 0x00, 0x01, 0}), c), receive_error::bad_varint);
}

TEST(Chunk, RefusesBadFragmentAcks) {
    chunk c;
    // bitmap of 33 bytes
    auto long_bitmap = raw({0x03, 0, 0, 0, 33});
    long_bitmap.resize(long_bitmap.size() + 33, std::byte{1});
    EXPECT_EQ(read_one(long_bitmap, c), receive_error::bad_fragment_ack);
    // trailing zero byte (not canonical)
    EXPECT_EQ(read_one(raw({0x03, 0, 0, 0, 2, 1, 0}), c), receive_error::bad_fragment_ack);
    // first missing above max_fragments
    EXPECT_EQ(read_one(raw({0x03, 0, 0, 0x81, 0x08, 0}), c), receive_error::bad_fragment_ack);
    // a bit naming fragment 1,024 (first missing 1,015, bit 8)
    EXPECT_EQ(read_one(raw({0x03, 0, 0, 0xF7, 0x07, 2, 0, 1}), c), receive_error::bad_fragment_ack);
    EXPECT_EQ(read_one(raw({0x03, 0, 0, 0xF7, 0x07, 2, 0x80, 0}), c), receive_error::bad_fragment_ack);
    EXPECT_EQ(read_one(raw({0x03, 0, 0, 0xF7, 0x07, 1, 0x80}), c), receive_error::none); // fragment 1,023
    EXPECT_EQ(read_one(raw({0x03, 0, 0, 0xF7, 0x07, 3, 1}), c), receive_error::length_past_end);
}

TEST(Chunk, TheExampleBodyOfProtocolMd) {
    // docs/protocol.md section 9.2: sequence 5, ack 3, no loss, ack delay 0, one unreliable message "hi".
    std::array<std::byte, 32> buffer{};
    byte_writer out{buffer};
    write_header(out, packet_header{5, true, 3, 0xFFFFFFFF, 0});
    const std::array<std::byte, 2> hi{std::byte{'h'}, std::byte{'i'}};
    write_unreliable(out, hi);
    EXPECT_EQ(std::vector<std::byte>(out.written().begin(), out.written().end()),
              raw({0x01, 0x05, 0x00, 0x03, 0x00, 0x00, 0x04, 0x02, 0x68, 0x69}));
}

} // namespace
} // namespace ecsnet::transport::chunk_test
