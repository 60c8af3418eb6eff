#pragma once

// The client's estimate of the server's clock (microseconds since the server's epoch), from which the
// render time of interpolation is derived.
//
// Each Pong gives a sample the way NTP does: the server read its clock somewhere between the Ping's
// departure and the Pong's arrival, so offset = server_time - (sent + received) / 2, within +-rtt/2. The
// estimate is the sample with the smallest round trip among the last 8 (queueing only ever adds delay).
// Before the first Pong, applied snapshots give a lower bound (the server's clock had reached the tick's
// time when the snapshot arrived); the largest bound is the estimate until a Pong comes.
//
// Times are microseconds: local ones on the client's steady clock, server ones since the server's epoch.
// O(1) everything. Not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>

namespace ecsnet::client {

class server_clock {
public:
    void reset() noexcept { *this = server_clock{}; }

    /// A Pong arrived at `received_local_us` for a Ping sent at `sent_local_us`; the server's clock read
    /// `server_us` when it answered. Samples with a negative round trip are ignored.
    void on_pong(std::int64_t sent_local_us, std::int64_t received_local_us, std::int64_t server_us) noexcept;
    /// A snapshot of server time `server_us` was applied at `local_us`.
    void on_snapshot(std::int64_t server_us, std::int64_t local_us) noexcept;

    /// Whether any sample arrived since reset().
    [[nodiscard]] bool synchronised() const noexcept { return pongs_ != 0 || has_bound_; }
    /// Server clock minus local clock, microseconds (0 before any sample).
    [[nodiscard]] std::int64_t offset_us() const noexcept;
    /// The server's clock at local time `local_us`.
    [[nodiscard]] std::int64_t server_time_us(std::int64_t local_us) const noexcept {
        return local_us + offset_us();
    }

private:
    struct sample {
        std::int64_t rtt{};
        std::int64_t offset{};
    };
    static constexpr std::size_t kept = 8;

    std::array<sample, kept> samples_{};
    std::size_t pongs_{};
    std::int64_t bound_{};
    bool has_bound_{false};
};

/// The tick an input sent at server time `server_us` should reach: the one after the tick the server is
/// running then, counted from a tick it ran (`tick`, started at server time `tick_us`). Counted from a tick
/// seen, not from the server's epoch: a server that overruns skips slots (tick_pacer.hpp), so its tick count
/// falls behind its clock for good, and an estimate from the epoch would run ahead of it by every slot ever
/// skipped.
[[nodiscard]] constexpr std::uint32_t next_tick_at(std::uint32_t tick, std::int64_t tick_us,
                                                   std::int64_t server_us, std::uint32_t tick_rate) noexcept {
    if (server_us <= tick_us) {
        return tick + 1; // the clock estimate lags the snapshot's own time: the tick is at least running
    }
    const auto elapsed = static_cast<std::uint64_t>(server_us - tick_us);
    return tick + static_cast<std::uint32_t>(elapsed * tick_rate / 1'000'000) + 1;
}

} // namespace ecsnet::client
