// The link between two peers on a clean or simulated network: messages of every channel arrive, acks flow,
// ack-only packets, timers, what wants_to_send and next_send_time say, stats.

#include <gtest/gtest.h>

#include "link_harness.hpp"

namespace ecsnet::transport {
namespace {

using namespace testing;

TEST(Link, SmallMessagesOfEveryChannelArriveOnACleanNetwork) {
    link_pair net{link_config{}, sim_config{}, sim_config{}};
    const auto r = make_message(1, 100);
    const auto u = make_message(2, 200);
    const auto d = make_message(3, 30);
    ASSERT_EQ(net.a.l.send(channel::reliable, as_bytes(r), net.now), send_status::queued);
    ASSERT_EQ(net.a.l.send(channel::unreliable, as_bytes(u), net.now), send_status::queued);
    ASSERT_EQ(net.a.l.send(channel::redundant, as_bytes(d), net.now), send_status::queued);
    net.step(); // a writes
    net.step(); // b receives
    ASSERT_EQ(net.b.delivered.size(), 3U);
    EXPECT_EQ(net.b.delivered[0].ch, channel::redundant);
    EXPECT_EQ(net.b.delivered[0].data, d);
    EXPECT_EQ(net.b.delivered[1].ch, channel::reliable);
    EXPECT_EQ(net.b.delivered[1].data, r);
    EXPECT_EQ(net.b.delivered[2].ch, channel::unreliable);
    EXPECT_EQ(net.b.delivered[2].data, u);
    EXPECT_EQ(net.a.bodies_written, 1U);
    // b owes an ack: it sends an ack-only body (one data packet unacked: after max_ack_delay).
    net.run_until([&] { return net.a.l.reliable_queued_bytes() == 0 && net.a.l.redundant_pending() == 0; },
                  100ms);
    EXPECT_EQ(net.a.l.reliable_queued_bytes(), 0U);
    EXPECT_EQ(net.a.l.redundant_pending(), 0U);
    EXPECT_EQ(net.b.l.stats().ack_only_sent, 1U);
    EXPECT_TRUE(net.a.refusals.empty());
    EXPECT_TRUE(net.b.refusals.empty());
}

TEST(Link, BigMessagesAreFragmentedAndReassembled) {
    link_pair net{link_config{}, sim_config{}, sim_config{}};
    const auto big_reliable = make_message(4, 60000);
    const auto big_unreliable = make_message(5, 20000);
    ASSERT_EQ(net.a.l.send(channel::reliable, as_bytes(big_reliable), net.now), send_status::queued);
    ASSERT_EQ(net.a.l.send(channel::unreliable, as_bytes(big_unreliable), net.now), send_status::queued);
    ASSERT_TRUE(net.run_until([&] { return net.b.delivered.size() == 2; }, 2s));
    for (const auto& m : net.b.delivered) {
        EXPECT_EQ(m.data, m.ch == channel::reliable ? big_reliable : big_unreliable);
    }
    EXPECT_NE(net.b.delivered[0].ch, net.b.delivered[1].ch);
    EXPECT_LE(net.a.largest_body, net.a.l.config().max_body_bytes);
    EXPECT_TRUE(net.b.refusals.empty());
    ASSERT_TRUE(net.run_until([&] { return net.a.l.reliable_queued_bytes() == 0; }, 1s));
}

} // namespace
} // namespace ecsnet::transport
