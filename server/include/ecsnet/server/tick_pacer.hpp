#pragma once

// Fixed-rate pacing of the tick loop without spiralling: ticks start on a grid of period 1/rate; a tick
// that ends past the start of the next one is an overrun, and the next tick then starts at once and the
// grid restarts from there. Missed slots are counted, never replayed in a burst: under overload the
// simulation runs slower than real time instead of falling further behind.

#include <chrono>
#include <cstdint>

namespace ecsnet::server {

class tick_pacer {
public:
    using clock = std::chrono::steady_clock;

    struct decision {
        clock::time_point next_start; // when the next tick should start
        bool overrun;                 // the tick that just ended ran past its slot
        std::uint64_t skipped_slots;  // slots that passed with no tick started
    };

    tick_pacer(double ticks_per_second, clock::time_point first_start) noexcept
        : period_{std::chrono::duration_cast<clock::duration>(
              std::chrono::duration<double>(1.0 / ticks_per_second))}
        , next_start_{first_start} {}

    [[nodiscard]] clock::duration period() const noexcept { return period_; }
    [[nodiscard]] clock::time_point next_start() const noexcept { return next_start_; }

    /// Called when a tick ends at `now`: where the next one goes.
    decision tick_ended(clock::time_point now) noexcept {
        next_start_ += period_;
        if (now <= next_start_) {
            return {next_start_, false, 0};
        }
        const auto late = now - next_start_;
        const auto skipped = static_cast<std::uint64_t>(late / period_);
        next_start_ = now;
        return {next_start_, true, skipped};
    }

private:
    clock::duration period_;
    clock::time_point next_start_;
};

} // namespace ecsnet::server
