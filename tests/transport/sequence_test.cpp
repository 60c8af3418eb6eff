// 16-bit sequence numbers (comparison across the wrap) and the sequence buffer, against a reference model.

#include <gtest/gtest.h>

#include <map>

#include "ecsnet/transport/random.hpp"
#include "ecsnet/transport/sequence.hpp"
#include "ecsnet/transport/sequence_buffer.hpp"

namespace ecsnet::transport::sequence_test {
namespace {

TEST(Sequence, ComparesAcrossTheWrap) {
    EXPECT_TRUE(sequence_greater_than(1, 0));
    EXPECT_FALSE(sequence_greater_than(0, 0));
    EXPECT_TRUE(sequence_greater_than(0, 65535));
    EXPECT_TRUE(sequence_greater_than(10, 65530));
    EXPECT_TRUE(sequence_less_than(65530, 10));
    EXPECT_TRUE(sequence_greater_than(32767, 0));
    EXPECT_FALSE(sequence_greater_than(32768, 0)); // exactly half apart: neither is newer
    EXPECT_FALSE(sequence_less_than(32768, 0));
    EXPECT_EQ(sequence_distance(3, 65534), 5);
    EXPECT_EQ(sequence_distance(65534, 3), 65531);
}

struct item {
    int value{-1};
};

TEST(SequenceBuffer, FindsWhatWasInsertedWithinTheWindow) {
    sequence_buffer<item, 16> buffer;
    EXPECT_TRUE(buffer.empty());
    EXPECT_EQ(buffer.find(0), nullptr);
    buffer.insert(5)->value = 5;
    buffer.insert(6)->value = 6;
    ASSERT_NE(buffer.find(5), nullptr);
    EXPECT_EQ(buffer.find(5)->value, 5);
    EXPECT_EQ(buffer.find(21), nullptr); // same slot as 5, another sequence
    EXPECT_EQ(buffer.newest(), 6);
    // A jump forgets the skipped sequences' slots and pushes out the one N behind.
    buffer.insert(21)->value = 21;
    EXPECT_EQ(buffer.find(5), nullptr);
    EXPECT_NE(buffer.find(6), nullptr);
    EXPECT_EQ(buffer.find(21)->value, 21);
    // Too old for the window.
    EXPECT_EQ(buffer.insert(5), nullptr);
    // Older but within the window.
    EXPECT_NE(buffer.insert(10), nullptr);
    buffer.remove(10);
    EXPECT_FALSE(buffer.contains(10));
    sequence_t held = 0;
    EXPECT_NE(buffer.occupant(22, held), nullptr);
    EXPECT_EQ(held, 6);
    buffer.reset();
    EXPECT_TRUE(buffer.empty());
    EXPECT_EQ(buffer.find(21), nullptr);
}

TEST(SequenceBuffer, AgreesWithAReferenceModelAcrossTheWrap) {
    // The model: a map of the sequences held; a sequence is held when it was inserted, not removed, and
    // is within 64 of the newest inserted, with no jump over it since.
    sim_random rng{42};
    sequence_buffer<item, 64> buffer;
    std::map<sequence_t, int> model;
    sequence_t newest = 65000;
    bool any = false;
    for (int op = 0; op < 200000; ++op) {
        const auto r = rng.below(100);
        if (r < 60) {
            // Mostly the next sequences, sometimes a jump, sometimes an older one.
            sequence_t seq = static_cast<sequence_t>(newest + 1 + (rng.below(10) == 0 ? rng.below(200) : 0));
            if (rng.below(8) == 0) {
                seq = static_cast<sequence_t>(newest - rng.below(100));
            }
            if (!any) {
                seq = newest;
            }
            auto* entry = buffer.insert(seq);
            const bool too_old =
                any && sequence_less_than(seq, newest) && sequence_distance(newest, seq) >= 64;
            ASSERT_EQ(entry == nullptr, too_old) << seq;
            if (entry != nullptr) {
                if (!any || sequence_greater_than(seq, newest)) {
                    // Everything not within 64 of the new newest, and the skipped sequences, are gone.
                    for (auto it = model.begin(); it != model.end();) {
                        const bool skipped =
                            sequence_greater_than(it->first, newest) && sequence_less_than(it->first, seq);
                        if (sequence_distance(seq, it->first) >= 64 || skipped) {
                            it = model.erase(it);
                        } else {
                            ++it;
                        }
                    }
                    newest = seq;
                    any = true;
                }
                entry->value = op;
                model[seq] = op;
            }
        } else if (r < 70) {
            const auto seq = static_cast<sequence_t>(newest - rng.below(70));
            buffer.remove(seq);
            model.erase(seq);
        } else {
            const auto seq = static_cast<sequence_t>(newest - rng.below(100) + rng.below(20));
            const auto* entry = buffer.find(seq);
            const auto it = model.find(seq);
            ASSERT_EQ(entry != nullptr, it != model.end()) << "op " << op << " seq " << seq;
            if (entry != nullptr) {
                ASSERT_EQ(entry->value, it->second);
            }
        }
    }
}

} // namespace
} // namespace ecsnet::transport::sequence_test
