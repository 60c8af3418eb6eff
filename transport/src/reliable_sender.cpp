// The reliable channel's send side (reliable_sender.hpp).

#include "ecsnet/transport/reliable_sender.hpp"

#include <algorithm>
#include <cassert>

namespace ecsnet::transport {

namespace {
/// Fragments sent this many transmissions after a missing one arrived: it is lost.
constexpr std::uint32_t fragment_reorder_threshold = 3;
constexpr std::size_t max_spare_buffers = 8;
} // namespace

reliable_sender::reliable_sender(const reliable_sender_config& config)
    : config_{config} {}

send_status reliable_sender::push(std::span<const std::byte> message, clock::time_point now) {
    if (message.size() > config_.max_message_bytes) {
        return send_status::too_big;
    }
    if (queue_.size() >= config_.window || queued_bytes_ + message.size() > config_.max_queue_bytes) {
        return send_status::queue_full;
    }
    entry e;
    if (!spare_.empty() && message.size() <= config_.max_whole_bytes) {
        e.data = std::move(spare_.back());
        spare_.pop_back();
    }
    e.data.assign(message.begin(), message.end());
    e.queued_at = now;
    e.block = message.size() > config_.max_whole_bytes;
    blocks_waiting_ += e.block ? 1 : 0;
    queued_bytes_ += message.size();
    queue_.push_back(std::move(e));
    return send_status::queued;
}

std::optional<clock::time_point> reliable_sender::oldest_queued_at() const noexcept {
    if (queue_.empty()) {
        return std::nullopt;
    }
    return queue_.front().queued_at; // the front is never acked: pop_acked() removes acked fronts
}

bool reliable_sender::mark_sent(send_state& s, clock::time_point now, sequence_t packet) noexcept {
    const bool resend = s.sent;
    s.sent = true;
    s.resend_now = false;
    s.last_sent = now;
    s.last_packet = packet;
    return resend;
}

bool reliable_sender::ensure_block() noexcept {
    if (block_.active) {
        return true;
    }
    if (blocks_waiting_ == 0) {
        return false;
    }
    for (std::size_t i = 0; i < queue_.size(); ++i) {
        const auto& e = queue_[i];
        if (e.block && !e.state.acked) {
            block_.active = true;
            block_.entry_index = i;
            block_.id = static_cast<sequence_t>(front_id_ + i);
            block_.count = fragment_count(static_cast<std::uint32_t>(e.data.size()), config_.fragment_bytes);
            block_.acked = 0;
            block_.tx_counter = 0;
            block_.max_acked_tx = 0;
            block_.fragments.assign(block_.count, send_state{});
            return true;
        }
    }
    return false;
}

std::uint32_t reliable_sender::block_total_bytes() const noexcept {
    return static_cast<std::uint32_t>(queue_[block_.entry_index].data.size());
}

std::span<const std::byte> reliable_sender::block_fragment(std::uint32_t index) const noexcept {
    const auto& data = queue_[block_.entry_index].data;
    const auto total = static_cast<std::uint32_t>(data.size());
    return std::span<const std::byte>{data}.subspan(std::size_t{index} * config_.fragment_bytes,
                                                    fragment_length(total, config_.fragment_bytes, index));
}

bool reliable_sender::mark_fragment_sent(std::uint32_t index, clock::time_point now,
                                         sequence_t packet) noexcept {
    auto& s = block_.fragments[index];
    s.last_tx = ++block_.tx_counter;
    return mark_sent(s, now, packet);
}

reliable_sender::entry* reliable_sender::find(sequence_t id) noexcept {
    const auto index = sequence_distance(id, front_id_);
    return index < queue_.size() ? &queue_[index] : nullptr;
}

void reliable_sender::ack_entry(entry& e) noexcept {
    if (e.state.acked) {
        return;
    }
    e.state.acked = true;
    if (e.block) {
        --blocks_waiting_;
    }
}

void reliable_sender::on_run_acked(sequence_t first_id, std::uint32_t count) noexcept {
    for (std::uint32_t i = 0; i < count; ++i) {
        if (auto* e = find(static_cast<sequence_t>(first_id + i)); e != nullptr && !e->block) {
            ack_entry(*e);
        }
    }
    pop_acked();
}

void reliable_sender::ack_fragment(std::uint32_t index) noexcept {
    auto& s = block_.fragments[index];
    if (s.acked) {
        return;
    }
    s.acked = true;
    s.resend_now = false;
    block_.max_acked_tx = std::max(block_.max_acked_tx, s.last_tx);
    if (++block_.acked == block_.count) {
        ack_entry(queue_[block_.entry_index]);
        block_.active = false;
    }
}

void reliable_sender::on_fragment_acked(sequence_t id, std::uint32_t index) noexcept {
    if (!block_.active || id != block_.id || index >= block_.count) {
        return;
    }
    ack_fragment(index);
    pop_acked();
}

void reliable_sender::on_run_lost(sequence_t first_id, std::uint32_t count, sequence_t packet) noexcept {
    for (std::uint32_t i = 0; i < count; ++i) {
        auto* e = find(static_cast<sequence_t>(first_id + i));
        // Only when that packet was its last transmission: a later one may still arrive.
        if (e != nullptr && !e->block && !e->state.acked && e->state.last_packet == packet) {
            e->state.resend_now = true;
        }
    }
}

void reliable_sender::on_fragment_lost(sequence_t id, std::uint32_t index, sequence_t packet) noexcept {
    if (!block_.active || id != block_.id || index >= block_.count) {
        return;
    }
    auto& s = block_.fragments[index];
    if (!s.acked && s.last_packet == packet) {
        s.resend_now = true;
    }
}

receive_error reliable_sender::check_fragment_ack(const fragment_ack& ack) const noexcept {
    if (!block_.active || ack.id != block_.id) {
        return receive_error::none;
    }
    if (ack.first_missing > block_.count || (ack.first_missing == block_.count && !ack.bitmap.empty())) {
        return receive_error::bad_fragment_ack;
    }
    if (!ack.bitmap.empty()) {
        const auto last = static_cast<unsigned>(ack.bitmap.back());
        std::size_t highest = 0;
        for (std::size_t bit = 0; bit < 8; ++bit) {
            if (((last >> bit) & 1U) != 0) {
                highest = (ack.bitmap.size() - 1) * 8 + bit;
            }
        }
        if (std::size_t{ack.first_missing} + 1 + highest >= block_.count) {
            return receive_error::bad_fragment_ack;
        }
    }
    return receive_error::none;
}

void reliable_sender::on_fragment_ack(const fragment_ack& ack) noexcept {
    if (!block_.active || ack.id != block_.id) {
        return;
    }
    for (std::uint32_t i = 0; i < ack.first_missing && block_.active; ++i) {
        ack_fragment(i);
    }
    for (std::size_t bit = 0; bit < ack.bitmap.size() * 8 && block_.active; ++bit) {
        if (bitmap_bit(ack.bitmap, bit)) {
            ack_fragment(static_cast<std::uint32_t>(ack.first_missing + 1 + bit));
        }
    }
    if (block_.active) {
        detect_fragment_losses();
    }
    pop_acked();
}

void reliable_sender::detect_fragment_losses() noexcept {
    for (auto& s : block_.fragments) {
        if (s.sent && !s.acked && s.last_tx + fragment_reorder_threshold <= block_.max_acked_tx) {
            s.resend_now = true;
        }
    }
}

void reliable_sender::pop_acked() noexcept {
    while (!queue_.empty() && queue_.front().state.acked) {
        auto& front = queue_.front();
        queued_bytes_ -= front.data.size();
        if (!front.block && spare_.size() < max_spare_buffers) {
            front.data.clear();
            spare_.push_back(std::move(front.data));
        }
        queue_.pop_front();
        ++front_id_;
        if (block_.active) {
            assert(block_.entry_index > 0);
            --block_.entry_index;
        }
    }
}

reliable_sender::due_times reliable_sender::next_due(clock::time_point now,
                                                     clock::duration resend_timeout) const noexcept {
    due_times due;
    const auto consider = [&](const send_state& s) {
        if (s.acked) {
            return;
        }
        if (!s.sent) {
            due.unsent = true;
            return;
        }
        const auto when = s.resend_now ? now : std::max(now, s.last_sent + resend_timeout);
        if (!due.resend || when < *due.resend) {
            due.resend = when;
        }
    };
    for (const auto& e : queue_) {
        if (!e.block) {
            consider(e.state);
        }
    }
    if (block_.active) {
        for (const auto& s : block_.fragments) {
            consider(s);
        }
    } else if (blocks_waiting_ > 0) {
        due.unsent = true; // a block can start
    }
    return due;
}

} // namespace ecsnet::transport
