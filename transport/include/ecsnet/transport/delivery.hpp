#pragma once

// Handing received messages up: link::receive's deliver(channel, message), with the counts the link keeps
// (per call and per channel). The channels' receive sides take one of these.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "channel.hpp"

namespace ecsnet::transport {

struct delivery {
    const deliver_function& deliver;
    std::size_t& delivered;
    std::array<std::uint64_t, channel_count>& per_channel;

    void operator()(channel ch, std::span<const std::byte> message) const {
        ++delivered;
        ++per_channel[static_cast<std::size_t>(ch)];
        if (deliver) {
            deliver(ch, message);
        }
    }
};

} // namespace ecsnet::transport
