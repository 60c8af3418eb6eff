#pragma once

// The standard scene: the world every replication figure of ecsnet is measured on (bench/RESULTS.md),
// and the server's demo world.
//
//   10,000 entities in the 2 km x 2 km arena (components.hpp), at 30 ticks a second. Each has a Transform
//   (random position and yaw, z = 0: flat ground), a Health (starts at 100) and a Kind (0 to 7, fixed).
//   Each tick:
//   - 20% of the entities move: a mover keeps a speed (1 to 8 m/s) and a heading, turns to a new random
//     heading about every 2 s, bounces off the arena's edges, and faces where it goes (yaw = heading).
//     Movers stop after about 10 s and as many idle entities start moving, so the moving set drifts;
//   - 1% of the entities change health (by -25..+25, within 0..100);
//   - 0.1% spawn and 0.1% despawn (random ones).
//   Positions move by writing through registry.patch, so on_update<Transform> fires for every move.
//
// Everything is drawn from a seeded splitmix64 generator with its own arithmetic (no <random>
// distribution), so a seed gives the same world on every platform and standard library.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/ecs/registry.hpp"

namespace ecsnet::arena {

/// Server-only: a moving entity's velocity. Not declared in the schema, so never sent.
struct Mover {
    float vx{};
    float vy{};
};

/// splitmix64: small, fast, and the same sequence everywhere.
class scene_random {
public:
    explicit scene_random(std::uint64_t seed) noexcept
        : state_{seed} {}

    /// The generator's whole state: scene_random{state()} continues where this one is.
    [[nodiscard]] std::uint64_t state() const noexcept { return state_; }

    std::uint64_t next() noexcept {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, 1).
    double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * unit(); }
    /// Uniform in [0, n), 0 < n < 2^32.
    std::size_t below(std::size_t n) noexcept { return static_cast<std::size_t>(((next() >> 32) * n) >> 32); }
    bool chance(double p) noexcept { return unit() < p; }
    /// A count with mean `mean`: its integer part, plus one with the fractional part's probability.
    std::size_t count(double mean) noexcept {
        const auto whole = static_cast<std::size_t>(mean);
        return whole + (chance(mean - static_cast<double>(whole)) ? 1U : 0U);
    }

private:
    std::uint64_t state_;
};

struct scene_options {
    std::size_t entities{10000};
    double tick_rate{30.0};
    double moving_fraction{0.20};
    double min_speed{1.0};
    double max_speed{8.0};
    /// Mean seconds between a mover's turns.
    double turn_interval_s{2.0};
    /// Mean seconds a mover moves before stopping (another entity starts then).
    double moving_dwell_s{10.0};
    double health_change_fraction{0.01};
    double spawn_fraction{0.001};
    double despawn_fraction{0.001};
    std::uint64_t seed{1};
};

/// What one step did.
struct scene_tick {
    std::size_t moved{};
    std::size_t health_changed{};
    std::size_t spawned{};
    std::size_t despawned{};
};

class scene {
public:
    explicit scene(registry& reg, scene_options options = {})
        : registry_{&reg}
        , options_{options}
        , random_{options.seed} {}

    /// Creates the scene's entities.
    void populate() {
        for (std::size_t i = 0; i < options_.entities; ++i) {
            spawn();
        }
    }

    /// One tick of the simulation.
    scene_tick step() {
        scene_tick report;
        auto& reg = *registry_;
        const double dt = 1.0 / options_.tick_rate;
        const double turn_chance = dt / options_.turn_interval_s;
        const double stop_chance = dt / options_.moving_dwell_s;
        constexpr double edge = arena_half_extent - 1.0;

        // Movers: turn now and then, move, bounce, and sometimes stop.
        stopping_.clear();
        const auto& movers = reg.storage<Mover>();
        for (std::size_t at = 0; at < movers.size(); ++at) {
            const auto e = movers[at];
            auto& velocity = reg.get<Mover>(e);
            bool turned = false;
            if (random_.chance(turn_chance)) {
                set_heading(velocity, random_.uniform(0.0, 2.0 * std::numbers::pi), speed_of(velocity));
                turned = true;
            }
            reg.patch<Transform>(e, [&](Transform& t) {
                float x = t.x + static_cast<float>(velocity.vx * dt);
                float y = t.y + static_cast<float>(velocity.vy * dt);
                if (std::fabs(x) > edge) {
                    velocity.vx = -velocity.vx;
                    x = std::clamp(x, static_cast<float>(-edge), static_cast<float>(edge));
                    turned = true;
                }
                if (std::fabs(y) > edge) {
                    velocity.vy = -velocity.vy;
                    y = std::clamp(y, static_cast<float>(-edge), static_cast<float>(edge));
                    turned = true;
                }
                t.x = x;
                t.y = y;
                if (turned) {
                    t.yaw = heading_of(velocity);
                }
            });
            ++report.moved;
            if (random_.chance(stop_chance)) {
                stopping_.push_back(e);
            }
        }
        for (const auto e : stopping_) {
            reg.erase<Mover>(e);
        }
        const auto& transforms = reg.storage<Transform>();
        for (std::size_t started = 0, tries = 0;
             started < stopping_.size() && tries < 64 * stopping_.size() + 64; ++tries) {
            if (transforms.empty()) {
                break;
            }
            const auto e = transforms[random_.below(transforms.size())];
            if (!reg.all_of<Mover>(e)) {
                start_moving(e);
                ++started;
            }
        }

        // Health changes.
        const auto& healths = reg.storage<Health>();
        const auto changes =
            random_.count(options_.health_change_fraction * static_cast<double>(healths.size()));
        for (std::size_t n = 0; n < changes && !healths.empty(); ++n) {
            const auto e = healths[random_.below(healths.size())];
            reg.patch<Health>(e, [&](Health& h) {
                const int delta = static_cast<int>(random_.below(25)) + 1;
                int value = h.value + (random_.chance(0.5) ? delta : -delta);
                if (value < 0 || value > 100) {
                    value = h.value - (value - h.value);
                }
                h.value = static_cast<std::uint16_t>(std::clamp(value, 0, 100));
            });
            ++report.health_changed;
        }

        // Despawns, then spawns.
        const auto despawns =
            random_.count(options_.despawn_fraction * static_cast<double>(options_.entities));
        for (std::size_t n = 0; n < despawns && !transforms.empty(); ++n) {
            reg.destroy(transforms[random_.below(transforms.size())]);
            ++report.despawned;
        }
        const auto spawns = random_.count(options_.spawn_fraction * static_cast<double>(options_.entities));
        for (std::size_t n = 0; n < spawns; ++n) {
            spawn();
            ++report.spawned;
        }
        ++ticks_;
        return report;
    }

    [[nodiscard]] std::uint64_t ticks() const noexcept { return ticks_; }
    [[nodiscard]] const scene_options& options() const noexcept { return options_; }
    [[nodiscard]] scene_random& random() noexcept { return random_; }

    /// Creates one entity as the scene spawns them (the demo server uses it for players' avatars too).
    entity spawn() {
        auto& reg = *registry_;
        const auto e = reg.create();
        const double half = arena_half_extent - 1.0;
        reg.emplace<Transform>(e, static_cast<float>(random_.uniform(-half, half)),
                               static_cast<float>(random_.uniform(-half, half)), 0.0F,
                               static_cast<float>(random_.uniform(0.0, 2.0 * std::numbers::pi)));
        reg.emplace<Health>(e, std::uint16_t{100});
        reg.emplace<Kind>(e, static_cast<std::uint8_t>(random_.below(8)));
        if (random_.chance(options_.moving_fraction)) {
            start_moving(e);
        }
        return e;
    }

private:
    static double speed_of(const Mover& m) noexcept { return std::hypot(m.vx, m.vy); }
    static float heading_of(const Mover& m) noexcept {
        const double a = std::atan2(m.vy, m.vx);
        return static_cast<float>(a < 0 ? a + 2.0 * std::numbers::pi : a);
    }
    static void set_heading(Mover& m, double heading, double speed) noexcept {
        m.vx = static_cast<float>(speed * std::cos(heading));
        m.vy = static_cast<float>(speed * std::sin(heading));
    }

    void start_moving(entity e) {
        Mover m;
        set_heading(m, random_.uniform(0.0, 2.0 * std::numbers::pi),
                    random_.uniform(options_.min_speed, options_.max_speed));
        registry_->emplace<Mover>(e, m);
        registry_->patch<Transform>(e, [&](Transform& t) { t.yaw = heading_of(m); });
    }

    registry* registry_;
    scene_options options_;
    scene_random random_;
    std::vector<entity> stopping_;
    std::uint64_t ticks_{};
};

} // namespace ecsnet::arena
