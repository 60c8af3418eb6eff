#pragma once

// Whether the tick is really advancing, judged from the tick counter alone: health pings to Agones are sent
// only while it changed within `stall` of now. Pure (the caller passes the counter and the time), so tests
// drive it with their own clock; the sdk_client samples ecsnet_ticks_total before each ping.

#include <chrono>
#include <cstdint>

namespace ecsnet::server::agones {

class tick_watchdog {
public:
    using clock = std::chrono::steady_clock;

    explicit tick_watchdog(clock::duration stall)
        : stall_{stall} {}

    /// Records the counter seen at `now`; returns whether the tick advanced within `stall` of `now`.
    /// The first observation counts as an advance (the tick gets `stall` to show it runs).
    bool advancing(std::uint64_t ticks, clock::time_point now) noexcept {
        if (!seen_ || ticks != last_ticks_) {
            seen_ = true;
            last_ticks_ = ticks;
            last_change_ = now;
        }
        return now - last_change_ < stall_;
    }

private:
    clock::duration stall_;
    bool seen_{false};
    std::uint64_t last_ticks_{0};
    clock::time_point last_change_{};
};

} // namespace ecsnet::server::agones
