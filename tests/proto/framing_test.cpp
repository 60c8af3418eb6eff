// Framing: length-prefixed frames, the incremental decoder fed in every split, the size limit enforced on
// the prefix before any allocation, and malformed prefixes refused with an error value.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/framing.hpp"

namespace ecsnet::proto::framing_test {
namespace {

std::vector<std::string> decode_all(frame_decoder& decoder, std::string_view bytes,
                                    result<void>* status = nullptr) {
    std::vector<std::string> frames;
    auto r = decoder.feed(bytes, [&](std::string_view frame) { frames.emplace_back(frame); });
    if (status != nullptr) {
        *status = std::move(r);
    } else {
        EXPECT_TRUE(r) << r.message();
    }
    return frames;
}

TEST(Framing, PrefixIsAVarintOfTheLength) {
    std::string out;
    append_length_prefix(out, 0);
    append_length_prefix(out, 127);
    append_length_prefix(out, 128);
    append_length_prefix(out, 300);
    EXPECT_EQ(out, std::string("\x00\x7f\x80\x01\xac\x02", 6));
    EXPECT_EQ(framed_size(0), 1U);
    EXPECT_EQ(framed_size(127), 128U);
    EXPECT_EQ(framed_size(128), 130U);
    EXPECT_EQ(framed_size(1U << 20), (1U << 20) + 3);
}

TEST(Framing, RoundTripOfManyFramesInOneBuffer) {
    std::string stream;
    std::vector<std::string> sent;
    for (std::size_t size : {0U, 1U, 5U, 127U, 128U, 1000U, 20000U}) {
        sent.emplace_back(size, static_cast<char>('a' + size % 26));
        ASSERT_TRUE(append_frame(stream, sent.back()));
    }
    frame_decoder decoder;
    EXPECT_EQ(decode_all(decoder, stream), sent);
    EXPECT_EQ(decoder.buffered(), 0U);
}

TEST(Framing, EverySplitOfTheStreamGivesTheSameFrames) {
    std::string stream;
    std::vector<std::string> sent;
    arena::scene_random rng{5};
    for (int n = 0; n < 12; ++n) {
        std::string frame(rng.below(300), '\0');
        for (auto& ch : frame) {
            ch = static_cast<char>(rng.below(256));
        }
        sent.push_back(frame);
        ASSERT_TRUE(append_frame(stream, frame));
    }
    // Two pieces at every cut point, then random piece sizes (including 1-byte pieces).
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        frame_decoder decoder;
        auto frames = decode_all(decoder, std::string_view{stream}.substr(0, cut));
        auto rest = decode_all(decoder, std::string_view{stream}.substr(cut));
        frames.insert(frames.end(), rest.begin(), rest.end());
        ASSERT_EQ(frames, sent) << "cut at " << cut;
        ASSERT_EQ(decoder.buffered(), 0U);
    }
    for (int round = 0; round < 200; ++round) {
        frame_decoder decoder;
        std::vector<std::string> frames;
        for (std::size_t at = 0; at < stream.size();) {
            const auto piece =
                std::min<std::size_t>(stream.size() - at, 1 + rng.below(round % 2 == 0 ? 3 : 200));
            auto got = decode_all(decoder, std::string_view{stream}.substr(at, piece));
            frames.insert(frames.end(), got.begin(), got.end());
            at += piece;
        }
        ASSERT_EQ(frames, sent);
    }
}

TEST(Framing, OversizedFrameIsRefusedOnItsPrefix) {
    frame_decoder decoder{1U << 20};
    std::string prefix;
    append_length_prefix(prefix, (1U << 20) + 1);
    result<void> status;
    const auto frames = decode_all(decoder, prefix, &status);
    EXPECT_TRUE(frames.empty());
    ASSERT_FALSE(status);
    EXPECT_EQ(status.code(), errc::frame_too_large);
    EXPECT_EQ(status.message(), "frame of 1048577 bytes exceeds the 1 MiB limit");
    EXPECT_TRUE(decoder.failed());
    // Nothing was buffered for the announced frame, and the decoder stays failed.
    EXPECT_EQ(decoder.buffered(), 0U);
    EXPECT_FALSE(decoder.feed("x", [](std::string_view) {}));
    decoder.reset();
    EXPECT_FALSE(decoder.failed());
}

TEST(Framing, OversizedFrameIsRefusedEvenByteByByte) {
    frame_decoder decoder{100};
    std::string prefix;
    append_length_prefix(prefix, 101);
    result<void> status;
    for (char ch : prefix) {
        status = decoder.feed(std::string_view{&ch, 1}, [](std::string_view) { FAIL(); });
    }
    EXPECT_EQ(status.code(), errc::frame_too_large);
}

TEST(Framing, AtTheLimitIsAccepted) {
    frame_decoder decoder{100};
    std::string stream;
    ASSERT_TRUE(append_frame(stream, std::string(100, 'x'), 100));
    EXPECT_EQ(decode_all(decoder, stream).size(), 1U);
    std::string too_big;
    EXPECT_EQ(append_frame(too_big, std::string(101, 'x'), 100).code(), errc::frame_too_large);
    EXPECT_TRUE(too_big.empty());
}

TEST(Framing, OverlongOrHugePrefixIsRefused) {
    for (const std::string& bad :
         {std::string("\x80\x80\x80\x80\x80\x01", 6), std::string("\xff\xff\xff\xff\x7f", 5)}) {
        frame_decoder decoder{~std::size_t{0}};
        result<void> status;
        decode_all(decoder, bad, &status);
        EXPECT_EQ(status.code(), errc::bad_length_prefix);
    }
}

TEST(Framing, StopsWhenTheCallbackSaysSo) {
    std::string stream;
    ASSERT_TRUE(append_frame(stream, "one"));
    ASSERT_TRUE(append_frame(stream, "two"));
    frame_decoder decoder;
    int calls = 0;
    EXPECT_TRUE(decoder.feed(stream, [&](std::string_view) {
        ++calls;
        return false;
    }));
    EXPECT_EQ(calls, 1);
}

// Random bytes never crash the decoder, and what it holds stays bounded by the limit.
TEST(Framing, RandomBytesAreHandledWithinBounds) {
    arena::scene_random rng{11};
    for (int round = 0; round < 2000; ++round) {
        frame_decoder decoder{1000};
        std::string bytes(rng.below(64), '\0');
        for (auto& ch : bytes) {
            ch = static_cast<char>(rng.below(256));
        }
        std::size_t total = 0;
        const auto status = decoder.feed(bytes, [&](std::string_view frame) { total += frame.size(); });
        EXPECT_LE(decoder.buffered(), 1000U + max_length_prefix_size);
        if (!status) {
            EXPECT_TRUE(status.code() == errc::frame_too_large || status.code() == errc::bad_length_prefix);
        }
    }
}

} // namespace
} // namespace ecsnet::proto::framing_test
