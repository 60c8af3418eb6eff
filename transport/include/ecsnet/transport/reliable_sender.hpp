#pragma once

// The send side of the reliable channel: messages numbered 0, 1, 2... (16-bit, wrapping) kept from send()
// until acked. Small messages ride in runs of consecutive ids, several per body; a message too big for one
// body is a *block*: fragments of fragment_bytes, each acked on its own (by the packet that carried it, or
// by the receiver's fragment-ack chunks) and resent on its own. One block is in flight at a time (as in
// yojimbo); small messages after it keep flowing, and the receiver puts everything back in id order.
//
// Resend rules (docs/protocol.md section 9.5): a message or fragment not acked is sent again when
//  - its resend timer expires (resend timeout from the RTT estimate, rtt_estimator.hpp), or
//  - the packet that last carried it is declared lost: a later packet 3 or more sequences ahead was acked
//    while its own bit stayed clear (TCP's and QUIC's fast retransmit), or
//  - (fragments) the receiver's fragment ack reports it missing while fragments sent 3 or more
//    transmissions after it arrived.
// Never simply "in every packet": the peer's bandwidth goes to new data.
//
// Bounded: send() refuses (queue_full) when the queue would hold more than max_queue_bytes (counted from the
// oldest unacked message to the newest, acked ones included until everything before them is acked: the
// most the receiver may have to hold for ordering) or `window` message ids.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "channel.hpp"
#include "chunk.hpp"
#include "clock.hpp"
#include "receive_result.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

struct reliable_sender_config {
    std::size_t max_queue_bytes{1 << 20};
    std::size_t window{1024};
    std::size_t max_message_bytes{256 * 1024};
    /// Largest message sent whole (in a run); bigger ones are blocks.
    std::size_t max_whole_bytes{1150};
    /// Bytes of each block fragment but the last.
    std::uint32_t fragment_bytes{1150};
};

class reliable_sender {
public:
    /// One transmission target: a message, or a fragment of the block in flight.
    struct send_state {
        clock::time_point last_sent{};
        std::uint32_t last_tx{};  // fragments: transmission number (fast retransmit from fragment acks)
        sequence_t last_packet{}; // the packet that carried it last
        bool sent{false};
        bool acked{false};
        bool resend_now{false}; // its last packet was declared lost
    };
    struct entry {
        std::vector<std::byte> data;
        clock::time_point queued_at{};
        send_state state{};
        bool block{false};
    };

    explicit reliable_sender(const reliable_sender_config& config);

    send_status push(std::span<const std::byte> message, clock::time_point now);

    // The queue, oldest first: entry i has id front_id() + i.
    [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
    [[nodiscard]] sequence_t front_id() const noexcept { return front_id_; }
    [[nodiscard]] entry& at(std::size_t i) noexcept { return queue_[i]; }
    [[nodiscard]] const entry& at(std::size_t i) const noexcept { return queue_[i]; }
    [[nodiscard]] std::size_t queued_bytes() const noexcept { return queued_bytes_; }
    /// When the oldest unacked message was queued (nullopt when everything is acked).
    [[nodiscard]] std::optional<clock::time_point> oldest_queued_at() const noexcept;

    [[nodiscard]] static bool due(const send_state& s, clock::time_point now,
                                  clock::duration resend_timeout) noexcept {
        return !s.acked && (!s.sent || s.resend_now || now - s.last_sent >= resend_timeout);
    }
    /// Records a transmission in packet `packet`; returns whether it was a resend.
    bool mark_sent(send_state& s, clock::time_point now, sequence_t packet) noexcept;

    // The block in flight.
    /// Makes the oldest unacked block (if any) the one in flight when none is; returns whether one is.
    bool ensure_block() noexcept;
    [[nodiscard]] bool block_active() const noexcept { return block_.active; }
    [[nodiscard]] sequence_t block_id() const noexcept { return block_.id; }
    [[nodiscard]] std::uint32_t block_fragment_count() const noexcept { return block_.count; }
    [[nodiscard]] std::uint32_t block_total_bytes() const noexcept;
    [[nodiscard]] std::uint32_t fragment_bytes() const noexcept { return config_.fragment_bytes; }
    [[nodiscard]] std::span<const std::byte> block_fragment(std::uint32_t index) const noexcept;
    [[nodiscard]] send_state& fragment_state(std::uint32_t index) noexcept { return block_.fragments[index]; }
    /// A fragment transmission (numbers fragment sends for fast retransmit); returns whether it was a resend.
    bool mark_fragment_sent(std::uint32_t index, clock::time_point now, sequence_t packet) noexcept;

    // Acks and losses.
    void on_run_acked(sequence_t first_id, std::uint32_t count) noexcept;
    void on_fragment_acked(sequence_t id, std::uint32_t index) noexcept;
    void on_run_lost(sequence_t first_id, std::uint32_t count, sequence_t packet) noexcept;
    void on_fragment_lost(sequence_t id, std::uint32_t index, sequence_t packet) noexcept;
    /// Whether a fragment ack from the peer is consistent with the block in flight (acks of other ids are
    /// ignored, so they are fine): bad_fragment_ack when it names fragments past the block's end.
    [[nodiscard]] receive_error check_fragment_ack(const fragment_ack& ack) const noexcept;
    void on_fragment_ack(const fragment_ack& ack) noexcept;

    struct due_times {
        bool unsent{false};                      // a message or fragment never sent is waiting
        std::optional<clock::time_point> resend; // the earliest resend due (<= now: due already)
    };
    /// What is due, ignoring pacing.
    [[nodiscard]] due_times next_due(clock::time_point now, clock::duration resend_timeout) const noexcept;

private:
    struct block_state {
        std::vector<send_state> fragments;
        std::size_t entry_index{}; // position in the queue when started (adjusted as the front pops)
        std::uint32_t count{};
        std::uint32_t acked{};
        std::uint32_t tx_counter{};
        std::uint32_t max_acked_tx{};
        sequence_t id{};
        bool active{false};
    };

    [[nodiscard]] entry* find(sequence_t id) noexcept;
    void ack_entry(entry& e) noexcept;
    void ack_fragment(std::uint32_t index) noexcept;
    void detect_fragment_losses() noexcept;
    void pop_acked() noexcept;

    reliable_sender_config config_;
    std::deque<entry> queue_;
    std::vector<std::vector<std::byte>> spare_; // buffers of popped small messages, for reuse
    std::size_t queued_bytes_{0};
    std::size_t blocks_waiting_{0}; // block entries not acked
    sequence_t front_id_{0};
    block_state block_;
};

} // namespace ecsnet::transport
