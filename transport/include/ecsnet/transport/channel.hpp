#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace ecsnet::transport {

enum class channel : std::uint8_t { reliable = 0, unreliable = 1, redundant = 2 };
inline constexpr std::size_t channel_count = 3;

using deliver_function = std::function<void(channel, std::span<const std::byte>)>;
using body_sink = std::function<void(std::span<const std::byte>)>;

enum class send_status : std::uint8_t { queued, too_big, queue_full };

} // namespace ecsnet::transport
