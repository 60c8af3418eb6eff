// The link between two peers on a clean or simulated network: messages of every channel arrive, acks flow,
// ack-only packets, timers, what wants_to_send and next_send_time say, stats.

#include <gtest/gtest.h>

#include "link_harness.hpp"

namespace ecsnet::transport::link_test {
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

TEST(Link, AcksWaitForARideThenGoAlone) {
    link_pair net{link_config{}, sim_config{}, sim_config{}};
    const auto m = make_message(1, 50);
    net.a.l.send(channel::unreliable, as_bytes(m), net.now);
    net.step(); // a writes
    net.b.writes = false;
    net.step(); // b receives: one data packet unacked
    const auto received_at = net.now;
    EXPECT_FALSE(net.b.l.wants_to_send(net.now));
    EXPECT_EQ(net.b.l.next_send_time(net.now), received_at + net.b.l.config().max_ack_delay);
    EXPECT_FALSE(net.b.l.wants_to_send(received_at + 9ms));
    EXPECT_TRUE(net.b.l.wants_to_send(received_at + 10ms));
    // A second data packet makes the ack due at once.
    net.a.l.send(channel::unreliable, as_bytes(m), net.now);
    net.step();
    net.step();
    EXPECT_TRUE(net.b.l.wants_to_send(net.now));
    net.b.writes = true;
    net.step();
    EXPECT_EQ(net.b.l.stats().ack_only_sent, 1U);
    EXPECT_FALSE(net.b.l.wants_to_send(net.now));
    EXPECT_FALSE(net.b.l.next_send_time(net.now)); // nothing pending at all
    // Ack-only packets are not acked in turn: no ping-pong.
    for (int i = 0; i < 100; ++i) {
        net.step();
    }
    EXPECT_EQ(net.a.l.stats().ack_only_sent, 0U);
    EXPECT_EQ(net.b.l.stats().ack_only_sent, 1U);
}

TEST(Link, NothingToSendWritesNothing) {
    link l;
    const clock::time_point now{std::chrono::hours{1}};
    EXPECT_FALSE(l.wants_to_send(now));
    EXPECT_EQ(l.write_packets(now, [](std::span<const std::byte>) { FAIL(); }), 0U);
    EXPECT_EQ(l.oldest_unacked_reliable_age(now), clock::duration::zero());
}

TEST(Link, RedundantMessagesRideInEveryBodyAndRepeatOnATimer) {
    link_pair net{link_config{}, sim_config{}, sim_config{}};
    net.b.writes = false; // no acks: the inputs stay pending
    for (int i = 0; i < 3; ++i) {
        net.a.l.send(channel::redundant, as_bytes(make_message(static_cast<std::uint64_t>(i), 20)), net.now);
    }
    net.step();
    EXPECT_EQ(net.a.bodies_written, 1U);
    // Nothing new: the next body with them waits for the resend timeout.
    const auto sent_at = net.now;
    EXPECT_EQ(net.a.l.next_send_time(net.now), sent_at + net.a.l.resend_timeout());
    // Every body written carries them: an unreliable message now brings them along.
    net.a.l.send(channel::unreliable, as_bytes(make_message(9, 20)), net.now);
    net.step();
    EXPECT_EQ(net.a.bodies_written, 2U);
    net.step();
    EXPECT_EQ(net.b.delivered.size(), 4U); // delivered once each, the second copies dropped
    EXPECT_EQ(net.a.l.redundant_pending(), 3U);
    net.b.writes = true;
    ASSERT_TRUE(net.run_until([&] { return net.a.l.redundant_pending() == 0; }, 1s));
}

// A client pushing an input each time a snapshot arrives, to a server that writes once per 33 ms tick, 1
// to 10 ms into it (when its turn in the tick's send loop comes), and acks with its snapshots only: each
// input goes out once, with the snapshot's ack, and is never resent on a timer while the stream flows
// (the next input carries it anyway). Then the stream stops: the last input is resent on a timer, since no
// push will carry it.
TEST(Link, AnInputStreamIsNotResentOnATimerWhileItFlows) {
    link_pair net{link_config{}, sim_config{}, sim_config{}};
    net.b.writes = false;
    sim_random rng{7};
    std::uint64_t inputs = 0;
    std::size_t snapshots_seen = 0;
    auto tick_start = net.now;
    for (int tick = 0; tick < 90; ++tick) {
        const auto write_at =
            tick_start + std::chrono::milliseconds{1 + static_cast<std::int64_t>(rng.below(10))};
        tick_start += 33ms;
        while (net.now < tick_start) {
            const bool server_writes = net.now + 1ms == write_at;
            if (server_writes) {
                net.b.l.send(channel::unreliable,
                             as_bytes(make_message(static_cast<std::uint64_t>(1000 + tick), 40)), net.now);
            }
            net.b.writes = server_writes;
            net.step();
            if (net.a.delivered.size() > snapshots_seen) { // a snapshot: the client answers with an input
                snapshots_seen = net.a.delivered.size();
                net.a.l.send(channel::redundant, as_bytes(make_message(inputs++, 20)), net.now);
            }
        }
    }
    ASSERT_EQ(inputs, 90U); // one per snapshot
    EXPECT_EQ(net.a.bodies_written, inputs) << "bodies beyond one per input: timer resends";
    EXPECT_EQ(net.b.delivered.size(), inputs); // each once
    EXPECT_GE(net.a.l.redundant_pending(), 1U);
    // The stream stops: its last input goes again once the timeout has passed.
    const auto bodies = net.a.bodies_written;
    ASSERT_TRUE(net.run_until([&] { return net.a.bodies_written > bodies; }, 200ms));
    EXPECT_GE(net.a.l.redundant_pending(), 1U); // the server does not write: nothing acks it
}

TEST(Link, MessagesUpToOneBodyGoWholeAndBiggerOnesInFragments) {
    link_pair net{link_config{}, sim_config{}, sim_config{}};
    const auto whole = net.a.l.max_whole_message_bytes();
    EXPECT_EQ(whole, 1175U - 12 - 4 - 2);
    EXPECT_EQ(net.a.l.fragment_bytes(), 1175U - 12 - 10);
    for (const auto size : {whole, whole + 1}) {
        for (const auto ch : {channel::reliable, channel::unreliable}) {
            const auto before = net.a.l.stats().packets_sent;
            const auto m = make_message(size, size);
            ASSERT_EQ(net.a.l.send(ch, as_bytes(m), net.now), send_status::queued);
            net.step();
            EXPECT_EQ(net.a.l.stats().packets_sent - before, size == whole ? 1U : 2U);
            net.step();
            ASSERT_FALSE(net.b.delivered.empty());
            EXPECT_EQ(net.b.delivered.back().data, m);
            EXPECT_LE(net.a.largest_body, 1175U);
        }
    }
}

TEST(Link, SendStatuses) {
    link_config config;
    config.max_message_bytes = 5000;
    config.max_reliable_queue_bytes = 6000;
    config.max_unreliable_queue_bytes = 5000;
    config.redundant_window = 2;
    link l{config};
    const clock::time_point now{std::chrono::hours{1}};
    const auto m = [](std::size_t n) { return std::vector<std::byte>(n); };
    EXPECT_EQ(l.send(channel::reliable, m(5001), now), send_status::too_big);
    EXPECT_EQ(l.send(channel::unreliable, m(5001), now), send_status::too_big);
    EXPECT_EQ(l.send(channel::redundant, m(257), now), send_status::too_big);
    EXPECT_EQ(l.send(channel::reliable, m(5000), now), send_status::queued);
    EXPECT_EQ(l.send(channel::reliable, m(1001), now), send_status::queue_full);
    EXPECT_EQ(l.send(channel::unreliable, m(3000), now), send_status::queued);
    EXPECT_EQ(l.send(channel::unreliable, m(3000), now), send_status::queue_full); // until written
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(l.send(channel::redundant, m(10), now), send_status::queued); // never full: the oldest goes
    }
    EXPECT_EQ(l.stats().redundant_overflow, 3U);
    EXPECT_EQ(l.stats().messages_sent[static_cast<std::size_t>(channel::reliable)], 1U);
    EXPECT_EQ(l.stats().messages_sent[static_cast<std::size_t>(channel::redundant)], 5U);
    l.write_packets(now, [](std::span<const std::byte>) {});
    EXPECT_EQ(l.send(channel::unreliable, m(3000), now), send_status::queued);
    EXPECT_EQ(l.oldest_unacked_reliable_age(now + 3s), 3s);
}

TEST(Link, RefusesConfigsOutOfRange) {
    const auto bad = [](auto change) {
        link_config c;
        change(c);
        EXPECT_THROW(link{c}, std::invalid_argument);
    };
    bad([](link_config& c) { c.max_body_bytes = 100; });
    bad([](link_config& c) { c.max_message_bytes = 0; });
    bad([](link_config& c) { c.max_fragments = 10; }); // 256 KiB does not fit in 10 fragments
    bad([](link_config& c) { c.max_reliable_queue_bytes = 1000; });
    bad([](link_config& c) { c.reliable_window = 20000; });
    bad([](link_config& c) { c.redundant_window = 0; });
    bad([](link_config& c) { c.max_redundant_message_bytes = 1175; });
    bad([](link_config& c) { c.max_sequence_jump = 100; });
    bad([](link_config& c) { c.min_resend_delay = std::chrono::microseconds{0}; });
    bad([](link_config& c) { c.loss_smoothing = 0; });
    EXPECT_NO_THROW(link{link_config{}});
}

TEST(Link, PacesBigReliableDataToItsRate) {
    link_config config;
    config.reliable_send_rate = 100 * 1024; // 100 KiB/s
    config.reliable_send_burst = 16 * 1024;
    link_pair net{config, sim_config{}, sim_config{}};
    const auto big = make_message(1, 200 * 1024);
    ASSERT_EQ(net.a.l.send(channel::reliable, as_bytes(big), net.now), send_status::queued);
    net.step();
    // The first write sends the burst and a little more (the last chunk may overdraw), not 200 KiB.
    EXPECT_LE(net.a.l.stats().bytes_sent, 18U * 1024);
    const auto start = net.now;
    ASSERT_TRUE(net.run_until([&] { return !net.b.delivered.empty(); }, 5s));
    const double seconds = std::chrono::duration<double>(net.now - start).count();
    EXPECT_NEAR(seconds, (200.0 - 16.0) / 100.0, 0.2); // at the configured rate
    EXPECT_EQ(net.b.delivered.front().data, big);
}

TEST(Link, ASilentPeerGetsProbesNotTheWholeQueueAgain) {
    link_pair net{link_config{}, sim_config{}, sim_config{}};
    for (int i = 0; i < 200; ++i) {
        net.a.l.send(channel::reliable, as_bytes(make_message(static_cast<std::uint64_t>(i), 500)), net.now);
    }
    net.b.writes = false;
    net.step();
    // Resends on the timer (every RTO: 300 ms before any RTT sample) until 4 timeouts pass without an ack,
    // then one probe per timeout.
    for (int i = 0; i < 10000; ++i) {
        net.step();
    }
    const auto resends = net.a.l.stats().resends;
    EXPECT_LT(resends, 200U * 4 + 40U); // not 200 x (10 s / 300 ms) = 6,600
    EXPECT_GT(resends, 200U);
    EXPECT_LT(net.a.l.stats().bytes_sent,
              5U * 200 * 520); // the first send and 3 rounds of resends, then probes
    // When the peer comes back, everything arrives once and the queue drains.
    net.b.writes = true;
    ASSERT_TRUE(net.run_until([&] { return net.a.l.reliable_queued_bytes() == 0; }, 5s));
    EXPECT_EQ(net.b.delivered.size(), 200U);
}

TEST(Link, CountsWhatItDoes) {
    sim_config lossy;
    lossy.loss = 0.1;
    lossy.seed = 5;
    link_pair net{link_config{}, lossy, sim_config{}};
    for (int i = 0; i < 1000; ++i) {
        net.a.l.send(channel::unreliable, as_bytes(make_message(static_cast<std::uint64_t>(i), 100)),
                     net.now);
        net.step();
    }
    net.run_until([&] { return net.ab.in_flight() == 0 && net.ba.in_flight() == 0; }, 1s);
    const auto& a = net.a.l.stats();
    const auto& b = net.b.l.stats();
    EXPECT_EQ(a.packets_sent, 1000U);
    EXPECT_EQ(b.packets_received, net.ab.stats().delivered);
    EXPECT_EQ(b.packets_sent, a.packets_received);
    EXPECT_EQ(b.messages_delivered[static_cast<std::size_t>(channel::unreliable)], b.packets_received);
    EXPECT_GT(a.bytes_sent, 100U * 1000);
    EXPECT_LT(b.bytes_received, a.bytes_sent); // lost bodies never arrive
    EXPECT_NEAR(static_cast<double>(a.packets_lost) / 1000.0, 0.1, 0.03);
    // Every packet's fate is known but those of the last 32 lost ones (their ack window never passed).
    EXPECT_LE(a.packets_acked + a.packets_lost, 1000U);
    EXPECT_GE(a.packets_acked + a.packets_lost, 1000U - 32);
    EXPECT_EQ(b.packets_refused, 0U);
}

TEST(Link, ALostFragmentLosesItsMessageOnly) {
    link_config config;
    config.reassembly_timeout = std::chrono::milliseconds{200};
    link sender{config};
    link receiver{config};
    clock::time_point now{std::chrono::hours{1}};
    std::vector<bytes> got;
    const auto deliver = [&](channel ch, std::span<const std::byte> m) {
        EXPECT_EQ(ch, channel::unreliable);
        got.emplace_back(m.begin(), m.end());
    };
    const auto first = make_message(1, 5000);
    const auto second = make_message(2, 5000);
    sender.send(channel::unreliable, as_bytes(first), now);
    std::size_t body = 0;
    sender.write_packets(now, [&](std::span<const std::byte> b) {
        if (body++ != 2) { // the third of its five fragments is lost
            EXPECT_TRUE(receiver.receive(b, now, deliver));
        }
    });
    EXPECT_TRUE(got.empty());
    now += 10ms;
    sender.send(channel::unreliable, as_bytes(second), now);
    sender.write_packets(
        now, [&](std::span<const std::byte> b) { EXPECT_TRUE(receiver.receive(b, now, deliver)); });
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0], second);
    EXPECT_EQ(receiver.stats().messages_dropped, 0U); // not yet: it might still complete
    now += 300ms;
    receiver.write_packets(now, [](std::span<const std::byte>) {});
    EXPECT_EQ(receiver.stats().messages_dropped, 1U);
    EXPECT_EQ(receiver.stats().packets_refused, 0U);
}

} // namespace
} // namespace ecsnet::transport::link_test
