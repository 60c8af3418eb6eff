#pragma once

// The bits of one entity in an interest-managed snapshot (docs/protocol.md, "Interest-managed
// snapshots"): an update from the entity's row in the client's base view, or a whole row for an entity
// entering the view. These bits depend only on the entity, its base and previous rows and the tick's
// tables, never on the other entities of a client's snapshot: the server codes them once per tick and
// copies them into the snapshot of every client whose base holds the entity at the same ticks.
//
// Update (the entity is in the base view, and its new row differs from the reference):
//   changes     dictionary code of the set of components whose fields differ from the reference; the escape
//               (111) is followed by a bit "the set of components changed", the new set if so, then the raw
//               changed set (of components present before and after)
//   per changed component, in order:
//               field mask (dictionary code; implicit for one-field components), then per field of the mask:
//               eg(order) of zigzag(residual) - 1, the residual being value - reference modulo 2^bits
//   per component added: its fields' full values, bits(width) each
// Whole row:
//   eg(generation_order) of the generation, the dictionary code of the set of components, then per
//   component present its fields' full values, bits(width) each.
//
// Readers check everything (sets within the schema, non-empty, canonical escapes, residuals within the
// field's range, full values within the width) and fail the reader otherwise.

#include <cstdint>

#include "bitstream.hpp"
#include "entity_row.hpp"
#include "view_tables.hpp"

namespace ecsnet::proto {

/// The components of a row, as a set.
[[nodiscard]] inline bit_set presence_of(const row_layout& layout, const std::uint32_t* row) noexcept {
    bit_set set = row[0];
    if (layout.presence_words() > 1) {
        set |= bit_set{row[1]} << 32;
    }
    return set;
}

/// Writes the update of an entity from `base` to `now`, whose reference is `reference` (row_layout::
/// reference). Returns false, writing nothing, when `now` equals the reference exactly (same components,
/// same values): the client gets it by computing the reference. `stats` (may be null) counts what was
/// coded, for the server's next tables.
bool write_entity_update(const row_layout& layout, const view_tables& tables, const std::uint32_t* base,
                         const std::uint32_t* reference, const std::uint32_t* now, bit_writer& out,
                         view_table_chooser* stats);

/// Reads an update; `out` gets the new row. False (and the reader failed) when the bits are not a valid
/// update of `base`.
bool read_entity_update(const row_layout& layout, const view_tables& tables, const std::uint32_t* base,
                        const std::uint32_t* reference, bit_reader& in, std::uint32_t* out);

/// Writes a whole row. Every value must be below 2^width of its field (view_table_chooser sees to it).
void write_entity_row(const row_layout& layout, const view_tables& tables, std::uint32_t generation,
                      const std::uint32_t* row, bit_writer& out, view_table_chooser* stats);

/// Reads a whole row. False (and the reader failed) when it is not valid.
bool read_entity_row(const row_layout& layout, const view_tables& tables, bit_reader& in,
                     std::uint32_t& generation, std::uint32_t* out);

} // namespace ecsnet::proto
