// Two links talking through network simulators (loss, duplication, reordering, latency, jitter), checked
// against a reference model of what each channel promises:
//  - reliable: every message delivered exactly once, in order, byte-exact;
//  - unreliable: what is delivered is a byte-exact subset of what was sent, nothing twice;
//  - redundant: exactly once, in order, except messages pushed out of a full window (counted), which may
//    be missing; the receiver's skip count matches.
// Randomized over seeds (bounded: a few seconds of CPU in all), plus the scenarios of the brief: big reliable
// messages at 20% and 30% loss, acks lost for long stretches, a peer that stops acking, sequence wraparound,
// RTT and loss estimates against the simulated network.

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include "ecsnet/transport/random.hpp"
#include "link_harness.hpp"

namespace ecsnet::transport::link_differential_test {
namespace {

using namespace testing;

// A message carrying its own serial number (first 8 bytes), so the model can find it.
bytes numbered_message(std::uint64_t serial, std::size_t size, std::uint64_t salt) {
    auto out = make_message(serial * 7919 + salt, std::max<std::size_t>(size, 8));
    std::memcpy(out.data(), &serial, 8);
    return out;
}

template<typename Duration>
double milliseconds(Duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

std::uint64_t serial_of(const bytes& message) {
    std::uint64_t serial = 0;
    std::memcpy(&serial, message.data(), 8);
    return serial;
}

// What one side sent, and the checks of what the other side delivered.
struct direction_model {
    std::vector<bytes> reliable;
    std::vector<bytes> unreliable;
    std::vector<bytes> redundant;
    std::vector<bool> redundant_overflowed;

    void send(link& from, channel ch, std::size_t size, std::uint64_t salt, clock::time_point now) {
        switch (ch) {
        case channel::reliable: {
            auto m = numbered_message(reliable.size(), size, salt);
            if (from.send(ch, as_bytes(m), now) == send_status::queued) {
                reliable.push_back(std::move(m));
            }
            break;
        }
        case channel::unreliable: {
            auto m = numbered_message(unreliable.size(), size, salt + 1);
            if (from.send(ch, as_bytes(m), now) == send_status::queued) {
                unreliable.push_back(std::move(m));
            }
            break;
        }
        case channel::redundant: {
            auto m = numbered_message(redundant.size(), size, salt + 2);
            // The pending messages are the last redundant_pending() sent: a full window drops the oldest.
            const auto pending = from.redundant_pending();
            if (pending == from.config().redundant_window) {
                redundant_overflowed[redundant.size() - pending] = true;
            }
            ASSERT_EQ(from.send(ch, as_bytes(m), now), send_status::queued);
            redundant.push_back(std::move(m));
            redundant_overflowed.push_back(false);
            break;
        }
        }
    }

    void check(const std::vector<delivered_message>& delivered, const link& sender, const link& receiver,
               bool everything_settled) const {
        std::size_t reliable_count = 0;
        std::set<std::uint64_t> unreliable_seen;
        std::vector<std::uint64_t> redundant_seen;
        for (const auto& m : delivered) {
            ASSERT_GE(m.data.size(), 8U);
            const auto serial = serial_of(m.data);
            switch (m.ch) {
            case channel::reliable:
                ASSERT_LT(reliable_count, reliable.size());
                ASSERT_EQ(m.data, reliable[reliable_count]) << "reliable message " << reliable_count;
                ++reliable_count;
                break;
            case channel::unreliable:
                ASSERT_LT(serial, unreliable.size());
                ASSERT_EQ(m.data, unreliable[serial]) << "unreliable message " << serial;
                ASSERT_TRUE(unreliable_seen.insert(serial).second)
                    << "unreliable message " << serial << " twice";
                break;
            case channel::redundant:
                ASSERT_LT(serial, redundant.size());
                ASSERT_EQ(m.data, redundant[serial]) << "redundant message " << serial;
                ASSERT_TRUE(redundant_seen.empty() || serial > redundant_seen.back())
                    << "redundant message " << serial << " out of order or twice";
                redundant_seen.push_back(serial);
                break;
            }
        }
        if (!everything_settled) {
            return;
        }
        EXPECT_EQ(reliable_count, reliable.size());
        std::size_t overflowed = 0;
        std::size_t missing = 0;
        std::size_t seen = 0;
        for (std::uint64_t serial = 0; serial < redundant.size(); ++serial) {
            overflowed += redundant_overflowed[serial] ? 1 : 0;
            const bool delivered_it = seen < redundant_seen.size() && redundant_seen[seen] == serial;
            seen += delivered_it ? 1 : 0;
            if (!delivered_it) {
                EXPECT_TRUE(redundant_overflowed[serial]) << "redundant message " << serial << " lost";
                ++missing;
            }
        }
        EXPECT_EQ(sender.stats().redundant_overflow, overflowed);
        EXPECT_EQ(receiver.stats().redundant_skipped, missing);
        EXPECT_EQ(receiver.stats().messages_delivered[static_cast<std::size_t>(channel::unreliable)],
                  unreliable_seen.size());
    }
};

struct traffic_settings {
    double send_probability{0.05}; // per side per millisecond
    double big_reliable{0.02};     // share of reliable messages that are blocks
    double big_unreliable{0.05};
    std::size_t big_reliable_max{70000};
    std::size_t big_unreliable_max{30000};
};

void random_traffic(link_pair& net, sim_random& rng, direction_model& model, side& from,
                    const traffic_settings& t) {
    if (rng.uniform() >= t.send_probability) {
        return;
    }
    const auto salt = rng.next();
    const double kind = rng.uniform();
    if (kind < 0.35) {
        const auto size =
            rng.uniform() < t.big_reliable ? 1200 + rng.below(t.big_reliable_max - 1200) : 1 + rng.below(400);
        model.send(from.l, channel::reliable, size, salt, net.now);
    } else if (kind < 0.7) {
        const auto size = rng.uniform() < t.big_unreliable ? 1200 + rng.below(t.big_unreliable_max - 1200)
                                                           : 1 + rng.below(1200);
        model.send(from.l, channel::unreliable, size, salt, net.now);
    } else {
        model.send(from.l, channel::redundant, 8 + rng.below(56), salt, net.now);
    }
}

sim_config random_network(sim_random& rng, std::uint64_t seed) {
    sim_config c;
    c.loss = rng.uniform() * 0.3;
    c.latency = std::chrono::microseconds{rng.below(80'000)};
    c.jitter = std::chrono::microseconds{rng.below(20'000)};
    c.duplicate = rng.uniform() * 0.1;
    c.reorder = rng.uniform() * 0.1;
    c.seed = seed;
    return c;
}

bool settled(const link_pair& net) {
    return net.a.l.reliable_queued_bytes() == 0 && net.b.l.reliable_queued_bytes() == 0 &&
           net.a.l.redundant_pending() == 0 && net.b.l.redundant_pending() == 0 && net.ab.in_flight() == 0 &&
           net.ba.in_flight() == 0;
}

void expect_no_malformed(const side& s) {
    for (const auto& r : s.refusals) {
        EXPECT_FALSE(r.malformed()) << to_string(r.error);
    }
}

// Lossy traffic both ways, then a clean network until everything is acked; every promise checked.
void run_random_session(std::uint64_t seed, const link_config& config, const traffic_settings& traffic,
                        clock::duration traffic_time) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    sim_random rng{seed};
    const auto ab = random_network(rng, seed * 2 + 1);
    const auto ba = random_network(rng, seed * 2 + 2);
    link_pair net{config, ab, ba};
    direction_model a_to_b;
    direction_model b_to_a;
    const auto end = net.now + traffic_time;
    while (net.now < end) {
        random_traffic(net, rng, a_to_b, net.a, traffic);
        random_traffic(net, rng, b_to_a, net.b, traffic);
        net.step();
    }
    a_to_b.check(net.b.delivered, net.a.l, net.b.l, false);
    b_to_a.check(net.a.delivered, net.b.l, net.a.l, false);
    net.ab.configure(sim_config{});
    net.ba.configure(sim_config{});
    ASSERT_TRUE(net.run_until([&] { return settled(net); }, 60s)) << "did not settle";
    a_to_b.check(net.b.delivered, net.a.l, net.b.l, true);
    b_to_a.check(net.a.delivered, net.b.l, net.a.l, true);
    // The session did exercise the channels (and, on lossy networks, the resends).
    EXPECT_GT(a_to_b.reliable.size(), 50U);
    EXPECT_GT(a_to_b.unreliable.size(), 50U);
    EXPECT_GT(a_to_b.redundant.size(), 50U);
    expect_no_malformed(net.a);
    expect_no_malformed(net.b);
    EXPECT_LE(net.a.largest_body, config.max_body_bytes);
    EXPECT_LE(net.b.largest_body, config.max_body_bytes);
}

TEST(LinkDifferential, RandomTrafficOnRandomNetworks) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        run_random_session(seed, link_config{}, traffic_settings{}, 8s);
    }
}

TEST(LinkDifferential, SmallLimitsUnderHeavyTraffic) {
    // Small windows and buffers: queue_full, redundant overflow and reassembly evictions all happen.
    link_config config;
    config.max_message_bytes = 40000;
    config.max_reliable_queue_bytes = 60000;
    config.max_unreliable_queue_bytes = 60000;
    config.reliable_window = 64;
    config.redundant_window = 4;
    config.max_reassembly_bytes = 50000;
    config.max_reassembly_groups = 3;
    config.reassembly_timeout = std::chrono::milliseconds{300};
    traffic_settings traffic;
    traffic.send_probability = 0.3;
    traffic.big_reliable = 0.05;
    traffic.big_unreliable = 0.2;
    traffic.big_reliable_max = 40000;
    traffic.big_unreliable_max = 40000;
    for (std::uint64_t seed = 100; seed < 120; ++seed) {
        run_random_session(seed, config, traffic, 4s);
    }
}

// How long a big reliable message takes at a given loss (both directions), in simulated time and round trips.
struct block_run {
    clock::duration elapsed{};
    double round_trips{};
    std::uint64_t resends{};
    std::uint64_t bodies{};
};

// `background`: the link has been up for 3 s and both sides send a 200-byte unreliable message every 33 ms
// (a game's snapshots and inputs), before and during the transfer; otherwise a fresh, idle link.
block_run send_block(double loss, std::size_t size, std::uint64_t seed, clock::duration rtt,
                     bool background) {
    sim_config network;
    network.loss = loss;
    network.latency = std::chrono::duration_cast<std::chrono::microseconds>(rtt / 2);
    network.seed = seed;
    auto back = network;
    back.seed = seed + 1000;
    link_pair net{link_config{}, network, back};
    const auto tick_message = make_message(seed + 7, 200);
    auto next_tick = net.now;
    const auto tick = [&] {
        if (background && net.now >= next_tick) {
            net.a.l.send(channel::unreliable, as_bytes(tick_message), net.now);
            net.b.l.send(channel::unreliable, as_bytes(tick_message), net.now);
            next_tick += 33ms;
        }
    };
    if (background) {
        const auto warm = net.now + 3s;
        while (net.now < warm) {
            tick();
            net.step();
        }
    }
    const auto message = make_message(seed, size);
    EXPECT_EQ(net.a.l.send(channel::reliable, as_bytes(message), net.now), send_status::queued);
    const auto start = net.now;
    const auto resends_before = net.a.l.stats().resends;
    const auto bodies_before = net.a.l.stats().packets_sent;
    const auto reliable_delivered = [&] {
        return std::count_if(net.b.delivered.begin(), net.b.delivered.end(),
                             [](const delivered_message& m) { return m.ch == channel::reliable; });
    };
    while (reliable_delivered() == 0 && net.now - start < 30s) {
        tick();
        net.step();
    }
    block_run run;
    run.elapsed = net.now - start;
    run.round_trips = std::chrono::duration<double>(run.elapsed) / std::chrono::duration<double>(rtt);
    run.resends = net.a.l.stats().resends - resends_before;
    run.bodies = net.a.l.stats().packets_sent - bodies_before;
    EXPECT_EQ(reliable_delivered(), 1);
    for (const auto& m : net.b.delivered) {
        if (m.ch == channel::reliable) {
            EXPECT_EQ(m.data, message);
        }
    }
    expect_no_malformed(net.b);
    return run;
}

void measure_blocks(bool background, clock::duration bound) {
    // 60 kB over a 100 ms round trip, 20% and 30% loss both ways (data and acks), 30 seeds each.
    for (const double loss : {0.2, 0.3}) {
        std::vector<double> trips;
        constexpr int runs = 30;
        for (int seed = 1; seed <= runs; ++seed) {
            const auto run = send_block(loss, 60000, static_cast<std::uint64_t>(seed), 100ms, background);
            trips.push_back(run.round_trips);
            EXPECT_LT(run.elapsed, bound) << "loss " << loss << " seed " << seed;
        }
        std::sort(trips.begin(), trips.end());
        double sum = 0;
        for (const auto t : trips) {
            sum += t;
        }
        std::printf(
            "60 kB at %.0f%% loss, 100 ms RTT, %s link: %.1f round trips on average, median %.1f, worst %.1f "
            "(%d runs)\n",
            loss * 100, background ? "busy" : "idle", sum / runs, trips[runs / 2], trips.back(), runs);
    }
}

TEST(LinkDifferential, BigReliableMessagesCompleteAtHeavyLoss) {
    measure_blocks(true, 1500ms);
}

TEST(LinkDifferential, BigReliableMessagesCompleteAtHeavyLossOnAFreshIdleLink) {
    measure_blocks(false, 2500ms);
}

TEST(LinkDifferential, AcksLostForLongStretches) {
    // The return path drops everything for 2 s at a time: data keeps going out, resends pile up on the
    // timer, and once acks come back every message has arrived exactly once, in order.
    sim_config forward;
    forward.loss = 0.1;
    forward.latency = 30ms;
    forward.seed = 7;
    sim_config backward = forward;
    backward.seed = 8;
    link_pair net{link_config{}, forward, backward};
    direction_model model;
    sim_random rng{9};
    for (int phase = 0; phase < 4; ++phase) {
        auto dead = backward;
        dead.loss = 1.0;
        net.ba.configure(phase % 2 == 0 ? dead : backward);
        const auto end = net.now + 2s;
        while (net.now < end) {
            if (rng.uniform() < 0.05) {
                model.send(net.a.l, channel::reliable, 1 + rng.below(300), rng.next(), net.now);
            }
            if (rng.uniform() < 0.03) {
                model.send(net.a.l, channel::redundant, 16, rng.next(), net.now);
            }
            net.step();
        }
        if (phase % 2 == 0) {
            // Nothing acked for 2 s: the oldest message waited about that long.
            EXPECT_GE(net.a.l.oldest_unacked_reliable_age(net.now), 1500ms);
        }
    }
    net.ba.configure(backward);
    ASSERT_TRUE(net.run_until([&] { return settled(net); }, 20s));
    model.check(net.b.delivered, net.a.l, net.b.l, true);
    EXPECT_GT(model.reliable.size(), 300U);
    EXPECT_GT(net.a.l.stats().resends, 0U);
    expect_no_malformed(net.a);
    expect_no_malformed(net.b);
}

TEST(LinkDifferential, APeerThatStopsAckingFillsTheQueue) {
    link_config config;
    config.max_reliable_queue_bytes = 256 * 1024;
    link_pair net{config, sim_config{}, sim_config{}};
    net.b.writes = false; // b receives but never sends: no acks
    const auto message = make_message(1, 1000);
    std::size_t queued = 0;
    send_status status = send_status::queued;
    while (status == send_status::queued) {
        status = net.a.l.send(channel::reliable, as_bytes(message), net.now);
        queued += status == send_status::queued ? 1 : 0;
        net.step(10ms);
    }
    EXPECT_EQ(status, send_status::queue_full);
    EXPECT_EQ(queued, 262U);                   // 262 x 1,000 bytes <= 256 KiB < 263 x 1,000
    EXPECT_EQ(net.b.delivered.size(), queued); // b got them all; it just never said so
    const auto age = net.a.l.oldest_unacked_reliable_age(net.now);
    net.step(5s);
    EXPECT_EQ(net.a.l.oldest_unacked_reliable_age(net.now), age + 5s);
    EXPECT_EQ(net.a.l.send(channel::reliable, as_bytes(message), net.now), send_status::queue_full);
    // Resent on the timer, not in every packet: well under one resend per message per step.
    EXPECT_GT(net.a.l.stats().resends, 0U);
    EXPECT_EQ(net.b.delivered.size(), queued); // resends are not delivered twice
    // Once b acks again, the queue drains and new messages are accepted.
    net.b.writes = true;
    ASSERT_TRUE(net.run_until([&] { return net.a.l.reliable_queued_bytes() == 0; }, 2s));
    EXPECT_EQ(net.a.l.oldest_unacked_reliable_age(net.now), clock::duration::zero());
    EXPECT_EQ(net.a.l.send(channel::reliable, as_bytes(message), net.now), send_status::queued);
}

TEST(LinkDifferential, SequenceNumbersWrapAround) {
    // Over 65,536 packets each way (70 s at 1,000 packets per second), 5% loss, every channel busy.
    sim_config network;
    network.loss = 0.05;
    network.latency = 5ms;
    network.reorder = 0.02;
    network.duplicate = 0.02;
    network.seed = 11;
    auto back = network;
    back.seed = 12;
    link_pair net{link_config{}, network, back};
    direction_model a_to_b;
    direction_model b_to_a;
    sim_random rng{13};
    std::uint64_t step = 0;
    while (net.a.l.stats().packets_sent < 70'000 || net.b.l.stats().packets_sent < 70'000) {
        // Reliable and redundant messages every step on both sides (so their ids wrap too), unreliable ones
        // every third step.
        a_to_b.send(net.a.l, channel::reliable, 8 + rng.below(64), rng.next(), net.now);
        a_to_b.send(net.a.l, channel::redundant, 8 + rng.below(32), rng.next(), net.now);
        if (step % 3 == 0) {
            a_to_b.send(net.a.l, channel::unreliable, 8 + rng.below(64), rng.next(), net.now);
        }
        b_to_a.send(net.b.l, channel::reliable, 8 + rng.below(64), rng.next(), net.now);
        b_to_a.send(net.b.l, channel::redundant, 8 + rng.below(32), rng.next(), net.now);
        net.step();
        ++step;
        ASSERT_LT(step, 200'000U);
    }
    // The estimates survived the wrap (5% loss, 2% of datagrams held back 20 ms).
    EXPECT_NEAR(milliseconds(net.a.l.stats().rtt), 10.0, 2.0);
    EXPECT_NEAR(net.a.l.stats().loss, 0.05, 0.04);
    net.ab.configure(sim_config{});
    net.ba.configure(sim_config{});
    ASSERT_TRUE(net.run_until([&] { return settled(net); }, 20s));
    a_to_b.check(net.b.delivered, net.a.l, net.b.l, true);
    b_to_a.check(net.a.delivered, net.b.l, net.a.l, true);
    EXPECT_GT(a_to_b.reliable.size(), 65536U); // message ids wrapped too
    EXPECT_GT(a_to_b.redundant.size(), 65536U);
    expect_no_malformed(net.a);
    expect_no_malformed(net.b);
}

// Both sides send a small unreliable message every `interval` (a game's tick).
void steady_traffic(link_pair& net, clock::duration duration, clock::duration interval) {
    const auto message = make_message(3, 100);
    const auto end = net.now + duration;
    auto next = net.now;
    while (net.now < end) {
        if (net.now >= next) {
            net.a.l.send(channel::unreliable, as_bytes(message), net.now);
            net.b.l.send(channel::unreliable, as_bytes(message), net.now);
            next += interval;
        }
        net.step();
    }
}

TEST(LinkDifferential, RttEstimateConvergesToTheSimulatedLatency) {
    for (const auto latency : {5ms, 40ms, 150ms}) {
        sim_config network;
        network.latency = latency;
        network.jitter = latency / 10;
        network.seed = 21;
        link_pair net{link_config{}, network, network};
        steady_traffic(net, 10s, 33ms);
        const double expected_ms = 2.0 * milliseconds(latency);
        const double measured_ms = milliseconds(net.a.l.stats().rtt);
        // Within 1 ms (the test's step) plus a tenth of the RTT (the jitter).
        EXPECT_NEAR(measured_ms, expected_ms, 1.0 + expected_ms / 10)
            << "latency " << latency.count() << " ms";
        EXPECT_GT(net.a.l.stats().rtt_var.count(), 0);
        EXPECT_LE(net.a.l.stats().min_rtt, net.a.l.stats().rtt);
    }
}

TEST(LinkDifferential, LossEstimateIsNearTheSimulatedLoss) {
    for (const double loss : {0.0, 0.05, 0.2, 0.3}) {
        sim_config network;
        network.loss = loss;
        network.latency = 30ms;
        network.seed = 31;
        auto back = network;
        back.seed = 32;
        link_pair net{link_config{}, network, back};
        steady_traffic(net, 30s, 16ms);
        const auto& stats = net.a.l.stats();
        EXPECT_NEAR(stats.loss, loss, 0.06) << "loss " << loss;
        // Over the whole run the count is exact up to the packets still in their ack window.
        const double counted = static_cast<double>(stats.packets_lost) /
                               static_cast<double>(stats.packets_lost + stats.packets_acked);
        EXPECT_NEAR(counted, loss, 0.02) << "counted, loss " << loss;
    }
}

} // namespace
} // namespace ecsnet::transport::link_differential_test
