#pragma once

// A rate over a sliding window: amounts are added to time buckets (window / buckets wide each), and the
// rate is the sum of the buckets still inside the window over the time they cover. Before a whole window
// has passed since reset(), the time since reset() is the denominator, so early rates are not diluted.
//
// O(1) add, O(buckets) rate, no allocation after construction. Not thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ecsnet::client {

class rate_meter {
public:
    using clock = std::chrono::steady_clock;

    explicit rate_meter(clock::duration window = std::chrono::seconds{2}, std::size_t buckets = 20);

    /// Forgets everything; measuring starts at `now`.
    void reset(clock::time_point now) noexcept;
    /// Adds `amount` at time `now` (not before the last reset()).
    void add(double amount, clock::time_point now) noexcept;
    /// Amount per second over the window ending at `now`.
    [[nodiscard]] double per_second(clock::time_point now) const noexcept;

    [[nodiscard]] clock::duration window() const noexcept {
        return width_ * static_cast<std::int64_t>(buckets_.size());
    }

private:
    struct bucket {
        std::int64_t slot{-1};
        double amount{};
    };
    [[nodiscard]] std::int64_t slot_of(clock::time_point now) const noexcept;

    clock::duration width_;
    clock::time_point start_{};
    std::vector<bucket> buckets_;
};

} // namespace ecsnet::client
