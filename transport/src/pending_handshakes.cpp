#include "ecsnet/transport/pending_handshakes.hpp"

#include <algorithm>

namespace ecsnet::transport {

pending_handshakes::pending_handshakes(std::size_t capacity, std::size_t per_ip)
    : capacity_{std::max<std::size_t>(capacity, 1)}
    , per_ip_{std::max<std::size_t>(per_ip, 1)} {}

pending_handshakes::claim_result pending_handshakes::claim(const token_mac& mac, const net_address& from,
                                                           clock::time_point now) {
    if (const auto found = by_mac_.find(mac); found != by_mac_.end()) {
        if (found->second->from != from) {
            return claim_result::other_address;
        }
        found->second->last_seen = now;
        return claim_result::refreshed;
    }
    if (const auto ip = by_ip_.find(from); ip != by_ip_.end() && ip->second.size() >= per_ip_) {
        remove(ip->second.front()); // that IP's oldest
        ++evictions_;
    }
    if (by_mac_.size() >= capacity_) {
        remove(order_.begin()); // the oldest of all
        ++evictions_;
    }
    order_.push_back(entry{mac, from, now, now});
    const auto it = std::prev(order_.end());
    by_mac_.emplace(mac, it);
    by_ip_[from].push_back(it);
    return claim_result::inserted;
}

const net_address* pending_handshakes::owner(const token_mac& mac) const {
    const auto found = by_mac_.find(mac);
    return found == by_mac_.end() ? nullptr : &found->second->from;
}

void pending_handshakes::erase(const token_mac& mac) {
    if (const auto found = by_mac_.find(mac); found != by_mac_.end()) {
        remove(found->second);
    }
}

void pending_handshakes::expire(clock::time_point cutoff) {
    // Oldest first by first request: an entry first seen after the cutoff was also last seen after it,
    // so the walk stops there.
    for (auto it = order_.begin(); it != order_.end() && it->first_seen < cutoff;) {
        const auto next = std::next(it);
        if (it->last_seen < cutoff) {
            remove(it);
        }
        it = next;
    }
}

void pending_handshakes::remove(entry_list::iterator it) {
    by_mac_.erase(it->mac);
    if (const auto ip = by_ip_.find(it->from); ip != by_ip_.end()) {
        std::erase(ip->second, it);
        if (ip->second.empty()) {
            by_ip_.erase(ip);
        }
    }
    order_.erase(it);
}

} // namespace ecsnet::transport
