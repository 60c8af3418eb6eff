#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header): the agreed API shape
// (BRIEF-LINK-API.md) with no reliability at all: messages of one channel packed into bodies, each
// message whole in one body (so at most one body's worth each). Only for building the security layer
// before the real link arrives.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "channel.hpp"
#include "clock.hpp"
#include "link_config.hpp"
#include "link_stats.hpp"
#include "receive_result.hpp"

namespace ecsnet::transport {

class link {
public:
    explicit link(link_config config = {});

    send_status send(channel ch, std::span<const std::byte> message, clock::time_point now);
    std::size_t write_packets(clock::time_point now,
                              const std::function<void(std::span<const std::byte>)>& sink);
    receive_result receive(std::span<const std::byte> body, clock::time_point now,
                           const std::function<void(channel, std::span<const std::byte>)>& deliver);
    [[nodiscard]] bool wants_to_send(clock::time_point now) const;
    [[nodiscard]] std::optional<clock::time_point> next_send_time(clock::time_point now) const;
    [[nodiscard]] clock::duration oldest_unacked_reliable_age(clock::time_point now) const;
    [[nodiscard]] const link_stats& stats() const noexcept { return stats_; }

private:
    link_config config_;
    std::vector<std::byte> queued_; // [channel][length u16][bytes]...
    link_stats stats_;
};

} // namespace ecsnet::transport
