#include "ecsnet/bots/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "ecsnet/bots/statistics.hpp"

namespace ecsnet::bots {

namespace {
constexpr std::uint64_t exact_limit = std::uint64_t{1} << latency_histogram::sub_bucket_bits; // 256
constexpr std::uint64_t half = exact_limit / 2;                                               // 128
} // namespace

latency_histogram::latency_histogram()
    : counts_(bucket_count, 0) {}

std::size_t latency_histogram::bucket_of(std::uint64_t value_us) noexcept {
    const auto value = std::min(value_us, max_trackable);
    if (value < exact_limit) {
        return static_cast<std::size_t>(value);
    }
    // Shift the value right until it has sub_bucket_bits significant bits: its top bits pick the sub-bucket
    // (always in [half, exact_limit)), the shift picks the power of two.
    const auto shift = static_cast<unsigned>(std::bit_width(value)) - sub_bucket_bits;
    return static_cast<std::size_t>(exact_limit + (shift - 1) * half + ((value >> shift) - half));
}

std::uint64_t latency_histogram::lowest_in(std::size_t bucket) noexcept {
    if (bucket < exact_limit) {
        return bucket;
    }
    const auto k = static_cast<std::uint64_t>(bucket) - exact_limit;
    const auto shift = k / half + 1;
    return (k % half + half) << shift;
}

std::uint64_t latency_histogram::highest_in(std::size_t bucket) noexcept {
    if (bucket < exact_limit) {
        return bucket;
    }
    const auto shift = (static_cast<std::uint64_t>(bucket) - exact_limit) / half + 1;
    return lowest_in(bucket) + (std::uint64_t{1} << shift) - 1;
}

void latency_histogram::record(std::uint64_t value_us, std::uint64_t count) noexcept {
    if (count == 0) {
        return;
    }
    const auto bucket = bucket_of(value_us);
    counts_[bucket] += count;
    lowest_used_ = std::min(lowest_used_, bucket);
    highest_used_ = std::max(highest_used_, bucket);
    min_ = count_ == 0 ? value_us : std::min(min_, value_us);
    max_ = std::max(max_, value_us);
    count_ += count;
    sum_ += static_cast<double>(value_us) * static_cast<double>(count);
    if (value_us > max_trackable) {
        overflow_ += count;
    }
}

void latency_histogram::merge(const latency_histogram& other) noexcept {
    if (other.count_ == 0) {
        return;
    }
    for (auto i = other.lowest_used_; i <= other.highest_used_; ++i) {
        counts_[i] += other.counts_[i];
    }
    lowest_used_ = std::min(lowest_used_, other.lowest_used_);
    highest_used_ = std::max(highest_used_, other.highest_used_);
    min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
    count_ += other.count_;
    sum_ += other.sum_;
    overflow_ += other.overflow_;
}

latency_histogram latency_histogram::difference(const latency_histogram& newer,
                                                const latency_histogram& older) {
    latency_histogram out;
    if (newer.count_ == 0) {
        return out;
    }
    for (auto i = newer.lowest_used_; i <= newer.highest_used_; ++i) {
        const auto before = older.counts_[i];
        const auto left = newer.counts_[i] > before ? newer.counts_[i] - before : 0;
        if (left == 0) {
            continue;
        }
        out.counts_[i] = left;
        if (out.count_ == 0) {
            out.lowest_used_ = i;
            out.min_ = lowest_in(i);
        }
        out.highest_used_ = i;
        out.max_ = highest_in(i);
        out.count_ += left;
    }
    out.sum_ = std::max(0.0, newer.sum_ - older.sum_);
    out.overflow_ = newer.overflow_ > older.overflow_ ? newer.overflow_ - older.overflow_ : 0;
    return out;
}

void latency_histogram::reset() noexcept {
    // Only the used range can hold counts: a reset per bot at the end of a run stays cheap.
    if (lowest_used_ <= highest_used_) {
        std::fill_n(counts_.data() + lowest_used_, highest_used_ - lowest_used_ + 1, std::uint64_t{0});
    }
    lowest_used_ = bucket_count;
    highest_used_ = 0;
    count_ = 0;
    min_ = 0;
    max_ = 0;
    sum_ = 0.0;
    overflow_ = 0;
}

double latency_histogram::mean() const noexcept {
    return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_);
}

std::uint64_t latency_histogram::percentile(double q) const noexcept {
    if (count_ == 0) {
        return 0;
    }
    if (!(q > 0.0)) { // also NaN
        return min();
    }
    if (q >= 100.0) {
        return max_;
    }
    const auto wanted = nearest_rank(q, count_); // statistics.hpp
    std::uint64_t seen = 0;
    for (auto i = lowest_used_; i <= highest_used_; ++i) {
        seen += counts_[i];
        if (seen >= wanted) {
            return std::clamp(highest_in(i), min(), max_);
        }
    }
    return max_;
}

std::vector<latency_bin> coarse_bins(const latency_histogram& histogram, unsigned per_octave) {
    std::vector<latency_bin> bins;
    if (histogram.empty()) {
        return bins;
    }
    per_octave = std::max(per_octave, 1U);
    const auto steps = static_cast<double>(per_octave);
    const auto bin_of = [&](std::uint64_t value) -> std::size_t {
        return value == 0
                   ? 0
                   : static_cast<std::size_t>(std::floor(std::log2(static_cast<double>(value)) * steps)) + 1;
    };
    // The lowest value of bin k > 0, rounded up to whole microseconds.
    const auto low_of = [&](std::size_t bin) -> std::uint64_t {
        return bin == 0
                   ? 0
                   : static_cast<std::uint64_t>(std::ceil(std::exp2(static_cast<double>(bin - 1) / steps)));
    };
    std::size_t first = 0;
    for (std::size_t bucket = 0; bucket < latency_histogram::bucket_count; ++bucket) {
        const auto count = histogram.count_in(bucket);
        if (count == 0) {
            continue;
        }
        const auto bin = bin_of(latency_histogram::lowest_in(bucket));
        if (bins.empty()) {
            first = bin;
        }
        while (first + bins.size() <= bin) {
            const auto k = first + bins.size();
            bins.push_back({low_of(k), 0, 0});
        }
        bins[bin - first].count += count;
    }
    for (std::size_t i = 0; i < bins.size(); ++i) {
        const auto next_low = low_of(first + i + 1);
        bins[i].high_us = std::max(bins[i].low_us, next_low == 0 ? 0 : next_low - 1);
    }
    return bins;
}

} // namespace ecsnet::bots
