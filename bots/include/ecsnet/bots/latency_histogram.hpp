#pragma once

// A latency histogram with fine, log-linear buckets (the HdrHistogram layout): values below 256 us have a
// bucket each; above, every power of two is split into 128 buckets, so a bucket is at most 1/128 (0.8%) of
// the values it holds wide. Values are microseconds, up to 2^32 - 1 us (71 minutes; larger ones are counted
// in the last bucket and in overflow()). The exact minimum, maximum and sum are kept besides.
//
// Every bot records the latency of every snapshot it applies into its own histogram; the swarm merges them
// (and subtracts the previous second's merge for the progress line). Nothing per sample is stored.
//
// percentile(q) is the nearest-rank percentile (the smallest recorded value v with at least q% of the
// samples <= v), reported as the highest value its bucket holds, clamped to [min(), max()]: never below the
// exact answer, at most 0.8% above it. percentile(100) is max().
//
// Complexity: record O(1); merge and subtract O(buckets touched); percentile O(buckets). 26 KB each, no
// allocation after construction. Not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ecsnet::bots {

class latency_histogram {
public:
    static constexpr unsigned sub_bucket_bits = 8;
    static constexpr unsigned max_value_bits = 32;
    static constexpr std::uint64_t max_trackable = (std::uint64_t{1} << max_value_bits) - 1;
    static constexpr std::size_t bucket_count =
        (std::size_t{1} << sub_bucket_bits) +
        (max_value_bits - sub_bucket_bits) * (std::size_t{1} << (sub_bucket_bits - 1));

    latency_histogram();

    /// Counts `count` samples of `value_us` microseconds.
    void record(std::uint64_t value_us, std::uint64_t count = 1) noexcept;
    /// Adds every sample of `other`.
    void merge(const latency_histogram& other) noexcept;
    /// The samples of `newer` that `older` does not have, where `older` is an earlier copy of `newer` (or
    /// of a histogram merged into it). Min and max are then the bounds of the lowest and highest buckets
    /// left, not exact values.
    [[nodiscard]] static latency_histogram difference(const latency_histogram& newer,
                                                      const latency_histogram& older);
    void reset() noexcept;

    [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
    /// Exact smallest and largest samples (0 when empty).
    [[nodiscard]] std::uint64_t min() const noexcept { return count_ == 0 ? 0 : min_; }
    [[nodiscard]] std::uint64_t max() const noexcept { return max_; }
    /// Exact mean (0 when empty).
    [[nodiscard]] double mean() const noexcept;
    /// Samples above max_trackable (counted in the last bucket).
    [[nodiscard]] std::uint64_t overflow() const noexcept { return overflow_; }
    /// Nearest-rank percentile, q in [0, 100] (see above); 0 when empty.
    [[nodiscard]] std::uint64_t percentile(double q) const noexcept;

    /// The bucket of a value, and the values a bucket holds (for tests and for difference()).
    [[nodiscard]] static std::size_t bucket_of(std::uint64_t value_us) noexcept;
    [[nodiscard]] static std::uint64_t lowest_in(std::size_t bucket) noexcept;
    [[nodiscard]] static std::uint64_t highest_in(std::size_t bucket) noexcept;
    [[nodiscard]] std::uint64_t count_in(std::size_t bucket) const noexcept { return counts_[bucket]; }

private:
    std::vector<std::uint64_t> counts_;
    std::size_t lowest_used_{bucket_count}; // the range of buckets that may be non-zero, for fast merges
    std::size_t highest_used_{0};
    std::uint64_t count_{0};
    std::uint64_t min_{0};
    std::uint64_t max_{0};
    double sum_{0.0};
    std::uint64_t overflow_{0};
};

/// A coarse bin of a histogram, for drawing it: the samples from low_us to high_us inclusive.
struct latency_bin {
    std::uint64_t low_us{};
    std::uint64_t high_us{};
    std::uint64_t count{};
};

/// The histogram in `per_octave` bins per power of two (bin k > 0 holds [2^((k-1)/per_octave),
/// 2^(k/per_octave)) us, bin 0 the zeros), every bin from the lowest sample's to the highest's, empty ones
/// included: at most 1 + 32 x per_octave bins whatever the run. A fine bucket goes whole to the bin of its
/// lowest value. Empty when the histogram is.
[[nodiscard]] std::vector<latency_bin> coarse_bins(const latency_histogram& histogram,
                                                   unsigned per_octave = 4);

} // namespace ecsnet::bots
