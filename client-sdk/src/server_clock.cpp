#include "ecsnet/client/server_clock.hpp"

#include <algorithm>

namespace ecsnet::client {

void server_clock::on_pong(std::int64_t sent_local_us, std::int64_t received_local_us,
                           std::int64_t server_us) noexcept {
    const auto rtt = received_local_us - sent_local_us;
    if (rtt < 0) {
        return;
    }
    // Midpoint without overflow: both are positive microsecond counts.
    const auto midpoint = sent_local_us + rtt / 2;
    samples_[pongs_ % kept] = sample{rtt, server_us - midpoint};
    ++pongs_;
}

void server_clock::on_snapshot(std::int64_t server_us, std::int64_t local_us) noexcept {
    const auto bound = server_us - local_us;
    bound_ = has_bound_ ? std::max(bound_, bound) : bound;
    has_bound_ = true;
}

std::int64_t server_clock::offset_us() const noexcept {
    if (pongs_ == 0) {
        return has_bound_ ? bound_ : 0;
    }
    const auto count = std::min(pongs_, kept);
    const auto best =
        std::min_element(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(count),
                         [](const sample& a, const sample& b) { return a.rtt < b.rtt; });
    return best->offset;
}

} // namespace ecsnet::client
