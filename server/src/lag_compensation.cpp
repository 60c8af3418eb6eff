#include "ecsnet/server/lag_compensation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ecsnet/server/hit_target.hpp"
#include "ecsnet/server/server_metrics.hpp"

namespace ecsnet::server {

namespace {

std::uint64_t ticks_in(std::chrono::milliseconds span, std::uint32_t tick_rate) noexcept {
    const auto ms = static_cast<std::uint64_t>(std::max<std::int64_t>(span.count(), 0));
    return (ms * tick_rate + 999) / 1000; // rounded up
}

} // namespace

std::size_t lag_compensation::frames_for(const lag_compensation_options& options) noexcept {
    return static_cast<std::size_t>(ticks_in(options.window, options.tick_rate)) + 2;
}

lag_compensation::lag_compensation(const proto::schema& schema, const spatial_layout& layout,
                                   lag_compensation_options options, server_metrics* metrics)
    : options_{options}
    , min_interval_ticks_{ticks_in(options.min_shot_interval, options.tick_rate)}
    , history_{frames_for(options)}
    , metrics_{metrics} {
    const auto component = schema.layout().find(layout.component);
    if (!component) {
        throw std::invalid_argument("lag compensation: no replicated component '" + layout.component + "'");
    }
    component_ = *component;
    codec_ = &schema.codec(*component);
    const auto& fields = schema.component_at(*component).fields;
    const auto field = [&](const std::string& name) {
        const auto found = std::find_if(fields.begin(), fields.end(),
                                        [&](const proto::field_info& f) { return f.name == name; });
        if (found == fields.end() || found->encoding != proto::field_encoding::fixed_point) {
            throw std::invalid_argument("lag compensation: '" + layout.component + "." + name +
                                        "' is not a fixed-point field");
        }
        return static_cast<std::size_t>(found - fields.begin());
    };
    x_field_ = field(layout.x_field);
    y_field_ = field(layout.y_field);
    x_min_ = fields[x_field_].min;
    x_step_ = fields[x_field_].step;
    y_min_ = fields[y_field_].min;
    y_step_ = fields[y_field_].step;
    values_.resize(fields.size());
}

void lag_compensation::record(const ecsnet::registry& reg, std::uint64_t tick, std::int64_t server_time_us,
                              const proto::replicated_state* captured) {
    history_.begin_frame(tick, server_time_us);
    const auto* targets = reg.try_storage<hit_target>();
    if (targets == nullptr) {
        return;
    }
    if (captured != nullptr && component_ < captured->components.size() &&
        captured->components[component_].ids_are_entities) {
        // The tick's quantized columns, by entity index: the values the clients receive, without quantizing
        // them again.
        const auto& columns = captured->components[component_].fields;
        const auto& x = columns[x_field_];
        const auto& y = columns[y_field_];
        const auto& indices = captured->flat(scratch_);
        for (std::size_t row = 0; row < indices.size(); ++row) {
            const auto e = reg.current(indices[row]);
            const auto* target = e == null_entity ? nullptr : targets->try_get(e); // one lookup, not two
            if (target == nullptr) {
                continue;
            }
            history_.add(e, static_cast<float>(x_min_ + static_cast<double>(x.get(row)) * x_step_),
                         static_cast<float>(y_min_ + static_cast<double>(y.get(row)) * y_step_),
                         target->radius);
        }
        return;
    }
    for (std::size_t at = 0; at < targets->size(); ++at) {
        const auto e = (*targets)[at];
        if (!codec_->contained(reg, e)) {
            continue;
        }
        // Quantized as replicated, then decoded as the client decodes it (decode_field): the client's
        // positions exactly.
        codec_->quantize_one(reg, e, values_.data());
        history_.add(e, static_cast<float>(x_min_ + static_cast<double>(values_[x_field_]) * x_step_),
                     static_cast<float>(y_min_ + static_cast<double>(values_[y_field_]) * y_step_),
                     targets->get(e).radius);
    }
}

shot_result lag_compensation::shoot(const shot_request& shot) {
    shot_result result;
    if (!std::isfinite(shot.aim_x) || !std::isfinite(shot.aim_y) || !std::isfinite(shot.range) ||
        std::hypot(shot.aim_x, shot.aim_y) < 1e-6F || history_.empty()) {
        result.outcome = shot_outcome::refused_invalid;
        ++counts_.refused_invalid;
        if (metrics_ != nullptr) {
            metrics_->fire_refused.with("invalid").add();
        }
        return result;
    }
    const auto tick = history_.newest_tick();
    if (const auto last = last_shot_tick_.find(shot.client);
        last != last_shot_tick_.end() && tick - last->second < min_interval_ticks_) {
        result.outcome = shot_outcome::refused_cooldown;
        ++counts_.refused_cooldown;
        if (metrics_ != nullptr) {
            metrics_->fire_refused.with("cooldown").add();
        }
        return result;
    }
    last_shot_tick_[shot.client] = tick;

    // The rewind, never past the server's clock nor further back than the window.
    const std::int64_t oldest_allowed = now_us_ - std::chrono::microseconds{options_.window}.count();
    std::int64_t at = shot.render_time_us;
    if (at > now_us_) {
        at = now_us_;
        result.clamp = rewind_clamp::future;
        ++counts_.clamped_future;
        if (metrics_ != nullptr) {
            metrics_->fire_rewind_clamped.with("future").add();
        }
    } else if (at < oldest_allowed) {
        at = oldest_allowed;
        result.clamp = rewind_clamp::too_old;
        ++counts_.clamped_too_old;
        if (metrics_ != nullptr) {
            metrics_->fire_rewind_clamped.with("too_old").add();
        }
    }
    result.evaluated_time_us = at;

    hit_ray ray{shot.fallback_x, shot.fallback_y, shot.aim_x, shot.aim_y, shot.range};
    if (const auto origin = shot.shooter_in_present ? std::nullopt : history_.position_of(shot.shooter, at)) {
        ray.x = origin->x;
        ray.y = origin->y;
    }
    ++counts_.shots;
    if (metrics_ != nullptr) {
        metrics_->shots.add();
    }
    result.hit = history_.raycast(at, ray, shot.shooter);
    if (result.hit) {
        result.outcome = shot_outcome::hit;
        ++counts_.hits;
        if (metrics_ != nullptr) {
            metrics_->shot_hits.add();
        }
    }
    return result;
}

} // namespace ecsnet::server
