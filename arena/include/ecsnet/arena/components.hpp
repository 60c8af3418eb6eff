#pragma once

// The demo game's replicated components (the "standard scene" of docs/protocol.md and bench/RESULTS.md),
// shared by the server's demo world, the console client, the bots, the tests and the benchmark.
//
//   Transform  x, y in [-1024, 1024) m and z in [-256, 256) m, all at 1/512 m; yaw in 12 bits
//   Health     uint16
//   Kind       uint8, never changes after spawn
//   LastHit    on a shooter's avatar once it hit something: the target's entity index, the tick whose
//              snapshot first shows the hit, and the shooter's hit count (lag compensation's hit report)
//
// Positions are extrapolated linearly between snapshots (prediction::linear, the fixed_point default);
// yaw, health and kind are coded against the baseline.

#include <cstdint>

#include "ecsnet/proto/schema.hpp"

namespace ecsnet::arena {

struct Transform {
    float x{};
    float y{};
    float z{};
    float yaw{}; // radians
};

struct Health {
    std::uint16_t value{};
};

struct Kind {
    std::uint8_t value{};
};

struct LastHit {
    std::uint32_t target{}; // the server's entity index (net_entity::index)
    std::uint32_t tick{};
    std::uint32_t hits{};
};

/// Half the side of the 2 km x 2 km arena, in metres.
inline constexpr double arena_half_extent = 1024.0;
/// Position resolution: 1/512 m.
inline constexpr double position_step = 1.0 / 512.0;

/// The arena's replicated-component schema (built once, on first use).
[[nodiscard]] inline const proto::schema& replicated_schema() {
    using namespace ecsnet::proto;
    static const schema instance{
        component<Transform>("Transform",
                             field<&Transform::x>("x", fixed_point<20>{-arena_half_extent, position_step}),
                             field<&Transform::y>("y", fixed_point<20>{-arena_half_extent, position_step}),
                             field<&Transform::z>("z", fixed_point<18>{-256.0, position_step}),
                             field<&Transform::yaw>("yaw", angle<12>{})),
        component<Health>("Health", field<&Health::value>("value", integer<>{})),
        component<Kind>("Kind", field<&Kind::value>("value", integer<>{})),
        component<LastHit>("LastHit", field<&LastHit::target>("target", integer<>{}),
                           field<&LastHit::tick>("tick", integer<>{}),
                           field<&LastHit::hits>("hits", integer<>{}))};
    return instance;
}

} // namespace ecsnet::arena
