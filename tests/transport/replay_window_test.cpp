// Replay protection against a reference model (every sequence accepted kept in a set): random streams of
// sequences, in order, reordered, duplicated and far behind, give the same verdicts.

#include <cstdint>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "ecsnet/transport/replay_window.hpp"

namespace replay_window_test {

namespace {

using ecsnet::transport::replay_window;

// The definition: new when never accepted and not 256 or more below the newest accepted.
struct reference_window {
    std::set<std::uint64_t> accepted;
    [[nodiscard]] bool check(std::uint64_t s) const {
        if (accepted.empty()) {
            return true;
        }
        const auto newest = *accepted.rbegin();
        if (s <= newest && newest - s >= replay_window::size) {
            return false;
        }
        return !accepted.contains(s);
    }
};

TEST(ReplayWindow, DuplicatesAreDropped) {
    replay_window window;
    ASSERT_TRUE(window.check(0));
    window.accept(0);
    EXPECT_FALSE(window.check(0));
    EXPECT_TRUE(window.check(1));
    window.accept(5);
    EXPECT_FALSE(window.check(5));
    EXPECT_TRUE(window.check(3)); // late but new
    window.accept(3);
    EXPECT_FALSE(window.check(3));
}

TEST(ReplayWindow, TooOldIsDropped) {
    replay_window window;
    window.accept(1000);
    EXPECT_TRUE(window.check(1000 - 255));
    EXPECT_FALSE(window.check(1000 - 256));
    EXPECT_FALSE(window.check(0));
}

TEST(ReplayWindow, AJumpForgetsWhatFellOutOfTheWindow) {
    replay_window window;
    for (std::uint64_t s = 0; s < 100; ++s) {
        window.accept(s);
    }
    window.accept(100 + 300);
    for (std::uint64_t s = 0; s < 100; ++s) {
        EXPECT_FALSE(window.check(s)); // too old now
    }
    EXPECT_TRUE(window.check(400 - 255)); // never received, inside the window
}

TEST(ReplayWindow, MatchesTheReferenceOnRandomStreams) {
    std::mt19937_64 random{7};
    for (int stream = 0; stream < 200; ++stream) {
        replay_window window;
        reference_window reference;
        std::uint64_t next = random() % 1000;
        for (int i = 0; i < 2000; ++i) {
            std::uint64_t s = 0;
            switch (random() % 6) {
            case 0: // a jump ahead, up to twice the window
                next += random() % 600;
                s = next++;
                break;
            case 1: // a duplicate or a late one, near the window's edge
                s = next > 0 ? next - 1 - random() % std::min<std::uint64_t>(next, 300) : 0;
                break;
            default: // in order, with small gaps
                next += random() % 3;
                s = next++;
                break;
            }
            const bool expected = reference.check(s);
            ASSERT_EQ(window.check(s), expected) << "stream " << stream << " step " << i << " sequence " << s;
            if (expected && random() % 10 != 0) { // 1 in 10 "fails to decrypt": not accepted
                window.accept(s);
                reference.accepted.insert(s);
            }
        }
    }
}

} // namespace

} // namespace replay_window_test
