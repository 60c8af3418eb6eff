#pragma once

// The coding tables of an interest-managed view (docs/protocol.md, "Interest-managed snapshots"): what
// lets one entity's update be coded once per tick and the same bits be copied into every client's snapshot
// (serialize once). A whole-world delta picks its exp-Golomb orders per list; an entity's bits shared by
// many clients cannot depend on the other entities of one client's snapshot, so the orders, the widths of
// full values and the most frequent change masks are fixed for the tick, by the server, for everyone, and
// sent to a client only when they differ from those of its base view.
//
//   generation_order          exp-Golomb order of the generation of an entering entity
//   per field: order          exp-Golomb order of the field's residuals (zigzag(r) - 1)
//              width          bits of the field's full values (every value of the tick is below 2^width)
//   presence dictionary       3 component sets, the most frequent of entering entities
//   change dictionary         3 component sets, the most frequent "components that changed" of updates
//   per component of more than one field: a field dictionary, its 3 most frequent field masks
//
// A dictionary code is 0, 10 or 110 for its entries and 111 followed by the raw set otherwise, so the usual
// case costs one bit.
//
// view_table_chooser (server) gathers statistics from what was coded and proposes tables every `period`
// ticks; widths grow at once when a value needs it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bitstream.hpp"
#include "eg_order.hpp"
#include "entity_row.hpp"
#include "schema.hpp"

namespace ecsnet::proto {

/// A set of components or of fields, as a bit mask. Views support schemas of at most 64 components
/// (max_view_components); fields are at most 32 per component.
using bit_set = std::uint64_t;

inline constexpr std::size_t max_view_components = 64;

/// Up to 64 bits (get() takes at most 57).
[[nodiscard]] inline std::uint64_t get_wide(bit_reader& in, unsigned bits) noexcept {
    if (bits <= 32) {
        return in.get(bits);
    }
    const auto low = in.get(32);
    return low | (in.get(bits - 32) << 32);
}

struct dictionary {
    static constexpr std::size_t size = 3;
    std::array<bit_set, size> entries{};
    bool operator==(const dictionary&) const = default;
};

struct view_tables {
    unsigned generation_order{};
    std::vector<std::uint8_t> orders; // per row field position (row_layout offsets), presence words unused
    std::vector<std::uint8_t> widths; // likewise
    dictionary presence;
    dictionary changes;
    std::vector<dictionary> field_masks; // per component (unused for one-field components)

    /// Tables fitting `layout`: orders 0, widths the fields' full bits, empty dictionaries.
    static view_tables defaults(const row_layout& layout);
    bool operator==(const view_tables&) const = default;

    void write(const row_layout& layout, bit_writer& out) const;
    /// Reads tables; false (and the reader failed) when they do not fit the layout.
    bool read(const row_layout& layout, bit_reader& in);
};

/// Writes a set with a dictionary: 0, 10, 110 or 111 + the raw `bits`-bit set.
void write_with_dictionary(bit_writer& out, const dictionary& d, bit_set value, unsigned bits);
/// Reads what write_with_dictionary wrote (an escape holding a dictionary entry fails the reader).
[[nodiscard]] bit_set read_with_dictionary(bit_reader& in, const dictionary& d, unsigned bits);
/// Bits write_with_dictionary takes for `value`.
[[nodiscard]] unsigned dictionary_cost(const dictionary& d, bit_set value, unsigned bits) noexcept;

/// The server's statistics of what it codes, and its choice of tables.
class view_table_chooser {
public:
    /// `first_version`: the version of the first tables (choosers whose clients may move between them
    /// start far apart, so a version names one chooser's tables only).
    view_table_chooser(const row_layout& layout, std::uint32_t period, std::uint32_t first_version = 1);

    /// The tables for the next tick: the current ones, new ones every `period` ticks, and wider ones at
    /// once when `max_values` (per row field position: the largest value of the tick) needs it.
    const view_tables& next(const std::vector<std::uint32_t>& max_values);
    [[nodiscard]] const view_tables& current() const noexcept { return tables_; }
    /// Bumped whenever the tables change.
    [[nodiscard]] std::uint32_t version() const noexcept { return version_; }

    void count_generation(std::uint32_t generation) noexcept { generations_.add(generation); }
    void count_residual(std::size_t position, std::uint64_t coded) noexcept {
        residuals_[position].add(coded);
    }
    void count_presence(bit_set presence);
    void count_changes(bit_set components);
    void count_fields(std::size_t component, bit_set fields);

private:
    struct frequency {
        std::vector<std::pair<bit_set, std::uint32_t>> counts;
        void add(bit_set value);
        [[nodiscard]] dictionary top() const;
        void clear() noexcept { counts.clear(); }
    };

    const row_layout* layout_;
    std::uint32_t period_;
    std::uint32_t ticks_{};
    std::uint32_t version_{1};
    view_tables tables_;
    eg_order_finder generations_;
    std::vector<eg_order_finder> residuals_;
    frequency presence_;
    frequency changes_;
    std::vector<frequency> fields_;
};

} // namespace ecsnet::proto
