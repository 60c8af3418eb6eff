#include "ecsnet/proto/delta.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <string_view>
#include <utility>

#include "cpu_clones.hpp"
#include "ecsnet/proto/bit_lists.hpp"
#include "ecsnet/proto/eg_order.hpp"

namespace ecsnet::proto {

// ---- the bit layout (docs/protocol.md, "Snapshot columns") ---------------------------------------------

namespace {

constexpr unsigned k_bits = eg_order_bits;
static_assert(max_eg_order == (1U << k_bits) - 1, "the order field holds every order");
constexpr unsigned w_bits = value_width_bits;

// The order k, then each value exp-Golomb coded with it. Inlined: called out of line from write_delta's
// CPU clones, the residual columns took 3% more instructions (callgrind, measured_encode).
[[gnu::always_inline]] inline void write_eg_values(bit_writer& out, const std::vector<std::uint32_t>& values,
                                                   unsigned k) {
    out.put(k, k_bits);
    auto at = out.cursor();
    for (const auto v : values) {
        out.put_eg(at, v, k);
    }
    out.seek(at);
}

void write_eg_column(bit_writer& out, const std::vector<std::uint32_t>& values) {
    eg_order_finder order;
    for (const auto v : values) {
        order.add(v);
    }
    write_eg_values(out, values, order.best());
}

// Frame of reference: the minimum on the field's bits, a width, then each value minus the minimum.
void write_full_values(bit_writer& out, const std::vector<std::uint32_t>& values, unsigned bits) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const std::uint32_t min = *lo;
    const auto width = static_cast<unsigned>(std::bit_width(*hi - min));
    out.put(min, bits);
    out.put(width, w_bits);
    auto at = out.cursor();
    for (const auto v : values) {
        out.put(at, v - min, width);
    }
    out.seek(at);
}

} // namespace

ECSNET_CPU_CLONES void write_delta(const schema_layout& layout, const delta& d, bit_writer& out) {
    if (d.empty()) {
        return;
    }
    thread_local std::vector<std::uint32_t> scratch;
    const auto write_ascending = [&](bit_writer& o, const std::vector<std::uint32_t>& list) {
        ::ecsnet::proto::write_ascending(o, list, scratch);
    };
    const bool entities_changed = !d.destroyed.empty() || !d.created.empty();
    out.put_bit(entities_changed);
    if (entities_changed) {
        write_ascending(out, d.destroyed);
        write_ascending(out, d.created);
        if (!d.created.empty()) {
            write_eg_column(out, d.created_generations);
        }
    }
    for (std::size_t c = 0; c < layout.size(); ++c) {
        const auto& cd = d.components[c];
        const auto& fields = layout[c].fields;
        out.put_bit(!cd.empty());
        if (cd.empty()) {
            continue;
        }
        write_ascending(out, cd.removed);
        out.put_bit(cd.added_are_created);
        if (!cd.added_are_created) {
            write_ascending(out, cd.added);
        }
        if (!cd.added.empty()) {
            for (std::size_t f = 0; f < fields.size(); ++f) {
                write_full_values(out, cd.added_values[f], fields[f].bits);
            }
        }
        write_ascending(out, cd.changed);
        if (cd.changed.empty()) {
            continue;
        }
        const auto nfields = static_cast<unsigned>(fields.size());
        if (nfields > 1) {
            auto at = out.cursor();
            for (const auto mask : cd.masks) {
                out.put(at, mask, nfields);
            }
            out.seek(at);
        }
        for (std::size_t f = 0; f < fields.size(); ++f) {
            const auto& residuals = cd.residuals[f];
            if (residuals.empty()) {
                continue;
            }
            const auto bits = fields[f].bits;
            eg_order_finder order; // found while the residuals are made: one pass fewer
            scratch.resize(residuals.size());
            for (std::size_t i = 0; i < residuals.size(); ++i) {
                scratch[i] = static_cast<std::uint32_t>(zigzag(sign_extend(residuals[i], bits)) - 1);
                order.add(scratch[i]);
            }
            write_eg_values(out, scratch, order.best());
        }
    }
}

namespace {

result<void> malformed(std::string what) {
    return make_error(errc::malformed_columns, std::move(what));
}

bool read_eg_column(bit_reader& in, std::vector<std::uint32_t>& values, std::size_t count) {
    const auto k = static_cast<unsigned>(in.get(k_bits));
    resize_for_overwrite(values, count);
    eg_order_check order{k};
    std::uint64_t widest = 0;
    auto at = in.cursor();
    for (auto& v : values) {
        const auto n = in.get_eg(at, k);
        widest |= n;
        v = static_cast<std::uint32_t>(n);
        order.add(n);
    }
    in.seek(at);
    if (widest > 0xFFFFFFFFULL || !order.canonical(count)) {
        in.fail();
    }
    return in.ok();
}

bool read_full_values(bit_reader& in, std::vector<std::uint32_t>& values, std::size_t count, unsigned bits) {
    const auto min = static_cast<std::uint32_t>(in.get(bits));
    const auto width = static_cast<unsigned>(in.get(w_bits));
    if (!in.ok() || width > bits || count * width > in.remaining()) {
        in.fail();
        return false;
    }
    values.resize(count);
    const auto mask = bit_mask(bits);
    std::uint32_t widest = 0;
    bool has_min = false;
    for (auto& v : values) {
        const auto offset = static_cast<std::uint32_t>(in.get(width));
        const std::uint64_t value = std::uint64_t{min} + offset;
        if (value > mask) {
            in.fail();
            return false;
        }
        widest = std::max(widest, offset);
        has_min = has_min || offset == 0;
        v = static_cast<std::uint32_t>(value);
    }
    // One encoding: the true minimum and the smallest width.
    if (!has_min || width != static_cast<unsigned>(std::bit_width(widest))) {
        in.fail();
    }
    return in.ok();
}

} // namespace

namespace {

// Bit b of a nibble to 16-bit lane b, for each nibble.
constexpr std::array<std::uint64_t, 16> spread_table = [] {
    std::array<std::uint64_t, 16> table{};
    for (std::uint32_t nibble = 0; nibble < 16; ++nibble) {
        for (unsigned b = 0; b < 4; ++b) {
            table[nibble] |= std::uint64_t{(nibble >> b) & 1U} << (16 * b);
        }
    }
    return table;
}();

// Counts, per field, the masks that have its bit: 16-bit lanes of 64-bit words, four fields a word, added a
// nibble of the mask at a time (one table load and add per nibble, not one test per field). Returns false
// if a mask is 0.
class mask_counter {
public:
    explicit mask_counter(unsigned nfields) noexcept
        : nibbles_{(nfields + 3) / 4} {}

    ECSNET_PROTO_INLINE void add(std::uint32_t mask) noexcept {
        empty_ |= mask == 0 ? 1U : 0U;
        for (unsigned n = 0; n < nibbles_; ++n) {
            lanes_[n] += spread_table[(mask >> (4 * n)) & 0xFU];
        }
        if (++pending_ == 0xFFFFU) { // a lane is about to overflow
            flush();
        }
    }

    [[nodiscard]] bool any_empty() const noexcept { return empty_ != 0; }

    void add_to(std::array<std::size_t, max_fields_per_component>& per_field) noexcept {
        flush();
        for (std::size_t f = 0; f < per_field.size(); ++f) {
            per_field[f] += totals_[f];
        }
    }

private:
    void flush() noexcept {
        for (unsigned n = 0; n < nibbles_; ++n) {
            for (unsigned b = 0; b < 4; ++b) {
                totals_[4 * n + b] += (lanes_[n] >> (16 * b)) & 0xFFFFU;
            }
            lanes_[n] = 0;
        }
        pending_ = 0;
    }

    unsigned nibbles_;
    std::uint32_t empty_{};
    std::uint32_t pending_{};
    std::array<std::uint64_t, max_fields_per_component / 4> lanes_{};
    std::array<std::size_t, max_fields_per_component> totals_{};
};

// read_delta without the final clean-up: the lists of `out` are resized to what they hold, each element
// written, so that buffers kept from the previous call are not zeroed first (resize_for_overwrite).
ECSNET_CPU_CLONES result<void> read_delta_into(const schema_layout& layout, std::string_view columns,
                                               bool full_state, delta& out, const delta_limits& limits) {
    bit_reader in{columns};
    const auto max_count = limits.max_entities;
    const auto max_position = max_count == 0 ? 0 : max_count - 1;
    out.destroyed.clear();
    out.created.clear();
    out.created_generations.clear();
    if (in.get_bit()) {
        if (!read_ascending(in, out.destroyed, max_count, max_position) ||
            !read_ascending(in, out.created, max_count, max_net_index)) {
            return malformed("truncated or invalid entity lists");
        }
        if (!out.created.empty() && !read_eg_column(in, out.created_generations, out.created.size())) {
            return malformed("truncated or invalid generations");
        }
        if (out.destroyed.empty() && out.created.empty()) {
            return malformed("entity section flagged but empty");
        }
        if (full_state && !out.destroyed.empty()) {
            return malformed("a full state destroys entities");
        }
    }
    for (std::size_t c = 0; c < layout.size(); ++c) {
        auto& cd = out.components[c];
        const auto& fields = layout[c].fields;
        if (!in.get_bit()) {
            cd.clear(fields.size());
            continue;
        }
        cd.added_values.resize(fields.size());
        cd.residuals.resize(fields.size());
        const auto where = [&](std::string_view what) {
            return malformed("component '" + layout[c].name + "': " + std::string{what});
        };
        if (!read_ascending(in, cd.removed, max_count, max_position)) {
            return where("truncated or invalid removed positions");
        }
        cd.added_are_created = in.get_bit();
        if (cd.added_are_created) {
            if (out.created.empty()) {
                return where("added entities are the created ones, but none are");
            }
            cd.added = out.created;
        } else if (!read_ascending(in, cd.added, max_count, max_net_index)) {
            return where("truncated or invalid added ids");
        } else if (!cd.added.empty() && cd.added == out.created) {
            return where("added ids spelled out instead of flagged as the created ones");
        }
        if (cd.added.empty()) {
            for (auto& values : cd.added_values) {
                values.clear();
            }
        } else {
            for (std::size_t f = 0; f < fields.size(); ++f) {
                if (!read_full_values(in, cd.added_values[f], cd.added.size(), fields[f].bits)) {
                    return where("truncated or invalid values of field '" + fields[f].name + "'");
                }
            }
        }
        if (!read_ascending(in, cd.changed, max_count, max_position)) {
            return where("truncated or invalid changed positions");
        }
        if (cd.changed.empty()) {
            cd.masks.clear();
            for (auto& residuals : cd.residuals) {
                residuals.clear();
            }
        } else {
            const auto nfields = static_cast<unsigned>(fields.size());
            resize_for_overwrite(cd.masks, cd.changed.size());
            std::array<std::size_t, max_fields_per_component> per_field{};
            if (nfields > 1 && cd.changed.size() * nfields > in.remaining()) {
                return where("truncated change masks");
            }
            if (nfields == 1) {
                std::fill(cd.masks.begin(), cd.masks.end(), 1U);
                per_field[0] = cd.changed.size();
            } else if (nfields <= 4) {
                // Up to four fields: a mask is one nibble, counted with one table add into 16-bit lanes,
                // flushed every 0xFFFF masks (mask_counter without its loop over nibbles).
                auto at = in.cursor();
                auto* masks = cd.masks.data();
                const auto n = cd.masks.size();
                std::uint32_t empty = 0;
                for (std::size_t begin = 0; begin < n; begin += 0xFFFFU) {
                    const auto end = std::min<std::size_t>(n, begin + 0xFFFFU);
                    std::uint64_t lanes = 0;
                    for (std::size_t i = begin; i < end; ++i) {
                        const auto mask = static_cast<std::uint32_t>(bit_reader::get_known(at, nfields));
                        masks[i] = mask;
                        empty |= mask == 0 ? 1U : 0U;
                        lanes += spread_table[mask];
                    }
                    for (unsigned b = 0; b < 4; ++b) {
                        per_field[b] += (lanes >> (16 * b)) & 0xFFFFU;
                    }
                }
                in.seek(at);
                if (empty != 0) {
                    return where("a changed entity with an empty change mask");
                }
            } else {
                mask_counter counter{nfields};
                auto at = in.cursor();
                for (auto& mask : cd.masks) {
                    mask =
                        static_cast<std::uint32_t>(bit_reader::get_known(at, nfields)); // the bits are there
                    counter.add(mask);
                }
                in.seek(at);
                if (counter.any_empty()) {
                    return where("a changed entity with an empty change mask");
                }
                counter.add_to(per_field);
            }
            for (std::size_t f = 0; f < fields.size(); ++f) {
                if (per_field[f] == 0) {
                    cd.residuals[f].clear();
                    continue;
                }
                if (per_field[f] > in.remaining()) {
                    return where("truncated differences");
                }
                const auto k = static_cast<unsigned>(in.get(k_bits));
                auto& residuals = cd.residuals[f];
                resize_for_overwrite(residuals, per_field[f]);
                const auto mask = fields[f].mask();
                eg_order_check order{k};
                std::uint64_t widest = 0;
                auto at = in.cursor();
                for (auto& r : residuals) {
                    const auto n = in.get_eg(at, k); // zigzag(r) - 1
                    widest = std::max(widest, n);
                    order.add(n);
                    r = static_cast<std::uint32_t>(static_cast<std::uint64_t>(unzigzag(n + 1))) & mask;
                }
                in.seek(at);
                if (widest >= mask) {
                    return where("difference out of range in field '" + fields[f].name + "'");
                }
                if (in.ok() && !order.canonical(residuals.size())) {
                    return where("differences of field '" + fields[f].name + "' not in their canonical code");
                }
            }
        }
        if (!in.ok()) {
            return where("truncated");
        }
        if (cd.empty()) {
            return where("flagged as changed but empty");
        }
        if (full_state && (!cd.removed.empty() || !cd.changed.empty())) {
            return where("a full state removes or changes components");
        }
    }
    if (!in.ok()) {
        return malformed("truncated columns");
    }
    if (!in.at_padded_end()) {
        return malformed("trailing bytes or non-zero padding after the columns");
    }
    return {};
}

} // namespace

result<void> read_delta(const schema_layout& layout, std::string_view columns, bool full_state, delta& out,
                        const delta_limits& limits) {
    out.components.resize(layout.size());
    if (columns.empty()) {
        out.reset(layout);
        return {};
    }
    auto read = read_delta_into(layout, columns, full_state, out, limits);
    if (!read) {
        out.reset(layout); // nothing half-read is left behind
    }
    return read;
}

} // namespace ecsnet::proto
