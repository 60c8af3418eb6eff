#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header).

#include <chrono>
#include <cstdint>

namespace ecsnet::transport {

struct link_stats {
    std::chrono::microseconds rtt{};
    std::chrono::microseconds rtt_var{};
    double loss{};
    std::uint64_t packets_sent{}, packets_received{}, packets_acked{};
    std::uint64_t bytes_sent{}, bytes_received{};
    std::uint64_t resends{};
    std::uint64_t messages_dropped{};
    std::uint64_t packets_refused{};
};

} // namespace ecsnet::transport
