#include "ecsnet/server/inspector/inspector_feed.hpp"

#include <algorithm>
#include <numbers>

namespace ecsnet::server::inspector {

namespace {

std::int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

std::optional<std::size_t> frame::find(std::uint32_t index) const noexcept {
    const auto at = std::lower_bound(entities.begin(), entities.end(), index);
    if (at == entities.end() || *at != index) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(at - entities.begin());
}

std::optional<std::size_t> frame::row_of(std::size_t c, std::size_t at) const noexcept {
    const auto& column = components[c];
    if (column.ids_are_entities) {
        return at;
    }
    const auto found = std::lower_bound(column.ids.begin(), column.ids.end(), entities[at]);
    if (found == column.ids.end() || *found != entities[at]) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(found - column.ids.begin());
}

feed::feed(feed_options options)
    : options_{options}
    , period_{std::chrono::nanoseconds{static_cast<std::int64_t>(1e9 / std::max(options.publish_hz, 0.1))}} {}

bool feed::wants_frame(clock::time_point now) const noexcept {
    const bool watched = streams_.load(std::memory_order_relaxed) > 0 ||
                         now.time_since_epoch().count() < demand_until_ns_.load(std::memory_order_relaxed);
    return watched && now - last_publish_ >= period_;
}

std::shared_ptr<frame> feed::take_spare() {
    std::shared_ptr<frame> spare;
    {
        const std::lock_guard lock{mutex_};
        spare = std::move(retired_);
    }
    // use_count() == 1: no reader holds it (they hold it as shared_ptr<const frame>, sharing the count).
    if (!spare || spare.use_count() != 1) {
        return std::make_shared<frame>();
    }
    const std::lock_guard lock{spare->event_mutex};
    spare->event_ready = false;
    spare->event.clear();
    return spare;
}

void feed::copy_newest(const proto::snapshot_history& history, frame& out) {
    if (history.empty()) {
        out.entities.clear();
        out.generations.clear();
        out.components.clear();
        return;
    }
    const auto& state = history.newest();
    out.tick = state.tick;
    out.server_time_us = state.server_time_us;
    out.checksum = state.checksum;
    // The newest tick keeps its ids flat (history.hpp): a copy, no decoding.
    const auto& ids = state.flat(out.entities);
    if (&ids != &out.entities) {
        out.entities.assign(ids.begin(), ids.end());
    }
    const auto generations = history.newest_generations();
    out.generations.assign(generations.begin(), generations.end());
    out.generations.resize(out.entities.size()); // parallel to the entities, whatever happens
    out.components.resize(state.components.size());
    for (std::size_t c = 0; c < state.components.size(); ++c) {
        const auto& from = state.components[c];
        auto& to = out.components[c];
        to.ids_are_entities = from.ids_are_entities;
        to.ids.clear();
        if (!from.ids_are_entities) {
            to.ids.assign(from.own_ids.begin(), from.own_ids.end());
        }
        to.fields = from.fields; // column copies: memcpy-like, reusing capacity
    }
}

void feed::publish(std::shared_ptr<frame> next, clock::time_point now) {
    next->unix_ms = unix_ms_now();
    last_publish_ = now;
    {
        const std::lock_guard lock{mutex_};
        if (latest_) {
            // Only the feed created frames as non-const: giving the old one back to take_spare is safe once
            // no reader holds it (checked there).
            retired_ = std::const_pointer_cast<frame>(std::move(latest_));
        }
        latest_ = std::move(next);
    }
    published_.notify_all();
}

void feed::add_sample(const series_sample& sample) {
    const std::lock_guard lock{mutex_};
    series_.push_back(sample);
    while (series_.size() > options_.series_seconds) {
        series_.pop_front();
    }
}

void feed::add_disconnect(disconnect_record record) {
    record.unix_ms = unix_ms_now();
    const std::lock_guard lock{mutex_};
    disconnects_.push_back(std::move(record));
    while (disconnects_.size() > options_.disconnects_kept) {
        disconnects_.pop_front();
    }
}

std::vector<std::uint32_t> feed::take_server_only_requests() {
    std::vector<std::uint32_t> out;
    {
        const std::lock_guard lock{mutex_};
        out.swap(server_only_pending_);
        server_only_wanted_.store(false, std::memory_order_relaxed);
    }
    return out;
}

void feed::answer_server_only(server_only_view view) {
    {
        const std::lock_guard lock{mutex_};
        std::erase_if(server_only_answers_, [&](const server_only_view& v) { return v.index == view.index; });
        server_only_answers_.push_back(std::move(view));
        while (server_only_answers_.size() > 2 * options_.server_only_pending) {
            server_only_answers_.pop_front();
        }
    }
    published_.notify_all();
}

std::optional<server_only_view> feed::server_only(std::uint32_t index, proto::tick_type at_least,
                                                  std::chrono::milliseconds wait) {
    std::unique_lock lock{mutex_};
    const auto answered = [&]() -> const server_only_view* {
        for (const auto& v : server_only_answers_) {
            if (v.index == index && v.tick >= at_least) {
                return &v;
            }
        }
        return nullptr;
    };
    if (answered() == nullptr) {
        if (std::find(server_only_pending_.begin(), server_only_pending_.end(), index) ==
            server_only_pending_.end()) {
            if (server_only_pending_.size() >= options_.server_only_pending) {
                return std::nullopt;
            }
            server_only_pending_.push_back(index);
        }
        server_only_wanted_.store(true, std::memory_order_relaxed);
        published_.wait_for(lock, wait, [&] { return answered() != nullptr || stopped_.load(); });
    }
    const auto* found = answered();
    return found != nullptr ? std::optional<server_only_view>{*found} : std::nullopt;
}

std::shared_ptr<const frame> feed::latest() const {
    const std::lock_guard lock{mutex_};
    return latest_;
}

void feed::note_demand() noexcept {
    const auto until = clock::now() + options_.demand_keeps;
    demand_until_ns_.store(until.time_since_epoch().count(), std::memory_order_relaxed);
}

std::shared_ptr<const frame> feed::current(std::chrono::milliseconds wait) {
    note_demand();
    std::unique_lock lock{mutex_};
    const auto fresh = [this] { return latest_ && unix_ms_now() - latest_->unix_ms < 1000; };
    if (!fresh()) {
        published_.wait_for(lock, wait, [&] { return fresh() || stopped_.load(); });
    }
    return latest_;
}

std::shared_ptr<const frame> feed::wait_newer(proto::tick_type after, std::chrono::milliseconds wait) {
    std::unique_lock lock{mutex_};
    const bool newer = published_.wait_for(
        lock, wait, [&] { return stopped_.load() || (latest_ && latest_->tick != after); });
    if (!newer || stopped_.load()) {
        return nullptr;
    }
    return latest_;
}

std::vector<series_sample> feed::series() const {
    const std::lock_guard lock{mutex_};
    return {series_.begin(), series_.end()};
}

std::vector<disconnect_record> feed::disconnects() const {
    const std::lock_guard lock{mutex_};
    return {disconnects_.begin(), disconnects_.end()};
}

feed::stream_slot feed::open_stream() noexcept {
    auto open = streams_.load(std::memory_order_relaxed);
    do {
        if (open >= options_.max_streams) {
            return {};
        }
    } while (!streams_.compare_exchange_weak(open, open + 1, std::memory_order_relaxed));
    return stream_slot{this};
}

void feed::stop() {
    {
        const std::lock_guard lock{mutex_};
        stopped_ = true;
    }
    published_.notify_all();
}

double dequantize(const proto::field_info& field, std::uint32_t q) noexcept {
    switch (field.encoding) {
    case proto::field_encoding::fixed_point:
        return field.min + static_cast<double>(q) * field.step;
    case proto::field_encoding::angle:
        return static_cast<double>(q) * 2.0 * std::numbers::pi /
               static_cast<double>(std::uint64_t{1} << field.bits);
    case proto::field_encoding::signed_integer: {
        const auto shift = 64U - field.bits;
        return static_cast<double>(static_cast<std::int64_t>(static_cast<std::uint64_t>(q) << shift) >>
                                   shift);
    }
    case proto::field_encoding::unsigned_integer:
    case proto::field_encoding::boolean:
        break;
    }
    return static_cast<double>(q);
}

} // namespace ecsnet::server::inspector
