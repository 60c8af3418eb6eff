#pragma once

// The arena's movement rule, written once and run on both sides: the server's arena_world runs it for every
// mover each tick (its "move" system) and applies avatar_velocity to a client's move input; the client's
// predictor (client-sdk prediction.hpp) runs step_avatar on its copy of its own avatar, with the same
// inputs, ahead of the server.
//
// Determinism: positions are replicated at 1/512 m (components.hpp), so a client only ever learns the
// server's position rounded to that grid. move() therefore keeps every mover's x and y ON the grid (it
// rounds them after each step): the server's exact state is then the replicated one, and a client that
// starts from a replicated position and applies the same inputs computes bit-identical floats (the same
// float operations in the same order, no fused multiply-add: the project builds with -std=c++20, whose
// default -ffp-contract=off keeps it so). Prediction then mispredicts only when something the client does
// not simulate (another player, a knockback) moved the avatar.

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <string_view>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/arena/input.hpp"
#include "ecsnet/arena/scene.hpp"

namespace ecsnet::arena {

/// Movers bounce off a wall 1 m inside the arena's edge.
inline constexpr double movement_edge = arena_half_extent - 1.0;

/// `value` rounded to the position grid (position_step). Exact in float: |value| < 2^10 and the grid is
/// 2^-9, so the scaled value has at most 19 significant bits.
[[nodiscard]] inline float on_position_grid(float value) noexcept {
    constexpr auto scale = static_cast<float>(1.0 / position_step);
    return std::nearbyint(value * scale) / scale;
}

/// Where a mover faces: its velocity's heading in [0, 2 pi).
[[nodiscard]] inline float heading_of(const Mover& m) noexcept {
    const double a = std::atan2(m.vy, m.vx);
    return static_cast<float>(a < 0 ? a + 2.0 * std::numbers::pi : a);
}

/// The velocity a move input gives an avatar: the direction normalised, the speed clamped to
/// [0, max_avatar_speed]; (0, 0) or speed 0 stops. The input's numbers must be finite (the server refuses
/// others before calling this).
[[nodiscard]] inline Mover avatar_velocity(const move_input& input) noexcept {
    const double length = std::hypot(input.dir_x, input.dir_y);
    const double speed =
        std::clamp(static_cast<double>(input.speed), 0.0, static_cast<double>(max_avatar_speed));
    if (length < 1e-6 || speed == 0.0) {
        return Mover{0.0F, 0.0F};
    }
    return Mover{static_cast<float>(input.dir_x / length * speed),
                 static_cast<float>(input.dir_y / length * speed)};
}

/// One tick of a mover: moves by its velocity, bounces off the walls, faces where it goes, and stays on the
/// position grid. A mover at rest does not change.
inline void move(Transform& t, Mover& m, float dt) noexcept {
    if (m.vx == 0.0F && m.vy == 0.0F) {
        return;
    }
    constexpr auto edge = static_cast<float>(movement_edge);
    float x = t.x + m.vx * dt;
    float y = t.y + m.vy * dt;
    if (std::fabs(x) > edge) {
        m.vx = -m.vx;
        x = std::clamp(x, -edge, edge);
    }
    if (std::fabs(y) > edge) {
        m.vy = -m.vy;
        y = std::clamp(y, -edge, edge);
    }
    t.x = on_position_grid(x);
    t.y = on_position_grid(y);
    t.yaw = heading_of(m);
}

/// One server tick of an avatar, as the server runs it: its input sets its velocity, then it moves. The
/// client predicts its avatar with exactly this.
inline void step_avatar(Transform& t, Mover& m, const move_input& input, float dt) noexcept {
    m = avatar_velocity(input);
    move(t, m, dt);
}

/// The velocity a move input gives an avatar's companion (the arena's drone, arena_options::companions):
/// the avatar's at half speed. It depends on the input only, so that the client predicts the drone exactly
/// as it predicts its avatar (client-sdk marked_predictions.hpp).
[[nodiscard]] inline Mover companion_velocity(const move_input& input) noexcept {
    const auto avatar = avatar_velocity(input);
    return Mover{avatar.vx * 0.5F, avatar.vy * 0.5F};
}

/// One server tick of a companion, as the server runs it: its owner's input sets its velocity, then it moves
/// (bouncing off the walls, on the position grid).
inline void step_companion(Transform& t, Mover& m, const move_input& input, float dt) noexcept {
    m = companion_velocity(input);
    move(t, m, dt);
}

// ---- for the client's predictor (client-sdk prediction.hpp: prediction_rules<Transform>{predict_avatar,
// position_of, displace}) ---------------------------------------------------------------------------------

/// The move of an input the client sent (a move, or a move with a shot), if the server would apply it: it
/// decodes and its numbers are finite (the server refuses anything else, and nothing moves).
[[nodiscard]] inline std::optional<move_input> predictable_move(std::string_view payload) {
    const auto decoded = decode_input(payload);
    if (!decoded) {
        return std::nullopt;
    }
    const auto& input = decoded->move;
    if (!std::isfinite(input.dir_x) || !std::isfinite(input.dir_y) || !std::isfinite(input.speed)) {
        return std::nullopt;
    }
    return input;
}

/// One tick of the own avatar with the input the client sent for it, as the server will run it.
inline void predict_avatar(Transform& t, std::string_view payload, double dt) {
    if (const auto input = predictable_move(payload)) {
        Mover velocity;
        step_avatar(t, velocity, *input, static_cast<float>(dt));
    }
}

/// One tick of the own companion with the input the client sent for it: what the server runs
/// (prediction::predict_marked with prediction_rules<Transform>{predict_companion, position_of, displace}).
inline void predict_companion(Transform& t, std::string_view payload, double dt) {
    if (const auto input = predictable_move(payload)) {
        Mover velocity;
        step_companion(t, velocity, *input, static_cast<float>(dt));
    }
}

/// Where a Transform is.
[[nodiscard]] inline std::array<double, 3> position_of(const Transform& t) noexcept {
    return {t.x, t.y, t.z};
}

/// A Transform moved by an offset (the visible correction of a misprediction).
inline void displace(Transform& t, const std::array<double, 3>& offset) noexcept {
    t.x = static_cast<float>(t.x + offset[0]);
    t.y = static_cast<float>(t.y + offset[1]);
    t.z = static_cast<float>(t.z + offset[2]);
}

} // namespace ecsnet::arena
