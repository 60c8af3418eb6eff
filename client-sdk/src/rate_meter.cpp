#include "ecsnet/client/rate_meter.hpp"

#include <algorithm>
#include <stdexcept>

namespace ecsnet::client {

rate_meter::rate_meter(clock::duration window, std::size_t buckets)
    : width_{window / static_cast<std::int64_t>(std::max<std::size_t>(buckets, 1))}
    , buckets_(std::max<std::size_t>(buckets, 1)) {
    if (width_ <= clock::duration::zero()) {
        width_ = std::chrono::milliseconds{1};
    }
}

void rate_meter::reset(clock::time_point now) noexcept {
    start_ = now;
    for (auto& b : buckets_) {
        b = bucket{};
    }
}

std::int64_t rate_meter::slot_of(clock::time_point now) const noexcept {
    return now <= start_ ? 0 : (now - start_) / width_;
}

void rate_meter::add(double amount, clock::time_point now) noexcept {
    const auto slot = slot_of(now);
    auto& b = buckets_[static_cast<std::size_t>(slot) % buckets_.size()];
    if (b.slot != slot) {
        b = bucket{slot, 0.0};
    }
    b.amount += amount;
}

double rate_meter::per_second(clock::time_point now) const noexcept {
    const auto slot = slot_of(now);
    const auto n = static_cast<std::int64_t>(buckets_.size());
    double sum = 0.0;
    for (const auto& b : buckets_) {
        if (b.slot > slot - n && b.slot <= slot) {
            sum += b.amount;
        }
    }
    // The buckets kept cover the n - 1 whole ones before the current slot, and the current one so far.
    const auto since_start = now <= start_ ? clock::duration::zero() : now - start_;
    const auto covered = std::min(since_start, width_ * (n - 1) + (since_start - width_ * slot));
    const double seconds = std::chrono::duration<double>(covered).count();
    return seconds <= 0.0 ? 0.0 : sum / seconds;
}

} // namespace ecsnet::client
