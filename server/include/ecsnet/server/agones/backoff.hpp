#pragma once

// Delays between the attempts of a call to the Agones sidecar: exponential from `initial`, capped at `max`,
// each drawn between half and all of its step ("equal jitter") so that retries after a sidecar restart do
// not all arrive together.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace ecsnet::server::agones {

class backoff {
public:
    using duration = std::chrono::milliseconds;

    backoff(duration initial, duration max, std::uint64_t seed = std::random_device{}())
        : initial_{std::max(initial, duration{1})}
        , max_{std::max(max, initial_)}
        , random_{seed} {}

    /// The delay before the next attempt, after `failures` consecutive failures (1 for the first retry).
    [[nodiscard]] duration delay(std::uint32_t failures) {
        const auto step = cap(failures);
        std::uniform_int_distribution<std::int64_t> pick{step.count() / 2, step.count()};
        return duration{pick(random_)};
    }

    /// The largest delay after `failures` failures: initial * 2^(failures-1), at most max.
    [[nodiscard]] duration cap(std::uint32_t failures) const noexcept {
        auto step = initial_;
        for (std::uint32_t i = 1; i < failures && step < max_; ++i) {
            step *= 2;
        }
        return std::min(step, max_);
    }

private:
    duration initial_;
    duration max_;
    std::mt19937_64 random_;
};

} // namespace ecsnet::server::agones
