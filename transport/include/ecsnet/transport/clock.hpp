#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header): the transport's clock.

#include <chrono>

namespace ecsnet::transport {

using clock = std::chrono::steady_clock;

} // namespace ecsnet::transport
