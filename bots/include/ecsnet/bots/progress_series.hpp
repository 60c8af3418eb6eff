#pragma once

// The run's progress over time, one sample per progress interval (a second by default): what the HTML report
// (html_report.hpp) shows as its per-second table. Every figure is a rate or a level, never a count over
// the interval, so a sample stays meaningful when its neighbours are dropped.
//
// Bounded memory: at most `capacity` samples are kept. When the series is full, every other sample is
// dropped and from then on only every other sample offered is kept (the stride doubles): a run of any length
// keeps its whole timeline, at a coarser step the longer it ran. 3,600 samples (about 260 KB) hold an hour
// at one a second.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ecsnet::bots {

struct progress_sample {
    double at_seconds{};           // since the swarm started (the first connect)
    std::size_t connected{};       // full bots connected
    std::size_t thin_connected{};  // thin bots connected
    double snapshots_per_second{}; // applied (acked by thin bots) by all the bots together
    double bytes_in_per_second{};  // all the bots together
    double bytes_out_per_second{};
    /// The update latency p99 of the interval's snapshots; unset (false) when none was applied.
    bool has_latency{};
    double latency_p99_ms{};
    std::uint64_t desyncs{}; // so far
};

class progress_series {
public:
    static constexpr std::size_t default_capacity = 3600;

    /// At most `capacity` samples (rounded up to an even number, at least 2).
    explicit progress_series(std::size_t capacity = default_capacity);

    /// Offers the next sample: kept, or skipped when the stride says so.
    void add(const progress_sample& sample);

    [[nodiscard]] const std::vector<progress_sample>& samples() const noexcept { return samples_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    /// Samples offered per sample kept (1 until the series first filled up).
    [[nodiscard]] std::size_t stride() const noexcept { return stride_; }
    /// Samples offered so far.
    [[nodiscard]] std::size_t offered() const noexcept { return offered_; }

private:
    std::size_t capacity_;
    std::size_t stride_{1};
    std::size_t offered_{0};
    std::vector<progress_sample> samples_;
};

} // namespace ecsnet::bots
