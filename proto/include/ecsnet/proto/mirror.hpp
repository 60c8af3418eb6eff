#pragma once

// The client side: a registry mirroring the server's replicated components, fed with Snapshots.
//
// Each server entity (net_entity: index + generation) maps to a local entity of the mirror's own registry,
// created when it is first seen and destroyed when the server removes it, like EnTT's continuous_loader
// but without a full reload: every snapshot is applied as a delta to the local entities. A local entity
// carries a `net_id` component naming its server entity, emplaced after its replicated components, so a
// game can react to arrivals with on_construct<net_id>, to departures with on_destroy<net_id> (fired when
// the mirror destroys the entity), and to changes with on_update<Component>.
//
// Applying is atomic: the whole snapshot is checked first (header and its CRC, baselines known, columns
// well formed and canonical, delta consistent with the baseline, rebuilt state matching the server's
// checksum) without touching the mirror; only then are the registry and the history changed. The checksum
// is checked as the baseline's plus the contribution of every change, and in full every
// `full_check_interval` snapshots and on every full state (verify() does it on demand). Any failure returns
// an error value and leaves everything as it was. After an unknown baseline or a checksum mismatch, the next
// Ack asks the server for a full state (make_ack()).
//
// Baselines: a server only ever moves a client's baselines forward (docs/protocol.md, 5.1; ack_tracker
// implements it), so after applying a delta the mirror keeps only the states from that delta's second
// baseline (or baseline) on: about 3 states when acks are one tick behind (a full state drops nothing: the
// server may not have seen the client's acks yet).
// Dropped states' buffers are reused for the next ones while they are still in the cache, which is what
// makes applying fast. At most `depth` states are kept. Memory and time per apply are O(entities);
// nothing allocated is beyond the limits (entities) and the snapshot's size.
// The game must not destroy mirrored entities nor remove their replicated components itself (it may add
// components of its own). Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checksum.hpp"
#include "delta.hpp"
#include "ecsnet/ecs/registry.hpp"
#include "ecsnet/v1/envelope.pb.h"
#include "ecsnet/v1/handshake.pb.h"
#include "ecsnet/v1/snapshot.pb.h"
#include "replica.hpp"
#include "result.hpp"
#include "schema.hpp"
#include "state.hpp"

namespace ecsnet::proto {

struct mirror_options {
    /// The most applied states kept as baselines (fewer are kept when the server's baselines allow).
    std::size_t depth{32};
    /// Ticks per second (ServerWelcome.tick_rate), to rebuild server times.
    std::uint32_t tick_rate{30};
    delta_limits limits{};
    /// Every N applied snapshots, recompute the whole state checksum rather than only the contribution of
    /// what changed (0: never; 1: every snapshot). Full states are always checked in full.
    std::uint32_t full_check_interval{30};
};

class mirror final : public replica {
public:
    /// A mirror with a registry of its own.
    explicit mirror(const schema& schema, mirror_options options = {});
    /// A mirror writing into `registry`, which must outlive it (and hold no other net_id entities).
    mirror(const schema& schema, ecsnet::registry& registry, mirror_options options = {});
    ~mirror() override;

    [[nodiscard]] ecsnet::registry& registry() noexcept override { return registry_; }
    [[nodiscard]] const ecsnet::registry& registry() const noexcept override { return registry_; }

    /// Takes the tick rate of a ServerWelcome.
    void welcome(const v1::ServerWelcome& welcome) override;

    /// Applies a snapshot, atomically (see above).
    result<applied_snapshot> apply(const v1::Snapshot& snapshot);
    /// Decodes an Envelope holding a Snapshot and applies it. The bytes must be the deterministic
    /// serialization of the message they parse to (what snapshot_encoder produces): anything else is corrupt.
    result<applied_snapshot> apply_envelope(std::string_view envelope_bytes) override;

    /// The newest applied tick, if any.
    [[nodiscard]] std::optional<tick_type> newest_tick() const noexcept override;
    [[nodiscard]] const replicated_state* newest_state() const noexcept override;
    /// A stored applied state, or nullptr.
    [[nodiscard]] const replicated_state* state(tick_type tick) const noexcept;
    [[nodiscard]] std::size_t stored() const noexcept { return states_.size(); }
    /// True after a snapshot was refused for an unknown baseline or a checksum mismatch, until a snapshot
    /// is applied.
    [[nodiscard]] bool full_state_needed() const noexcept override { return full_state_needed_; }

    /// The Ack to send after apply(): the newest applied tick, and a full-state request when needed.
    [[nodiscard]] v1::Ack make_ack() const override;

    /// The local entity mirroring a server entity, or null_entity.
    [[nodiscard]] entity find(net_entity id) const noexcept override;
    /// The local entity mirroring whatever occupies a server index now, or null_entity.
    [[nodiscard]] entity find_index(std::uint32_t index) const noexcept;
    /// Whole-world snapshots do not say why an entity left: always removal_reason::none.
    [[nodiscard]] removal_reason removal_reason_of(entity) const noexcept override {
        return removal_reason::none;
    }

    /// Recomputes the newest state's checksum from all its columns and compares it with the server's:
    /// proves the mirror holds exactly the server's state of that tick.
    [[nodiscard]] bool verify() const override;

    /// Destroys every mirrored entity and forgets every state (the next snapshot must be a full state).
    void clear() override;

    [[nodiscard]] std::size_t memory_bytes() const noexcept;
    [[nodiscard]] const schema& replicated_schema() const noexcept override { return *schema_; }

private:
    // `external` or, when null, own_registry_ (bound after it is constructed: it is declared first).
    mirror(const schema& schema, ecsnet::registry* external, mirror_options options);

    result<applied_snapshot> refuse(errc code, std::string message, bool need_full);
    // Moves the registry from `from` (nullptr: nothing) to `to`, comparing the two states.
    void update_registry(const replicated_state* from, const replicated_state& to, applied_snapshot& report);
    // The same when `from` is the baseline `to` was built from: only what apply_delta changed is visited.
    void update_registry_from_effects(const replicated_state& from, const replicated_state& to,
                                      applied_snapshot& report);
    // Grows the by-index tables to hold the largest of `indices` (sorted).
    void make_room(const std::vector<std::uint32_t>& indices);
    void destroy_local(std::uint32_t index, applied_snapshot& report);
    void create_local(std::uint32_t index, std::uint32_t generation, applied_snapshot& report);
    void announce_created();

    const schema* schema_;
    mirror_options options_;
    checksum_weights weights_;
    std::vector<candidate_kernel> kernels_; // per component, from the schema
    ecsnet::registry own_registry_;
    ecsnet::registry& registry_;

    std::vector<std::unique_ptr<replicated_state>> states_; // oldest first
    std::vector<std::unique_ptr<replicated_state>> spare_;  // released buffers, the warmest last
    std::unique_ptr<replicated_state> scratch_;
    tick_type keep_from_{}; // states older than this are no longer needed
    delta delta_;
    delta_workspace work_;
    bool full_state_needed_{false};

    // By server index: the local entity and its server generation, apart, so that the rows' lookups read
    // 4 bytes an entity.
    std::vector<entity> locals_;
    std::vector<std::uint32_t> local_generations_;
    std::vector<std::uint32_t> from_ids_;
    std::vector<std::uint32_t> to_ids_;
    std::vector<std::uint32_t> values_;
    std::vector<entity> created_;
    std::vector<net_entity> created_ids_;
    std::vector<std::uint32_t> row_positions_;
    std::vector<const void*> row_columns_;
    std::vector<std::uint8_t> touched_;
    std::vector<std::uint32_t> own_ids_;
    std::vector<std::uint32_t> replaced_; // indices whose occupant changed, in order
    std::vector<aligned_run> runs_;
    std::vector<std::uint32_t> added_;
    std::vector<std::uint32_t> gone_;
    std::vector<std::uint32_t> differing_;
    detail::column_vector<std::uint32_t> flags_;
    std::uint32_t since_full_check_{};
    v1::Envelope envelope_;
    std::string canonical_;
};

} // namespace ecsnet::proto
