// The transport's link layer (transport/): what a packet costs the server, against memcpy of the same
// bytes in the same run (bench/RESULTS.md, "Transport link layer").
//
//   BM_LinkTypicalTick        one game tick between a server link and a client link, in memory: the server
//                             sends a 300-byte snapshot (unreliable) and, one tick in 30, a 100-byte control
//                             message (reliable); the client sends a 24-byte input (redundant, so the last
//                             few ride along). Each side writes one body, the other receives it: two packets
//                             per iteration, with their acks, RTT and loss bookkeeping. `per_packet` =
//                             time/2.
//   BM_MemcpyTypicalTick      floor: memcpy of the same two bodies' bytes
//   BM_LinkFragment10k        a 10 kB unreliable message: fragmented into 9 bodies, received, reassembled,
//                             delivered; the receiver's ack body back
//   BM_MemcpyFragment10k      floor: memcpy of the same bodies' bytes
//   BM_LinkReceiveSnapshot    receive() alone of recorded snapshot bodies (without acks: the recorded sender
//                             never heard back, so a fresh receiver accepts them all)
//   BM_MemcpySnapshot         floor: memcpy of the same bodies
// `allocs` counts heap allocations per iteration in the steady state (should be 0).

#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecsnet/transport/link.hpp"

#include "allocation_counter.hpp"

namespace {

using namespace ecsnet::transport;
using namespace std::chrono_literals;
// Not plain `link`: with the using-directive above it would also name POSIX link(2) from <unistd.h>.
using ecsnet::transport::link;

std::vector<std::byte> filled(std::size_t n, std::uint8_t seed) {
    std::vector<std::byte> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<std::byte>((i * 37 + seed) & 0xFF);
    }
    return out;
}

// A server link and a client link exchanging the typical tick.
struct tick_pair {
    link server;
    link client;
    clock::time_point now{std::chrono::hours{1}};
    std::vector<std::byte> snapshot = filled(300, 1);
    std::vector<std::byte> control = filled(100, 2);
    std::vector<std::byte> input = filled(24, 3);
    std::uint64_t tick{0};
    std::size_t bytes{0}; // body bytes of the last tick
    std::size_t delivered{0};

    void step() {
        now += 33ms;
        server.send(channel::unreliable, snapshot, now);
        if (tick++ % 30 == 0) {
            server.send(channel::reliable, control, now);
        }
        client.send(channel::redundant, input, now);
        bytes = 0;
        const auto count = [this](channel, std::span<const std::byte>) { ++delivered; };
        server.write_packets(now, [&](std::span<const std::byte> body) {
            bytes += body.size();
            client.receive(body, now, count);
        });
        client.write_packets(now, [&](std::span<const std::byte> body) {
            bytes += body.size();
            server.receive(body, now, count);
        });
    }
};

void BM_LinkTypicalTick(benchmark::State& state) {
    tick_pair pair;
    for (int i = 0; i < 200; ++i) {
        pair.step(); // warm up: buffers sized, RTT known
    }
    ecsnet::test_support::reset_allocation_count();
    ecsnet::test_support::count_allocations(true);
    for (auto _ : state) {
        pair.step();
    }
    ecsnet::test_support::count_allocations(false);
    state.counters["allocs"] = benchmark::Counter(
        static_cast<double>(ecsnet::test_support::allocations_counted()), benchmark::Counter::kAvgIterations);
    state.counters["per_packet"] =
        benchmark::Counter(2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.counters["body_bytes"] = static_cast<double>(pair.bytes);
    benchmark::DoNotOptimize(pair.delivered);
}
BENCHMARK(BM_LinkTypicalTick);

// memcpy of `bytes` (the same count a link benchmark moves), from one buffer to another.
void memcpy_floor(benchmark::State& state, std::size_t bytes, int packets) {
    std::vector<std::byte> from = filled(bytes, 9);
    std::vector<std::byte> to(bytes);
    for (auto _ : state) {
        std::memcpy(to.data(), from.data(), bytes);
        benchmark::DoNotOptimize(to.data());
        benchmark::ClobberMemory();
    }
    state.counters["per_packet"] = benchmark::Counter(packets, benchmark::Counter::kIsIterationInvariantRate |
                                                                   benchmark::Counter::kInvert);
}

void BM_MemcpyTypicalTick(benchmark::State& state) {
    tick_pair pair;
    for (int i = 0; i < 200; ++i) {
        pair.step();
    }
    memcpy_floor(state, pair.bytes, 2);
}
BENCHMARK(BM_MemcpyTypicalTick);

struct fragment_pair {
    link sender;
    link receiver;
    clock::time_point now{std::chrono::hours{1}};
    std::vector<std::byte> message = filled(10 * 1024, 4);
    std::size_t bytes{0};
    std::size_t delivered{0};

    void step() {
        now += 33ms;
        sender.send(channel::unreliable, message, now);
        bytes = 0;
        const auto count = [this](channel, std::span<const std::byte> m) { delivered += m.size(); };
        sender.write_packets(now, [&](std::span<const std::byte> body) {
            bytes += body.size();
            receiver.receive(body, now, count);
        });
        receiver.write_packets(now, [&](std::span<const std::byte> body) {
            bytes += body.size();
            sender.receive(body, now, count);
        });
    }
};

void BM_LinkFragment10k(benchmark::State& state) {
    fragment_pair pair;
    for (int i = 0; i < 50; ++i) {
        pair.step();
    }
    ecsnet::test_support::reset_allocation_count();
    ecsnet::test_support::count_allocations(true);
    for (auto _ : state) {
        pair.step();
    }
    ecsnet::test_support::count_allocations(false);
    state.counters["allocs"] = benchmark::Counter(
        static_cast<double>(ecsnet::test_support::allocations_counted()), benchmark::Counter::kAvgIterations);
    state.counters["body_bytes"] = static_cast<double>(pair.bytes);
    benchmark::DoNotOptimize(pair.delivered);
}
BENCHMARK(BM_LinkFragment10k);

void BM_MemcpyFragment10k(benchmark::State& state) {
    fragment_pair pair;
    for (int i = 0; i < 50; ++i) {
        pair.step();
    }
    memcpy_floor(state, pair.bytes, 1);
}
BENCHMARK(BM_MemcpyFragment10k);

// Recorded snapshot bodies (as the client receives them), replayed into fresh receivers.
struct recorded_snapshots {
    std::vector<std::vector<std::byte>> bodies;
    std::size_t bytes{0};
    recorded_snapshots() {
        link server;
        auto now = clock::time_point{std::chrono::hours{1}};
        const auto snapshot = filled(300, 5);
        for (int i = 0; i < 1000; ++i) {
            now += 33ms;
            server.send(channel::unreliable, snapshot, now);
            server.write_packets(now, [&](std::span<const std::byte> body) {
                bodies.emplace_back(body.begin(), body.end());
                bytes += body.size();
            });
        }
    }
};

const recorded_snapshots& snapshots() {
    static const recorded_snapshots recorded;
    return recorded;
}

void BM_LinkReceiveSnapshot(benchmark::State& state) {
    const auto& recorded = snapshots();
    std::size_t delivered = 0;
    const deliver_function count = [&](channel, std::span<const std::byte> m) { delivered += m.size(); };
    link receiver;
    auto now = clock::time_point{std::chrono::hours{1}};
    std::size_t next = 0;
    ecsnet::test_support::reset_allocation_count();
    ecsnet::test_support::count_allocations(true);
    for (auto _ : state) {
        if (next == recorded.bodies.size()) {
            state.PauseTiming();
            receiver = link{};
            next = 0;
            state.ResumeTiming();
        }
        now += 33ms;
        receiver.receive(recorded.bodies[next++], now, count);
    }
    ecsnet::test_support::count_allocations(false);
    state.counters["allocs"] = benchmark::Counter(
        static_cast<double>(ecsnet::test_support::allocations_counted()), benchmark::Counter::kAvgIterations);
    benchmark::DoNotOptimize(delivered);
}
BENCHMARK(BM_LinkReceiveSnapshot);

void BM_MemcpySnapshot(benchmark::State& state) {
    const auto& recorded = snapshots();
    memcpy_floor(state, recorded.bytes / recorded.bodies.size(), 1);
}
BENCHMARK(BM_MemcpySnapshot);

} // namespace

BENCHMARK_MAIN();
