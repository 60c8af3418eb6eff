#pragma once

// The send side of the redundant channel (inputs): the last `window` messages not yet acked, numbered by a
// 16-bit id. Every body the link writes carries as many of them as fit, oldest first, in one run chunk, so
// each message is repeated until a packet carrying it is acked; an ack of a packet that carried messages up
// to id N retires every message up to N (the receiver has them, or a newer one, which makes older ones
// useless to it). A message pushed while `window` are pending drops the oldest (counted: overflow). The
// slots keep their buffers, so a steady input stream allocates nothing.
//
// Resending on a timer: while the stream flows, the next push carries every pending message again, so a
// timer resend only helps once the stream has gone quiet. resend_timeout(rto) is the link's resend timeout,
// but never less than one and a half of the stream's usual interval between pushes: a client pushing an
// input per snapshot, acked by the next snapshot, otherwise resent inputs the server already had whenever
// a snapshot came later than the timeout (12 to 18% of a thin bot's datagrams; bench/RESULTS.md, fourteenth
// pass).

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "channel.hpp"
#include "clock.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

class redundant_sender {
public:
    redundant_sender(std::size_t window, std::size_t max_message_bytes)
        : slots_(window)
        , max_message_bytes_{max_message_bytes} {}

    /// Queues a copy pushed at `now`; when the window is full the oldest pending message is dropped and
    /// `overflow` counted.
    send_status push(std::span<const std::byte> message, std::uint64_t& overflow, clock::time_point now) {
        if (message.size() > max_message_bytes_) {
            return send_status::too_big;
        }
        note_push(now);
        if (count_ == slots_.size()) {
            pop_front();
            ++overflow;
        }
        auto& slot = slots_[(head_ + count_) % slots_.size()];
        slot.assign(message.begin(), message.end());
        ++count_;
        return send_status::queued;
    }

    /// A packet that carried messages up to `newest_carried` was acked.
    void on_acked(sequence_t newest_carried) noexcept {
        while (count_ > 0 && !sequence_greater_than(first_id_, newest_carried)) {
            pop_front();
        }
    }

    [[nodiscard]] std::size_t pending() const noexcept { return count_; }
    [[nodiscard]] sequence_t first_id() const noexcept { return first_id_; }
    /// Pending message i (0 = oldest, id first_id() + i).
    [[nodiscard]] std::span<const std::byte> message(std::size_t i) const noexcept {
        return slots_[(head_ + i) % slots_.size()];
    }

    /// The first `count` pending messages went out at `now`.
    void mark_sent(std::size_t count, clock::time_point now) noexcept {
        sent_ = count > sent_ ? count : sent_;
        last_sent_ = now;
    }
    /// Whether some pending message has never been sent.
    [[nodiscard]] bool has_unsent() const noexcept { return sent_ < count_; }
    [[nodiscard]] clock::time_point last_sent() const noexcept { return last_sent_; }

    /// How long after the last send the pending messages are resent by a timer: `rto`, or one and a half of
    /// the usual interval between pushes if longer (see the top).
    [[nodiscard]] clock::duration resend_timeout(clock::duration rto) const noexcept {
        return std::max(rto, push_interval_ + push_interval_ / 2);
    }
    /// The usual interval between pushes (a moving average; zero before the second push).
    [[nodiscard]] clock::duration push_interval() const noexcept { return push_interval_; }

private:
    // A pause in the stream (a player idle for minutes) counts as this long: the resend timeout after it
    // stays near the link's.
    static constexpr clock::duration longest_push_interval = std::chrono::milliseconds{250};

    void note_push(clock::time_point now) noexcept {
        if (pushed_) {
            const auto interval =
                std::clamp<clock::duration>(now - last_push_, clock::duration::zero(), longest_push_interval);
            push_interval_ =
                push_interval_ == clock::duration::zero() ? interval : (7 * push_interval_ + interval) / 8;
        }
        pushed_ = true;
        last_push_ = now;
    }

    void pop_front() noexcept {
        slots_[head_].clear();
        head_ = (head_ + 1) % slots_.size();
        --count_;
        ++first_id_;
        sent_ = sent_ > 0 ? sent_ - 1 : 0;
    }

    std::vector<std::vector<std::byte>> slots_;
    std::size_t max_message_bytes_;
    std::size_t head_{0};
    std::size_t count_{0};
    std::size_t sent_{0}; // pending messages (from the oldest) sent at least once
    sequence_t first_id_{0};
    clock::time_point last_sent_{};
    clock::time_point last_push_{};
    clock::duration push_interval_{};
    bool pushed_{false};
};

} // namespace ecsnet::transport
