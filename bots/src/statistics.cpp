#include "ecsnet/bots/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ecsnet::bots {

std::uint64_t nearest_rank(double q, std::uint64_t n) noexcept {
    if (n == 0) {
        return 0;
    }
    if (!(q > 0.0)) { // also NaN
        return 1;
    }
    if (q >= 100.0) {
        return n;
    }
    // The small tolerance keeps exact products exact: 99.9% of 1000 is rank 999, even though 99.9 * 1000
    // is 99900.00000000001 in binary floating point.
    const auto k = std::ceil(q * static_cast<double>(n) / 100.0 - 1e-9);
    return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::max(k, 1.0)), 1, n);
}

double percentile(std::vector<double> values, double q) {
    if (values.empty()) {
        return 0.0;
    }
    const auto k = nearest_rank(q, values.size()) - 1;
    const auto nth = values.begin() + static_cast<std::ptrdiff_t>(k);
    std::nth_element(values.begin(), nth, values.end());
    return *nth;
}

double median(std::vector<double> values) {
    if (values.empty()) {
        return 0.0;
    }
    const auto n = values.size();
    const auto upper = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(values.begin(), upper, values.end());
    if (n % 2 == 1) {
        return *upper;
    }
    // The lower middle is the largest of the elements before the upper one.
    const auto lower = *std::max_element(values.begin(), upper);
    return (lower + *upper) / 2.0;
}

double per_second(double amount, double seconds) noexcept {
    return seconds > 0.0 ? amount / seconds : 0.0;
}

distribution summarize(const std::vector<double>& values) {
    distribution d;
    d.count = values.size();
    if (values.empty()) {
        return d;
    }
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    d.min = *lo;
    d.max = *hi;
    d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    d.median = median(values);
    return d;
}

} // namespace ecsnet::bots
