#pragma once

// A budget of handshake packets per source IP (a token bucket per IP), checked before any crypto: a
// single host cannot make the server decrypt tokens or send challenges faster than `per_second` (with
// bursts up to `burst`). The table of IPs is bounded: when full, buckets that have refilled are forgotten
// (they hold nothing), and if none has, an arbitrary one (the keyed hash decides) makes room. Spoofed
// sources from many IPs can therefore get fresh buckets; what bounds them is that a request never earns
// a bigger answer and that a challenge only helps the address it was sent to.

#include <chrono>
#include <cstddef>
#include <unordered_map>

#include "address.hpp"
#include "clock.hpp"

namespace ecsnet::transport {

class source_rate_limiter {
public:
    /// per_second <= 0: no limit.
    source_rate_limiter(double per_second, double burst, std::size_t max_sources);

    /// Takes one packet from `from`'s budget; false when the budget is empty.
    [[nodiscard]] bool allow(const net_address& from, clock::time_point now);

    [[nodiscard]] std::size_t size() const noexcept { return buckets_.size(); }
    [[nodiscard]] std::size_t capacity() const noexcept { return max_sources_; }

private:
    struct bucket {
        double tokens;
        clock::time_point last;
    };
    void make_room(clock::time_point now);

    double per_second_;
    double burst_;
    std::size_t max_sources_;
    std::unordered_map<net_address, bucket, net_ip_hash, net_ip_equal> buckets_;
    clock::time_point last_scan_{};
};

} // namespace ecsnet::transport
