#pragma once

// A server's counts since it started: refused datagrams by reason, and the handshake and traffic totals.
// Written by the thread running the server; readable from any thread (an admin endpoint exporting them:
// relaxed atomics, each count exact on its own).

#include <atomic>
#include <cstdint>

#include "drop_reason.hpp"

namespace ecsnet::transport {

struct server_counters {
    /// ecsnet_packets_dropped_total{reason=...}
    drop_counters dropped;

    std::atomic<std::uint64_t> datagrams_received{0};
    std::atomic<std::uint64_t> datagrams_sent{0};
    std::atomic<std::uint64_t> bytes_received{0}; // whole UDP payloads
    std::atomic<std::uint64_t> bytes_sent{0};
    /// Datagrams the socket would not take (its buffer full, or an error): lost like any UDP datagram.
    std::atomic<std::uint64_t> send_failures{0};

    std::atomic<std::uint64_t> challenges_sent{0};
    std::atomic<std::uint64_t> denials_sent{0};
    std::atomic<std::uint64_t> connections_opened{0};
    std::atomic<std::uint64_t> connections_closed{0};
    std::atomic<std::uint64_t> timeouts{0};
    /// Pending handshakes pushed out by the table's limits; used tokens forgotten before they expired.
    std::atomic<std::uint64_t> pending_evicted{0};
    std::atomic<std::uint64_t> used_tokens_evicted{0};
};

/// Adds `amount` to a counter (relaxed: counts, not synchronisation).
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t amount = 1) noexcept {
    counter.fetch_add(amount, std::memory_order_relaxed);
}

} // namespace ecsnet::transport
