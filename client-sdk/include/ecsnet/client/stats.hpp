#pragma once

// What a client measures about its connection (client::stats() returns a copy).
//
// Rates are averages over a sliding window (client_options::rate_window, 2 s by default, or the time since
// the connection opened when shorter). Counters are per connection: connect() resets them.

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "ecsnet/proto/state.hpp"

#include "prediction_stats.hpp"

namespace ecsnet::client {

struct client_stats {
    /// TCP: the round-trip time of the last Ping answered, and its smoothed value (RFC 6298: 7/8 old +
    /// 1/8 new); zero until the first Pong. In threading::poll mode a Pong waits for the next poll(), so
    /// the measure includes up to one frame of the game loop.
    /// UDP: both are the transport's smoothed RTT (RFC 6298 SRTT over the acks of every packet, the
    /// server's ack delay removed); zero until its first sample. Pings still go out for the server clock.
    std::chrono::microseconds rtt{};
    std::chrono::microseconds rtt_smoothed{};

    /// Bytes per second over the window, as read from and written to the socket (TCP: frames and
    /// prefixes; UDP: whole datagram payloads, headers, encryption, acks and keep-alives included).
    double bytes_in_per_second{};
    double bytes_out_per_second{};
    /// Snapshots applied per second over the window (the server's tick rate when all goes well).
    double snapshots_per_second{};

    std::uint64_t bytes_received{};
    std::uint64_t bytes_sent{};
    std::uint64_t snapshots_received{};
    std::uint64_t snapshots_applied{};
    /// Snapshots the mirror refused, whatever the reason (stale, unknown baseline, checksum, malformed).
    std::uint64_t snapshots_refused{};
    /// Of those, the ones whose rebuilt state did not match the server's checksum.
    std::uint64_t checksum_mismatches{};
    /// Of those, the ones built on a baseline the mirror does not keep.
    std::uint64_t unknown_baselines{};
    /// Full states applied (the first snapshot of a connection is one).
    std::uint64_t full_states_received{};
    /// threading::own_thread: snapshots dropped because poll() was not called for too long.
    std::uint64_t snapshots_dropped{};
    std::uint64_t inputs_sent{};
    /// Inputs send_input() refused (not connected, payload too large, too many bytes unsent).
    std::uint64_t inputs_refused{};
    std::uint64_t pings_sent{};
    /// UDP: acks sent again because no newer one followed in time (a lost ack would otherwise leave the
    /// server waiting, e.g. on the ack of a full state).
    std::uint64_t acks_repeated{};
    std::uint64_t pongs_received{};
    /// client_options::prediction: the newest InputStatus from the server (docs/protocol.md, section 13):
    /// its tick, how early the inputs arrived (ticks; negative: late), the newest input applied, and how
    /// many ticks the server had none of this client's inputs.
    std::optional<proto::tick_type> input_status_tick;
    std::optional<std::int32_t> input_lead_ticks;
    std::uint32_t input_applied_sequence{};
    std::uint32_t inputs_ran_dry{};
    /// InputStatus.predicted as last received: the entities besides the avatar that the server marked
    /// predicted for this client (prediction.hpp predicts those in view), sorted by index.
    std::vector<proto::net_entity> predicted_entities;
    /// What the attached prediction measured (prediction.hpp).
    prediction_stats prediction;

    /// The newest applied tick, and the server time it describes: microseconds since the server's epoch,
    /// and as a Unix time (ServerWelcome.server_epoch_unix_us + that).
    std::optional<proto::tick_type> newest_tick;
    std::int64_t newest_tick_server_time_us{};
    std::uint64_t newest_tick_server_unix_us{};
    /// When the client applied it, by its own wall clock (Unix microseconds). The update latency of that
    /// tick is newest_tick_applied_unix_us - newest_tick_server_unix_us (clocks assumed synchronised).
    std::uint64_t newest_tick_applied_unix_us{};
    /// Estimated server clock minus the client's steady clock, microseconds (server_clock.hpp).
    std::int64_t server_clock_offset_us{};

    // ---- UDP only (zero over TCP): what the transport measured on this connection (link_stats.hpp) ----
    /// RTT variation (RFC 6298 RTTVAR) and the smallest RTT sample.
    std::chrono::microseconds rtt_variance{};
    std::chrono::microseconds rtt_min{};
    /// Smoothed fraction (0..1) of the data-carrying packets sent that were never acked.
    double packet_loss{};
    std::uint64_t packets_sent{};
    std::uint64_t packets_received{};
    std::uint64_t packets_lost{};
    /// Reliable messages (the hello) and block fragments sent again after a loss.
    std::uint64_t resends{};
    /// Inputs pushed out of the redundant channel's window (32) before a packet carrying them was acked:
    /// lost inputs (the server sees a gap in their sequence).
    std::uint64_t inputs_overflowed{};
    /// Unreliable messages from the server (snapshots that are not full states) lost to reassembly limits
    /// or timeouts: one of their fragments never arrived.
    std::uint64_t messages_dropped{};
};

} // namespace ecsnet::client
