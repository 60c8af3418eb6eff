#pragma once

// Packet loss as an exponential moving average of packet fates (1 = never acked, 0 = acked), weight w per
// packet (link_config::loss_smoothing, 1/64 by default: a standard deviation of about 0.04 at 20-30% loss,
// settling within a few hundred packets). The first 1/w fates are averaged plainly, so the estimate does not
// start biased towards 0. reliable.io smooths the same way with w = 0.1, noisier than a game's metrics want.

#include <algorithm>
#include <cstdint>

namespace ecsnet::transport {

class loss_estimator {
public:
    explicit loss_estimator(double weight) noexcept
        : weight_{weight} {}

    void add(bool lost) noexcept {
        ++samples_;
        const double w = std::max(weight_, 1.0 / static_cast<double>(samples_));
        value_ += w * ((lost ? 1.0 : 0.0) - value_);
    }

    [[nodiscard]] double value() const noexcept { return value_; }
    [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }

private:
    double weight_;
    double value_{0.0};
    std::uint64_t samples_{0};
};

} // namespace ecsnet::transport
