#pragma once

// What a bot does with its avatar, one decision per applied snapshot (a player's client sends an input
// every tick):
//   idle    sends nothing: the cheapest client, the server only replicates to it;
//   wander  keeps a heading at a steady speed (half to full max_avatar_speed), turns by up to 90 degrees
//           every 1 to 4 seconds, and heads back towards the middle when it nears the arena's edge (it
//           reads its own avatar's position from its mirror);
//   circle  walks a circle of 8 m radius at 4 m/s, clockwise or not.
//
// Reproducible: the decisions depend only on the seed, the ticks applied and the avatar's mirrored
// position, never on wall-clock time; bot i of a run uses seed mix(--seed, i). O(1) per decision, no
// allocation. Not thread-safe (a bot calls it on its strand).

#include <cstdint>
#include <optional>
#include <string_view>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/input.hpp>
#include <ecsnet/arena/scene.hpp>
#include <ecsnet/proto/state.hpp>

namespace ecsnet::bots {

enum class behaviour_kind : std::uint8_t { idle, wander, circle };

[[nodiscard]] std::string_view to_string(behaviour_kind kind) noexcept;
/// "idle", "wander" or "circle"; nothing for anything else.
[[nodiscard]] std::optional<behaviour_kind> parse_behaviour(std::string_view name) noexcept;

/// The seed of bot `index` of a run seeded with `run_seed` (distinct bots get unrelated sequences).
[[nodiscard]] std::uint64_t bot_seed(std::uint64_t run_seed, std::uint64_t index) noexcept;

class behaviour {
public:
    /// Circle radius and speed, and where wander turns back (90% of the way to the edge).
    static constexpr double circle_radius = 8.0;
    static constexpr double circle_speed = 4.0;
    static constexpr double wander_edge = 0.9 * arena::arena_half_extent;

    behaviour(behaviour_kind kind, std::uint64_t seed, std::uint32_t tick_rate = 30) noexcept;

    /// The input to send after applying `tick`, given the avatar's mirrored Transform (nullptr while the
    /// mirror has not seen it); nothing for idle. Ticks must not go backwards.
    [[nodiscard]] std::optional<arena::move_input> next(proto::tick_type tick,
                                                        const arena::Transform* own) noexcept;

    [[nodiscard]] behaviour_kind kind() const noexcept { return kind_; }
    /// Radians, of the last input.
    [[nodiscard]] double heading() const noexcept { return heading_; }
    [[nodiscard]] float speed() const noexcept { return speed_; }
    /// Set the tick rate from the server's welcome (before the first next()).
    void set_tick_rate(std::uint32_t tick_rate) noexcept { tick_rate_ = tick_rate == 0 ? 30 : tick_rate; }

private:
    void start(proto::tick_type tick) noexcept;
    void schedule_turn(proto::tick_type tick) noexcept;

    behaviour_kind kind_;
    arena::scene_random random_;
    std::uint32_t tick_rate_;
    bool started_{false};
    proto::tick_type first_tick_{};
    proto::tick_type next_turn_{};
    double start_heading_{};
    double heading_{};
    double turn_direction_{1.0};
    float speed_{};
};

} // namespace ecsnet::bots
