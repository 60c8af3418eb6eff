#include "ecsnet/transport/used_tokens.hpp"

#include <algorithm>

namespace ecsnet::transport {

used_tokens::used_tokens(std::size_t capacity)
    : capacity_{std::max<std::size_t>(capacity, 1)} {}

bool used_tokens::contains(const token_mac& mac, std::uint64_t unix_now) const {
    const auto found = entries_.find(mac);
    return found != entries_.end() && found->second.expire_timestamp > unix_now;
}

void used_tokens::add(const token_mac& mac, const net_address& from, std::uint64_t expire_timestamp,
                      std::uint64_t unix_now) {
    // Expired entries at the front go first (tokens mostly expire in the order they were used).
    while (!order_.empty()) {
        const auto front = entries_.find(order_.front());
        if (front != entries_.end() && front->second.expire_timestamp > unix_now &&
            entries_.size() < capacity_) {
            break;
        }
        if (front != entries_.end()) {
            if (front->second.expire_timestamp > unix_now) {
                ++evictions_;
            }
            entries_.erase(front);
        }
        order_.pop_front();
    }
    if (entries_.insert_or_assign(mac, entry{from, expire_timestamp}).second) {
        order_.push_back(mac);
    }
}

} // namespace ecsnet::transport
