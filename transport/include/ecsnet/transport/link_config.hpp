#pragma once

// A link's limits and timers. The fields marked "peers must agree" bound what one side sends and the other
// accepts: give both ends the same values (or the receiver larger ones), or correct traffic gets refused.
// link's constructor checks the config and throws std::invalid_argument naming the first bad field.

#include <chrono>
#include <cstddef>

namespace ecsnet::transport {

struct link_config {
    /// Largest body write_packets produces and receive accepts. 1,175 = a 1,200-byte UDP payload minus the
    /// security layer's prefix byte, 8-byte nonce and 16-byte MAC. Peers must agree. At least 128.
    std::size_t max_body_bytes{1175};
    /// Largest message on the reliable and unreliable channels (bigger ones: send() says too_big; a
    /// receiver refuses fragments announcing more). Peers must agree.
    std::size_t max_message_bytes{256 * 1024};
    /// Send side: bytes of reliable messages queued or in flight (from the oldest unacked message to the
    /// newest, acked ones included until everything before them is acked). Receive side: the most bytes a
    /// link holds for ordering (messages after a gap, a block being assembled). Peers must agree.
    std::size_t max_reliable_queue_bytes{1 << 20};
    /// Reliable message ids in flight (send() says queue_full beyond) and accepted ahead of the next
    /// expected one. Peers must agree. 1 to 16,384.
    std::size_t reliable_window{1024};
    /// Send side: pending redundant messages; a new one beyond drops the oldest (counted in
    /// link_stats::redundant_overflow).
    std::size_t redundant_window{32};
    /// Largest redundant message. Peers must agree.
    std::size_t max_redundant_message_bytes{256};
    /// Send side: bytes of unreliable messages queued for the next write_packets.
    std::size_t max_unreliable_queue_bytes{1 << 20};
    /// Receive side: bytes held for unreliable messages being reassembled (buffers kept for reuse included).
    std::size_t max_reassembly_bytes{1 << 20};
    /// Receive side: unreliable messages being reassembled at once; a newer one evicts the oldest.
    std::size_t max_reassembly_groups{16};
    /// An unreliable message still incomplete this long after its first fragment is dropped.
    std::chrono::milliseconds reassembly_timeout{1000};
    /// Fragments one message may have (both channels). Peers must agree. At most 65,535.
    std::size_t max_fragments{1024};
    /// A packet sequence this far or further ahead of the newest received is refused
    /// (sequence_out_of_window). 1,024 to 32,767.
    std::size_t max_sequence_jump{4096};

    /// RTT assumed until the first sample.
    std::chrono::microseconds initial_rtt{std::chrono::milliseconds{100}};
    /// Bounds of the resend timeout (RFC 6298 RTO: smoothed RTT + 4 x variance + the peer's ack delay).
    std::chrono::microseconds min_resend_delay{std::chrono::milliseconds{15}};
    std::chrono::microseconds max_resend_delay{std::chrono::milliseconds{1000}};
    /// How long an ack may wait for a packet to ride on before wants_to_send() asks for an ack-only packet
    /// (sooner when two or more packets are unacknowledged).
    std::chrono::microseconds max_ack_delay{std::chrono::milliseconds{10}};
    /// Pace of reliable data (small messages and block fragments, new and resent): a token bucket of
    /// `reliable_send_burst` bytes refilled at `reliable_send_rate` bytes per second; 0 = no limit.
    std::size_t reliable_send_rate{512 * 1024};
    std::size_t reliable_send_burst{64 * 1024};
    /// Weight of each packet's fate (acked or lost) in the smoothed loss (an exponential moving average).
    double loss_smoothing{1.0 / 64};
};

} // namespace ecsnet::transport
