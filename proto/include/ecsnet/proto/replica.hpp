#pragma once

// What a client's game reads, whichever kind of snapshots its server sends: a registry mirroring the
// server's replicated entities, fed with snapshot envelopes. mirror.hpp implements it for whole-world
// Snapshots, view_mirror.hpp for interest-managed ViewSnapshots; the client SDK picks one at the
// ServerWelcome (interest_managed) and both may share one registry, so that a game's signal connections
// survive the choice.

#include <cstdint>
#include <optional>
#include <string_view>

#include "ecsnet/ecs/registry.hpp"
#include "ecsnet/v1/envelope.pb.h"
#include "result.hpp"
#include "schema.hpp"
#include "state.hpp"
#include "view_frame.hpp"

namespace ecsnet::proto {

/// The component every mirrored entity carries: its server identity.
struct net_id {
    net_entity id;
};

/// What apply() did.
struct applied_snapshot {
    tick_type tick{};
    /// Server time of the tick, microseconds since the server's epoch.
    std::uint64_t server_time_us{};
    bool full_state{};
    std::optional<tick_type> baseline;
    std::optional<tick_type> second;
    std::size_t entities_created{};
    std::size_t entities_destroyed{};
    /// Component emplaces, patches and removals made on the registry.
    std::size_t components_written{};
};

class replica {
public:
    replica() = default;
    replica(const replica&) = delete;
    replica& operator=(const replica&) = delete;
    virtual ~replica() = default;

    [[nodiscard]] virtual ecsnet::registry& registry() noexcept = 0;
    [[nodiscard]] virtual const ecsnet::registry& registry() const noexcept = 0;
    [[nodiscard]] virtual const schema& replicated_schema() const noexcept = 0;

    /// Takes what a ServerWelcome says (the tick rate).
    virtual void welcome(const v1::ServerWelcome& welcome) = 0;
    /// Decodes an Envelope holding this replica's kind of snapshot and applies it, atomically.
    virtual result<applied_snapshot> apply_envelope(std::string_view envelope_bytes) = 0;

    /// The newest applied tick, if any.
    [[nodiscard]] virtual std::optional<tick_type> newest_tick() const noexcept = 0;
    /// The newest applied state as columns (interpolation reads it), or nullptr.
    [[nodiscard]] virtual const replicated_state* newest_state() const = 0;
    /// True after a snapshot was refused for an unknown baseline or a checksum mismatch, until one applies.
    [[nodiscard]] virtual bool full_state_needed() const noexcept = 0;
    /// The Ack to send after applying: the newest applied tick, and a full-state request when needed.
    [[nodiscard]] virtual v1::Ack make_ack() const = 0;

    /// The local entity mirroring a server entity, or null_entity.
    [[nodiscard]] virtual entity find(net_entity id) const noexcept = 0;
    /// The server identity of a local entity, if it is mirrored (its net_id, whichever kind of mirror).
    [[nodiscard]] std::optional<net_entity> net_of(entity local) const noexcept {
        const auto& reg = registry();
        if (!reg.valid(local)) {
            return std::nullopt;
        }
        const auto* id = reg.try_get<net_id>(local);
        return id != nullptr ? std::optional<net_entity>{id->id} : std::nullopt;
    }
    /// Inside an on_destroy signal fired while applying: why the entity leaves (removal_reason::none when
    /// the snapshots do not say, or outside such a signal).
    [[nodiscard]] virtual removal_reason removal_reason_of(entity local) const noexcept = 0;

    /// Recomputes the newest state's checksum and compares it with the server's.
    [[nodiscard]] virtual bool verify() const = 0;
    /// Destroys every mirrored entity and forgets every state (the next snapshot must be a full state).
    virtual void clear() = 0;
};

} // namespace ecsnet::proto
