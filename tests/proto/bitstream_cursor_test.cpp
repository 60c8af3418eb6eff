// Bit stream cursors (the hot loops' register copies of a writer's pending bits and a reader's position):
// writing and reading through a cursor gives exactly the bits and values of the direct calls, mixed with
// direct calls around seek(); on truncated, corrupted and overlong input the reader has failed, once the
// cursor is given back, exactly when the direct reader failed (a cursor counts the bits left only then),
// with the same values up to the failure, and nothing is read outside the buffer (AddressSanitizer).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/bitstream.hpp"

namespace ecsnet::proto::bitstream_cursor_test {
namespace {

struct op {
    bool eg{};
    std::uint64_t value{};
    unsigned bits{}; // fixed width, or k for eg
};

std::vector<op> random_ops(arena::scene_random& rng, std::size_t n) {
    std::vector<op> ops(n);
    for (auto& o : ops) {
        o.eg = rng.below(2) == 0;
        if (o.eg) {
            o.bits = static_cast<unsigned>(rng.below(rng.below(4) == 0 ? 32 : 6));
            const auto width = static_cast<unsigned>(rng.below(rng.below(8) == 0 ? 41 : 12));
            o.value = width == 0 ? 0 : (rng.next() >> (64 - width));
        } else {
            o.bits = static_cast<unsigned>(rng.below(58));
            o.value = o.bits == 0 ? 0 : (rng.next() >> (64 - o.bits));
        }
    }
    return ops;
}

// Writes ops[first, last) directly and the rest through a cursor, in stretches (`stretch` ops each).
std::string write_mixed(const std::vector<op>& ops, std::size_t stretch) {
    bit_writer w;
    std::size_t i = 0;
    bool through_cursor = false;
    while (i < ops.size()) {
        const auto end = std::min(ops.size(), i + stretch);
        if (through_cursor) {
            auto at = w.cursor();
            for (; i < end; ++i) {
                ops[i].eg ? w.put_eg(at, ops[i].value, ops[i].bits) : w.put(at, ops[i].value, ops[i].bits);
            }
            w.seek(at);
        } else {
            for (; i < end; ++i) {
                ops[i].eg ? w.put_eg(ops[i].value, ops[i].bits) : w.put(ops[i].value, ops[i].bits);
            }
        }
        through_cursor = !through_cursor;
    }
    std::string out;
    w.append_to(out);
    return out;
}

std::string write_direct(const std::vector<op>& ops) {
    bit_writer w;
    for (const auto& o : ops) {
        o.eg ? w.put_eg(o.value, o.bits) : w.put(o.value, o.bits);
    }
    std::string out;
    w.append_to(out);
    return out;
}

TEST(BitStreamCursor, WritingThroughACursorGivesTheSameBits) {
    arena::scene_random rng{21};
    for (int round = 0; round < 300; ++round) {
        const auto ops = random_ops(rng, 1 + rng.below(400));
        const auto direct = write_direct(ops);
        for (const std::size_t stretch : {std::size_t{1}, std::size_t{3}, std::size_t{50}, ops.size()}) {
            ASSERT_EQ(write_mixed(ops, stretch), direct) << "round " << round << " stretch " << stretch;
        }
    }
}

// Reads `ops` back from `bytes` directly and through cursors: while the direct reader has not failed, both
// agree value by value and in position; at the end of each stretch, they agree in failure. The ops'
// fixed-width reads use get_known through the cursor only where the bits are there (as the decoder does);
// eg reads go through the cursor whatever is left.
void expect_same_reads(const std::string& bytes, const std::vector<op>& ops, std::size_t stretch) {
    bit_reader direct{bytes};
    bit_reader mixed{bytes};
    const std::size_t size_bits = bytes.size() * 8;
    std::size_t i = 0;
    bool through_cursor = true;
    while (i < ops.size()) {
        const auto end = std::min(ops.size(), i + stretch);
        if (through_cursor) {
            auto at = mixed.cursor();
            for (; i < end; ++i) {
                const auto& o = ops[i];
                std::uint64_t got = 0;
                std::uint64_t want = 0;
                if (o.eg) {
                    got = mixed.get_eg(at, o.bits);
                    want = direct.get_eg(o.bits);
                } else if (o.bits != 0 && at.pos <= size_bits && o.bits <= size_bits - at.pos) {
                    got = bit_reader::get_known(at, o.bits);
                    want = direct.get(o.bits);
                } else {
                    mixed.seek(at);
                    got = mixed.get(o.bits);
                    want = direct.get(o.bits);
                    at = mixed.cursor();
                }
                if (!direct.ok()) {
                    break; // the cursor may read on past the end: only seek() tells
                }
                ASSERT_EQ(got, want) << "op " << i;
                ASSERT_EQ(at.pos, direct.position()) << "op " << i;
            }
            mixed.seek(at);
        } else {
            for (; i < end; ++i) {
                const auto& o = ops[i];
                ASSERT_EQ(o.eg ? mixed.get_eg(o.bits) : mixed.get(o.bits),
                          o.eg ? direct.get_eg(o.bits) : direct.get(o.bits))
                    << "op " << i;
            }
        }
        ASSERT_EQ(mixed.ok(), direct.ok()) << "op " << i;
        if (!direct.ok()) {
            EXPECT_EQ(mixed.remaining(), 0U);
            EXPECT_FALSE(mixed.at_padded_end());
            return; // a failed reader reads nothing more
        }
        ASSERT_EQ(mixed.position(), direct.position());
        ASSERT_EQ(mixed.remaining(), direct.remaining());
        through_cursor = !through_cursor;
    }
    EXPECT_EQ(mixed.at_padded_end(), direct.at_padded_end());
}

TEST(BitStreamCursor, ReadingThroughACursorGivesTheSameValues) {
    arena::scene_random rng{22};
    for (int round = 0; round < 300; ++round) {
        const auto ops = random_ops(rng, 1 + rng.below(400));
        const auto bytes = write_direct(ops);
        for (const std::size_t stretch : {std::size_t{1}, std::size_t{7}, ops.size()}) {
            expect_same_reads(bytes, ops, stretch);
            // And the values are the ones written.
            bit_reader in{bytes};
            auto at = in.cursor();
            for (std::size_t i = 0; i < ops.size(); ++i) {
                const auto& o = ops[i];
                const auto v =
                    o.eg ? in.get_eg(at, o.bits) : (o.bits == 0 ? 0 : bit_reader::get_known(at, o.bits));
                ASSERT_EQ(v, o.value) << "round " << round << " op " << i;
            }
            in.seek(at);
            EXPECT_TRUE(in.ok());
            EXPECT_TRUE(in.at_padded_end());
        }
    }
}

TEST(BitStreamCursor, TruncatedAndCorruptedInputFailsLikeTheDirectReader) {
    arena::scene_random rng{23};
    for (int round = 0; round < 400; ++round) {
        const auto ops = random_ops(rng, 1 + rng.below(200));
        auto bytes = write_direct(ops);
        if (rng.below(2) == 0) {
            bytes.resize(rng.below(bytes.size() + 1)); // truncated
        }
        for (int flips = static_cast<int>(rng.below(4)); flips > 0 && !bytes.empty(); --flips) {
            bytes[rng.below(bytes.size())] ^= static_cast<char>(1U << rng.below(8));
        }
        if (rng.below(8) == 0) {
            bytes.assign(rng.below(24), '\0'); // zeros: overlong exp-Golomb codes
        }
        expect_same_reads(bytes, ops, 1 + rng.below(20));
    }
}

TEST(BitStreamCursor, AFailedCursorReadsZerosAndLeavesNothing) {
    const std::string zeros(16, '\0'); // no terminating 1 bit anywhere: every exp-Golomb code is overlong
    bit_reader in{zeros};
    auto at = in.cursor();
    EXPECT_EQ(in.get_eg(at, 0), 0U);
    EXPECT_FALSE(in.ok());
    EXPECT_EQ(in.get_eg(at, 3), 0U);
    in.seek(at);
    EXPECT_FALSE(in.ok());
    EXPECT_EQ(in.remaining(), 0U);
}

// A code that starts before the end and runs past it: the cursor reads on into the zero padding, and the
// reader fails when the cursor comes back, however many codes were read after it.
TEST(BitStreamCursor, ACursorThatRunsPastTheEndFailsAtSeek) {
    for (unsigned cut = 1; cut <= 5; ++cut) {
        bit_writer w;
        w.put_eg(5, 0);    // 5 bits
        w.put_eg(1000, 4); // 15 bits
        std::string bytes;
        w.append_to(bytes);                                  // 20 bits: 3 bytes
        bit_reader in{std::string_view{bytes}.substr(0, 2)}; // the second code loses its last 4 bits
        auto at = in.cursor();
        EXPECT_EQ(in.get_eg(at, 0), 5U);
        static_cast<void>(in.get_eg(at, 4));
        for (unsigned more = 1; more < cut; ++more) {
            static_cast<void>(in.get_eg(at, more));
        }
        in.seek(at);
        EXPECT_FALSE(in.ok()) << cut;
        EXPECT_EQ(in.remaining(), 0U);
        EXPECT_FALSE(in.at_padded_end());
    }
}

} // namespace
} // namespace ecsnet::proto::bitstream_cursor_test
