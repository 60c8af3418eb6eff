#pragma once

// A token bucket of bytes (link_config::reliable_send_rate / reliable_send_burst): it paces reliable data
// so that a big block or a long queue goes out at a bounded rate instead of as one burst of hundreds of
// datagrams. Holds `burst` bytes at most, refilled at `rate` bytes per second; a send may overdraw it (one
// chunk never waits for a partial refill), and sending is allowed again once the balance is positive.
// rate 0 means no limit.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "clock.hpp"

namespace ecsnet::transport {

class token_bucket {
public:
    token_bucket(std::size_t rate_per_second, std::size_t burst) noexcept
        : rate_{static_cast<std::int64_t>(rate_per_second)}
        , burst_{static_cast<std::int64_t>(std::max<std::size_t>(burst, 1))}
        , tokens_{burst_} {}

    [[nodiscard]] bool unlimited() const noexcept { return rate_ == 0; }

    /// The balance at `now` (negative after an overdraw).
    [[nodiscard]] std::int64_t available(clock::time_point now) const noexcept {
        if (!started_ || unlimited()) {
            return burst_;
        }
        const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count();
        if (elapsed <= 0) {
            return tokens_;
        }
        const std::int64_t full_after = (burst_ - std::min(tokens_, burst_)) * one_second / rate_ + 1;
        if (elapsed >= full_after) {
            return burst_;
        }
        return std::min(burst_, tokens_ + elapsed * rate_ / one_second);
    }

    [[nodiscard]] bool allows(clock::time_point now) const noexcept {
        return unlimited() || available(now) > 0;
    }

    void consume(std::size_t bytes, clock::time_point now) noexcept {
        if (unlimited()) {
            return;
        }
        tokens_ = available(now) - static_cast<std::int64_t>(bytes);
        last_ = now;
        started_ = true;
    }

    /// When allows() turns true (now, if it is already).
    [[nodiscard]] clock::time_point when_allowed(clock::time_point now) const noexcept {
        if (allows(now)) {
            return now;
        }
        const std::int64_t wait_ns = ((1 - tokens_) * one_second + rate_ - 1) / rate_;
        return last_ + std::chrono::duration_cast<clock::duration>(std::chrono::nanoseconds{wait_ns});
    }

private:
    static constexpr std::int64_t one_second = 1'000'000'000;

    std::int64_t rate_;
    std::int64_t burst_;
    std::int64_t tokens_;
    clock::time_point last_{};
    bool started_{false};
};

} // namespace ecsnet::transport
