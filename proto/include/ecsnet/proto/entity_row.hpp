#pragma once

// One entity's replicated state as a fixed-width row of 32-bit values, the unit of the interest-managed
// views (docs/protocol.md, "Interest-managed snapshots"): where a whole-world snapshot keeps columns per
// component, a view keeps each entity on its own, because each entity of a client's view is at its own
// tick.
//
//   row = [presence words] [fields of component 0] [fields of component 1] ...
//
// Presence: bit c of the words says the entity has component c. The fields of an absent component are 0,
// so that equal states have equal rows (compared with memcmp). Values are the quantized integers of
// quantize.hpp.
//
// Also here: the reference a field is coded against (its previous value, or for prediction::linear fields
// a linear extrapolation from the entity's two previous values, docs/protocol.md 5.4 with the entity's own
// ticks), and the entity's term of the state checksum (checksum.hpp), which a view keeps per entity.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "checksum.hpp"
#include "delta.hpp"
#include "schema.hpp"
#include "state.hpp"

namespace ecsnet::proto {

/// No tick: an entity entered a view without a previous value to extrapolate from.
inline constexpr tick_type no_tick = 0xFFFFFFFFU;

/// Extrapolation reaches at most this many ticks ahead of the base value, over a span of at most as many
/// (further, the reference is the base value): both sides apply the same rule.
inline constexpr std::uint32_t max_extrapolation_ticks = 16;

class row_layout {
public:
    row_layout() = default;
    explicit row_layout(const schema_layout& layout);

    [[nodiscard]] const schema_layout& schema() const noexcept { return *schema_; }
    /// Values per row.
    [[nodiscard]] std::size_t width() const noexcept { return width_; }
    [[nodiscard]] std::size_t components() const noexcept { return offsets_.size(); }
    [[nodiscard]] std::size_t presence_words() const noexcept { return presence_words_; }
    /// Position of component c's first field in a row.
    [[nodiscard]] std::size_t offset(std::size_t c) const noexcept { return offsets_[c]; }
    [[nodiscard]] std::size_t fields(std::size_t c) const noexcept { return fields_[c]; }

    [[nodiscard]] static bool has(const std::uint32_t* row, std::size_t c) noexcept {
        return ((row[c / 32] >> (c % 32)) & 1U) != 0;
    }
    static void set_present(std::uint32_t* row, std::size_t c) noexcept { row[c / 32] |= 1U << (c % 32); }
    [[nodiscard]] bool same_presence(const std::uint32_t* a, const std::uint32_t* b) const noexcept {
        return std::memcmp(a, b, presence_words_ * sizeof(std::uint32_t)) == 0;
    }
    /// Rows are short (a few words): an inline loop, not a call to memcmp.
    [[nodiscard]] bool equal(const std::uint32_t* a, const std::uint32_t* b) const noexcept {
        std::uint32_t differ = 0;
        for (std::size_t i = 0; i < width_; ++i) {
            differ |= a[i] ^ b[i];
        }
        return differ == 0;
    }
    /// True when the row has no component (an entity must have one).
    [[nodiscard]] bool empty(const std::uint32_t* row) const noexcept;

    /// The reference of every field of `base` (the entity's value at tick b) for a value at tick b + ahead,
    /// given its value `previous` at tick b - span (nullptr: none): extrapolated for prediction::linear
    /// fields of components present in both when 1 <= ahead, span <= max_extrapolation_ticks, else the
    /// base value. Presence and absent components are copied from `base`. Returns whether `out` differs from
    /// `base` (some field moved), which a caller would otherwise find by comparing the rows.
    bool reference(const std::uint32_t* base, const std::uint32_t* previous, std::uint32_t ahead,
                   std::uint32_t span, std::uint32_t* out) const noexcept;
    /// Whether reference() extrapolates anything for these ticks (`previous_tick` may be no_tick).
    [[nodiscard]] bool extrapolates(tick_type base_tick, tick_type previous_tick,
                                    tick_type tick) const noexcept {
        if (!any_linear_ || previous_tick == no_tick || previous_tick >= base_tick || base_tick >= tick) {
            return false;
        }
        return base_tick - previous_tick <= max_extrapolation_ticks &&
               tick - base_tick <= max_extrapolation_ticks;
    }

    /// Whether `now` is the next point of the line of `before` and `base` (rows one tick apart): the same
    /// presence in the three, `now`'s other fields equal to `base`'s, and each prediction::linear field one
    /// same step further, a step small enough (|step| x max_extrapolation_ticks below half the field's range)
    /// that no extrapolation along the line wraps. On rows that each continue the line of the two before,
    /// reference() of any two of them (within max_extrapolation_ticks) is every later one exactly
    /// (row_history::on_line).
    [[nodiscard]] bool continues_line(const std::uint32_t* before, const std::uint32_t* base,
                                      const std::uint32_t* now) const noexcept;

    /// The entity's term of the state checksum (docs/protocol.md 5.3).
    [[nodiscard]] std::uint64_t checksum_term(const checksum_weights& weights, std::uint32_t index,
                                              std::uint32_t generation,
                                              const std::uint32_t* row) const noexcept;
    /// The same with the schema's weights (checksum_weights of schema()), kept flat per row position: one
    /// multiply-add per field. Rows hold 0 in the fields of absent components (as every row does).
    [[nodiscard]] std::uint64_t checksum_term(std::uint32_t index, std::uint32_t generation,
                                              const std::uint32_t* row) const noexcept;

    /// The checksum term (the flat one above) of `reference`, a row reference() made from `base`, whose term
    /// is `base_term`: the two differ in linear fields alone, so the term moves by their differences times
    /// their weights (modulo 2^64, as the term is summed). A client's mirror takes the term of every entity
    /// it extrapolates, each snapshot: a multiply-add per linear field instead of one per field.
    [[nodiscard]] std::uint64_t reference_term(std::uint64_t base_term, std::uint32_t index,
                                               const std::uint32_t* base,
                                               const std::uint32_t* reference) const noexcept;

    /// Bit c set where component c's fields differ between rows a and b (presence aside). For layouts
    /// of at most 64 components (views).
    [[nodiscard]] std::uint64_t differing_components(const std::uint32_t* a,
                                                     const std::uint32_t* b) const noexcept {
        std::uint64_t differ = 0;
        for (std::size_t at = presence_words_; at < width_; ++at) {
            differ |= std::uint64_t{a[at] != b[at]} << component_of_[at];
        }
        return differ;
    }

    /// In gather_row's `positions`: the entity lacks the component.
    static constexpr std::uint32_t absent = 0xFFFFFFFFU;

    /// Gathers one entity's row from a columnar state: positions[c] is its entry in component c's columns,
    /// or `absent`.
    void gather_row(const replicated_state& state, const std::uint32_t* positions,
                    std::uint32_t* row) const noexcept;

private:
    // A prediction::linear field: where it is in a row, and the presence bit of its component.
    struct linear_field {
        std::uint32_t at{};
        std::uint32_t word{};
        std::uint32_t presence{};
        unsigned bits{};
        std::uint32_t mask{};
    };

    const schema_layout* schema_{nullptr};
    std::vector<std::size_t> offsets_;
    std::vector<std::uint8_t> fields_;        // per component: its number of fields
    std::vector<std::uint32_t> component_of_; // per row position (fields only)
    std::vector<linear_field> linear_;
    std::vector<std::uint32_t> not_linear_; // per row position: 0 at a linear field, all ones elsewhere
    // The schema's checksum weights: per row position (0 for the presence words), per component present,
    // and per entity and generation.
    std::vector<std::uint64_t> field_weights_;
    std::vector<std::uint64_t> presence_weights_;
    std::uint64_t entity_weight_{};
    std::uint64_t generation_weight_{};
    bool any_linear_{false};
    std::size_t presence_words_{};
    std::size_t width_{};
};

} // namespace ecsnet::proto
