#pragma once

// How often each client gets a snapshot: every tick, or, while the server is overloaded, every `stride`
// ticks (each client on its own turn, so the work of a tick stays spread evenly over the clients).
//
// Why: a server whose ticks and received datagrams no longer fit its tick period falls behind its clients.
// Their acks then wait in the socket's queue, every snapshot is coded against an older baseline (bigger,
// and shared with fewer clients), each tick costs more and the queue never drains: at 1,000 thin bots on a
// 2-core box the server's CPU per client rose from 25 to 38 us, its snapshots from 38 to 190 bytes and the
// round trip from 10 to 450 ms, and it stayed there (bench/RESULTS.md, fifteenth pass). Sending to each
// client every other tick halves the largest part of the tick's work, so the queue drains, the acks are
// fresh again and the snapshots cheap; then the stride comes back to 1. Clients interpolate between the
// snapshots they get, as over a lossy link.
//
// The rule, decided once per window of ticks (one second), from the window's overruns and the load
// tick_load.hpp measures (the mean tick duration of the last second against the period):
// - raise the stride (up to max_stride) when the window's ticks took on average more than `raise_load` of
//   the period, or more than `raise_overrun_share` of them overran;
// - lower it when at most `lower_overrun_share` of them overran (one tick in a second at 30 Hz: a shared
//   machine's hiccup) and the load the lower stride would bring stays under `lower_load`: the part of the
//   tick that writes and sends the snapshots grows by stride / (stride - 1), the rest (inputs, systems,
//   the capture) stays. Scaling the whole load instead kept a server at stride 2 that would have fitted at
//   1 (1,100 thin bots, bench/RESULTS.md, sixteenth pass). The gap between `lower_load` and `raise_load`
//   absorbs what the estimate misses (the acks, received between ticks, come back with the snapshots).
// - Backoff: what the estimate cannot see (a box whose cores the clients' own processes share, the
//   datagrams received between ticks) can make a lower stride overrun again at once. A rise within
//   `flap_windows` of a lowering doubles the windows the stride must then hold before it may come down
//   again (up to `max_hold_windows`), so a server at the edge tries the higher rate now and then instead
//   of every other second (1,200 thin bots flapped 1 -> 2 -> 1 every two to three seconds); a lowering
//   that holds for `calm_windows` resets it to one window.

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ecsnet::server {

struct snapshot_stride_options {
    std::uint32_t max_stride{3}; // 1: never lower the snapshot rate
    double raise_load{0.9};
    double raise_overrun_share{0.25};
    double lower_load{0.7};
    double lower_overrun_share{0.05};
    std::uint32_t flap_windows{5};
    std::uint32_t max_hold_windows{64};
    std::uint32_t calm_windows{30};
};

class snapshot_stride {
public:
    /// `window`: ticks per decision (the tick rate: one second).
    snapshot_stride(snapshot_stride_options options, std::size_t window) noexcept
        : options_{options}
        , window_{window > 0 ? window : 1} {
        if (options_.max_stride < 1) {
            options_.max_stride = 1;
        }
    }

    /// Called as each tick ends: whether it overran, the last second's load (tick_load::fraction_of, read
    /// only as a window ends) and the part of it the snapshots took (written and sent: it scales with
    /// the snapshot rate; clamped to [0, load]). Returns whether the stride changed at this tick.
    bool tick_ended(bool overran, double load, double snapshot_load) noexcept {
        overruns_ += overran ? 1 : 0;
        if (++ticks_ < window_) {
            return false;
        }
        const double overrun_share = static_cast<double>(overruns_) / static_cast<double>(ticks_);
        last_load_ = load;
        ticks_ = 0;
        overruns_ = 0;
        windows_at_stride_ += windows_at_stride_ < UINT32_MAX ? 1 : 0;
        if (stride_ < options_.max_stride &&
            (load > options_.raise_load || overrun_share > options_.raise_overrun_share)) {
            if (last_change_lowered_ && windows_at_stride_ <= options_.flap_windows) {
                hold_windows_ =
                    std::min(hold_windows_ * 2, std::max<std::uint32_t>(options_.max_hold_windows, 1));
            }
            changed(+1);
            return true;
        }
        if (stride_ > 1 && windows_at_stride_ >= hold_windows_ &&
            overrun_share <= options_.lower_overrun_share &&
            load_one_lower(load, snapshot_load) < options_.lower_load) {
            changed(-1);
            return true;
        }
        if (last_change_lowered_ && windows_at_stride_ >= options_.calm_windows) {
            hold_windows_ = 1; // the lower stride held: forget the flaps
        }
        return false;
    }

    /// Whether the client numbered `client` gets a snapshot at `tick`: every tick at stride 1, else on
    /// one tick in `stride`, its turn set by its number.
    [[nodiscard]] bool sends_at(std::uint64_t tick, std::uint64_t client) const noexcept {
        return stride_ == 1 || (tick + client) % stride_ == 0;
    }

    [[nodiscard]] std::uint32_t stride() const noexcept { return stride_; }
    /// The load the last decision read (0 before the first).
    [[nodiscard]] double last_load() const noexcept { return last_load_; }
    /// Windows the stride must hold before it may come down (1, doubled by each flap).
    [[nodiscard]] std::uint32_t hold_windows() const noexcept { return hold_windows_; }

    /// The load expected one stride lower, from this stride's load and its snapshots' part.
    [[nodiscard]] double load_one_lower(double load, double snapshot_load) const noexcept {
        if (stride_ <= 1) {
            return load;
        }
        const double snapshots = std::clamp(snapshot_load, 0.0, load);
        return load - snapshots + snapshots * static_cast<double>(stride_) / static_cast<double>(stride_ - 1);
    }

private:
    void changed(int step) noexcept {
        stride_ = step > 0 ? stride_ + 1 : stride_ - 1;
        last_change_lowered_ = step < 0;
        windows_at_stride_ = 0;
    }

    snapshot_stride_options options_;
    std::size_t window_;
    std::uint32_t stride_{1};
    std::uint32_t windows_at_stride_{0}; // decisions since the stride last changed
    std::uint32_t hold_windows_{1};
    bool last_change_lowered_{false};
    std::size_t ticks_{0};
    std::size_t overruns_{0};
    double last_load_{0.0};
};

} // namespace ecsnet::server
