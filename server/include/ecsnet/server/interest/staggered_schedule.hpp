#pragma once

// Which clients recompute their relevant set this tick: each one every `period` ticks, spread evenly, so
// that the per-tick cost is flat (as ReplicationGraph spreads its per-connection and per-actor work over
// frames) instead of a spike every period-th tick.
//
// Clients are numbered 0..count-1 (positions in the server's dense array of clients): client c is due at
// the ticks t with t % period == c % period. With count clients every tick has floor(count / period) or
// ceil(count / period) of them due. A client that changes number (a swap-remove when another disconnects)
// waits at most 2 * period - 1 ticks between two recomputations. A client that just connected should be
// updated once at once, not wait for its turn.

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace ecsnet::server::interest {

class staggered_schedule {
public:
    /// Throws std::invalid_argument for a period of 0.
    explicit staggered_schedule(std::uint32_t period)
        : period_{period} {
        if (period == 0) {
            throw std::invalid_argument("staggered_schedule period must be at least 1");
        }
    }

    [[nodiscard]] std::uint32_t period() const noexcept { return period_; }

    [[nodiscard]] bool due(std::uint64_t tick, std::size_t client) const noexcept {
        return client % period_ == tick % period_;
    }

    /// Calls f(client) for every client of [0, count) due at `tick`, in increasing order.
    template<typename Func>
    void for_each_due(std::uint64_t tick, std::size_t count, Func&& f) const {
        for (std::size_t client = static_cast<std::size_t>(tick % period_); client < count;
             client += period_) {
            f(client);
        }
    }

    /// How many of [0, count) are due at `tick`.
    [[nodiscard]] std::size_t due_count(std::uint64_t tick, std::size_t count) const noexcept {
        const auto first = static_cast<std::size_t>(tick % period_);
        return first < count ? (count - first - 1) / period_ + 1 : 0;
    }

private:
    std::uint32_t period_;
};

} // namespace ecsnet::server::interest
