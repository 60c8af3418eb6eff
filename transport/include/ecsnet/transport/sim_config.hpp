#pragma once

// The network simulator's settings (net_simulator.hpp), off by default, like GameNetworkingSockets' fake
// loss and lag settings (FakePacketLoss, FakePacketLag, FakePacketReorder with its extra time, FakePacketDup
// with its maximum delay), plus jitter.

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace ecsnet::transport {

struct sim_config {
    double loss{}; // 0..1: fraction of datagrams dropped
    std::chrono::microseconds latency{};
    /// Each datagram's delay is latency + a uniform draw in [-jitter, +jitter] (never below 0), so jitter
    /// alone reorders datagrams sent closer together than it.
    std::chrono::microseconds jitter{};
    double duplicate{}; // 0..1: fraction of datagrams delivered twice
    /// A duplicate arrives a uniform draw in [0, duplicate_delay] after its original.
    std::chrono::microseconds duplicate_delay{std::chrono::milliseconds{10}};
    double reorder{}; // 0..1: fraction of datagrams held back by reorder_delay (arriving after later ones)
    std::chrono::microseconds reorder_delay{std::chrono::milliseconds{20}};
    /// Datagrams held at once; more are dropped (counted as overflow), so memory stays bounded.
    std::size_t max_datagrams{65536};
    std::uint64_t seed{1};

    [[nodiscard]] bool enabled() const noexcept {
        return loss > 0.0 || latency.count() > 0 || jitter.count() > 0 || duplicate > 0.0 || reorder > 0.0;
    }
};

} // namespace ecsnet::transport
