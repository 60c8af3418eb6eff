#include "ecsnet/server/arena_world.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include <ecsnet/arena/input.hpp>
#include <ecsnet/arena/movement.hpp>

#include "ecsnet/server/hit_target.hpp"
#include "ecsnet/server/lag_compensation.hpp"
#include "ecsnet/server/predicted_by.hpp"

namespace ecsnet::server {

using arena::Health;
using arena::Kind;
using arena::LastHit;
using arena::Mover;
using arena::Transform;

namespace {

constexpr double edge = arena::movement_edge;
constexpr double moving_fraction = 0.20;
constexpr double min_speed = 1.0;
constexpr double max_speed = 8.0;
constexpr double turn_interval_s = 2.0;
constexpr double moving_dwell_s = 10.0;
constexpr double health_change_fraction = 0.01;
constexpr double spawn_fraction = 0.001;
constexpr double despawn_fraction = 0.001;
constexpr std::uint8_t avatar_kind = 8;
constexpr std::uint8_t companion_kind = 9;
constexpr float companion_offset = 1.0F; // metres beside its avatar, at spawn
constexpr float hit_radius = 0.5F;
constexpr float fire_range = 3000.0F; // the whole arena, corner to corner
constexpr std::uint16_t fire_damage = 10;

// A random number in [0, 1) that depends only on (seed, tick, entity, purpose): systems running on any
// number of threads draw the same ones.
double unit(std::uint64_t seed, std::uint64_t tick, entity e, std::uint64_t purpose) noexcept {
    std::uint64_t z =
        seed ^ (tick * 0x9E3779B97F4A7C15ULL) ^ (std::uint64_t{to_integral(e)} << 20) ^ (purpose << 56);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

Mover moving(double heading, double speed) noexcept {
    return Mover{static_cast<float>(speed * std::cos(heading)),
                 static_cast<float>(speed * std::sin(heading))};
}

} // namespace

arena_world::arena_world(arena_options options)
    : options_{options}
    , random_{options.seed} {
    registry_.prepare<Transform, Health, Kind, Mover, Avatar, hit_target, LastHit, predicted_by>();
    for (std::size_t i = 0; i < options_.npcs; ++i) {
        spawn_npc();
    }
    build_systems();
}

arena_world::~arena_world() = default;

const proto::schema& arena_world::replicated_schema() const {
    return arena::replicated_schema();
}

std::optional<spatial_layout> arena_world::spatial() const {
    const auto half = static_cast<float>(arena::arena_half_extent);
    // No visibility rule beyond the radius: may_see is the default's yes.
    return spatial_layout{"Transform", "x", "y", -half, -half, half, half, false};
}

std::size_t arena_world::npcs() const noexcept {
    const auto* transforms = registry_.try_storage<Transform>();
    const auto* avatars = registry_.try_storage<Avatar>();
    return (transforms ? transforms->size() : 0) - (avatars ? avatars->size() : 0);
}

entity arena_world::spawn_npc() {
    const auto e = registry_.create();
    registry_.emplace<Transform>(e, static_cast<float>(random_.uniform(-edge, edge)),
                                 static_cast<float>(random_.uniform(-edge, edge)), 0.0F,
                                 static_cast<float>(random_.uniform(0.0, 2.0 * std::numbers::pi)));
    registry_.emplace<Health>(e, std::uint16_t{100});
    registry_.emplace<Kind>(e, static_cast<std::uint8_t>(random_.below(8)));
    registry_.emplace<hit_target>(e, hit_radius);
    if (random_.chance(moving_fraction)) {
        const auto m =
            moving(random_.uniform(0.0, 2.0 * std::numbers::pi), random_.uniform(min_speed, max_speed));
        registry_.emplace<Mover>(e, m);
        registry_.get<Transform>(e).yaw = arena::heading_of(m);
    }
    return e;
}

void arena_world::spawn_wave(float x, float y, float radius, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        const auto e = spawn_npc();
        // Uniform in the disc: the square root of a uniform fraction of the radius.
        const double distance = radius * std::sqrt(random_.uniform(0.0, 1.0));
        const double angle = random_.uniform(0.0, 2.0 * std::numbers::pi);
        auto& t = registry_.get<Transform>(e);
        t.x = static_cast<float>(std::clamp(x + distance * std::cos(angle), -edge, edge));
        t.y = static_cast<float>(std::clamp(y + distance * std::sin(angle), -edge, edge));
    }
}

void arena_world::build_systems() {
    scheduler_options settings;
    settings.threads = std::max<std::size_t>(1, options_.workers);
    scheduler_ = std::make_unique<ecsnet::scheduler>(registry_, settings);
    const auto seed = options_.seed;

    // NPC movers turn to a new heading about every 2 s.
    scheduler_->add(
        "steer", ecsnet::system<writes<Mover>, exclude_t<Avatar>, per_entity>{}, [seed](auto& ctx) {
            const double turn_chance = ctx.tick().delta_seconds / turn_interval_s;
            const auto tick = ctx.tick().index;
            ctx.parallel_each([&](entity e, Mover& m) {
                if (unit(seed, tick, e, 1) < turn_chance) {
                    m = moving(unit(seed, tick, e, 2) * 2.0 * std::numbers::pi, std::hypot(m.vx, m.vy));
                }
            });
        });

    // Every mover moves, bounces off the edges and faces where it goes (arena/movement.hpp: the rule the
    // client's predictor runs too). The hot system.
    scheduler_->add("move", ecsnet::system<writes<Transform, Mover>, per_entity, owning_group>{},
                    [](auto& ctx) {
                        const auto dt = static_cast<float>(ctx.tick().delta_seconds);
                        ctx.parallel_each([dt](Transform& t, Mover& m) { arena::move(t, m, dt); });
                    });

    // 1% of the entities gain or lose up to 25 health; avatars' health changes by hits only.
    using health_system = ecsnet::system<writes<Health>, exclude_t<Avatar>, per_entity>;
    scheduler_->add("health", health_system{}, [seed](auto& ctx) {
        const auto tick = ctx.tick().index;
        ctx.parallel_each([&](entity e, Health& h) {
            if (unit(seed, tick, e, 3) >= health_change_fraction) {
                return;
            }
            const int delta = 1 + static_cast<int>(unit(seed, tick, e, 4) * 25.0);
            int value = h.value + (unit(seed, tick, e, 5) < 0.5 ? delta : -delta);
            if (value < 0 || value > 100) {
                value = h.value - (value - h.value);
            }
            h.value = static_cast<std::uint16_t>(std::clamp(value, 0, 100));
        });
    });

    // Movers stop after ~10 s and about as many idle NPCs start; NPCs despawn and spawn. Structural changes
    // go through the command buffer; the decisions are per entity, so any thread count gives the same world.
    scheduler_->add(
        "lifecycle", ecsnet::system<reads<Transform, Mover>, exclude_t<Avatar>>{}, [seed](auto& ctx) {
            const auto tick = ctx.tick().index;
            const double dt = ctx.tick().delta_seconds;
            const double stop_chance = dt / moving_dwell_s;
            auto everyone = ctx.template view<const Transform>(exclude<Avatar>);
            std::size_t npcs = 0;
            std::size_t movers = 0;
            everyone.each([&](entity e, const Transform&) {
                ++npcs;
                movers += ctx.template all_of<Mover>(e) ? 1 : 0;
            });
            const auto idle = npcs - movers;
            const double start_chance =
                idle == 0 ? 0.0 : stop_chance * static_cast<double>(movers) / static_cast<double>(idle);
            auto& commands = ctx.commands();
            everyone.each([&](entity e, const Transform&) {
                if (unit(seed, tick, e, 6) < despawn_fraction) {
                    commands.destroy(e);
                    return;
                }
                const bool is_moving = ctx.template all_of<Mover>(e);
                if (is_moving && unit(seed, tick, e, 7) < stop_chance) {
                    commands.template remove<Mover>(e);
                } else if (!is_moving && unit(seed, tick, e, 7) < start_chance) {
                    commands.template emplace<Mover>(
                        e, moving(unit(seed, tick, e, 8) * 2.0 * std::numbers::pi,
                                  min_speed + unit(seed, tick, e, 9) * (max_speed - min_speed)));
                }
            });
            // Spawns: a count with mean spawn_fraction * npcs, placed by a generator seeded with the tick.
            arena::scene_random random{seed ^ (tick * 0xD1B54A32D192ED03ULL)};
            const auto spawns = random.count(spawn_fraction * static_cast<double>(npcs));
            for (std::size_t n = 0; n < spawns; ++n) {
                const auto e = commands.create();
                commands.template emplace<Transform>(
                    e, static_cast<float>(random.uniform(-edge, edge)),
                    static_cast<float>(random.uniform(-edge, edge)), 0.0F,
                    static_cast<float>(random.uniform(0.0, 2.0 * std::numbers::pi)));
                commands.template emplace<Health>(e, std::uint16_t{100});
                commands.template emplace<Kind>(e, static_cast<std::uint8_t>(random.below(8)));
                commands.template emplace<hit_target>(e, hit_radius);
            }
        });
    scheduler_->build();
}

entity arena_world::client_joined(client_id client, std::string_view) {
    const auto e = registry_.create();
    // On the position grid, like everything movement.hpp moves: the client's predictor starts from exactly
    // it.
    registry_.emplace<Transform>(e, arena::on_position_grid(static_cast<float>(random_.uniform(-edge, edge))),
                                 arena::on_position_grid(static_cast<float>(random_.uniform(-edge, edge))),
                                 0.0F, 0.0F);
    registry_.emplace<Health>(e, std::uint16_t{100});
    registry_.emplace<Kind>(e, avatar_kind);
    registry_.emplace<Mover>(e, 0.0F, 0.0F);
    registry_.emplace<Avatar>(e, client);
    registry_.emplace<hit_target>(e, hit_radius);
    if (options_.companions) {
        // Beside the avatar, on the grid; Avatar keeps the NPC systems off it, predicted_by tells the
        // client to predict it (it moves with the client's inputs only: arena/movement.hpp).
        const auto at = registry_.get<Transform>(e); // a copy: the emplace below may move the storage
        const auto x =
            std::clamp(at.x + companion_offset, static_cast<float>(-edge), static_cast<float>(edge));
        const auto drone = registry_.create();
        registry_.emplace<Transform>(drone, arena::on_position_grid(x), at.y, 0.0F, 0.0F);
        registry_.emplace<Kind>(drone, companion_kind);
        registry_.emplace<Mover>(drone, 0.0F, 0.0F);
        registry_.emplace<Avatar>(drone, client);
        registry_.emplace<predicted_by>(drone, client);
        companions_[to_integral(e)] = drone;
    }
    return e;
}

entity arena_world::companion_of(entity avatar) const {
    const auto found = companions_.find(to_integral(avatar));
    return found != companions_.end() && registry_.valid(found->second) ? found->second : null_entity;
}

void arena_world::client_left(client_id, entity avatar) {
    if (const auto drone = companion_of(avatar); drone != null_entity) {
        registry_.destroy(drone);
    }
    companions_.erase(to_integral(avatar));
    if (registry_.valid(avatar)) {
        registry_.destroy(avatar);
    }
}

std::optional<std::string> arena_world::apply_input(client_id client, entity avatar,
                                                    const client_input& input) {
    const auto decoded = arena::decode_input(input.payload);
    if (!decoded) {
        return "malformed input: " + std::to_string(input.payload.size()) + " bytes, expected " +
               std::to_string(arena::move_input_size) + " or " + std::to_string(arena::action_input_size);
    }
    const auto* move = &decoded->move;
    if (!registry_.valid(avatar) || !registry_.all_of<Avatar>(avatar) ||
        registry_.get<Avatar>(avatar).client != client) {
        return "the client has no avatar";
    }
    if (move->target != 0 && move->target != to_index(avatar)) {
        return "input aimed at entity " + std::to_string(move->target) +
               ", which is not the client's avatar (" + std::to_string(to_index(avatar)) + ")";
    }
    if (!std::isfinite(move->dir_x) || !std::isfinite(move->dir_y) || !std::isfinite(move->speed)) {
        return "input with a non-finite number";
    }
    registry_.replace<Mover>(avatar, arena::avatar_velocity(*move)); // arena/movement.hpp, as predicted
    if (const auto drone = companion_of(avatar); drone != null_entity) {
        registry_.replace<Mover>(drone, arena::companion_velocity(*move)); // predicted too
    }
    // A repeated input (none arrived for this tick: input_buffer.hpp) keeps the avatar moving; it never
    // shoots again.
    if (decoded->action && decoded->action->fires() && !input.repeated) {
        return fire(client, avatar, *decoded->action, input.predicting);
    }
    return std::nullopt;
}

std::optional<std::string> arena_world::fire(client_id client, entity avatar,
                                             const arena::action_input& action, bool predicting) {
    if (lag_compensation_ == nullptr) {
        return "fire without lag compensation";
    }
    const auto& at = registry_.get<Transform>(avatar);
    // A predicting client sees itself in the present: its shot starts where its avatar is now.
    const auto result =
        lag_compensation_->shoot(shot_request{client, avatar, action.render_time_us, action.aim_x,
                                              action.aim_y, fire_range, at.x, at.y, predicting});
    if (result.outcome == shot_outcome::refused_invalid) {
        return "fire with an invalid aim";
    }
    if (result.outcome != shot_outcome::hit || !registry_.valid(result.hit->target)) {
        return std::nullopt; // a miss, or a shot sooner than the fire interval (counted by lag compensation)
    }
    const auto target = result.hit->target;
    if (auto* health = registry_.try_get<Health>(target)) {
        const auto value = health->value;
        registry_.patch<Health>(target, [value](Health& h) {
            h.value = static_cast<std::uint16_t>(value > fire_damage ? value - fire_damage : 0);
        });
    }
    // Shown from the snapshot of the tick being computed: the newest recorded one's successor.
    const auto tick = static_cast<std::uint32_t>(lag_compensation_->history().newest_tick() + 1);
    const auto* previous = registry_.try_get<LastHit>(avatar);
    registry_.emplace_or_replace<LastHit>(avatar, static_cast<std::uint32_t>(to_index(target)), tick,
                                          (previous != nullptr ? previous->hits : 0U) + 1U);
    return std::nullopt;
}

void arena_world::declare_saveable(saveable_components& out) const {
    out.add<Mover>("Mover");
    out.add<Avatar>("Avatar");
    // Transform is replicated (saved quantized); its exact floats too, so that the restored world moves
    // bit for bit as the saved one would have (16 bytes per entity).
    out.add<Transform>("Transform.exact");
}

// Tick count, then the spawn generator's state: two little-endian u64.
std::string arena_world::save_state() const {
    std::string out(16, '\0');
    const std::uint64_t values[2] = {ticks_, random_.state()};
    for (std::size_t v = 0; v < 2; ++v) {
        for (std::size_t b = 0; b < 8; ++b) {
            out[v * 8 + b] = static_cast<char>((values[v] >> (8 * b)) & 0xFF);
        }
    }
    return out;
}

std::optional<std::string> arena_world::load_state(std::string_view state) {
    if (state.size() != 16) {
        return "arena state of " + std::to_string(state.size()) + " bytes, expected 16";
    }
    std::uint64_t values[2] = {0, 0};
    for (std::size_t v = 0; v < 2; ++v) {
        for (std::size_t b = 0; b < 8; ++b) {
            values[v] |= std::uint64_t{static_cast<unsigned char>(state[v * 8 + b])} << (8 * b);
        }
    }
    ticks_ = values[0];
    random_ = arena::scene_random{values[1]};
    scheduler_->resume_after(ticks_); // per-entity randomness is drawn from the scheduler's tick index
    return std::nullopt;
}

void arena_world::restored() {
    // hit_target is not saved: every NPC is hit-testable again.
    std::vector<entity> targets;
    registry_.view<Transform>().each([&](entity e, const Transform&) {
        if (!registry_.all_of<hit_target>(e)) {
            targets.push_back(e);
        }
    });
    for (const auto e : targets) {
        registry_.emplace<hit_target>(e, hit_radius);
    }
    std::vector<entity> avatars;
    registry_.view<Avatar>().each([&avatars](entity e, const Avatar&) { avatars.push_back(e); });
    for (const auto e : avatars) {
        registry_.destroy(e);
    }
    companions_.clear(); // destroyed with the avatars (they carry Avatar too)
}

void arena_world::update(double dt) {
    scheduler_->run_tick(dt);
    ++ticks_;
}

std::vector<inspected_component> arena_world::inspect(entity e) const {
    std::vector<inspected_component> out;
    if (const auto* mover = registry_.try_get<arena::Mover>(e)) {
        out.push_back({"Mover", {{"vx", mover->vx}, {"vy", mover->vy}}});
    }
    if (const auto* avatar = registry_.try_get<Avatar>(e)) {
        out.push_back({"Avatar", {{"client", static_cast<double>(avatar->client)}}});
    }
    return out;
}

} // namespace ecsnet::server
