// The network simulator: deterministic for a seed, the configured loss, latency, jitter, duplication and
// reordering (measured over many datagrams), pass-through when disabled, addresses, bounded memory.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ecsnet/transport/net_simulator.hpp"

namespace ecsnet::transport::net_simulator_test {
namespace {

using namespace std::chrono_literals;

const clock::time_point t0{std::chrono::hours{1}};

std::vector<std::byte> datagram(std::uint32_t n) {
    std::vector<std::byte> out(4);
    for (int i = 0; i < 4; ++i) {
        out[static_cast<std::size_t>(i)] = static_cast<std::byte>((n >> (8 * i)) & 0xFF);
    }
    return out;
}
std::uint32_t number(std::span<const std::byte> d) {
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i) {
        n |= static_cast<std::uint32_t>(d[static_cast<std::size_t>(i)]) << (8 * i);
    }
    return n;
}

struct arrival {
    std::uint32_t n;
    clock::time_point at;
};

// Submits `count` datagrams 1 ms apart and collects every arrival (stepping 100 µs).
std::vector<arrival> run(const sim_config& config, std::uint32_t count) {
    net_simulator sim{config};
    std::vector<arrival> out;
    auto now = t0;
    std::uint32_t next = 0;
    const auto end = t0 + std::chrono::milliseconds{count} + 2s;
    while (now < end) {
        if (next < count && now >= t0 + std::chrono::milliseconds{next}) {
            sim.submit(datagram(next), now);
            ++next;
        }
        sim.deliver_due(now, [&](std::span<const std::byte> d) { out.push_back({number(d), now}); });
        now += 100us;
    }
    EXPECT_EQ(sim.in_flight(), 0U);
    return out;
}

TEST(NetSimulator, IsOffByDefaultAndPassesDatagramsThrough) {
    EXPECT_FALSE(sim_config{}.enabled());
    net_simulator sim;
    sim.submit(datagram(1), t0);
    sim.submit(datagram(2), t0);
    EXPECT_EQ(sim.next_due(), t0);
    std::vector<std::uint32_t> got;
    EXPECT_EQ(sim.deliver_due(t0, [&](std::span<const std::byte> d) { got.push_back(number(d)); }), 2U);
    EXPECT_EQ(got, (std::vector<std::uint32_t>{1, 2}));
    EXPECT_FALSE(sim.next_due());
}

TEST(NetSimulator, SameSeedSameFate) {
    sim_config c;
    c.loss = 0.2;
    c.latency = 30ms;
    c.jitter = 10ms;
    c.duplicate = 0.1;
    c.reorder = 0.1;
    c.seed = 99;
    const auto first = run(c, 2000);
    const auto second = run(c, 2000);
    ASSERT_EQ(first.size(), second.size());
    for (std::size_t i = 0; i < first.size(); ++i) {
        ASSERT_EQ(first[i].n, second[i].n);
        ASSERT_EQ(first[i].at, second[i].at);
    }
    c.seed = 100;
    const auto third = run(c, 2000);
    bool differs = third.size() != first.size();
    for (std::size_t i = 0; !differs && i < first.size(); ++i) {
        differs = first[i].n != third[i].n;
    }
    EXPECT_TRUE(differs);
}

TEST(NetSimulator, DropsTheConfiguredFraction) {
    sim_config c;
    c.loss = 0.25;
    c.seed = 1;
    const auto got = run(c, 20000);
    EXPECT_NEAR(static_cast<double>(got.size()) / 20000.0, 0.75, 0.015);
}

TEST(NetSimulator, DelaysByLatencyAndJitter) {
    sim_config c;
    c.latency = 50ms;
    c.jitter = 10ms;
    c.seed = 2;
    const auto got = run(c, 5000);
    ASSERT_EQ(got.size(), 5000U);
    double sum = 0;
    for (const auto& a : got) {
        const auto delay = a.at - (t0 + std::chrono::milliseconds{a.n});
        EXPECT_GE(delay, 40ms);
        EXPECT_LE(delay, 60ms + 100us); // plus the collection step
        sum += std::chrono::duration<double, std::milli>(delay).count();
    }
    EXPECT_NEAR(sum / 5000.0, 50.0, 0.5);
    // Jitter wider than the send interval reorders.
    bool reordered = false;
    for (std::size_t i = 1; i < got.size(); ++i) {
        reordered = reordered || got[i].n < got[i - 1].n;
    }
    EXPECT_TRUE(reordered);
}

TEST(NetSimulator, DuplicatesAndReordersTheConfiguredFractions) {
    sim_config c;
    c.latency = 10ms;
    c.duplicate = 0.1;
    c.duplicate_delay = 5ms;
    c.reorder = 0.05;
    c.reorder_delay = 20ms;
    c.seed = 3;
    net_simulator sim{c};
    const auto got = run(c, 20000);
    EXPECT_NEAR(static_cast<double>(got.size()) / 20000.0, 1.1, 0.01);
    std::size_t late = 0;
    for (const auto& a : got) {
        late += a.at - (t0 + std::chrono::milliseconds{a.n}) >= 30ms ? 1 : 0;
    }
    // The reordered ones (and their duplicates) arrive 20 ms late.
    EXPECT_NEAR(static_cast<double>(late) / 20000.0, 0.05 * 1.1, 0.01);
}

TEST(NetSimulator, CarriesAnAddressAndBoundsWhatItHolds) {
    sim_config c;
    c.latency = 1ms;
    c.max_datagrams = 3;
    basic_net_simulator<std::string> sim{c};
    for (std::uint32_t i = 0; i < 5; ++i) {
        sim.submit(datagram(i), t0, "peer " + std::to_string(i));
    }
    EXPECT_EQ(sim.in_flight(), 3U);
    EXPECT_EQ(sim.stats().overflow, 2U);
    std::vector<std::string> to;
    EXPECT_EQ(sim.deliver_due(t0, [&](std::span<const std::byte>, const std::string&) { FAIL(); }), 0U);
    sim.deliver_due(t0 + 1ms,
                    [&](std::span<const std::byte>, const std::string& address) { to.push_back(address); });
    EXPECT_EQ(to, (std::vector<std::string>{"peer 0", "peer 1", "peer 2"}));
    // New settings apply to what is submitted next.
    c.loss = 1.0;
    sim.configure(c);
    sim.submit(datagram(9), t0, "x");
    EXPECT_EQ(sim.in_flight(), 0U);
    EXPECT_EQ(sim.stats().lost, 1U);
}

} // namespace
} // namespace ecsnet::transport::net_simulator_test
