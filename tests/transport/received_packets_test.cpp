// The receive window of packet sequences: duplicates, stale and too-far-ahead packets, and the ack fields,
// against a reference set, across the wrap.

#include <gtest/gtest.h>

#include <set>

#include "ecsnet/transport/random.hpp"
#include "ecsnet/transport/received_packets.hpp"

namespace ecsnet::transport::received_packets_test {
namespace {

TEST(ReceivedPackets, AcksTheNewestAndTheThirtyOneBefore) {
    received_packets r;
    const clock::time_point t{};
    EXPECT_FALSE(r.any());
    EXPECT_EQ(r.check(100, 4096), received_packets::verdict::fresh);
    r.record(100, t);
    r.record(102, t + std::chrono::milliseconds{1});
    r.record(101, t + std::chrono::milliseconds{2});
    EXPECT_EQ(r.newest(), 102);
    EXPECT_EQ(r.ack_bits(), 0b111U);
    EXPECT_EQ(r.newest_time(), t + std::chrono::milliseconds{1}); // when 102 arrived
    EXPECT_EQ(r.check(101, 4096), received_packets::verdict::duplicate);
    EXPECT_EQ(r.check(102, 4096), received_packets::verdict::duplicate);
    r.record(140, t);
    EXPECT_EQ(r.ack_bits(), 1U); // 38 ahead: the old bits scrolled out
    EXPECT_EQ(r.check(102, 4096), received_packets::verdict::duplicate); // still remembered (window 1,024)
    EXPECT_EQ(r.check(103, 4096), received_packets::verdict::fresh);
    EXPECT_EQ(r.check(static_cast<sequence_t>(140 - 1024), 4096), received_packets::verdict::stale);
    EXPECT_EQ(r.check(static_cast<sequence_t>(140 + 4096), 4096), received_packets::verdict::too_far_ahead);
    EXPECT_EQ(r.check(static_cast<sequence_t>(140 + 4095), 4096), received_packets::verdict::fresh);
}

TEST(ReceivedPackets, AgreesWithAReferenceSetAcrossTheWrap) {
    sim_random rng{3};
    received_packets r;
    std::set<std::uint32_t> received; // unwrapped sequences
    std::uint32_t newest = 65000;     // unwrapped
    bool any = false;
    const clock::time_point t{};
    for (int i = 0; i < 300000; ++i) {
        // Around the newest: ahead (mostly), behind, or far.
        std::int64_t offset = static_cast<std::int64_t>(rng.below(6)) - 2;
        if (rng.below(50) == 0) {
            offset = static_cast<std::int64_t>(rng.below(3000)) - 1500;
        }
        const auto unwrapped =
            static_cast<std::uint32_t>(std::max<std::int64_t>(0, std::int64_t{newest} + offset));
        const auto seq = static_cast<sequence_t>(unwrapped);
        received_packets::verdict expected = received_packets::verdict::fresh;
        if (any) {
            if (unwrapped > newest) {
                expected = unwrapped - newest >= 1000 ? received_packets::verdict::too_far_ahead
                                                      : received_packets::verdict::fresh;
            } else if (newest - unwrapped >= received_packets::window) {
                expected = received_packets::verdict::stale;
            } else if (received.count(unwrapped) != 0) {
                expected = received_packets::verdict::duplicate;
            }
        }
        ASSERT_EQ(r.check(seq, 1000), expected) << i;
        if (expected != received_packets::verdict::fresh) {
            continue;
        }
        r.record(seq, t);
        received.insert(unwrapped);
        newest = any ? std::max(newest, unwrapped) : unwrapped;
        any = true;
        std::uint32_t bits = 0;
        for (std::uint32_t n = 0; n < 32 && n <= newest; ++n) {
            bits |= received.count(newest - n) != 0 ? 1U << n : 0U;
        }
        ASSERT_EQ(r.newest(), static_cast<sequence_t>(newest));
        ASSERT_EQ(r.ack_bits(), bits) << i;
        while (!received.empty() && *received.begin() + 2 * received_packets::window < newest) {
            received.erase(received.begin());
        }
    }
}

} // namespace
} // namespace ecsnet::transport::received_packets_test
