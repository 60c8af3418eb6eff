#pragma once

// The demo world, "arena": the standard scene of the replication benchmark (NPCs wandering a 2 km x 2 km
// arena: Transform, Health, Kind; ~20% moving, 1% health changes, 0.1% spawns and despawns per tick) plus
// one avatar per connected client, steered by that client's input (arena/input.hpp).
//
// It is written with ecsnet's public API only, the way a studio writes its own game:
// - components: the replicated ones of arena/components.hpp, and server-only Mover (velocity) and Avatar;
// - systems on the scheduler, each declaring what it reads and writes:
//     steer      writes Mover                 NPC movers turn now and then (parallel, per entity)
//     move       writes Transform, Mover      every mover moves and bounces off the edges: the hot system,
//                                             over the full-owning group<Transform, Mover>
//     health     writes Health                1% of the entities gain or lose health (parallel)
//     lifecycle  reads Transform, Mover...    movers stop and others start, NPCs spawn and despawn:
//     structural
//                                             changes, through the command buffer
// - per-entity randomness is a hash of (seed, tick, entity), so the world evolves the same whatever the
//   number of worker threads.
// - every NPC and avatar is hit-testable (hit_target, radius 0.5 m); an input with the fire action
//   (arena/input.hpp) casts a ray from the shooter along its aim through the server's lag compensation, at
//   the render time the client drew: a hit takes 10 health from the target and sets LastHit on the shooter.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/input.hpp>
#include <ecsnet/arena/scene.hpp>
#include <ecsnet/ecs/registry.hpp>
#include <ecsnet/ecs/scheduler.hpp>

#include "game_world.hpp"

namespace ecsnet::server {

struct arena_options {
    std::size_t npcs{10'000};
    std::uint64_t seed{42};
    std::uint32_t tick_rate{30};
    std::size_t workers{2};
    /// Each avatar gets a companion (a drone: Transform + Kind 9, no hit_target) that its owner's move
    /// inputs steer at half the avatar's speed (arena/movement.hpp, step_companion), marked predicted_by the
    /// client, which predicts it (issue 17). Off by default: the arena's entity counts stay one per client.
    bool companions{false};
};

/// Marks what a client controls: its avatar (and its companion, with arena_options::companions), which the
/// NPC systems leave alone.
struct Avatar {
    client_id client{};
};

class arena_world final : public game_world {
public:
    explicit arena_world(arena_options options = {});
    ~arena_world() override;

    [[nodiscard]] const proto::schema& replicated_schema() const override;
    /// The companion of an avatar (arena_options::companions), or null_entity.
    [[nodiscard]] entity companion_of(entity avatar) const;
    [[nodiscard]] ecsnet::registry& registry() override { return registry_; }

    entity client_joined(client_id client, std::string_view name) override;
    void client_left(client_id client, entity avatar) override;
    std::optional<std::string> apply_input(client_id client, entity avatar,
                                           const client_input& input) override;
    void update(double dt) override;
    /// Transform.x and .y over the arena (interest management).
    [[nodiscard]] std::optional<spatial_layout> spatial() const override;
    void use_lag_compensation(lag_compensation* compensation) override { lag_compensation_ = compensation; }

    /// Checkpoints: Mover and Avatar (server-only), Transform's exact floats, and the tick count and the
    /// spawn generator's state: a restored arena evolves exactly as the saved one would have.
    void declare_saveable(saveable_components& out) const override;
    [[nodiscard]] std::string save_state() const override;
    [[nodiscard]] std::optional<std::string> load_state(std::string_view state) override;
    /// Avatars of the previous run's clients are removed: their clients get new ones when they rejoin.
    void restored() override;
    /// Mover (vx, vy) and Avatar (client).
    [[nodiscard]] std::vector<inspected_component> inspect(entity e) const override;

    [[nodiscard]] std::uint64_t ticks() const noexcept { return ticks_; }
    [[nodiscard]] std::size_t npcs() const noexcept;
    /// A wave: `count` NPCs like the arena's own, placed uniformly in the disc of `radius` around (x, y)
    /// (clamped to the arena). What a game event does to interest management all at once
    /// (bench/interest_surge).
    void spawn_wave(float x, float y, float radius, std::size_t count);

private:
    entity spawn_npc();
    std::optional<std::string> fire(client_id client, entity avatar, const arena::action_input& action,
                                    bool predicting);
    void build_systems();

    arena_options options_;
    ecsnet::registry registry_;
    arena::scene_random random_;
    std::unique_ptr<ecsnet::scheduler> scheduler_;
    std::uint64_t ticks_{};
    lag_compensation* lag_compensation_{};
    // arena_options::companions: each avatar's companion, by the avatar's entity value.
    std::unordered_map<std::uint64_t, entity> companions_;
};

} // namespace ecsnet::server
