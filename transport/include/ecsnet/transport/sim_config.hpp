#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header).

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace ecsnet::transport {

struct sim_config {
    double loss{};
    std::chrono::microseconds latency{};
    std::chrono::microseconds jitter{};
    double duplicate{};
    double reorder{};
    std::uint64_t seed{1};
    std::size_t max_datagrams{65536};
    [[nodiscard]] bool enabled() const noexcept {
        return loss > 0 || latency.count() > 0 || jitter.count() > 0 || duplicate > 0 || reorder > 0;
    }
};

} // namespace ecsnet::transport
