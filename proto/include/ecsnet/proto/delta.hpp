#pragma once

// The delta between two replicated states: what a Snapshot's `columns` carry (docs/protocol.md,
// "Snapshot columns"), in memory.
//
// What the baseline already has is named by its position in the baseline's sorted column (so the reader
// finds it without searching); what is new is named by its entity index. All lists are strictly increasing.
// Entities: `destroyed` (positions in the baseline's entities whose occupant is gone) and `created`
// (indices whose occupant is new since the baseline, with its generation); an index can be destroyed and
// created at once (a new occupant). Components, per declared component: `removed` (positions in the
// baseline's column of entities that live on without it), `added` (indices, with their full quantized
// values), and `changed` (positions in the baseline's column) with a per-field change mask and, per field
// whose bit is set, the difference between the new value and its reference (the baseline's value, or for
// prediction::linear fields a linear extrapolation from the second baseline through the baseline), modulo
// 2^bits.
//
// make_delta (server) computes a delta, write_delta packs it into bits; read_delta (client) unpacks and
// checks the syntax (lengths, ranges, ordering, no truncation), apply_delta checks it against the
// baseline and builds the new state. Both sides go through the same structure, so what one writes the
// other reads back identically (tests/proto/delta_test.cpp).
//
// Complexity: make_delta and apply_delta are O(entities of the states involved), read and write
// O(changes). Nothing is allocated beyond a small multiple of the input's size (read) or of the states'.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "bitstream.hpp"
#include "candidates.hpp"
#include "checksum.hpp"
#include "result.hpp"
#include "schema.hpp"
#include "state.hpp"

namespace ecsnet::proto {

struct component_delta {
    /// Positions in the baseline's column.
    std::vector<std::uint32_t> removed;
    /// The added ids are exactly the created entities (then `added` is a copy of `created`).
    bool added_are_created{false};
    std::vector<std::uint32_t> added;
    /// Per field, the quantized values of the added entities, parallel to `added`.
    std::vector<std::vector<std::uint32_t>> added_values;
    /// Positions in the baseline's column.
    std::vector<std::uint32_t> changed;
    /// Parallel to `changed`: bit f set when field f differs from its reference. Never 0.
    std::vector<std::uint32_t> masks;
    /// Per field: (value - reference) mod 2^bits for each changed entity whose mask has bit f, in order.
    std::vector<std::vector<std::uint32_t>> residuals;

    [[nodiscard]] bool empty() const noexcept { return removed.empty() && added.empty() && changed.empty(); }
    void clear(std::size_t fields);
};

struct delta {
    /// Positions in the baseline's entities.
    std::vector<std::uint32_t> destroyed;
    std::vector<std::uint32_t> created;
    std::vector<std::uint32_t> created_generations;
    std::vector<component_delta> components;

    /// Empties every list (keeping capacity), shaped after `layout`.
    void reset(const schema_layout& layout);
    [[nodiscard]] bool empty() const noexcept;
};

/// How far the extrapolation reaches: `ahead` = tick - baseline, `span` = baseline - second baseline.
struct extrapolation {
    std::uint32_t ahead{1};
    std::uint32_t span{1};
};

/// The reference value of a prediction::linear field: base + round(d * ahead / span) modulo 2^bits, with
/// d = base - second as a signed `bits`-wide number and round() rounding halves up (docs/protocol.md).
[[nodiscard]] std::uint32_t extrapolate(std::uint32_t base, std::uint32_t second, unsigned bits,
                                        extrapolation x) noexcept;

/// What apply_delta changed, relative to the baseline (positions are into the id columns).
struct component_effects {
    /// Positions in the new column whose entity survived and whose values differ from the baseline's.
    std::vector<std::uint32_t> written;
    /// Positions in the new column of entries new to the component (added, or a new occupant's).
    std::vector<std::uint32_t> added;
    /// Positions in the baseline's column of entries whose entity lives on without the component.
    std::vector<std::uint32_t> removed;
};

struct delta_effects {
    /// Positions in the baseline's entities of entities destroyed (or replaced by a new occupant).
    std::vector<std::uint32_t> destroyed;
    /// Positions in the new entities of entities created (or new occupants).
    std::vector<std::uint32_t> created;
    std::vector<component_effects> components;
};

/// Candidate positions [begin, end) of a column that lie in one run: their baseline positions are theirs
/// plus to_b, their second baseline's plus to_p (when `second`), modulo 2^32.
struct candidate_segment {
    std::uint32_t begin{};
    std::uint32_t end{};
    std::uint32_t to_b{};
    std::uint32_t to_p{};
    bool second{};
};

/// Scratch memory reused from call to call (flattened id columns, alignments, residuals).
struct delta_workspace {
    std::vector<std::uint32_t> target_entities;
    std::vector<std::uint32_t> base_entities;
    std::vector<std::uint32_t> second_entities;
    std::vector<std::uint32_t> target_ids;
    std::vector<std::uint32_t> base_ids;
    std::vector<std::uint32_t> second_ids;
    std::vector<aligned_run> runs;
    std::vector<aligned_run> second_runs;
    std::vector<std::uint32_t> target_only;
    std::vector<std::uint32_t> base_only;
    std::vector<std::uint32_t> fresh;
    detail::column_vector<std::uint32_t> positions;
    std::vector<std::uint32_t> created_positions;
    std::vector<std::uint32_t> destroyed_ids;
    std::vector<aligned_run> entity_runs;
    std::vector<aligned_run> entity_second_runs;
    std::vector<aligned_run> own_runs;
    std::vector<candidate_segment> segments;
    std::vector<std::uint32_t> written_rows;
    std::vector<std::uint32_t> base_gone;
    detail::column_vector<std::uint32_t> changed_t;
    detail::column_vector<std::uint32_t> written_b;
    detail::column_vector<std::uint32_t> candidates;
    detail::column_vector<std::uint64_t> sums;
    detail::column_vector<std::uint32_t> masks;
    std::vector<detail::column_vector<std::uint32_t>> residuals;
    std::vector<std::uint8_t> flags;
    std::vector<std::uint64_t> weights; // entity_weight by index, grown on demand
    delta_effects effects;
};

/// Aligns a target id column with a base one (both sorted): equal ids not in `breaks` (sorted ids of new
/// occupants) form runs; the other target positions go to target_only, the other base positions to
/// base_only. O(n), with runs of equal ids compared 16 at a time.
void align_ids(const std::vector<std::uint32_t>& target, const std::vector<std::uint32_t>& base,
               const std::vector<std::uint32_t>& breaks, std::vector<aligned_run>& runs,
               std::vector<std::uint32_t>& target_only, std::vector<std::uint32_t>& base_only);

/// The positions (in the target's columns) of the run entries whose values differ in any field between
/// `now` and `before`, in order, into `out` (which keeps its capacity).
void changed_positions(const std::vector<field_column>& now, const std::vector<field_column>& before,
                       const std::vector<aligned_run>& runs, detail::column_vector<std::uint32_t>& flags,
                       std::vector<std::uint32_t>& out);

/// Identity information the server gives make_delta (the client's states carry generations instead).
struct delta_identity {
    /// Sorted indices of `target`'s entities whose occupant entered replication after the baseline.
    std::span<const std::uint32_t> created;
    /// Sorted indices whose occupant entered after the second baseline (no extrapolation for them).
    std::span<const std::uint32_t> fresh_since_second;
    /// Generations of `target`'s entities, parallel to target.entities.
    std::span<const std::uint32_t> generations;
};

/// The delta from `baseline` (nullptr: a full state) to `target`, extrapolating prediction::linear fields
/// from `second` when it is given.
void make_delta(const schema_layout& layout, const replicated_state& target, const replicated_state* baseline,
                const replicated_state* second, extrapolation x, const delta_identity& identity, delta& out,
                delta_workspace& work);

/// Packs a delta into bits (docs/protocol.md, "Snapshot columns"). Nothing is written for an empty delta.
void write_delta(const schema_layout& layout, const delta& d, bit_writer& out);

struct delta_limits {
    /// Most entities a state may hold (and so a list may name).
    std::size_t max_entities{std::size_t{max_net_index} + 1};
};

/// Unpacks the columns of a snapshot (empty bytes: an empty delta), checking their syntax. On error, `out`
/// holds garbage.
result<void> read_delta(const schema_layout& layout, std::string_view columns, bool full_state, delta& out,
                        const delta_limits& limits = {});

/// Builds `out` = `baseline` (nullptr for a full state) + `d`, extrapolating from `second` when given,
/// after checking that the delta fits the baseline (destroyed and changed ids present, added ones absent,
/// every entity with at least one component...). The states must carry generations. Sets out.checksum
/// incrementally (the baseline's checksum plus the contribution of every change, which the caller compares
/// with the server's) and work.effects; `out.tick` and `server_time_us` are left for the caller.
/// `kernels`: per component, the candidates pass compiled for its storage types (candidates.hpp; a
/// schema's, component_codec::candidates_kernel()); without one, the pass reads the types at run time.
result<void> apply_delta(const schema_layout& layout, const replicated_state* baseline,
                         const replicated_state* second, extrapolation x, const delta& d,
                         replicated_state& out, delta_workspace& work, const checksum_weights& weights,
                         const delta_limits& limits = {}, std::span<const candidate_kernel> kernels = {});

} // namespace ecsnet::proto
