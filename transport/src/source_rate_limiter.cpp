#include "ecsnet/transport/source_rate_limiter.hpp"

#include <algorithm>

namespace ecsnet::transport {

source_rate_limiter::source_rate_limiter(double per_second, double burst, std::size_t max_sources)
    : per_second_{per_second}
    , burst_{std::max(burst, 1.0)}
    , max_sources_{std::max<std::size_t>(max_sources, 1)} {
    buckets_.reserve(std::min<std::size_t>(max_sources_, 1024));
}

bool source_rate_limiter::allow(const net_address& from, clock::time_point now) {
    if (per_second_ <= 0) {
        return true;
    }
    auto it = buckets_.find(from);
    if (it == buckets_.end()) {
        if (buckets_.size() >= max_sources_) {
            make_room(now);
        }
        it = buckets_.emplace(from, bucket{burst_, now}).first;
    }
    auto& b = it->second;
    const auto elapsed = std::chrono::duration<double>(now - b.last).count();
    if (elapsed > 0) {
        b.tokens = std::min(burst_, b.tokens + elapsed * per_second_);
        b.last = now;
    }
    if (b.tokens < 1.0) {
        return false;
    }
    b.tokens -= 1.0;
    return true;
}

void source_rate_limiter::make_room(clock::time_point now) {
    // A bucket that would be full again holds no information: forget those. The scan is O(n), so it runs
    // at most every 100 ms; in between (a flood from many IPs), an arbitrary bucket makes room.
    if (now - last_scan_ >= std::chrono::milliseconds{100}) {
        last_scan_ = now;
        const auto refill = std::chrono::duration<double>(burst_ / per_second_);
        std::erase_if(buckets_, [&](const auto& entry) {
            return std::chrono::duration<double>(now - entry.second.last) >= refill;
        });
    }
    if (buckets_.size() >= max_sources_) {
        buckets_.erase(buckets_.begin());
    }
}

} // namespace ecsnet::transport
