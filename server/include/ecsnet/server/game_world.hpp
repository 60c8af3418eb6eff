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
#include <utility>
#include <vector>

#include <ecsnet/ecs/registry.hpp>
#include <ecsnet/proto/schema.hpp>

#include "saveable_components.hpp"

namespace ecsnet::server {

using client_id = std::uint32_t;
class lag_compensation;

/// Where the world's entities are, for interest management (the server's spatial grid): the replicated
/// component and its two fixed-point fields that hold an entity's position on the ground plane, and the area
/// they span. The server reads positions from what it replicates, so it needs no call per entity.
struct spatial_layout {
    std::string component;
    std::string x_field;
    std::string y_field;
    float min_x{};
    float min_y{};
    float max_x{};
    float max_y{};
    /// Whether game_world::may_see decides anything. A world whose may_see says yes to everything sets it
    /// false: the server then asks nothing per entity in range when it recomputes a client's set (a couple
    /// of hundred calls per client every few ticks, each reaching into the registry first).
    bool asks_may_see{true};
};

struct client_input {
    std::uint32_t client_tick{};
    std::uint32_t sequence{};
    std::string_view payload; // game-defined bytes, never trusted
    /// No input of the client arrived for this tick: its newest one is applied again (input_buffer.hpp).
    /// Continuous state (a movement) should go on; one-shot actions (firing) must not happen twice.
    bool repeated{false};
    /// The client predicts (it asked for InputStatus): its inputs are for the tick they name and it draws
    /// its avatar in the present, ahead of the snapshots (lag compensation starts its shots there).
    bool predicting{false};
};

/// One server-only component of an entity as the live inspector shows it (game_world::inspect).
struct inspected_component {
    std::string name;
    std::vector<std::pair<std::string, double>> fields; // name, value
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

    /// Under Agones (--agones): the GameServer became Allocated (a match was assigned to this server), with
    /// the GameServer as the SDK sidecar sent it (JSON: its labels and annotations may carry the match).
    /// Called on the tick thread, between ticks. The default does nothing.
    virtual void allocated(std::string_view game_server_json) { static_cast<void>(game_server_json); }

    // ---- checkpoints (--save, --restore; checkpoint.hpp, docs/operations.md) -------------------------
    // A checkpoint holds the entity slots (ids and generations), every replicated component, the server-only
    // components declared here, the tick, and the world's own state (save_state). A world that declares
    // nothing still comes back with its replicated state; one that wants to evolve as if never stopped
    // declares what else it needs.

    /// The server-only components to save (velocities, AI state...). Called once, when the server starts.
    virtual void declare_saveable(saveable_components& out) const { static_cast<void>(out); }
    /// The world's state beyond its components (tick counters, random generators), as bytes; called on the
    /// tick thread when a checkpoint is taken (keep it cheap).
    [[nodiscard]] virtual std::string save_state() const { return {}; }
    /// Reads back what save_state wrote, before any entity of the checkpoint is restored: returns why the
    /// bytes are refused, if they are (the checkpoint is then refused whole).
    [[nodiscard]] virtual std::optional<std::string> load_state(std::string_view state) {
        return state.empty() ? std::nullopt : std::optional<std::string>{"unexpected world state"};
    }
    /// The checkpoint's entities and components are in the registry now (the world's own entities from
    /// before were cleared): fix up what refers to the previous run (e.g. avatars of clients that are gone).
    virtual void restored() {}

    // ---- interest management (docs/architecture.md, "Interest management") ---------------------------
    // With --relevancy-radius > 0 and a spatial_layout, each client receives the entities within the radius
    // of its avatar, plus those a game marks with the `relevance` component (relevance.hpp): always relevant
    // to everyone, or only to their owner, or never replicated.

    /// Where entities are; nothing (the default) keeps every client seeing the whole world.
    [[nodiscard]] virtual std::optional<spatial_layout> spatial() const { return std::nullopt; }
    /// Whether an entity within a client's radius may be relevant to it (teams, rooms, line of sight...).
    /// Asked when the client's relevant set is recomputed (every few ticks), for entities in range that are
    /// not always relevant, from the server's worker threads, several clients at once: it must only read.
    /// The default: yes. Not asked at all when spatial()'s asks_may_see is false.
    [[nodiscard]] virtual bool may_see(client_id client, entity avatar, entity candidate) const {
        static_cast<void>(client);
        static_cast<void>(avatar);
        static_cast<void>(candidate);
        return true;
    }

    // ---- lag compensation (lag_compensation.hpp, docs/lag_compensation.md) ---------------------------
    // Entities with a hit_target component (hit_target.hpp) are recorded every tick when the world has a
    // spatial layout; the world's apply_input evaluates its shots through the server's lag_compensation.

    /// The server's lag compensation (null without a spatial layout), given once, before any input; it
    /// outlives the world's use of it.
    virtual void use_lag_compensation(lag_compensation* compensation) { static_cast<void>(compensation); }

    // ---- the live inspector (docs/inspector.md) -----------------------------------------------------------

    /// The server-only components of `e` (a valid entity) for the inspector's entity panel: the replicated
    /// ones come from the snapshot history. Called on the tick thread between two ticks, only for entities
    /// open in an inspector (at most a few a tick). The default: none.
    [[nodiscard]] virtual std::vector<inspected_component> inspect(entity e) const {
        static_cast<void>(e);
        return {};
    }
};

} // namespace ecsnet::server
