#pragma once

// How busy the tick is: the mean duration of the last second's ticks, as a fraction of the tick period.
// The server refuses new clients while it is above --max-tick-load (game_server::on_opened): a server past
// its capacity that keeps admitting clients overruns every tick, falls behind every client and ends by
// timing many of them out at once; one that says "overloaded, retry later" keeps serving those it has.
// The mean of a second, rather than the last tick, so one slow tick (a checkpoint, a mass spawn spread over
// ticks) does not turn clients away.

#include <chrono>
#include <cstddef>
#include <vector>

namespace ecsnet::server {

class tick_load {
public:
    /// `window`: ticks averaged (the tick rate: one second).
    explicit tick_load(std::size_t window)
        : durations_(window > 0 ? window : 1, 0.0) {}

    void add(std::chrono::duration<double> duration) noexcept {
        sum_ += duration.count() - durations_[next_];
        durations_[next_] = duration.count();
        next_ = (next_ + 1) % durations_.size();
        filled_ = filled_ || next_ == 0;
    }

    /// The mean tick duration over the window divided by `period` (0 until the window has filled once).
    [[nodiscard]] double fraction_of(std::chrono::duration<double> period) const noexcept {
        if (!filled_ || period.count() <= 0.0) {
            return 0.0;
        }
        return sum_ / static_cast<double>(durations_.size()) / period.count();
    }

private:
    std::vector<double> durations_; // seconds, a ring
    std::size_t next_{0};
    double sum_{0.0};
    bool filled_{false};
};

} // namespace ecsnet::server
