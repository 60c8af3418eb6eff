#pragma once

// The server's snapshot history: the replicated state of the last `depth` ticks (default 32), captured from
// a registry once per tick, from which snapshot_encoder codes deltas for clients.
//
// Capture quantizes every declared component of the registry into sorted columns (state.hpp): per
// component, its pool's entities are scattered into a bitmap by index, the bitmap is walked in order, and
// the components are quantized in that order. Change detection is by comparison: capture compares each new
// column with the previous tick's and records the positions that changed (state.written), which the encoder
// uses for 1-tick-old baselines; older baselines compare whole columns. So components may be written any
// way (views, patch, replace) and no signal needs to fire for a change to be seen (bench/RESULTS.md compares
// this with signal tracking). The state checksum follows from the previous tick's and those changes
// (entries that entered, left or changed); from scratch when the previous tick's ids are not kept.
// row_history and the interest replicator's grid read the same lists.
//
// Identity: an entity "enters replication" when it gets its first declared component and "leaves" when it
// loses its last one (or is destroyed). Each entry gives the index a new generation (net_entity): the
// server's entity version, extended past 12 bits, bumped by at least one per new occupant. The history
// connects to the registry's on_destroy signals of the declared components to see an entity leave even
// when its index is reused, with the same version, before the next capture (4096 reuses in one tick).
// So a recycled index is never taken for its previous occupant, whatever baseline a client acked.
//
// Complexity per capture: O(entities x fields + highest index / 64). Memory: about 2 bytes per id plus the
// field columns per stored tick (22 bytes per entity per tick on the standard scene, bench/RESULTS.md);
// the newest 4 ticks also keep their ids flat, the newest 2 their change lists; 32 bytes per entity index
// ever used.
// Lifetime: the registry and the schema must outlive the history. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "checksum.hpp"
#include "delta.hpp"
#include "ecsnet/ecs/registry.hpp"
#include "ecsnet/ecs/sigh.hpp"
#include "schema.hpp"
#include "state.hpp"

namespace ecsnet::proto {

struct history_options {
    /// Ticks kept as possible baselines.
    std::size_t depth{32};
    /// Ticks per second: a tick's nominal time is tick * 1000000 / tick_rate microseconds.
    std::uint32_t tick_rate{30};
};

class snapshot_history {
public:
    snapshot_history(const schema& schema, registry& reg, history_options options = {});
    snapshot_history(const snapshot_history&) = delete;
    snapshot_history& operator=(const snapshot_history&) = delete;
    ~snapshot_history();

    /// Captures the registry's replicated state as `tick`, which must be greater than the newest tick
    /// (throws std::invalid_argument otherwise). `server_time_us`: the tick's time, microseconds since the
    /// server's epoch. Evicts the oldest tick when `depth` ticks are stored.
    void capture(tick_type tick, std::uint64_t server_time_us);

    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
    /// Ticks stored (at most depth()).
    [[nodiscard]] std::size_t size() const noexcept { return count_; }
    [[nodiscard]] std::size_t depth() const noexcept { return ring_.size(); }
    /// Precondition: !empty().
    [[nodiscard]] const replicated_state& newest() const noexcept { return ring_[head_]; }
    [[nodiscard]] tick_type newest_tick() const noexcept { return ring_[head_].tick; }
    [[nodiscard]] tick_type oldest_tick() const noexcept;
    /// The state of `tick`, or nullptr when it is not (or no longer) stored.
    [[nodiscard]] const replicated_state* find(tick_type tick) const noexcept;
    [[nodiscard]] bool contains(tick_type tick) const noexcept { return find(tick) != nullptr; }

    /// Generations of the newest tick's entities, parallel to newest().entities.
    [[nodiscard]] std::span<const std::uint32_t> newest_generations() const noexcept { return generations_; }
    /// Sorted indices of the newest tick's entities that entered replication after tick `after` (which
    /// must be stored): the "created" list of a delta from `after`.
    void entered_since(tick_type after, std::vector<std::uint32_t>& out) const;

    /// The wire identity of a live server entity: the generation it has (or will get when it is first
    /// captured). Use it to announce a client's own entity in ServerWelcome.
    [[nodiscard]] net_entity to_net(entity e);

    /// Gives a live entity the wire generation it had in a saved world (a checkpoint), before its first
    /// capture: clients of the restored server then see the same identities as those of the saved one.
    /// Throws std::invalid_argument when `e` is not valid, the generation's low 12 bits are not its
    /// version, or the history has captured already.
    void restore_generation(entity e, std::uint32_t generation);

    /// Nominal time of a tick, microseconds since the epoch: tick * 1000000 / tick_rate.
    [[nodiscard]] std::uint64_t nominal_time_us(tick_type tick) const noexcept;

    [[nodiscard]] const schema& replicated_schema() const noexcept { return *schema_; }
    [[nodiscard]] const schema_layout& layout() const noexcept { return schema_->layout(); }
    [[nodiscard]] const checksum_weights& weights() const noexcept { return weights_; }
    [[nodiscard]] std::uint32_t tick_rate() const noexcept { return options_.tick_rate; }

    /// Heap bytes held: stored states, per-index records, capture scratch.
    [[nodiscard]] std::size_t memory_bytes() const noexcept;
    /// Heap bytes of the stored states alone.
    [[nodiscard]] std::size_t state_bytes() const noexcept;

private:
    // What the history knows about an entity index.
    struct index_record {
        entity last{null_entity}; // the entity the generation was given to
        std::uint32_t generation{};
        tick_type seen{}; // last tick the index was replicated
        bool ever_seen{false};
        bool pending{false}; // generation announced by to_net, not captured yet
        bool vacated{false}; // the occupant lost its last declared component since the last capture
    };

    void on_component_destroyed(const registry& reg, entity e, std::size_t component);
    std::uint32_t next_generation(const index_record& record, entity e) const noexcept;
    index_record& record_of(std::uint32_t index);
    void grow_tables(std::uint32_t index);
    std::uint64_t checksum_of(const replicated_state& state);
    /// Lists the changes since the previous tick, and the checksum from them; false (neither) when the
    /// previous tick is not kept with its ids.
    bool record_changes(replicated_state& state, std::size_t slot);

    // States keeping their flat ids (the newest ones, the usual baselines).
    static constexpr std::size_t flat_cache_ticks = 4;
    // States keeping their change lists and continuing runs (the newest one and its 1-tick-old baseline).
    static constexpr std::size_t change_cache_ticks = 2;

    const schema* schema_;
    registry* registry_;
    history_options options_;
    checksum_weights weights_;

    std::vector<replicated_state> ring_;
    std::vector<std::vector<std::uint32_t>> entered_; // per ring slot: indices entering at that tick
    std::size_t head_{};
    std::size_t count_{};
    std::optional<tick_type> previous_tick_;

    std::vector<index_record> records_;
    std::vector<std::uint32_t> generations_;
    std::vector<std::uint32_t> previous_generations_; // the previous capture's generations_
    std::vector<scoped_connection> connections_;

    // capture scratch
    std::vector<std::vector<std::uint64_t>> bitmaps_; // per component, by index
    std::vector<std::uint64_t> union_;
    std::vector<entity> entity_of_;
    std::vector<std::uint32_t> position_of_;
    std::vector<std::uint32_t> order_;
    std::vector<void*> columns_;
    std::vector<std::uint32_t> ids_;
    std::vector<std::uint64_t> sums_;
    std::vector<std::uint64_t> weight_of_; // entity_weight by index
    std::vector<std::uint32_t> old_ids_;
    std::vector<aligned_run> own_runs_;
    std::vector<std::uint32_t> entities_only_; // positions of the entities that enter, in the state
    std::vector<std::uint32_t> entities_gone_; // of those that left, in the previous one
    std::vector<std::uint32_t> scratch_only_;
    std::vector<std::uint32_t> scratch_gone_;
    detail::column_vector<std::uint32_t> differs_;
};

} // namespace ecsnet::proto
