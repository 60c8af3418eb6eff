#pragma once

// The receive side of the reliable channel: delivers messages in id order, each exactly once. A message
// whose turn has come is delivered straight from the body; one that arrives after a gap is copied and held
// until the gap fills; a block is assembled from its fragments (one at a time, as its sender sends them)
// and then takes its place in the order. Everything held is bounded by max_buffered_bytes (the peer's
// max_reliable_queue_bytes: a correct peer never makes a receiver hold more, see reliable_sender.hpp).
//
// Two steps per body, as link::receive requires: check_*() look at every reliable chunk of a body against
// the current state (and what the body's earlier chunks would add) without changing anything; accept_*()
// then apply them. Ids are compared to the next expected one: up to `window` ahead is accepted, behind
// (already delivered: a resend whose ack was lost) is ignored, further ahead is refused.
//
// Fragment acks: after receiving a block fragment the receiver owes the sender a fragment_ack chunk (the
// first fragment missing and a bitmap of the 256 after it), so that the sender learns exactly which ones to
// send again even when the packets' own acks were lost or have scrolled past the 32-packet ack field.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "byte_io.hpp"
#include "channel.hpp"
#include "chunk.hpp"
#include "delivery.hpp"
#include "fragment_assembly.hpp"
#include "receive_result.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

class reliable_receiver {
public:
    /// What the reliable chunks seen so far in one body would add (reset per body).
    struct body_check {
        std::size_t new_bytes{0};
        bool starts_block{false};
        sequence_t block_id{};
        std::uint32_t total_bytes{};
        std::uint32_t fragment_bytes{};
    };

    reliable_receiver(std::size_t window, std::size_t max_buffered_bytes);

    [[nodiscard]] receive_error check_message(sequence_t id, std::size_t size,
                                              body_check& check) const noexcept;
    [[nodiscard]] receive_error check_fragment(const fragment& frag, body_check& check) const noexcept;

    void accept_message(sequence_t id, std::span<const std::byte> message, const delivery& out);
    void accept_fragment(const fragment& frag, const delivery& out);

    [[nodiscard]] bool fragment_ack_owed() const noexcept { return ack_owed_; }
    /// Writes the fragment ack owed (max_fragment_ack_bytes of room) and clears the debt.
    void write_fragment_ack(byte_writer& out) noexcept;

    [[nodiscard]] sequence_t expected() const noexcept { return expected_; }
    /// Bytes held: messages waiting for a gap, and the block being assembled.
    [[nodiscard]] std::size_t buffered_bytes() const noexcept { return buffered_bytes_; }

private:
    enum class position : std::uint8_t { delivered, in_window, beyond_window };
    [[nodiscard]] position where(sequence_t id) const noexcept;
    [[nodiscard]] bool held(sequence_t id) const noexcept;
    void hold(sequence_t id, std::vector<std::byte>&& message);
    void deliver_in_order(const delivery& out);
    void owe_fragment_ack(sequence_t id, std::uint32_t count) noexcept;

    struct slot {
        std::vector<std::byte> data;
        bool present{false};
    };

    std::size_t window_;
    std::size_t max_buffered_bytes_;
    std::deque<slot> held_; // slot i: id expected_ + i; the front slot is never present
    std::size_t buffered_bytes_{0};
    sequence_t expected_{0};

    fragment_assembly block_;
    sequence_t block_id_{0};
    bool block_active_{false};

    sequence_t ack_id_{0};
    std::uint32_t ack_count_{0};
    bool ack_owed_{false};
};

} // namespace ecsnet::transport
