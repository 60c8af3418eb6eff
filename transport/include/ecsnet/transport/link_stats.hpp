#pragma once

// What a link has measured and counted since it was created (the owner exports these as metrics).

#include <array>
#include <chrono>
#include <cstdint>

#include "channel.hpp"
#include "receive_result.hpp"

namespace ecsnet::transport {

struct link_stats {
    std::chrono::microseconds rtt{};     // smoothed RTT (RFC 6298 SRTT) with the peer's ack delay removed;
                                         // initial_rtt until the first sample
    std::chrono::microseconds rtt_var{}; // RFC 6298 RTTVAR
    std::chrono::microseconds min_rtt{}; // smallest sample (0 before the first)
    double
        loss{}; // smoothed fraction of data-carrying packets never acked (ack-only packets are not counted)

    std::uint64_t packets_sent{}, packets_received{}, packets_acked{};
    std::uint64_t packets_lost{};  // data-carrying packets whose ack window passed without their bit
    std::uint64_t ack_only_sent{}; // of packets_sent: bodies with acks only
    std::uint64_t bytes_sent{}, bytes_received{}; // bodies
    std::uint64_t resends{};                      // reliable messages and block fragments sent again
    std::uint64_t messages_dropped{};             // unreliable messages lost to reassembly limits or timeouts
    std::uint64_t redundant_overflow{};           // redundant messages dropped from a full window (sender)
    std::uint64_t
        redundant_skipped{}; // redundant ids never delivered because a newer one came first (receiver)
    std::array<std::uint64_t, channel_count> messages_sent{};      // queued by send(), by channel
    std::array<std::uint64_t, channel_count> messages_delivered{}; // by channel
    std::uint64_t packets_refused{};
    std::array<std::uint64_t, receive_error_count> refused{}; // by receive_error (index 0 stays 0)

    [[nodiscard]] std::uint64_t refused_for(receive_error error) const noexcept {
        return refused[static_cast<std::size_t>(error)];
    }
};

} // namespace ecsnet::transport
