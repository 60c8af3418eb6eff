// Reassembly of fragmented unreliable messages: any order, duplicates ignored, bounded memory (bytes and
// messages in progress), newer messages evicting older incomplete ones, the timeout, counts of what is lost,
// and a randomized run against a reference model.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "ecsnet/transport/random.hpp"
#include "ecsnet/transport/reassembly_buffer.hpp"

namespace ecsnet::transport::reassembly_test {
namespace {

using namespace std::chrono_literals;

std::vector<std::byte> message_bytes(std::size_t n, std::uint64_t seed) {
    sim_random rng{seed};
    std::vector<std::byte> out(n);
    for (auto& b : out) {
        b = static_cast<std::byte>(rng.next() & 0xFF);
    }
    return out;
}

fragment piece(sequence_t id, const std::vector<std::byte>& message, std::uint32_t fragment_bytes,
               std::uint32_t index) {
    fragment f;
    f.id = id;
    f.total_bytes = static_cast<std::uint32_t>(message.size());
    f.fragment_bytes = fragment_bytes;
    f.index = index;
    f.count = fragment_count(f.total_bytes, fragment_bytes);
    f.data = std::span<const std::byte>{message}.subspan(
        std::size_t{index} * fragment_bytes, fragment_length(f.total_bytes, fragment_bytes, index));
    return f;
}

const clock::time_point t0{std::chrono::hours{1}};

TEST(Reassembly, PutsFragmentsBackTogetherInAnyOrder) {
    reassembly_buffer buffer{reassembly_limits{1 << 20, 4, 1s}};
    const auto message = message_bytes(2500, 1);
    EXPECT_FALSE(buffer.add(piece(7, message, 1000, 2), t0));
    EXPECT_FALSE(buffer.add(piece(7, message, 1000, 0), t0));
    EXPECT_FALSE(buffer.add(piece(7, message, 1000, 0), t0)); // a duplicate changes nothing
    EXPECT_EQ(buffer.in_progress(), 1U);
    const auto done = buffer.add(piece(7, message, 1000, 1), t0);
    ASSERT_TRUE(done);
    EXPECT_TRUE(std::equal(done->begin(), done->end(), message.begin(), message.end()));
    // Late fragments of a finished message do not start it again.
    EXPECT_FALSE(buffer.add(piece(7, message, 1000, 1), t0));
    EXPECT_EQ(buffer.in_progress(), 0U);
    EXPECT_EQ(buffer.dropped(), 0U);
}

TEST(Reassembly, KnowsWhichFragmentsDisagreeWithTheMessageInProgress) {
    reassembly_buffer buffer{reassembly_limits{1 << 20, 4, 1s}};
    const auto message = message_bytes(2500, 2);
    EXPECT_TRUE(buffer.consistent(piece(3, message, 1000, 0)));
    buffer.add(piece(3, message, 1000, 0), t0);
    EXPECT_TRUE(buffer.consistent(piece(3, message, 1000, 1)));
    EXPECT_FALSE(buffer.consistent(piece(3, message, 500, 1)));                 // another fragment size
    EXPECT_FALSE(buffer.consistent(piece(3, message_bytes(2400, 2), 1000, 1))); // another total
    EXPECT_TRUE(buffer.consistent(piece(4, message, 500, 1)));                  // another message
}

TEST(Reassembly, NewerMessagesEvictOlderIncompleteOnes) {
    reassembly_buffer buffer{reassembly_limits{1 << 20, 2, 1s}};
    const auto m = message_bytes(3000, 3);
    buffer.add(piece(10, m, 1000, 0), t0);
    buffer.add(piece(11, m, 1000, 0), t0);
    buffer.add(piece(12, m, 1000, 0), t0); // evicts 10, the oldest
    EXPECT_EQ(buffer.dropped(), 1U);
    EXPECT_EQ(buffer.in_progress(), 2U);
    buffer.add(piece(9, m, 1000, 0), t0); // older than everything held: dropped itself
    EXPECT_EQ(buffer.dropped(), 2U);
    buffer.add(piece(9, m, 1000, 1), t0); // counted once
    EXPECT_EQ(buffer.dropped(), 2U);
    EXPECT_FALSE(buffer.add(piece(10, m, 1000, 1), t0)); // the evicted one does not come back
    EXPECT_TRUE(buffer.add(piece(11, m, 1000, 1), t0) == std::nullopt);
    EXPECT_TRUE(buffer.add(piece(11, m, 1000, 2), t0).has_value());
}

TEST(Reassembly, MemoryStaysWithinTheLimit) {
    reassembly_buffer buffer{reassembly_limits{10000, 8, 1s}};
    const auto small = message_bytes(4000, 4);
    const auto big = message_bytes(12000, 5);
    buffer.add(piece(1, small, 1000, 0), t0);
    buffer.add(piece(2, small, 1000, 0), t0);
    EXPECT_EQ(buffer.held_bytes(), 8000U);
    buffer.add(piece(3, small, 1000, 0), t0); // needs 4,000 more: evicts message 1
    EXPECT_EQ(buffer.dropped(), 1U);
    EXPECT_LE(buffer.held_bytes(), 10000U);
    buffer.add(piece(4, big, 1000, 0), t0); // above the whole limit: dropped, nothing evicted
    EXPECT_EQ(buffer.dropped(), 2U);
    EXPECT_EQ(buffer.in_progress(), 2U);
    EXPECT_LE(buffer.held_bytes(), 10000U);
}

TEST(Reassembly, IncompleteMessagesTimeOut) {
    reassembly_buffer buffer{reassembly_limits{1 << 20, 4, 500ms}};
    const auto m = message_bytes(3000, 6);
    buffer.add(piece(1, m, 1000, 0), t0);
    buffer.expire(t0 + 499ms);
    EXPECT_EQ(buffer.in_progress(), 1U);
    buffer.expire(t0 + 500ms);
    EXPECT_EQ(buffer.in_progress(), 0U);
    EXPECT_EQ(buffer.dropped(), 1U);
}

TEST(Reassembly, RandomFragmentsAgainstAReferenceModel) {
    // Messages of random sizes cut in random fragment sizes, their fragments shuffled within a window,
    // some lost, some duplicated. Delivered messages must be byte-exact, each at most once; a message whose
    // fragments all arrived while it could be held must be delivered; memory stays within the limit.
    sim_random rng{7};
    const reassembly_limits limits{64 * 1024, 6, 2s};
    reassembly_buffer buffer{limits};
    std::vector<std::vector<std::byte>> messages;
    std::vector<fragment> pending;
    std::set<sequence_t> delivered;
    std::vector<std::uint32_t> fragment_sizes;
    std::map<sequence_t, std::set<std::uint32_t>> arrived;
    auto now = t0;
    for (int round = 0; round < 3000; ++round) {
        const auto id = static_cast<sequence_t>(messages.size());
        messages.push_back(message_bytes(1 + rng.below(20000), rng.next()));
        const auto fb = static_cast<std::uint32_t>(200 + rng.below(1000));
        fragment_sizes.push_back(fb);
        const auto& m = messages.back();
        for (std::uint32_t i = 0; i < fragment_count(static_cast<std::uint32_t>(m.size()), fb); ++i) {
            if (rng.below(100) < 3) {
                continue; // lost
            }
            pending.push_back(piece(id, m, fb, i));
            if (rng.below(100) < 3) {
                pending.push_back(piece(id, m, fb, i)); // duplicated
            }
        }
        // Deliver a shuffled part of what is pending.
        while (pending.size() > 20) {
            const auto k = rng.below(pending.size());
            const auto f = pending[k];
            pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
            arrived[f.id].insert(f.index);
            if (const auto done = buffer.add(f, now)) {
                ASSERT_TRUE(delivered.insert(f.id).second) << "message " << f.id << " twice";
                const auto& expected = messages[f.id];
                ASSERT_TRUE(std::equal(done->begin(), done->end(), expected.begin(), expected.end()));
            }
            ASSERT_LE(buffer.held_bytes(), limits.max_bytes);
            ASSERT_LE(buffer.in_progress(), limits.max_groups);
        }
        now += 1ms;
        buffer.expire(now);
    }
    // A message all of whose fragments arrived but that was not delivered was counted as dropped (evicted,
    // timed out, or refused for room); dropped messages were not delivered.
    std::uint64_t complete_not_delivered = 0;
    for (const auto& [id, indices] : arrived) {
        const auto count =
            fragment_count(static_cast<std::uint32_t>(messages[id].size()), fragment_sizes[id]);
        if (indices.size() == count && delivered.count(id) == 0) {
            ++complete_not_delivered;
        }
    }
    EXPECT_LE(complete_not_delivered, buffer.dropped());
    EXPECT_GT(complete_not_delivered, 0U); // the limits were hit
    EXPECT_GT(delivered.size(), messages.size() / 4);
    EXPECT_LE(delivered.size() + buffer.dropped(), messages.size());
}

} // namespace
} // namespace ecsnet::transport::reassembly_test
