#include "ecsnet/bots/behaviour.hpp"

#include <cmath>
#include <numbers>

namespace ecsnet::bots {

namespace {
constexpr double pi = std::numbers::pi;
} // namespace

std::string_view to_string(behaviour_kind kind) noexcept {
    switch (kind) {
    case behaviour_kind::idle:
        return "idle";
    case behaviour_kind::wander:
        return "wander";
    case behaviour_kind::circle:
        return "circle";
    }
    return "unknown";
}

std::optional<behaviour_kind> parse_behaviour(std::string_view name) noexcept {
    for (const auto kind : {behaviour_kind::idle, behaviour_kind::wander, behaviour_kind::circle}) {
        if (name == to_string(kind)) {
            return kind;
        }
    }
    return std::nullopt;
}

std::uint64_t bot_seed(std::uint64_t run_seed, std::uint64_t index) noexcept {
    // One splitmix64 step over a combination of the two: neighbouring indices give unrelated seeds.
    arena::scene_random mix{run_seed * 0x9E3779B97F4A7C15ULL + index};
    return mix.next();
}

behaviour::behaviour(behaviour_kind kind, std::uint64_t seed, std::uint32_t tick_rate) noexcept
    : kind_{kind}
    , random_{seed}
    , tick_rate_{tick_rate == 0 ? 30 : tick_rate} {}

void behaviour::start(proto::tick_type tick) noexcept {
    started_ = true;
    first_tick_ = tick;
    start_heading_ = random_.uniform(0.0, 2.0 * pi);
    heading_ = start_heading_;
    if (kind_ == behaviour_kind::circle) {
        speed_ = static_cast<float>(circle_speed);
        turn_direction_ = random_.chance(0.5) ? 1.0 : -1.0;
    } else {
        speed_ = static_cast<float>(random_.uniform(0.5, 1.0) * arena::max_avatar_speed);
        schedule_turn(tick);
    }
}

void behaviour::schedule_turn(proto::tick_type tick) noexcept {
    const auto wait = random_.uniform(1.0, 4.0) * static_cast<double>(tick_rate_);
    next_turn_ = tick + static_cast<proto::tick_type>(std::max(1.0, wait));
}

std::optional<arena::move_input> behaviour::next(proto::tick_type tick,
                                                 const arena::Transform* own) noexcept {
    if (kind_ == behaviour_kind::idle) {
        return std::nullopt;
    }
    if (!started_) {
        start(tick);
    }
    if (kind_ == behaviour_kind::circle) {
        // Turning at speed / radius radians per second of server time: a lap every 2 pi r / v seconds.
        const auto seconds = static_cast<double>(tick - first_tick_) / static_cast<double>(tick_rate_);
        heading_ = start_heading_ + turn_direction_ * seconds * circle_speed / circle_radius;
    } else {
        if (tick >= next_turn_) {
            heading_ += random_.uniform(-pi / 2.0, pi / 2.0);
            schedule_turn(tick);
        }
        if (own != nullptr) {
            // Past the turning line on an axis and still heading outwards along it: turn towards the middle,
            // give or take 30 degrees (which always heads back along that axis: the other coordinate is
            // at most 1.11 times this one, well under tan 60 degrees).
            const bool out_x = std::fabs(own->x) > wander_edge && std::cos(heading_) * own->x > 0.0;
            const bool out_y = std::fabs(own->y) > wander_edge && std::sin(heading_) * own->y > 0.0;
            if (out_x || out_y) {
                heading_ = std::atan2(-static_cast<double>(own->y), -static_cast<double>(own->x)) +
                           random_.uniform(-pi / 6.0, pi / 6.0);
                schedule_turn(tick);
            }
        }
        heading_ = std::remainder(heading_, 2.0 * pi);
    }
    arena::move_input input;
    input.target = 0; // our own avatar
    input.dir_x = static_cast<float>(std::cos(heading_));
    input.dir_y = static_cast<float>(std::sin(heading_));
    input.speed = speed_;
    return input;
}

} // namespace ecsnet::bots
