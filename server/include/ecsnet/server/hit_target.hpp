#pragma once

// How a game declares what shots can hit: a server-only component (never replicated) on each hit-testable
// entity, a circle of `radius` metres on the ground plane around the entity's position. The position is
// the one the game replicates for interest management (game_world::spatial(): its component and x/y
// fields), read quantized as the clients receive it, so the server rewinds to exactly what they drew.
//
//   registry.emplace<ecsnet::server::hit_target>(npc, 0.5F);
//
// The server records every hit_target's position each tick (lag_compensation.hpp); a world without a
// spatial layout has no lag compensation.

namespace ecsnet::server {

struct hit_target {
    float radius{0.5F};
};

} // namespace ecsnet::server
