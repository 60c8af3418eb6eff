#pragma once

// The receive side of packet sequences: which of the peer's packets arrived, to refuse duplicates (the
// network may deliver a datagram twice, and nothing above the link may see a message twice) and packets too
// old to tell, and the ack fields of every outgoing header (the newest sequence received, a bit per each of
// the 32 before it). One bit per sequence in a ring of 1,024: recording a packet is O(1) (plus O(gap) bits
// cleared when the newest jumps ahead, at most 1,024, paid for by the sequences skipped).

#include <array>
#include <cstddef>
#include <cstdint>

#include "clock.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

class received_packets {
public:
    /// Sequences this far behind the newest (or further) are stale: refused, since a duplicate can no
    /// longer be told from a first arrival.
    static constexpr std::size_t window = 1024;

    enum class verdict : std::uint8_t { fresh, duplicate, stale, too_far_ahead };

    /// What recording `seq` would mean. `max_jump`: a sequence that far ahead of the newest or further is
    /// refused (a correct peer never skips that many).
    [[nodiscard]] verdict check(sequence_t seq, std::size_t max_jump) const noexcept {
        if (!any_) {
            return verdict::fresh;
        }
        const auto ahead = sequence_distance(seq, newest_);
        if (ahead != 0 && ahead < 0x8000U) {
            return ahead >= max_jump ? verdict::too_far_ahead : verdict::fresh;
        }
        const auto behind = sequence_distance(newest_, seq);
        if (behind >= window) {
            return verdict::stale;
        }
        return test(seq) ? verdict::duplicate : verdict::fresh;
    }

    /// Records `seq` (check() said fresh) as received at `now`.
    void record(sequence_t seq, clock::time_point now) noexcept {
        if (!any_) {
            any_ = true;
            newest_ = seq;
            newest_time_ = now;
            ack_bits_ = 1;
            set(seq);
            return;
        }
        if (sequence_greater_than(seq, newest_)) {
            const auto ahead = sequence_distance(seq, newest_);
            if (ahead >= window) {
                bits_.fill(0);
            } else {
                for (std::uint32_t s = 1; s < ahead; ++s) {
                    clear(static_cast<sequence_t>(newest_ + s));
                }
            }
            ack_bits_ = ahead >= 32 ? 1U : (ack_bits_ << ahead) | 1U;
            newest_ = seq;
            newest_time_ = now;
        } else {
            const auto behind = sequence_distance(newest_, seq);
            if (behind < 32) {
                ack_bits_ |= 1U << behind;
            }
        }
        set(seq);
    }

    [[nodiscard]] bool any() const noexcept { return any_; }
    /// Newest sequence received (meaningless before any()).
    [[nodiscard]] sequence_t newest() const noexcept { return newest_; }
    /// Bit n: newest() - n received.
    [[nodiscard]] std::uint32_t ack_bits() const noexcept { return ack_bits_; }
    /// When newest() arrived (for the ack delay).
    [[nodiscard]] clock::time_point newest_time() const noexcept { return newest_time_; }

private:
    [[nodiscard]] bool test(sequence_t seq) const noexcept {
        const auto i = seq % window;
        return ((bits_[i / 64] >> (i % 64)) & 1U) != 0;
    }
    void set(sequence_t seq) noexcept {
        const auto i = seq % window;
        bits_[i / 64] |= std::uint64_t{1} << (i % 64);
    }
    void clear(sequence_t seq) noexcept {
        const auto i = seq % window;
        bits_[i / 64] &= ~(std::uint64_t{1} << (i % 64));
    }

    std::array<std::uint64_t, window / 64> bits_{};
    std::uint32_t ack_bits_{0};
    sequence_t newest_{0};
    bool any_{false};
    clock::time_point newest_time_{};
};

} // namespace ecsnet::transport
