// Instruction counts of the link layer's per-packet work against memcpy of the same bytes, for valgrind
// --tool=callgrind (repeatable on a loaded machine, unlike timings). The workloads of transport_bench.cpp,
// each in a function of its own, after a warm-up: compare the inclusive counts of
//   typical_ticks      1,000 ticks of a server and a client link (2,000 packets: a 300-byte snapshot one way,
//                      a 24-byte input and acks the other, a 100-byte reliable message every 30 ticks)
//   fragmented_10k     100 unreliable 10 kB messages: fragmented, received, reassembled (900 bodies), and
//                      100 ack bodies back
//   receive_snapshots  1,000 recorded snapshot bodies received
// with copy_bytes<1>, <2>, <3>: memcpy of the same byte counts, one call per body (bench/RESULTS.md,
// "Transport link layer").
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/link.cg build/bench/transport_callgrind
//   callgrind_annotate --inclusive=yes /tmp/link.cg | grep -E
//   "typical_ticks|fragmented_10k|receive_snapshots|copy_bytes"

#include <cstdio>
#include <cstring>
#include <vector>

#include "ecsnet/transport/link.hpp"

namespace {

using ecsnet::transport::channel;
using ecsnet::transport::clock;
using ecsnet::transport::link;
using namespace std::chrono_literals;

std::vector<std::byte> filled(std::size_t n, std::uint8_t seed) {
    std::vector<std::byte> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<std::byte>((i * 37 + seed) & 0xFF);
    }
    return out;
}

struct pair_of_links {
    link server;
    link client;
    clock::time_point now{std::chrono::hours{1}};
    std::size_t bytes{0};
    std::size_t delivered{0};

    void exchange() {
        const auto count = [this](channel, std::span<const std::byte> m) { delivered += m.size(); };
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

const auto snapshot = filled(300, 1);
const auto control = filled(100, 2);
const auto input = filled(24, 3);
const auto big = filled(10 * 1024, 4);

void tick(pair_of_links& p, std::uint64_t i) {
    p.now += 33ms;
    p.server.send(channel::unreliable, snapshot, p.now);
    if (i % 30 == 0) {
        p.server.send(channel::reliable, control, p.now);
    }
    p.client.send(channel::redundant, input, p.now);
    p.exchange();
}

[[gnu::noipa]] std::size_t typical_ticks(pair_of_links& p, int ticks) {
    p.bytes = 0;
    for (int i = 0; i < ticks; ++i) {
        tick(p, static_cast<std::uint64_t>(i));
    }
    return p.bytes;
}

[[gnu::noipa]] std::size_t fragmented_10k(pair_of_links& p, int messages) {
    p.bytes = 0;
    for (int i = 0; i < messages; ++i) {
        p.now += 33ms;
        p.server.send(channel::unreliable, big, p.now);
        p.exchange();
    }
    return p.bytes;
}

[[gnu::noipa]] std::size_t receive_snapshots(link& receiver,
                                             const std::vector<std::vector<std::byte>>& bodies) {
    auto now = clock::time_point{std::chrono::hours{1}};
    std::size_t delivered = 0;
    for (const auto& body : bodies) {
        now += 33ms;
        receiver.receive(body, now, [&](channel, std::span<const std::byte> m) { delivered += m.size(); });
    }
    return delivered;
}

// `bytes` copied in `pieces` memcpy calls (one per body), from one buffer to another; one function per
// workload, so that callgrind counts each floor apart (noipa: GCC would fold the identical copies).
template<int Workload>
[[gnu::noipa]] void copy_bytes(std::vector<std::byte>& to, const std::vector<std::byte>& from,
                               std::size_t bytes, std::size_t pieces) {
    const auto piece = bytes / pieces;
    for (std::size_t i = 0; i < pieces; ++i) {
        std::memcpy(to.data(), from.data() + (i % 8), piece);
        asm volatile("" : : "r"(to.data()) : "memory");
    }
}

} // namespace

int main() {
    pair_of_links typical;
    typical_ticks(typical, 300); // warm-up: buffers sized, RTT known
    const auto typical_bytes = typical_ticks(typical, 1000);

    pair_of_links fragments;
    fragmented_10k(fragments, 20);
    const auto fragment_bytes = fragmented_10k(fragments, 100);

    std::vector<std::vector<std::byte>> recorded;
    {
        link server;
        auto now = clock::time_point{std::chrono::hours{1}};
        for (int i = 0; i < 1000; ++i) {
            now += 33ms;
            server.send(channel::unreliable, snapshot, now);
            server.write_packets(
                now, [&](std::span<const std::byte> b) { recorded.emplace_back(b.begin(), b.end()); });
        }
    }
    std::size_t recorded_bytes = 0;
    for (const auto& b : recorded) {
        recorded_bytes += b.size();
    }
    link receiver;
    const auto delivered = receive_snapshots(receiver, recorded);

    std::vector<std::byte> from = filled(64 * 1024, 5);
    std::vector<std::byte> to(64 * 1024);
    copy_bytes<1>(to, from, typical_bytes, 2000);
    copy_bytes<2>(to, from, fragment_bytes, 1000);
    copy_bytes<3>(to, from, recorded_bytes, 1000);
    std::printf("typical ticks: %zu body bytes in 2,000 packets; 10 kB messages: %zu body bytes in 1,000 "
                "packets; snapshots: %zu body bytes, %zu delivered\n",
                typical_bytes, fragment_bytes, recorded_bytes, delivered);
    return 0;
}
