#include "ecsnet/proto/encoder.hpp"

#include "ecsnet/proto/checksum.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/framing.hpp"

namespace ecsnet::proto {

void ack_tracker::on_ack(const v1::Ack& ack, tick_type server_tick) noexcept {
    if (ack.full_state_requested()) {
        reset();
        floor_ = server_tick;
        return;
    }
    const tick_type tick = ack.tick();
    if (tick < floor_ || tick > server_tick || (newest_ && tick <= *newest_)) {
        return; // stale, reordered, or impossible: baselines only move forward
    }
    previous_ = newest_;
    newest_ = tick;
}

void ack_tracker::reset() noexcept {
    newest_.reset();
    previous_.reset();
    floor_ = 0;
}

snapshot_encoder::snapshot_encoder(const snapshot_history& history, encoder_options options)
    : history_{&history}
    , options_{options} {}

baselines snapshot_encoder::usable(const baselines& wanted) const noexcept {
    baselines used;
    const auto newest = history_->newest_tick();
    if (wanted.baseline && *wanted.baseline < newest && history_->contains(*wanted.baseline)) {
        used.baseline = wanted.baseline;
        if (options_.extrapolate && wanted.second && *wanted.second < *wanted.baseline &&
            history_->contains(*wanted.second)) {
            used.second = wanted.second;
        }
    }
    return used;
}

baselines snapshot_encoder::encode(const baselines& wanted, v1::Snapshot& out) {
    out.Clear();
    const auto& target = history_->newest();
    const auto& layout = history_->layout();
    auto used = usable(wanted);
    const replicated_state* baseline = used.baseline ? history_->find(*used.baseline) : nullptr;
    const replicated_state* second = used.second ? history_->find(*used.second) : nullptr;

    snapshot_header header;
    header.tick = target.tick;
    header.full_state = baseline == nullptr;
    header.time_offset_us =
        static_cast<std::int64_t>(target.server_time_us - history_->nominal_time_us(target.tick));
    std::string columns;
    delta_.reset(layout);
    if (baseline != nullptr) {
        history_->entered_since(baseline->tick, created_);
        header.baseline_gap = target.tick - 1 - baseline->tick;
    } else {
        created_.clear();
    }
    const bool idle = baseline != nullptr && created_.empty() && target.checksum == baseline->checksum &&
                      target.same_contents(*baseline, false);
    if (idle) {
        used.second.reset();
    } else {
        if (second != nullptr) {
            history_->entered_since(second->tick, fresh_);
            header.extrapolation_gap = baseline->tick - second->tick;
        } else {
            fresh_.clear();
        }
        const extrapolation x{baseline != nullptr ? target.tick - baseline->tick : 1U,
                              second != nullptr ? baseline->tick - second->tick : 1U};
        make_delta(layout, target, baseline, second, x,
                   delta_identity{created_, fresh_, history_->newest_generations()}, delta_, work_);
        bits_.clear();
        if (!delta_.empty() || second != nullptr) {
            write_delta(layout, delta_, bits_);
            if (bits_.bit_size() == 0) {
                // An empty delta whose state still differs (everything moved as extrapolated): the flags.
                bits_.put(0, static_cast<unsigned>(1 + layout.size()));
            }
        }
        bits_.append_to(columns);
        header.has_checksum = true;
    }
    header.columns_size = static_cast<std::uint32_t>(columns.size());
    header.checksum = target.checksum;

    out.set_tick(header.tick);
    out.set_full_state(header.full_state);
    out.set_baseline_gap(header.baseline_gap);
    out.set_extrapolation_gap(header.extrapolation_gap);
    out.set_time_offset_us(header.time_offset_us);
    if (!columns.empty()) {
        out.set_columns(std::move(columns));
    }
    if (header.has_checksum) {
        out.set_checksum(target.checksum);
    }
    out.set_check(header_check(header));
    return used;
}

std::shared_ptr<const encoded_snapshot> snapshot_encoder::encode(const baselines& wanted) {
    const auto newest = history_->newest_tick();
    if (!cache_tick_ || *cache_tick_ != newest) {
        cache_.clear();
        cache_tick_ = newest;
    }
    const auto key = usable(wanted);
    for (const auto& [used, snapshot] : cache_) {
        if (used == key) {
            return snapshot;
        }
    }
    v1::Envelope envelope;
    auto result = std::make_shared<encoded_snapshot>();
    result->used = encode(key, *envelope.mutable_snapshot());
    result->tick = newest;
    result->columns_bytes = envelope.snapshot().columns().size();
    result->idle = !envelope.snapshot().full_state() && !envelope.snapshot().has_checksum();
    result->envelope = encode_envelope(envelope);
    append_length_prefix(result->frame, result->envelope.size());
    result->frame += result->envelope;
    cache_.emplace_back(key, result);
    return result;
}

} // namespace ecsnet::proto
