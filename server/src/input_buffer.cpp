#include "ecsnet/server/input_buffer.hpp"

#include <algorithm>
#include <utility>

namespace ecsnet::server {

input_buffer::verdict input_buffer::offer(const client_input& input, std::string payload,
                                          proto::tick_type next_tick, std::uint32_t ticks_per_second) {
    const auto slack = static_cast<std::int64_t>(input.client_tick) - static_cast<std::int64_t>(next_tick);
    if (slack > max_lead) {
        return verdict::future;
    }
    const auto due = slack < 0 ? next_tick : input.client_tick;
    const auto same_tick = std::count_if(waiting_.begin(), waiting_.end(),
                                         [due](const waiting_input& w) { return w.due == due; });
    if (static_cast<std::size_t>(same_tick) >= max_per_tick) {
        return verdict::flood;
    }

    // The lead over the last second: the window rolls every `ticks_per_second` ticks.
    const proto::tick_type window = std::max<std::uint32_t>(ticks_per_second, 1);
    if (next_tick >= window_start_ + window) {
        previous_window_min_ = next_tick >= window_start_ + 2 * window ? std::nullopt : window_min_;
        window_min_.reset();
        window_start_ = next_tick - (next_tick - window_start_) % window;
    }
    const auto clamped = static_cast<std::int32_t>(std::max<std::int64_t>(slack, -1'000'000));
    window_min_ = window_min_ ? std::min(*window_min_, clamped) : clamped;

    waiting_input kept{due, input, std::move(payload)};
    waiting_.push_back(std::move(kept));
    waiting_.back().input.payload = waiting_.back().payload;
    return slack < 0 ? verdict::late : verdict::kept;
}

bool input_buffer::take(proto::tick_type tick, transport::function_ref<void(const client_input&)> apply) {
    bool any = false;
    // Arrival order is sequence order (the server drops an input whose sequence is not newer).
    for (auto& w : waiting_) {
        if (w.due <= tick) {
            w.input.payload = w.payload;
            apply(w.input);
            applied_sequence_ = w.input.sequence;
            applied_client_tick_ = w.input.client_tick;
            any = true;
        }
    }
    if (any) {
        // The newest applied is kept for repeating; the rest of the due ones go.
        auto last_due = std::find_if(waiting_.rbegin(), waiting_.rend(),
                                     [tick](const waiting_input& w) { return w.due <= tick; });
        newest_applied_ = std::move(*last_due);
        newest_applied_->input.payload = newest_applied_->payload;
        std::erase_if(waiting_, [tick](const waiting_input& w) { return w.due <= tick; });
        return false;
    }
    if (!newest_applied_) {
        return false; // nothing ever arrived: nothing to repeat, and not "dry" either
    }
    ++ran_dry_;
    auto repeated = newest_applied_->input;
    repeated.payload = newest_applied_->payload;
    repeated.repeated = true;
    apply(repeated);
    return true;
}

std::optional<std::int32_t> input_buffer::lead() const noexcept {
    if (window_min_ && previous_window_min_) {
        return std::min(*window_min_, *previous_window_min_);
    }
    return window_min_ ? window_min_ : previous_window_min_;
}

} // namespace ecsnet::server
