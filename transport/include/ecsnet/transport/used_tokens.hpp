#pragma once

// The tokens that have connected to this server (by MAC), until they expire: a token connects once. A
// second connection request or response with it, from any address, is refused (token_reused), even after
// its connection has ended. Bounded: at most `capacity` entries; when full, the oldest entry is forgotten
// (counted: a forgotten token could connect again before it expires, with fresh session keys). Entries
// only come from fully authenticated handshakes, so filling the table takes that many real connections.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "address.hpp"
#include "pending_handshakes.hpp"

namespace ecsnet::transport {

class used_tokens {
public:
    explicit used_tokens(std::size_t capacity);

    /// Whether `mac` connected before and has not expired at `unix_now`.
    [[nodiscard]] bool contains(const token_mac& mac, std::uint64_t unix_now) const;
    void add(const token_mac& mac, const net_address& from, std::uint64_t expire_timestamp,
             std::uint64_t unix_now);

    [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    /// Unexpired entries forgotten to make room.
    [[nodiscard]] std::uint64_t evictions() const noexcept { return evictions_; }

private:
    struct entry {
        net_address from;
        std::uint64_t expire_timestamp;
    };
    std::size_t capacity_;
    std::unordered_map<token_mac, entry, token_mac_hash> entries_;
    std::deque<token_mac> order_; // insertion order
    std::uint64_t evictions_{0};
};

} // namespace ecsnet::transport
