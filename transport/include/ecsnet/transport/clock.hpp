#pragma once

// The transport's clock. Nothing in transport/ reads a clock: every function that needs the time takes
// `now`, so that links and the network simulator behave the same on every run of a test (simulated time)
// and the owner decides where time comes from (its event loop's steady clock).

#include <chrono>

namespace ecsnet::transport {

using clock = std::chrono::steady_clock;

} // namespace ecsnet::transport
