// The virtual wire's direction (bench/wire/, used by bench/tun_wire): packets classified by protocol, and
// a seeded randomized differential test against a plain reference model (the simulator's own fates, a list
// sorted by due time, a count limit) of what is delivered, when, in which order, and every count; the
// lateness histogram's bounds. The TUN devices and namespaces themselves need root: bench/transport_compare
// --check-wire checks them (bench/RESULTS.md).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ecsnet/transport/net_simulator.hpp"
#include "ecsnet/transport/random.hpp"
#include "wire/ip_packet.hpp"
#include "wire/wire_direction.hpp"

namespace ecsnet::bench::wire::wire_direction_test {
namespace {

using namespace std::chrono_literals;

const clock::time_point t0{std::chrono::hours{1}};

// An IP packet of `size` bytes (at least 1) whose header says `version` and `protocol`, numbered `n` in
// bytes 12..15 when it is long enough (IPv4's source address: what a test reads back).
std::vector<std::byte> packet(unsigned version, unsigned protocol, std::size_t size, std::uint32_t n = 0) {
    std::vector<std::byte> out(size, std::byte{0});
    out[0] = static_cast<std::byte>(version << 4 | 5);
    if (version == 4 && size > 9) {
        out[9] = static_cast<std::byte>(protocol);
    }
    if (version == 6 && size > 6) {
        out[6] = static_cast<std::byte>(protocol);
    }
    for (std::size_t i = 0; i < 4 && 12 + i < size; ++i) {
        out[12 + i] = static_cast<std::byte>((n >> (8 * i)) & 0xFF);
    }
    return out;
}

TEST(IpPacket, ClassifiesByTheFixedHeaderOnly) {
    EXPECT_EQ(classify(packet(4, 6, 40)), ip_protocol::tcp);
    EXPECT_EQ(classify(packet(4, 17, 28)), ip_protocol::udp);
    EXPECT_EQ(classify(packet(4, 1, 20)), ip_protocol::icmp);
    EXPECT_EQ(classify(packet(4, 47, 60)), ip_protocol::other); // GRE
    EXPECT_EQ(classify(packet(6, 17, 48)), ip_protocol::udp);
    EXPECT_EQ(classify(packet(6, 58, 40)), ip_protocol::icmp);
    EXPECT_EQ(classify(packet(6, 0, 80)), ip_protocol::other); // hop-by-hop extension header first
    EXPECT_EQ(classify(packet(4, 6, 19)), ip_protocol::other); // shorter than an IPv4 header
    EXPECT_EQ(classify(packet(6, 17, 39)), ip_protocol::other);
    EXPECT_EQ(classify(packet(5, 6, 40)), ip_protocol::other);
    EXPECT_EQ(classify({}), ip_protocol::other);
    EXPECT_EQ(to_string(ip_protocol::udp), "udp");
}

// The reference: fates from the simulator's schedule (same seed, one draw set per packet), held in a plain
// list with a count limit, released in (due, arrival) order; counts kept by hand.
struct reference_wire {
    struct held {
        clock::time_point due;
        std::uint64_t order;
        std::vector<std::byte> bytes;
    };

    explicit reference_wire(const transport::sim_config& c)
        : schedule{c}
        , limit{c.max_datagrams} {}

    void offer(const std::vector<std::byte>& p, clock::time_point now) {
        offered.add(p.size());
        const auto fate = schedule.next();
        if (fate.copies == 0) {
            lost.add(p.size());
            return;
        }
        for (std::uint8_t copy = 0; copy < fate.copies; ++copy) {
            if (queue.size() >= limit) {
                if (copy == 0) {
                    overflow.add(p.size());
                }
                return;
            }
            queue.push_back({now + fate.delay[copy], order++, p});
        }
    }

    std::vector<std::vector<std::byte>> due_by(clock::time_point now) {
        std::stable_sort(queue.begin(), queue.end(), [](const held& x, const held& y) {
            return x.due != y.due ? x.due < y.due : x.order < y.order;
        });
        std::vector<std::vector<std::byte>> out;
        while (!queue.empty() && queue.front().due <= now) {
            out.push_back(std::move(queue.front().bytes));
            queue.erase(queue.begin());
        }
        return out;
    }

    transport::sim_schedule schedule;
    std::size_t limit;
    std::vector<held> queue;
    std::uint64_t order{0};
    traffic offered, lost, overflow;
};

void expect_same(const traffic& got, const traffic& expected, const char* what) {
    EXPECT_EQ(got.packets, expected.packets) << what;
    EXPECT_EQ(got.bytes, expected.bytes) << what;
}

TEST(WireDirection, MatchesTheReferenceModelOnRandomTraffic) {
    const unsigned protocols[] = {6, 17, 1, 58, 99};
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        transport::sim_random random{seed * 7919};
        transport::sim_config c;
        c.loss = 0.3 * random.uniform();
        c.latency = std::chrono::microseconds{random.below(20'000)};
        c.jitter = std::chrono::microseconds{random.below(5'000)};
        c.duplicate = seed % 3 == 0 ? 0.1 : 0.0;
        c.reorder = seed % 4 == 0 ? 0.1 : 0.0;
        c.max_datagrams = 1 + random.below(40); // small, so that some runs overflow
        c.seed = seed;
        wire_direction wire{c};
        reference_wire model{c};

        auto now = t0;
        traffic delivered, failed, model_delivered, model_failed;
        std::array<traffic, ip_protocol_count> by_protocol{};
        std::uint32_t n = 0;
        for (int step = 0; step < 3000; ++step) {
            now += std::chrono::microseconds{random.below(2'000)};
            const auto arrivals = random.below(4);
            for (std::uint64_t i = 0; i < arrivals; ++i) {
                const auto version = random.below(5) == 0 ? 6U : 4U;
                const auto p = packet(version, protocols[random.below(5)], 20 + random.below(1481), n++);
                by_protocol[static_cast<std::size_t>(classify(p))].add(p.size());
                wire.offer(p, now);
                model.offer(p, now);
            }
            // The destination refuses some writes (a device down): counted, never retried.
            std::vector<bool> accepts;
            std::vector<std::vector<std::byte>> got;
            wire.release_due(now, [&](std::span<const std::byte> bytes) {
                got.emplace_back(bytes.begin(), bytes.end());
                accepts.push_back(random.below(10) != 0);
                return accepts.back();
            });
            const auto expected = model.due_by(now);
            ASSERT_EQ(got, expected) << "seed " << seed << " step " << step;
            for (std::size_t i = 0; i < got.size(); ++i) {
                (accepts[i] ? model_delivered : model_failed).add(expected[i].size());
            }
            ASSERT_EQ(wire.in_flight(), model.queue.size());
            if (model.queue.empty()) {
                EXPECT_FALSE(wire.next_due());
            } else {
                EXPECT_EQ(wire.next_due(),
                          std::min_element(model.queue.begin(), model.queue.end(),
                                           [](const auto& x, const auto& y) { return x.due < y.due; })
                              ->due);
            }
        }
        const auto& counts = wire.counters();
        expect_same(counts.offered, model.offered, "offered");
        expect_same(counts.lost, model.lost, "lost");
        expect_same(counts.overflow, model.overflow, "overflow");
        expect_same(counts.delivered, model_delivered, "delivered");
        expect_same(counts.write_failed, model_failed, "write_failed");
        for (std::size_t p = 0; p < ip_protocol_count; ++p) {
            expect_same(counts.offered_by_protocol[p], by_protocol[p], "by protocol");
        }
        if (c.duplicate == 0.0) {
            std::uint64_t held_bytes = 0;
            for (const auto& h : model.queue) {
                held_bytes += h.bytes.size();
            }
            EXPECT_EQ(counts.offered.packets, counts.lost.packets + counts.overflow.packets +
                                                  counts.delivered.packets + counts.write_failed.packets +
                                                  wire.in_flight());
            EXPECT_EQ(counts.offered.bytes, counts.lost.bytes + counts.overflow.bytes +
                                                counts.delivered.bytes + counts.write_failed.bytes +
                                                held_bytes);
        }
        EXPECT_LE(counts.max_in_flight, c.max_datagrams);
    }
}

TEST(WireDirection, LosesTheConfiguredFractionAndDelaysByTheLatency) {
    transport::sim_config c;
    c.loss = 0.05;
    c.latency = 50ms;
    c.seed = 42;
    wire_direction wire{c};
    auto now = t0;
    std::vector<clock::time_point> sent;
    std::size_t early = 0;
    for (std::uint32_t i = 0; i < 20'000; ++i) {
        wire.offer(packet(4, 17, 100, i), now);
        sent.push_back(now);
        now += 1ms;
        wire.release_due(now, [&](std::span<const std::byte> bytes) {
            const auto k = static_cast<std::uint32_t>(bytes[12]) |
                           static_cast<std::uint32_t>(bytes[13]) << 8 |
                           static_cast<std::uint32_t>(bytes[14]) << 16;
            early += now - sent[k] < 50ms ? 1 : 0;
            return true;
        });
    }
    const auto& counts = wire.counters();
    EXPECT_NEAR(static_cast<double>(counts.lost.packets) / 20'000.0, 0.05, 0.005);
    EXPECT_EQ(early, 0U);
    EXPECT_EQ(counts.delivered.packets + counts.lost.packets + wire.in_flight(), 20'000U);
    EXPECT_LE(wire.in_flight(), 50U); // at most the last 50 ms of packets
    // Released exactly on time in simulated time: every wake is 0 us late.
    EXPECT_EQ(counts.lateness.max_us(), 0U);
}

TEST(LatenessHistogram, BoundsEachQuantileWithinAFactorOfTwo) {
    lateness_histogram h;
    EXPECT_EQ(h.quantile_bound_us(0.99), 0U);
    for (int i = 0; i < 98; ++i) {
        h.record(std::chrono::microseconds{3}); // bucket [2, 4)
    }
    h.record(std::chrono::microseconds{700});  // bucket [512, 1024)
    h.record(std::chrono::microseconds{5000}); // bucket [4096, 8192)
    h.record(-std::chrono::microseconds{5});   // early counts as 0
    EXPECT_EQ(h.count(), 101U);
    EXPECT_EQ(h.max_us(), 5000U);
    EXPECT_EQ(h.quantile_bound_us(0.50), 4U);
    EXPECT_EQ(h.quantile_bound_us(0.98), 4U);
    EXPECT_EQ(h.quantile_bound_us(0.99), 1024U);
    EXPECT_EQ(h.quantile_bound_us(1.0), 8192U);
}

} // namespace
} // namespace ecsnet::bench::wire::wire_direction_test
