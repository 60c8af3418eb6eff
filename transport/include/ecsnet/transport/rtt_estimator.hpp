#pragma once

// Round-trip time from acks, as TCP's retransmission timer computes it (RFC 6298): the first sample R sets
// SRTT = R and RTTVAR = R / 2, later ones RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R| then SRTT = 7/8 SRTT + 1/8 R.
// Each sample is the time from sending a packet to receiving the first ack of it, minus the time the peer
// says it held that ack (the header's ack delay; ignored when not smaller than the sample), so that the
// estimate is the network's round trip, not the peer's sending schedule. (QUIC subtracts it only above
// min_rtt + ack_delay, to stop a lying peer talking the estimate down; but when every ack is delayed alike,
// as from a peer that writes once per tick, that rule never subtracts. Here a lying peer, already
// authenticated, could only cause early resends.) The resend timeout is RFC 6298's RTO plus the peer's
// recent ack delay (a peer with nothing to send acks late; QUIC's PTO does the same), clamped.

#include <algorithm>
#include <chrono>

namespace ecsnet::transport {

class rtt_estimator {
public:
    using duration = std::chrono::nanoseconds;

    explicit rtt_estimator(duration initial_rtt) noexcept
        : srtt_{initial_rtt}
        , rttvar_{initial_rtt / 2} {}

    void add_sample(duration measured, duration ack_delay) noexcept {
        measured = std::max(measured, duration::zero());
        ack_delay = std::max(ack_delay, duration::zero());
        const auto adjusted = ack_delay < measured ? measured - ack_delay : measured;
        if (!has_sample_ || adjusted < min_) {
            min_ = adjusted;
        }
        if (!has_sample_) {
            srtt_ = adjusted;
            rttvar_ = adjusted / 2;
            has_sample_ = true;
        } else {
            const auto error = srtt_ > adjusted ? srtt_ - adjusted : adjusted - srtt_;
            rttvar_ = (3 * rttvar_ + error) / 4;
            srtt_ = (7 * srtt_ + adjusted) / 8;
        }
        // The peer's ack delay: jumps up at once, decays slowly (a conservative recent maximum).
        peer_ack_delay_ = ack_delay >= peer_ack_delay_ ? ack_delay : (7 * peer_ack_delay_ + ack_delay) / 8;
    }

    [[nodiscard]] bool has_sample() const noexcept { return has_sample_; }
    [[nodiscard]] duration smoothed() const noexcept { return srtt_; }
    [[nodiscard]] duration variance() const noexcept { return rttvar_; }
    [[nodiscard]] duration min_rtt() const noexcept { return has_sample_ ? min_ : duration::zero(); }
    [[nodiscard]] duration peer_ack_delay() const noexcept { return peer_ack_delay_; }

    /// SRTT + max(4 RTTVAR, 1 ms) + the peer's ack delay, within [lowest, highest].
    [[nodiscard]] duration resend_timeout(duration lowest, duration highest) const noexcept {
        const auto rto =
            srtt_ + std::max<duration>(4 * rttvar_, std::chrono::milliseconds{1}) + peer_ack_delay_;
        return std::clamp(rto, lowest, highest);
    }

private:
    duration srtt_;
    duration rttvar_;
    duration min_{};
    duration peer_ack_delay_{};
    bool has_sample_{false};
};

} // namespace ecsnet::transport
