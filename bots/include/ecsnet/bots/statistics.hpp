#pragma once

// The report's statistics over per-bot figures (rates, ratios): nearest-rank percentiles, medians, and a
// distribution summary. Latencies, which are far more numerous, go to latency_histogram instead.
//
// Definitions (docs/bots.md):
//  - nearest rank: the q-th percentile of n samples is the k-th smallest, k = ceil(q / 100 * n) clamped to
//    [1, n] (so the 0th is the minimum and the 100th the maximum), no interpolation;
//  - median: the middle sample, or the mean of the two middle ones when n is even;
//  - a rate is an amount over a duration; no duration gives a rate of 0, never a division by zero.
//
// Complexity: O(n) expected (nth_element on a copy). Empty inputs give zeros.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ecsnet::bots {

/// k (1-based) of the nearest-rank q-th percentile of n > 0 samples.
[[nodiscard]] std::uint64_t nearest_rank(double q, std::uint64_t n) noexcept;

/// The nearest-rank q-th percentile of `values` (0 when empty).
[[nodiscard]] double percentile(std::vector<double> values, double q);

/// The median of `values` (0 when empty).
[[nodiscard]] double median(std::vector<double> values);

/// `amount` per second over `seconds` (0 when seconds <= 0).
[[nodiscard]] double per_second(double amount, double seconds) noexcept;

/// Summary of per-bot values.
struct distribution {
    std::size_t count{};
    double min{};
    double median{};
    double mean{};
    double max{};
};

[[nodiscard]] distribution summarize(const std::vector<double>& values);

} // namespace ecsnet::bots
