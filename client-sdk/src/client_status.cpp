#include "client_status.hpp"

#include <algorithm>

namespace ecsnet::client::detail {

namespace {

std::uint64_t unix_us_now() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

} // namespace

client_status::client_status(std::chrono::milliseconds rate_window)
    : bytes_in_{rate_window}
    , bytes_out_{rate_window}
    , snapshots_{rate_window} {}

bool client_status::begin_connect(bool rtt_from_pings) {
    std::lock_guard lock{mutex_};
    if (state_ == client_state::connecting || state_ == client_state::handshaking ||
        state_ == client_state::connected) {
        return false;
    }
    state_ = client_state::connecting;
    disconnect_ = {};
    stats_ = {};
    clock_.reset();
    rtt_from_pings_ = rtt_from_pings;
    const auto now = steady::now();
    bytes_in_.reset(now);
    bytes_out_.reset(now);
    snapshots_.reset(now);
    return true;
}

void client_status::set_state(client_state state) {
    std::lock_guard lock{mutex_};
    state_ = state;
}

void client_status::end(const disconnect_info& info) {
    std::lock_guard lock{mutex_};
    state_ = client_state::disconnected;
    disconnect_ = info;
}

client_state client_status::state() const {
    std::lock_guard lock{mutex_};
    return state_;
}

disconnect_info client_status::last_disconnect() const {
    std::lock_guard lock{mutex_};
    return disconnect_;
}

client_stats client_status::stats() const {
    std::lock_guard lock{mutex_};
    auto out = stats_;
    const auto now = steady::now();
    out.bytes_in_per_second = bytes_in_.per_second(now);
    out.bytes_out_per_second = bytes_out_.per_second(now);
    out.snapshots_per_second = snapshots_.per_second(now);
    out.server_clock_offset_us = clock_.offset_us();
    return out;
}

std::int64_t client_status::server_time_us(steady::time_point now) const {
    std::lock_guard lock{mutex_};
    return clock_.server_time_us(local_us(now));
}

std::uint32_t client_status::estimated_server_tick(steady::time_point now) const {
    std::lock_guard lock{mutex_};
    if (!clock_.synchronised()) {
        return stats_.newest_tick ? *stats_.newest_tick + 1 : 0;
    }
    const auto server_now = std::max<std::int64_t>(0, clock_.server_time_us(local_us(now)));
    if (stats_.newest_tick) {
        return next_tick_at(*stats_.newest_tick, stats_.newest_tick_server_time_us, server_now, tick_rate_);
    }
    return next_tick_at(0, 0, server_now, tick_rate_); // Pongs before any snapshot: from the epoch
}

void client_status::set_tick_rate(std::uint32_t tick_rate) {
    std::lock_guard lock{mutex_};
    tick_rate_ = tick_rate;
}

void client_status::add_traffic(std::uint64_t bytes_in, std::uint64_t bytes_out, steady::time_point now) {
    std::lock_guard lock{mutex_};
    stats_.bytes_received += bytes_in;
    stats_.bytes_sent += bytes_out;
    if (bytes_in > 0) {
        bytes_in_.add(static_cast<double>(bytes_in), now);
    }
    if (bytes_out > 0) {
        bytes_out_.add(static_cast<double>(bytes_out), now);
    }
}

void client_status::set_transport_figures(const transport_figures& figures) {
    std::lock_guard lock{mutex_};
    stats_.rtt = figures.rtt;
    stats_.rtt_smoothed = figures.rtt;
    stats_.rtt_variance = figures.rtt_variance;
    stats_.rtt_min = figures.rtt_min;
    stats_.packet_loss = figures.packet_loss;
    stats_.packets_sent = figures.packets_sent;
    stats_.packets_received = figures.packets_received;
    stats_.packets_lost = figures.packets_lost;
    stats_.resends = figures.resends;
    stats_.inputs_overflowed = figures.inputs_overflowed;
    stats_.messages_dropped = figures.messages_dropped;
}

void client_status::on_pong(std::int64_t sent_us, std::int64_t received_us, std::int64_t server_us) {
    const auto rtt = received_us - sent_us;
    std::lock_guard lock{mutex_};
    ++stats_.pongs_received;
    if (rtt_from_pings_) {
        stats_.rtt = std::chrono::microseconds{rtt};
        stats_.rtt_smoothed = stats_.pongs_received == 1
                                  ? stats_.rtt
                                  : std::chrono::microseconds{(7 * stats_.rtt_smoothed.count() + rtt) / 8};
    }
    clock_.on_pong(sent_us, received_us, server_us);
}

void client_status::on_applied(proto::tick_type tick, std::uint64_t server_time_us, bool full_state,
                               std::uint64_t epoch_unix_us, steady::time_point now) {
    const auto server_time = static_cast<std::int64_t>(server_time_us);
    std::lock_guard lock{mutex_};
    ++stats_.snapshots_applied;
    stats_.full_states_received += full_state ? 1 : 0;
    stats_.newest_tick = tick;
    stats_.newest_tick_server_time_us = server_time;
    stats_.newest_tick_server_unix_us = epoch_unix_us + server_time_us;
    stats_.newest_tick_applied_unix_us = unix_us_now();
    snapshots_.add(1.0, now);
    clock_.on_snapshot(server_time, local_us(now));
}

} // namespace ecsnet::client::detail
