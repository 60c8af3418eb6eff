// The reliable channel's receive side (reliable_receiver.hpp).

#include "ecsnet/transport/reliable_receiver.hpp"

#include <array>

namespace ecsnet::transport {

reliable_receiver::reliable_receiver(std::size_t window, std::size_t max_buffered_bytes)
    : window_{window}
    , max_buffered_bytes_{max_buffered_bytes} {}

reliable_receiver::position reliable_receiver::where(sequence_t id) const noexcept {
    const auto ahead = sequence_distance(id, expected_);
    if (ahead < window_) {
        return position::in_window;
    }
    return ahead >= 0x8000U ? position::delivered : position::beyond_window;
}

bool reliable_receiver::held(sequence_t id) const noexcept {
    const auto index = sequence_distance(id, expected_);
    return index < held_.size() && held_[index].present;
}

receive_error reliable_receiver::check_message(sequence_t id, std::size_t size,
                                               body_check& check) const noexcept {
    switch (where(id)) {
    case position::beyond_window:
        return receive_error::message_id_out_of_window;
    case position::delivered:
        return receive_error::none;
    case position::in_window:
        break;
    }
    if (held(id)) {
        return receive_error::none;
    }
    if ((block_active_ && id == block_id_) || (check.starts_block && id == check.block_id)) {
        return receive_error::block_conflict; // one id, sent both whole and in fragments
    }
    if (buffered_bytes_ + check.new_bytes + size > max_buffered_bytes_) {
        return receive_error::reliable_buffer_full;
    }
    check.new_bytes += size;
    return receive_error::none;
}

receive_error reliable_receiver::check_fragment(const fragment& frag, body_check& check) const noexcept {
    switch (where(frag.id)) {
    case position::beyond_window:
        return receive_error::message_id_out_of_window;
    case position::delivered:
        return receive_error::none;
    case position::in_window:
        break;
    }
    if (held(frag.id)) {
        return receive_error::none; // a block already complete
    }
    if (block_active_) {
        if (frag.id != block_id_) {
            return receive_error::block_conflict;
        }
        return block_.matches(frag.total_bytes, frag.fragment_bytes) ? receive_error::none
                                                                     : receive_error::inconsistent_fragments;
    }
    if (check.starts_block) {
        if (frag.id != check.block_id) {
            return receive_error::block_conflict;
        }
        return check.total_bytes == frag.total_bytes && check.fragment_bytes == frag.fragment_bytes
                   ? receive_error::none
                   : receive_error::inconsistent_fragments;
    }
    if (buffered_bytes_ + check.new_bytes + frag.total_bytes > max_buffered_bytes_) {
        return receive_error::reliable_buffer_full;
    }
    check.starts_block = true;
    check.block_id = frag.id;
    check.total_bytes = frag.total_bytes;
    check.fragment_bytes = frag.fragment_bytes;
    check.new_bytes += frag.total_bytes;
    return receive_error::none;
}

void reliable_receiver::accept_message(sequence_t id, std::span<const std::byte> message,
                                       const delivery& out) {
    if (where(id) != position::in_window || held(id)) {
        return; // already delivered or held: a resend
    }
    if (id == expected_) {
        out(channel::reliable, message);
        ++expected_;
        if (!held_.empty()) {
            held_.pop_front();
        }
        deliver_in_order(out);
        return;
    }
    hold(id, std::vector<std::byte>(message.begin(), message.end()));
}

void reliable_receiver::accept_fragment(const fragment& frag, const delivery& out) {
    if (where(frag.id) != position::in_window || held(frag.id)) {
        owe_fragment_ack(frag.id, frag.count); // it is complete: say so again
        return;
    }
    if (!block_active_) {
        block_.start(frag.total_bytes, frag.fragment_bytes);
        block_id_ = frag.id;
        block_active_ = true;
        buffered_bytes_ += frag.total_bytes;
    }
    block_.add(frag.index, frag.data);
    owe_fragment_ack(frag.id, frag.count);
    if (!block_.complete()) {
        return;
    }
    block_active_ = false;
    buffered_bytes_ -= block_.total_bytes();
    if (frag.id == expected_) {
        out(channel::reliable, block_.bytes());
        block_.release(); // a block's buffer is not kept: blocks are rare and big
        ++expected_;
        if (!held_.empty()) {
            held_.pop_front();
        }
        deliver_in_order(out);
        return;
    }
    auto data = std::move(block_.buffer());
    data.resize(frag.total_bytes);
    block_.release();
    hold(frag.id, std::move(data));
}

void reliable_receiver::hold(sequence_t id, std::vector<std::byte>&& message) {
    const auto index = sequence_distance(id, expected_);
    if (held_.size() <= index) {
        held_.resize(std::size_t{index} + 1);
    }
    buffered_bytes_ += message.size();
    held_[index].data = std::move(message);
    held_[index].present = true;
}

void reliable_receiver::deliver_in_order(const delivery& out) {
    while (!held_.empty() && held_.front().present) {
        auto data = std::move(held_.front().data);
        held_.pop_front();
        buffered_bytes_ -= data.size();
        ++expected_;
        out(channel::reliable, data);
    }
}

void reliable_receiver::owe_fragment_ack(sequence_t id, std::uint32_t count) noexcept {
    ack_owed_ = true;
    ack_id_ = id;
    ack_count_ = count;
}

void reliable_receiver::write_fragment_ack(byte_writer& out) noexcept {
    std::array<std::byte, max_fragment_ack_bitmap_bytes> bitmap{};
    if (block_active_ && block_id_ == ack_id_) {
        const auto first_missing = block_.first_missing();
        const auto length = block_.ack_bitmap(first_missing, bitmap);
        transport::write_fragment_ack(out, ack_id_, first_missing,
                                      std::span<const std::byte>{bitmap}.first(length));
    } else {
        transport::write_fragment_ack(out, ack_id_, ack_count_, {}); // complete (delivered or held)
    }
    ack_owed_ = false;
}

} // namespace ecsnet::transport
