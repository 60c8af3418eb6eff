#pragma once

// How a game marks an entity's relevancy when the server manages interest (game_world::spatial): a
// server-only component (never replicated) on the entities that are not simply "relevant to clients within
// the radius". Entities without it follow the radius.
//
//   registry.emplace<ecsnet::server::relevance>(scoreboard, ecsnet::server::relevance::always());
//   registry.emplace<ecsnet::server::relevance>(inventory, ecsnet::server::relevance::owner_only(client));
//
// `priority` scales the entity's share of each client's bandwidth budget (1 = as its distance says).

#include <cstdint>

#include "game_world.hpp"

namespace ecsnet::server {

enum class relevance_mode : std::uint8_t {
    spatial,    // relevant within a client's radius (the default for entities without the component)
    always,     // relevant to every client, wherever it is (global state)
    owner_only, // relevant to its owner only, wherever it is (a client's own inventory)
    hidden,     // relevant to no client
};

struct relevance {
    relevance_mode mode{relevance_mode::spatial};
    client_id owner{};
    float priority{1.0F};

    [[nodiscard]] static relevance always(float priority = 1.0F) noexcept {
        return {relevance_mode::always, 0, priority};
    }
    [[nodiscard]] static relevance owner_only(client_id owner, float priority = 1.0F) noexcept {
        return {relevance_mode::owner_only, owner, priority};
    }
    [[nodiscard]] static relevance hidden() noexcept { return {relevance_mode::hidden, 0, 1.0F}; }
};

} // namespace ecsnet::server
