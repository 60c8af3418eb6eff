#pragma once

// What a studio implements to run its game on ecsnet-server: the world the server ticks and replicates.
// The server owns the network, the sessions, the snapshot history and the tick loop; the world owns the
// registry and its systems, and decides what a client's input may do. The demo arena (arena_world.hpp) is
// an example written with the public API only.
//
// Authority: apply_input receives the input of one client together with that client's own avatar; the
// world must not let the payload name any other entity (the arena refuses an input that targets another
// avatar). Everything is called on the server's network/tick thread, never concurrently.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <ecsnet/ecs/registry.hpp>
#include <ecsnet/proto/schema.hpp>

namespace ecsnet::server {

using client_id = std::uint32_t;

struct client_input {
    std::uint32_t client_tick{};
    std::uint32_t sequence{};
    std::string_view payload; // game-defined bytes, never trusted
};

class game_world {
public:
    virtual ~game_world() = default;

    /// The replicated components (shared with the game's client).
    [[nodiscard]] virtual const proto::schema& replicated_schema() const = 0;
    [[nodiscard]] virtual ecsnet::registry& registry() = 0;

    /// A client completed its handshake: create what it controls. Returns its avatar, or null_entity.
    virtual entity client_joined(client_id client, std::string_view name) = 0;
    /// A client left (for whatever reason): remove what it controlled.
    virtual void client_left(client_id client, entity avatar) = 0;
    /// One input of a client, for its own avatar. Returns why it was refused, if it was (the server logs it
    /// and counts it; the client stays connected).
    virtual std::optional<std::string> apply_input(client_id client, entity avatar,
                                                   const client_input& input) = 0;

    /// Advances the simulation by `dt` seconds (one tick).
    virtual void update(double dt) = 0;
};

} // namespace ecsnet::server
