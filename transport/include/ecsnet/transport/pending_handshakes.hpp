#pragma once

// The handshakes in progress on a server: which source address claimed which token (by the token's
// MAC), so that a token is used from one address only. A client retrying its request from the same
// address is allowed; another address presenting the same token is refused (token_reused).
//
// Bounded: at most `capacity` entries and `per_ip` per source IP; a new claim beyond either limit
// evicts the oldest entry (of that IP, or overall). Eviction costs a legitimate client nothing: the server
// keeps no state a handshake needs (the challenge token carries it), so an evicted client's response
// still completes its handshake. It only reopens the token to another address until it is claimed again.
// Entries also expire once their last request is older than the challenge lifetime.
//
// Complexity: O(1) per claim and lookup (hash tables; per-IP lists of at most `per_ip` entries).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <list>
#include <unordered_map>
#include <vector>

#include "address.hpp"
#include "clock.hpp"
#include "protocol.hpp"

namespace ecsnet::transport {

/// The MAC of an authenticated token: random to anyone without the key, so its first bytes hash well.
struct token_mac_hash {
    [[nodiscard]] std::size_t operator()(const token_mac& mac) const noexcept {
        std::size_t hash = 0;
        std::memcpy(&hash, mac.data(), sizeof hash);
        return hash;
    }
};

class pending_handshakes {
public:
    pending_handshakes(std::size_t capacity, std::size_t per_ip);

    enum class claim_result : std::uint8_t {
        inserted,      // a new handshake
        refreshed,     // the same address again (a retry)
        other_address, // the token is claimed by another address: refuse
    };
    claim_result claim(const token_mac& mac, const net_address& from, clock::time_point now);

    /// The address that claimed `mac`, or nullptr.
    [[nodiscard]] const net_address* owner(const token_mac& mac) const;
    void erase(const token_mac& mac);
    /// Forgets entries whose last request came before `cutoff`.
    void expire(clock::time_point cutoff);

    [[nodiscard]] std::size_t size() const noexcept { return by_mac_.size(); }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    /// Entries pushed out by the limits since the start.
    [[nodiscard]] std::uint64_t evictions() const noexcept { return evictions_; }

private:
    struct entry {
        token_mac mac;
        net_address from;
        clock::time_point first_seen;
        clock::time_point last_seen;
    };
    using entry_list = std::list<entry>;

    void remove(entry_list::iterator it);

    std::size_t capacity_;
    std::size_t per_ip_;
    entry_list order_; // oldest first
    std::unordered_map<token_mac, entry_list::iterator, token_mac_hash> by_mac_;
    std::unordered_map<net_address, std::vector<entry_list::iterator>, net_ip_hash, net_ip_equal> by_ip_;
    std::uint64_t evictions_{0};
};

} // namespace ecsnet::transport
