#pragma once

// Why a datagram was refused. Every refused datagram is counted under one reason (drop_counters); the
// server exports them as ecsnet_packets_dropped_total{reason="..."}. This layer never logs per packet:
// an attacker decides how many packets arrive, so the owner logs from the counts, or from the optional
// per-drop callback behind its own rate limiter.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ecsnet::transport {

enum class drop_reason : std::uint8_t {
    malformed = 0,  // a size or a field that no valid packet of its type has
    bad_prefix,     // an unknown packet type, a sequence length outside 1..8, a type this side never receives
    wrong_version,  // a connection request (or token) of another protocol version
    wrong_protocol, // a connection request for another protocol id (another game, or another build of it)
    token_invalid,  // a private token that does not open with the server's key, or does not parse
    token_expired,  // a connection request whose token has expired
    token_wrong_address, // a token that does not list this server's address
    token_reused,        // a token already used from another address, or already used to connect
    challenge_invalid, // a response whose challenge token does not open, is too old, or names another address
    replayed,          // a sequence already received or older than the replay window
    decrypt_failed,    // a packet whose MAC does not verify with the expected key
    rate_limited,      // more handshake packets from one IP than its budget allows
    unknown_source,    // a connection packet from an address without a connection
    server_full,       // a request or response refused for lack of free slots (a denial was sent)
    already_connected, // a handshake packet from an address or client id that is already connected
    unexpected,        // a valid packet in the wrong state (a keep-alive to a client still connecting...)
    link_refused,      // an authenticated body the link refused as malformed
    count_             // not a reason: the number of reasons
};

inline constexpr std::size_t drop_reason_count = static_cast<std::size_t>(drop_reason::count_);

/// The metric label: "malformed", "token_reused"...
[[nodiscard]] std::string_view to_string(drop_reason reason) noexcept;

/// Refused datagrams by reason. Written by the thread running the transport, readable from any thread
/// (relaxed atomics: each count is exact, a snapshot of several is not a single instant).
class drop_counters {
public:
    void add(drop_reason reason) noexcept {
        counts_[static_cast<std::size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t value(drop_reason reason) const noexcept {
        return counts_[static_cast<std::size_t>(reason)].load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t total() const noexcept {
        std::uint64_t sum = 0;
        for (const auto& count : counts_) {
            sum += count.load(std::memory_order_relaxed);
        }
        return sum;
    }
    /// Calls func(drop_reason, std::uint64_t) for every reason, in enum order.
    template<typename Func>
    void for_each(Func&& func) const {
        for (std::size_t i = 0; i < drop_reason_count; ++i) {
            func(static_cast<drop_reason>(i), counts_[i].load(std::memory_order_relaxed));
        }
    }

private:
    std::array<std::atomic<std::uint64_t>, drop_reason_count> counts_{};
};

} // namespace ecsnet::transport
