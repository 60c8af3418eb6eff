#include "ecsnet/proto/delta.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

#include "cpu_clones.hpp"
#include "ecsnet/proto/bit_lists.hpp"
#include "ecsnet/proto/eg_order.hpp"

namespace ecsnet::proto {

void component_delta::clear(std::size_t fields) {
    removed.clear();
    added_are_created = false;
    added.clear();
    added_values.resize(fields);
    for (auto& v : added_values) {
        v.clear();
    }
    changed.clear();
    masks.clear();
    residuals.resize(fields);
    for (auto& v : residuals) {
        v.clear();
    }
}

void delta::reset(const schema_layout& layout) {
    destroyed.clear();
    created.clear();
    created_generations.clear();
    components.resize(layout.size());
    for (std::size_t c = 0; c < layout.size(); ++c) {
        components[c].clear(layout[c].fields.size());
    }
}

bool delta::empty() const noexcept {
    return destroyed.empty() && created.empty() &&
           std::all_of(components.begin(), components.end(), [](const auto& c) { return c.empty(); });
}

std::uint32_t extrapolate(std::uint32_t base, std::uint32_t second, unsigned bits, extrapolation x) noexcept {
    const auto mask = bit_mask(bits);
    const std::int64_t d = sign_extend((base - second) & mask, bits);
    std::int64_t step = d * static_cast<std::int64_t>(x.ahead);
    if (x.span > 1) {
        // round(step / span), halves up: floor((2 step + span) / (2 span)).
        const std::int64_t num = 2 * step + x.span;
        const std::int64_t den = 2 * static_cast<std::int64_t>(x.span);
        step = num >= 0 ? num / den : -((-num + den - 1) / den);
    }
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(step)) &
           mask;
}

// ---- the bit layout (docs/protocol.md, "Snapshot columns") ---------------------------------------------

namespace {

constexpr unsigned k_bits = eg_order_bits;
static_assert(max_eg_order == (1U << k_bits) - 1, "the order field holds every order");
constexpr unsigned w_bits = value_width_bits;

void write_eg_column(bit_writer& out, const std::vector<std::uint32_t>& values) {
    eg_order_finder order;
    for (const auto v : values) {
        order.add(v);
    }
    const unsigned k = order.best();
    out.put(k, k_bits);
    auto at = out.cursor();
    for (const auto v : values) {
        out.put_eg(at, v, k);
    }
    out.seek(at);
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
            eg_order_finder order;
            scratch.resize(residuals.size());
            for (std::size_t i = 0; i < residuals.size(); ++i) {
                scratch[i] = static_cast<std::uint32_t>(zigzag(sign_extend(residuals[i], bits)) - 1);
                order.add(scratch[i]);
            }
            const unsigned k = order.best();
            out.put(k, k_bits);
            auto at = out.cursor();
            for (const auto z : scratch) {
                out.put_eg(at, z, k);
            }
            out.seek(at);
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

// ---- alignment -----------------------------------------------------------------------------------------

namespace {

constexpr auto no_second = aligned_run::no_second;
constexpr std::uint32_t no_bound = 0xFFFFFFFFU;

template<typename F>
void with_values(const field_column& column, F&& f) {
    column.visit([&](const auto& values) { f(values.data()); });
}

// Advances `at` in a sorted list to the first element >= id; true if it equals id.
template<typename List>
inline bool seek(const List& list, std::size_t& at, std::uint32_t id) noexcept {
    while (at < list.size() && list[at] < id) {
        ++at;
    }
    return at < list.size() && list[at] == id;
}

// Length of the common prefix of a[0..n) and b[0..n), all below `bound` (a is sorted).
inline std::size_t common_prefix(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                 std::uint32_t bound) noexcept {
    std::size_t k = 0;
    while (k + 16 <= n && a[k + 15] < bound && std::memcmp(a + k, b + k, 16 * sizeof(std::uint32_t)) == 0) {
        k += 16;
    }
    while (k < n && a[k] == b[k] && a[k] < bound) {
        ++k;
    }
    return k;
}

// Aligns a target id column with a base one (both sorted): equal ids not in `breaks` (new occupants) form
// runs; the other target positions go to target_only, the other base positions to base_only.
template<typename Breaks>
void align(const std::vector<std::uint32_t>& tt, const std::vector<std::uint32_t>& tb, const Breaks& breaks,
           std::vector<aligned_run>& runs, std::vector<std::uint32_t>& target_only,
           std::vector<std::uint32_t>& base_only) {
    runs.clear();
    target_only.clear();
    base_only.clear();
    std::size_t i = 0;
    std::size_t j = 0;
    std::size_t br = 0;
    while (i < tt.size() && j < tb.size()) {
        const auto a = tt[i];
        const auto b = tb[j];
        if (a == b) {
            if (seek(breaks, br, a)) {
                target_only.push_back(static_cast<std::uint32_t>(i++));
                base_only.push_back(static_cast<std::uint32_t>(j++));
                continue;
            }
            const auto bound = br < breaks.size() ? breaks[br] : no_bound;
            const auto n =
                common_prefix(tt.data() + i, tb.data() + j, std::min(tt.size() - i, tb.size() - j), bound);
            runs.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), no_second,
                            static_cast<std::uint32_t>(n)});
            i += n;
            j += n;
        } else if (a < b) {
            target_only.push_back(static_cast<std::uint32_t>(i++));
        } else {
            base_only.push_back(static_cast<std::uint32_t>(j++));
        }
    }
    for (; i < tt.size(); ++i) {
        target_only.push_back(static_cast<std::uint32_t>(i));
    }
    for (; j < tb.size(); ++j) {
        base_only.push_back(static_cast<std::uint32_t>(j));
    }
}

// Splits runs so that each one is either wholly present in the second baseline's column `tp` (same ids,
// none in `fresh`: same occupants) or wholly absent from it.
void split_by_second(const std::vector<std::uint32_t>& tt, const std::vector<aligned_run>& in,
                     const std::vector<std::uint32_t>& tp, const std::vector<std::uint32_t>& fresh,
                     std::vector<aligned_run>& out) {
    out.clear();
    std::size_t k = 0;
    std::size_t fr = 0;
    const auto matched = [&](std::uint32_t id) {
        while (k < tp.size() && tp[k] < id) {
            ++k;
        }
        const bool is_fresh = seek(fresh, fr, id);
        return k < tp.size() && tp[k] == id && !is_fresh;
    };
    for (const auto& r : in) {
        std::uint32_t pos = 0;
        while (pos < r.length) {
            const auto start = pos;
            if (matched(tt[r.t + pos])) {
                const auto p_start = static_cast<std::uint32_t>(k);
                const auto bound = fr < fresh.size() ? fresh[fr] : no_bound;
                const auto n = common_prefix(tt.data() + r.t + pos, tp.data() + k,
                                             std::min<std::size_t>(r.length - pos, tp.size() - k), bound);
                pos += static_cast<std::uint32_t>(n);
                k += n;
                out.push_back({r.t + start, r.b + start, p_start, pos - start});
            } else {
                do {
                    ++pos;
                } while (pos < r.length && !matched(tt[r.t + pos]));
                out.push_back({r.t + start, r.b + start, no_second, pos - start});
            }
        }
    }
}

// Composes runs t -> b (`outer`) with runs b -> p (`inner`: their t side is positions in the middle state,
// their b side positions in the third): the outer runs, split where inner ones begin and end, with p set
// inside inner runs and no_second outside. What split_by_second finds by comparing id lists, in O(runs)
// when the middle state kept its continuing runs (state.hpp).
void compose_runs(const std::vector<aligned_run>& outer, const std::vector<aligned_run>& inner,
                  std::vector<aligned_run>& out) {
    out.clear();
    std::size_t j = 0;
    for (const auto& r : outer) {
        const std::uint32_t last = r.b + r.length;
        std::uint32_t b = r.b;
        while (b < last) {
            while (j < inner.size() && inner[j].t + inner[j].length <= b) {
                ++j;
            }
            std::uint32_t end = last;
            std::uint32_t p = no_second;
            if (j < inner.size() && inner[j].t <= b) {
                end = std::min(last, inner[j].t + inner[j].length);
                p = inner[j].b + (b - inner[j].t);
            } else if (j < inner.size()) {
                end = std::min(last, inner[j].t);
            }
            out.push_back({r.t + (b - r.b), b, p, end - b});
            b = end;
        }
    }
}

// The positions in [0, n) that no run covers, on the target side (t) or the base side (b): the created or
// destroyed entries of an alignment. Runs are in increasing order on both sides.
void outside_runs(const std::vector<aligned_run>& runs, std::size_t n, bool target_side,
                  std::vector<std::uint32_t>& out) {
    out.clear();
    std::uint32_t at = 0;
    for (const auto& r : runs) {
        const auto first = target_side ? r.t : r.b;
        for (; at < first; ++at) {
            out.push_back(at);
        }
        at = first + r.length;
    }
    for (; at < n; ++at) {
        out.push_back(at);
    }
}

// Whole-column loops. Each is compiled once per storage type (a column stores 1, 2 or 4 bytes a value,
// state.hpp) as an overload with x86-64-v3 copies (cpu_clones.hpp: 8 lanes instead of 4 where the CPU has
// AVX2), so that a caller templated on the storage type picks its copy by overload resolution.

// out = (2 base - second) mod 2^bits over a run: the usual extrapolation (one tick ahead of a one-tick
// span), over whole columns every tick.
template<typename T>
inline void doubled_loop(const T* __restrict base, const T* __restrict second, T* __restrict out,
                         std::uint32_t n, std::uint32_t mask) {
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t b = base[k];
        out[k] = static_cast<T>((b + b - std::uint32_t{second[k]}) & mask);
    }
}

// out = (base + (base - second) x ahead) mod 2^bits over a run: extrapolation `ahead` ticks past a one-tick
// span (a client whose acks lag), over whole columns.
template<typename T>
inline void extrapolated_loop(const T* __restrict base, const T* __restrict second, T* __restrict out,
                              std::uint32_t n, std::uint32_t mask, std::uint32_t ahead) {
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t b = base[k];
        out[k] = static_cast<T>((b + (b - std::uint32_t{second[k]}) * ahead) & mask);
    }
}

// flag[k] = (first ? 0 : flag[k]) | (a[k] != b[k]) over a run: one field of a comparison of rows, the
// fields in turn.
template<typename T>
inline void difference_loop(const T* __restrict a, const T* __restrict b, std::uint32_t* __restrict flag,
                            std::uint32_t n, bool first) {
    if (first) {
        for (std::uint32_t k = 0; k < n; ++k) {
            flag[k] = a[k] != b[k] ? 1U : 0U;
        }
    } else {
        for (std::uint32_t k = 0; k < n; ++k) {
            flag[k] |= a[k] != b[k] ? 1U : 0U;
        }
    }
}

ECSNET_CPU_CLONES void doubled_run(const std::uint32_t* base, const std::uint32_t* second, std::uint32_t* out,
                                   std::uint32_t n, std::uint32_t mask) {
    doubled_loop(base, second, out, n, mask);
}
ECSNET_CPU_CLONES void doubled_run(const std::uint16_t* base, const std::uint16_t* second, std::uint16_t* out,
                                   std::uint32_t n, std::uint32_t mask) {
    doubled_loop(base, second, out, n, mask);
}
ECSNET_CPU_CLONES void doubled_run(const std::uint8_t* base, const std::uint8_t* second, std::uint8_t* out,
                                   std::uint32_t n, std::uint32_t mask) {
    doubled_loop(base, second, out, n, mask);
}
ECSNET_CPU_CLONES void extrapolated_run(const std::uint32_t* base, const std::uint32_t* second,
                                        std::uint32_t* out, std::uint32_t n, std::uint32_t mask,
                                        std::uint32_t ahead) {
    extrapolated_loop(base, second, out, n, mask, ahead);
}
ECSNET_CPU_CLONES void extrapolated_run(const std::uint16_t* base, const std::uint16_t* second,
                                        std::uint16_t* out, std::uint32_t n, std::uint32_t mask,
                                        std::uint32_t ahead) {
    extrapolated_loop(base, second, out, n, mask, ahead);
}
ECSNET_CPU_CLONES void extrapolated_run(const std::uint8_t* base, const std::uint8_t* second,
                                        std::uint8_t* out, std::uint32_t n, std::uint32_t mask,
                                        std::uint32_t ahead) {
    extrapolated_loop(base, second, out, n, mask, ahead);
}
ECSNET_CPU_CLONES void mark_differences(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* flag,
                                        std::uint32_t n, bool first) {
    difference_loop(a, b, flag, n, first);
}
ECSNET_CPU_CLONES void mark_differences(const std::uint16_t* a, const std::uint16_t* b, std::uint32_t* flag,
                                        std::uint32_t n, bool first) {
    difference_loop(a, b, flag, n, first);
}
ECSNET_CPU_CLONES void mark_differences(const std::uint8_t* a, const std::uint8_t* b, std::uint32_t* flag,
                                        std::uint32_t n, bool first) {
    difference_loop(a, b, flag, n, first);
}

// The reference of every entry of a run, for one field.
template<typename T>
inline void reference_run(const T* __restrict base, const T* __restrict second, T* __restrict out,
                          std::uint32_t n, bool extrapolated, extrapolation x, unsigned bits) {
    const auto mask = bit_mask(bits);
    if (!extrapolated) {
        std::memcpy(out, base, n * sizeof(T));
    } else if (x.span == 1 && x.ahead == 1) { // the usual case: 2b - p, no multiplication
        doubled_run(base, second, out, n, mask);
    } else if (x.span == 1) {
        extrapolated_run(base, second, out, n, mask, x.ahead);
    } else {
        for (std::uint32_t k = 0; k < n; ++k) {
            out[k] = static_cast<T>(extrapolate(base[k], second[k], bits, x));
        }
    }
}

// residual[k] = (target - reference) mod 2^bits over a run; masks[k] gets bit `bit` where it is not 0.
template<typename T>
inline void residual_run(const T* __restrict target, const T* __restrict base, const T* __restrict second,
                         std::uint32_t* __restrict residual, std::uint32_t* __restrict masks, std::uint32_t n,
                         bool extrapolated, extrapolation x, unsigned bits, unsigned bit, bool first) {
    const auto mask = bit_mask(bits);
    const auto keep = first ? 0U : 0xFFFFFFFFU;
    if (!extrapolated) {
        for (std::uint32_t k = 0; k < n; ++k) {
            const auto r = (std::uint32_t{target[k]} - std::uint32_t{base[k]}) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    } else if (x.span == 1 && x.ahead == 1) {
        for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint32_t b = base[k];
            const auto r = (std::uint32_t{target[k]} - (b + b - std::uint32_t{second[k]})) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    } else if (x.span == 1) {
        const std::uint32_t a = x.ahead;
        for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint32_t b = base[k];
            const auto r = (std::uint32_t{target[k]} - (b + (b - std::uint32_t{second[k]}) * a)) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    } else {
        for (std::uint32_t k = 0; k < n; ++k) {
            const auto r = (std::uint32_t{target[k]} - extrapolate(base[k], second[k], bits, x)) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    }
}

// Maps increasing baseline positions to new-column positions through the runs (sorted on both sides);
// false if one is in none (unless drop_missing: then it is left out).
template<typename Out>
bool map_through_runs(const std::vector<aligned_run>& runs, const std::vector<std::uint32_t>& base_positions,
                      Out& out, bool drop_missing) {
    out.resize(base_positions.size());
    auto* to = out.data();
    std::size_t count = 0;
    const auto* pos = base_positions.data();
    const auto* const end = pos + base_positions.size();
    for (const auto& r : runs) {
        if (pos == end) {
            break;
        }
        if (*pos < r.b) {
            if (!drop_missing) {
                return false;
            }
            while (pos != end && *pos < r.b) {
                ++pos;
            }
        }
        const std::uint32_t last = r.b + r.length;
        const std::uint32_t shift = r.t - r.b; // modulo 2^32
        for (; pos != end && *pos < last; ++pos) {
            to[count++] = *pos + shift;
        }
    }
    if (pos != end && !drop_missing) {
        return false;
    }
    out.resize(count);
    return true;
}

// Cuts sorted target positions (all inside runs) into one segment per run they fall in: within a segment,
// a position's baseline and second-baseline positions are the position plus a constant.
void segment_candidates(const std::vector<aligned_run>& runs, const detail::column_vector<std::uint32_t>& at,
                        std::vector<candidate_segment>& out) {
    out.clear();
    const auto n = static_cast<std::uint32_t>(at.size());
    std::uint32_t k = 0;
    for (const auto& r : runs) {
        if (k == n) {
            break;
        }
        const std::uint32_t last = r.t + r.length;
        if (at[k] >= last) {
            continue;
        }
        const auto begin = k;
        while (k < n && at[k] < last) {
            ++k;
        }
        out.push_back({begin, k, r.b - r.t, r.p - r.t, r.p != no_second});
    }
}

// For one field over the candidate positions `at` (cut in segments): the residual of each, the non-zero
// ones written in order to `kept` (how many is returned), and bit `bit` of masks[k] set where it is not 0
// (the masks are started by field 0).
template<typename T>
std::size_t candidate_residuals(const T* target, const T* base, const T* second, const std::uint32_t* at,
                                const std::vector<candidate_segment>& segments, extrapolation x,
                                unsigned bits, unsigned bit, std::uint32_t* __restrict kept,
                                std::uint32_t* __restrict masks) {
    const auto mask = bit_mask(bits);
    std::size_t count = 0;
    const auto keep = [&](std::uint32_t k, std::uint32_t r) {
        const std::uint32_t nonzero = r != 0 ? 1U : 0U;
        kept[count] = r;
        count += nonzero;
        masks[k] = (bit == 0 ? 0U : masks[k]) | (nonzero << bit);
    };
    for (const auto& seg : segments) {
        if (second == nullptr || !seg.second) {
            for (auto k = seg.begin; k < seg.end; ++k) {
                const auto pos = at[k];
                keep(k, (std::uint32_t{target[pos]} - std::uint32_t{base[pos + seg.to_b]}) & mask);
            }
        } else if (x.ahead == 1 && x.span == 1) {
            for (auto k = seg.begin; k < seg.end; ++k) {
                const auto pos = at[k];
                const std::uint32_t b = base[pos + seg.to_b];
                keep(k,
                     (std::uint32_t{target[pos]} - (b + b - std::uint32_t{second[pos + seg.to_p]})) & mask);
            }
        } else {
            for (auto k = seg.begin; k < seg.end; ++k) {
                const auto pos = at[k];
                const auto reference = extrapolate(base[pos + seg.to_b], second[pos + seg.to_p], bits, x);
                keep(k, (std::uint32_t{target[pos]} - reference) & mask);
            }
        }
    }
    return count;
}

bool has_linear(const std::vector<field_info>& fields) noexcept {
    return std::any_of(fields.begin(), fields.end(),
                       [](const auto& f) { return f.predict == prediction::linear; });
}

// Appends to `out` the positions k in [first, first + n) where flags[k - first] != 0, in order.
ECSNET_CPU_CLONES std::size_t compact_nonzero(const std::uint32_t* flags, std::uint32_t first,
                                              std::uint32_t n, std::uint32_t* out, std::size_t count) {
    // 32 flags become the bits of a word (vector compares where the CPU has them), then each set bit is
    // one store: the cost follows the entries kept, not the entries scanned.
    std::uint32_t k = 0;
    for (; k + 32 <= n; k += 32) {
        std::uint32_t bits = 0;
        for (std::uint32_t j = 0; j < 32; ++j) {
            bits |= (flags[k + j] != 0 ? 1U : 0U) << j;
        }
        while (bits != 0) {
            out[count++] = first + k + static_cast<std::uint32_t>(std::countr_zero(bits));
            bits &= bits - 1;
        }
    }
    for (; k < n; ++k) {
        out[count] = first + k;
        count += flags[k] != 0 ? 1U : 0U;
    }
    return count;
}

} // namespace

void align_ids(const std::vector<std::uint32_t>& target, const std::vector<std::uint32_t>& base,
               const std::vector<std::uint32_t>& breaks, std::vector<aligned_run>& runs,
               std::vector<std::uint32_t>& target_only, std::vector<std::uint32_t>& base_only) {
    align(target, base, breaks, runs, target_only, base_only);
}

void changed_positions(const std::vector<field_column>& now, const std::vector<field_column>& before,
                       const std::vector<aligned_run>& runs, detail::column_vector<std::uint32_t>& flags,
                       std::vector<std::uint32_t>& out) {
    std::size_t n = 0;
    for (const auto& r : runs) {
        n = std::max<std::size_t>(n, r.t + r.length);
    }
    flags.resize(n);
    for (std::size_t f = 0; f < now.size(); ++f) {
        now[f].visit([&](const auto& values) {
            using T = typename std::decay_t<decltype(values)>::value_type;
            const T* old_values = static_cast<const T*>(before[f].raw());
            for (const auto& r : runs) {
                mark_differences(values.data() + r.t, old_values + r.b, flags.data() + r.t, r.length, f == 0);
            }
        });
    }
    // Compact into scratch, then copy out (keeping out's capacity: a caller that keeps the list and wants
    // no spare capacity empties and shrinks it first).
    thread_local detail::column_vector<std::uint32_t> positions;
    positions.resize(n + 8);
    std::size_t count = 0;
    for (const auto& r : runs) {
        count = compact_nonzero(flags.data() + r.t, r.t, r.length, positions.data(), count);
    }
    out.assign(positions.begin(), positions.begin() + static_cast<std::ptrdiff_t>(count));
}

// ---- encoding (server) --------------------------------------------------------------------------------

void make_delta(const schema_layout& layout, const replicated_state& target, const replicated_state* baseline,
                const replicated_state* second, extrapolation x, const delta_identity& identity, delta& out,
                delta_workspace& work) {
    out.reset(layout);
    const auto& et = target.flat(work.target_entities);
    const auto created_set = identity.created;
    work.fresh.assign(identity.fresh_since_second.begin(), identity.fresh_since_second.end());

    if (baseline == nullptr) {
        out.created = et;
        out.created_generations.assign(identity.generations.begin(), identity.generations.end());
        for (std::size_t c = 0; c < layout.size(); ++c) {
            auto& cd = out.components[c];
            const auto& fields = layout[c].fields;
            if (target.components[c].ids_are_entities) {
                cd.added = et;
            } else {
                flatten(target.ids(c), cd.added);
            }
            cd.added_are_created = !cd.added.empty() && cd.added == out.created;
            for (std::size_t f = 0; f < fields.size(); ++f) {
                auto& values = cd.added_values[f];
                values.resize(cd.added.size());
                with_values(target.components[c].fields[f],
                            [&](const auto* v) { std::copy(v, v + values.size(), values.begin()); });
            }
        }
        return;
    }

    // Entities: runs of continuing ones; the rest are created (target side) or destroyed (base side).
    const auto& eb = baseline->flat(work.base_entities);
    auto& entity_runs = work.entity_runs;
    if (target.written_since && *target.written_since == baseline->tick) {
        // The target kept its continuing entities (history.cpp, record_changes): the same alignment.
        entity_runs = target.continuing;
        outside_runs(entity_runs, et.size(), true, work.created_positions);
        outside_runs(entity_runs, eb.size(), false, out.destroyed);
    } else {
        align(et, eb, created_set, entity_runs, work.created_positions, out.destroyed);
    }
    for (const auto pos : work.created_positions) {
        out.created.push_back(et[pos]);
        out.created_generations.push_back(identity.generations[pos]);
    }
    auto& destroyed_ids = work.destroyed_ids;
    destroyed_ids.clear();
    for (const auto pos : out.destroyed) {
        destroyed_ids.push_back(eb[pos]);
    }
    auto& entity_second_runs = work.entity_second_runs;
    const std::vector<std::uint32_t>* ep = nullptr;
    if (second != nullptr) {
        if (baseline->written_since && *baseline->written_since == second->tick) {
            compose_runs(entity_runs, baseline->continuing, entity_second_runs);
        } else {
            ep = &second->flat(work.second_entities);
            split_by_second(et, entity_runs, *ep, work.fresh, entity_second_runs);
        }
    }

    work.residuals.resize(max_fields_per_component);
    for (std::size_t comp = 0; comp < layout.size(); ++comp) {
        auto& cd = out.components[comp];
        const auto& fields = layout[comp].fields;
        const auto& tcols = target.components[comp].fields;
        const auto& bcols = baseline->components[comp].fields;
        const bool predict = second != nullptr && has_linear(fields);
        const bool aliased = target.components[comp].ids_are_entities &&
                             baseline->components[comp].ids_are_entities &&
                             (!predict || second->components[comp].ids_are_entities);
        const std::vector<std::uint32_t>* ids = &et;
        const std::vector<aligned_run>* runs = nullptr;
        const std::vector<std::uint32_t>* added_at = nullptr;
        if (aliased) {
            runs = predict ? &entity_second_runs : &entity_runs;
            cd.added = out.created; // an aliased column follows the entities: nothing removed
            added_at = &work.created_positions;
        } else {
            auto& tt = work.target_ids;
            auto& tb = work.base_ids;
            if (target.components[comp].ids_are_entities) {
                tt = et;
            } else {
                flatten(target.ids(comp), tt);
            }
            if (baseline->components[comp].ids_are_entities) {
                tb = eb;
            } else {
                flatten(baseline->ids(comp), tb);
            }
            ids = &tt;
            align(tt, tb, created_set, work.runs, work.target_only, work.base_only);
            std::size_t d = 0;
            for (const auto pos : work.base_only) {
                if (!seek(destroyed_ids, d, tb[pos])) {
                    cd.removed.push_back(pos);
                }
            }
            for (const auto pos : work.target_only) {
                cd.added.push_back(tt[pos]);
            }
            added_at = &work.target_only;
            runs = &work.runs;
            if (predict) {
                auto& tp = work.second_ids;
                if (second->components[comp].ids_are_entities) {
                    if (ep == nullptr) {
                        ep = &second->flat(work.second_entities);
                    }
                    tp = *ep;
                } else {
                    flatten(second->ids(comp), tp);
                }
                split_by_second(tt, work.runs, tp, work.fresh, work.second_runs);
                runs = &work.second_runs;
            }
        }
        // Added entries: their values, whole.
        if (!cd.added.empty()) {
            for (std::size_t f = 0; f < fields.size(); ++f) {
                auto& values = cd.added_values[f];
                values.resize(added_at->size());
                with_values(tcols[f], [&](const auto* v) {
                    for (std::size_t k = 0; k < added_at->size(); ++k) {
                        values[k] = v[(*added_at)[k]];
                    }
                });
            }
        }
        cd.added_are_created = !cd.added.empty() && cd.added == out.created;

        // Continuing entries. When the target lists what changed since the baseline, and (for an
        // extrapolated component) the baseline what changed since the second baseline, only those entries
        // can differ from their reference: visit them alone. Otherwise compare every entry.
        const bool target_knows = target.written_since && *target.written_since == baseline->tick;
        const bool base_knows =
            !predict || (baseline->written_since && *baseline->written_since == second->tick);
        if (target_knows && base_knows) {
            auto& candidates = work.candidates;
            const auto& now_changed = target.written[comp];
            if (predict) {
                map_through_runs(*runs, baseline->written[comp], work.changed_t, true);
                candidates.resize(now_changed.size() + work.changed_t.size());
                candidates.resize(static_cast<std::size_t>(
                    std::set_union(now_changed.begin(), now_changed.end(), work.changed_t.begin(),
                                   work.changed_t.end(), candidates.begin()) -
                    candidates.begin()));
            } else {
                candidates.assign(now_changed.begin(), now_changed.end());
            }
            const auto count = candidates.size();
            auto& segments = work.segments;
            segment_candidates(*runs, candidates, segments);
            // Residuals, field by field, with typed loads; each field's non-zero ones are kept in order (a
            // mask bit is set exactly where the residual is not 0).
            if (work.masks.size() < count) {
                work.masks.resize(count);
            }
            // Computed in scratch memory (not zeroed first), then copied out at their final sizes.
            for (std::size_t f = 0; f < fields.size(); ++f) {
                auto& residuals = work.residuals[f];
                if (residuals.size() < count) {
                    residuals.resize(count);
                }
                const bool linear = predict && fields[f].predict == prediction::linear;
                std::size_t kept = 0;
                tcols[f].visit([&](const auto& tv) {
                    using T = typename std::decay_t<decltype(tv)>::value_type;
                    const T* pv =
                        linear ? static_cast<const T*>(second->components[comp].fields[f].raw()) : nullptr;
                    kept = candidate_residuals<T>(
                        tv.data(), static_cast<const T*>(bcols[f].raw()), pv, candidates.data(), segments, x,
                        fields[f].bits, static_cast<unsigned>(f), residuals.data(), work.masks.data());
                });
                cd.residuals[f].assign(residuals.begin(),
                                       residuals.begin() + static_cast<std::ptrdiff_t>(kept));
            }
            // The changed entries, by baseline position, with their masks (compacted in place: next <= k).
            auto& changed_b = work.written_b;
            if (changed_b.size() < count) {
                changed_b.resize(count);
            }
            auto* masks = work.masks.data();
            std::size_t next = 0;
            for (const auto& seg : segments) {
                for (auto k = seg.begin; k < seg.end; ++k) {
                    const auto mask = masks[k];
                    changed_b[next] = candidates[k] + seg.to_b;
                    masks[next] = mask;
                    next += mask != 0 ? 1U : 0U;
                }
            }
            const auto kept = static_cast<std::ptrdiff_t>(next);
            cd.changed.assign(changed_b.begin(), changed_b.begin() + kept);
            cd.masks.assign(work.masks.begin(), work.masks.begin() + kept);
            continue;
        }
        const auto n = ids->size();
        if (work.masks.size() < n) {
            work.masks.resize(n);
        }
        for (std::size_t f = 0; f < fields.size(); ++f) {
            auto& residual = work.residuals[f];
            if (residual.size() < n) {
                residual.resize(n);
            }
            const bool linear = fields[f].predict == prediction::linear && predict;
            tcols[f].visit([&](const auto& tv) {
                using T = typename std::decay_t<decltype(tv)>::value_type;
                const T* bv = static_cast<const T*>(bcols[f].raw());
                const T* pv =
                    linear ? static_cast<const T*>(second->components[comp].fields[f].raw()) : nullptr;
                for (const auto& r : *runs) {
                    const bool extrapolated = linear && r.p != no_second;
                    residual_run<T>(tv.data() + r.t, bv + r.b, extrapolated ? pv + r.p : nullptr,
                                    residual.data() + r.t, work.masks.data() + r.t, r.length, extrapolated, x,
                                    fields[f].bits, static_cast<unsigned>(f), f == 0);
                }
            });
        }
        // The changed ones, in order (runs are in target order), named by their baseline position.
        auto& changed_at = work.positions;
        changed_at.resize(n + 8);
        std::size_t count = 0;
        for (const auto& r : *runs) {
            count = compact_nonzero(work.masks.data() + r.t, r.t, r.length, changed_at.data(), count);
        }
        changed_at.resize(count);
        cd.changed.resize(count);
        cd.masks.resize(count);
        std::size_t r = 0;
        for (std::size_t k = 0; k < count; ++k) {
            const auto pos = changed_at[k];
            while ((*runs)[r].t + (*runs)[r].length <= pos) {
                ++r;
            }
            cd.changed[k] = (*runs)[r].b + (pos - (*runs)[r].t);
            const auto mask = work.masks[pos];
            cd.masks[k] = mask;
            for (auto bits = mask; bits != 0; bits &= bits - 1) {
                const auto f = static_cast<std::size_t>(std::countr_zero(bits));
                cd.residuals[f].push_back(work.residuals[f][pos]);
            }
        }
    }
}

// ---- applying (client) --------------------------------------------------------------------------------

namespace {

result<void> inconsistent(std::string what) {
    return make_error(errc::inconsistent_delta, std::move(what));
}

void ensure_weights(std::vector<std::uint64_t>& weights, std::uint32_t max_index) {
    if (weights.size() <= max_index) {
        const auto first = weights.size();
        weights.resize(std::size_t{max_index} + 1);
        for (auto i = first; i < weights.size(); ++i) {
            weights[i] = entity_weight(static_cast<std::uint32_t>(i));
        }
    }
}

// acc[k] += value[at[k]] * weight, for one field.
template<typename T>
void accumulate(std::uint64_t* __restrict acc, const T* values, const std::uint32_t* at, std::size_t n,
                std::uint64_t weight) {
    for (std::size_t k = 0; k < n; ++k) {
        acc[k] += std::uint64_t{values[at[k]]} * weight;
    }
}

// acc[k] += (now[t[k]] - before[b[k]]) * weight, for one field (modulo 2^64).
template<typename T>
void accumulate_difference(std::uint64_t* __restrict acc, const T* now, const std::uint32_t* t,
                           const T* before, const std::uint32_t* b, std::size_t n, std::uint64_t weight) {
    for (std::size_t k = 0; k < n; ++k) {
        acc[k] += (std::uint64_t{now[t[k]]} - std::uint64_t{before[b[k]]}) * weight;
    }
}

} // namespace

result<void> apply_delta(const schema_layout& layout, const replicated_state* baseline,
                         const replicated_state* second, extrapolation x, const delta& d,
                         replicated_state& out, delta_workspace& work, const checksum_weights& weights,
                         const delta_limits& limits, std::span<const candidate_kernel> kernels) {
    out.reset(layout);
    auto& effects = work.effects;
    effects.destroyed = d.destroyed;
    effects.created.clear();
    effects.components.resize(layout.size());
    for (auto& e : effects.components) {
        e.written.clear();
        e.added.clear();
        e.removed.clear();
    }
    auto& et = work.target_entities;
    et.clear();
    static const std::vector<std::uint32_t> none;
    const auto& eb = baseline != nullptr ? baseline->flat(work.base_entities) : none;
    std::uint64_t sum = baseline != nullptr ? baseline->checksum : 0;
    auto& entity_runs = work.entity_runs;
    entity_runs.clear();

    // 1. Entities: the baseline's survivors (in runs) and the created ones, in id order.
    if (baseline == nullptr) {
        if (!d.destroyed.empty()) {
            return inconsistent("a full state destroys entities");
        }
        et = d.created;
        out.generations = d.created_generations;
        for (std::uint32_t k = 0; k < et.size(); ++k) {
            effects.created.push_back(k);
        }
    } else {
        if (baseline->generations.size() != eb.size()) {
            return inconsistent("baseline without generations");
        }
        if (!d.destroyed.empty() && d.destroyed.back() >= eb.size()) {
            return inconsistent("destroyed position " + std::to_string(d.destroyed.back()) +
                                " beyond the baseline");
        }
        std::size_t i = 0;
        std::size_t dpos = 0;
        std::size_t cpos = 0;
        while (i < eb.size() || cpos < d.created.size()) {
            const auto next_b = i < eb.size() ? eb[i] : no_bound;
            const auto next_c = cpos < d.created.size() ? d.created[cpos] : no_bound;
            if (next_c < next_b) {
                effects.created.push_back(static_cast<std::uint32_t>(et.size()));
                et.push_back(next_c);
                out.generations.push_back(d.created_generations[cpos++]);
                continue;
            }
            if (dpos < d.destroyed.size() && d.destroyed[dpos] == i) {
                if (next_c == next_b && d.created_generations[cpos] == baseline->generations[i]) {
                    return inconsistent("entity " + std::to_string(next_c) + " replaced by itself");
                }
                ++dpos;
                ++i;
                continue; // a created entry with the same id (a new occupant) comes next round
            }
            if (next_c == next_b) {
                return inconsistent("created entity " + std::to_string(next_c) +
                                    " is already in the baseline");
            }
            // A run of survivors up to the next destroyed position or created id.
            auto end = dpos < d.destroyed.size() ? std::size_t{d.destroyed[dpos]} : eb.size();
            if (next_c != no_bound) {
                end = std::min(end,
                               static_cast<std::size_t>(
                                   std::lower_bound(eb.begin() + static_cast<std::ptrdiff_t>(i),
                                                    eb.begin() + static_cast<std::ptrdiff_t>(end), next_c) -
                                   eb.begin()));
            }
            entity_runs.push_back({static_cast<std::uint32_t>(et.size()), static_cast<std::uint32_t>(i),
                                   no_second, static_cast<std::uint32_t>(end - i)});
            et.insert(et.end(), eb.begin() + static_cast<std::ptrdiff_t>(i),
                      eb.begin() + static_cast<std::ptrdiff_t>(end));
            out.generations.insert(out.generations.end(),
                                   baseline->generations.begin() + static_cast<std::ptrdiff_t>(i),
                                   baseline->generations.begin() + static_cast<std::ptrdiff_t>(end));
            i = end;
        }
    }
    if (et.size() > limits.max_entities) {
        return make_error(errc::limit_exceeded, "state of " + std::to_string(et.size()) + " entities");
    }
    out.entities_stale =
        true; // the flat ids (kept below) are the truth; the compact array is built on demand
    ensure_weights(work.weights, std::max(et.empty() ? 0U : et.back(), eb.empty() ? 0U : eb.back()));
    const auto* w = work.weights.data();
    for (const auto pos : effects.created) {
        sum += w[et[pos]] * (weights.entity + std::uint64_t{out.generations[pos]} * weights.generation);
    }
    auto& destroyed_ids = work.destroyed_ids;
    destroyed_ids.clear();
    for (const auto pos : d.destroyed) {
        destroyed_ids.push_back(eb[pos]);
        sum -= w[eb[pos]] * (weights.entity + std::uint64_t{baseline->generations[pos]} * weights.generation);
    }

    // Extrapolation applies to entities whose occupant is the same in both baselines. When the baseline was
    // built from the second one, its continuing runs say which (compose_runs); otherwise the entity lists
    // and generations are compared (`fresh`: the baseline's indices whose occupant is not the second's).
    auto& fresh = work.fresh;
    fresh.clear();
    auto& entity_second_runs = work.entity_second_runs;
    const std::vector<std::uint32_t>* ep = nullptr;
    const auto find_fresh = [&] {
        ep = &second->flat(work.second_entities);
        align(eb, *ep, none, work.runs, work.target_only, work.base_only);
        for (const auto& r : work.runs) {
            const auto* gb = baseline->generations.data() + r.t;
            const auto* gp = second->generations.data() + r.b;
            std::uint32_t k = 0;
            while (k < r.length) {
                const auto block = std::min<std::uint32_t>(64, r.length - k);
                if (std::memcmp(gb + k, gp + k, block * sizeof(std::uint32_t)) != 0) {
                    for (std::uint32_t j = k; j < k + block; ++j) {
                        if (gb[j] != gp[j]) {
                            fresh.push_back(eb[r.t + j]);
                        }
                    }
                }
                k += block;
            }
        }
    };
    if (second != nullptr && baseline != nullptr) {
        if (second->generations.size() != second->entity_count()) {
            return inconsistent("second baseline without generations");
        }
        if (baseline->written_since && *baseline->written_since == second->tick) {
            compose_runs(entity_runs, baseline->continuing, entity_second_runs);
        } else {
            find_fresh();
            split_by_second(et, entity_runs, *ep, fresh, entity_second_runs);
        }
    }

    // 2. Components.
    auto& covered = work.flags;
    bool all_covered = false;
    bool coverage_started = false;
    for (std::size_t comp = 0; comp < layout.size(); ++comp) {
        const auto& cd = d.components[comp];
        const auto& fields = layout[comp].fields;
        auto& eff = effects.components[comp];
        auto& state = out.components[comp];
        const auto& cw = weights.components[comp];
        const bool predict = second != nullptr && baseline != nullptr && has_linear(fields);
        auto& base_gone = work.base_gone;
        base_gone.clear();

        // The new id column: runs of the baseline's column plus the added entries.
        const std::vector<std::uint32_t>* ids = &work.target_ids;
        const std::vector<std::uint32_t>* tb = &none;
        const std::vector<aligned_run>* runs = &work.own_runs;
        const bool follows_entities = baseline == nullptr ? cd.added.size() == et.size() && cd.added == et
                                                          : baseline->components[comp].ids_are_entities &&
                                                                cd.removed.empty() && cd.added == d.created;
        if (follows_entities) {
            ids = &et;
            tb = &eb;
            runs = &entity_runs;
            eff.added = effects.created;
            base_gone = d.destroyed;
        } else {
            auto& tt = work.target_ids;
            auto& own_runs = work.own_runs;
            tt.clear();
            own_runs.clear();
            if (baseline != nullptr) {
                if (baseline->components[comp].ids_are_entities) {
                    tb = &eb;
                } else {
                    flatten(baseline->ids(comp), work.base_ids);
                    tb = &work.base_ids;
                }
            }
            const auto& base = *tb;
            if (!cd.removed.empty() && cd.removed.back() >= base.size()) {
                return inconsistent("component '" + layout[comp].name +
                                    "' removed at a position beyond its column");
            }
            std::size_t i = 0;
            std::size_t a = 0;
            std::size_t dpos = 0;
            std::size_t rm = 0;
            while (i < base.size() || a < cd.added.size()) {
                const auto next_a = a < cd.added.size() ? cd.added[a] : no_bound;
                const auto next_b = i < base.size() ? base[i] : no_bound;
                if (next_a < next_b) {
                    eff.added.push_back(static_cast<std::uint32_t>(tt.size()));
                    tt.push_back(next_a);
                    ++a;
                    continue;
                }
                const bool entity_gone = seek(destroyed_ids, dpos, next_b);
                const bool removed = rm < cd.removed.size() && cd.removed[rm] == i;
                if (entity_gone || removed) {
                    if (entity_gone && removed) {
                        return inconsistent("component removed from a destroyed entity");
                    }
                    if (removed) {
                        if (next_a == next_b) {
                            return inconsistent("component '" + layout[comp].name +
                                                "' removed and added again on entity " +
                                                std::to_string(next_a));
                        }
                        eff.removed.push_back(static_cast<std::uint32_t>(i));
                        ++rm;
                    }
                    base_gone.push_back(static_cast<std::uint32_t>(i++));
                    continue;
                }
                if (next_a == next_b) {
                    return inconsistent("component '" + layout[comp].name + "' added to entity " +
                                        std::to_string(next_a) + " which already has it");
                }
                auto end = rm < cd.removed.size() ? std::size_t{cd.removed[rm]} : base.size();
                auto bound = next_a;
                if (dpos < destroyed_ids.size()) {
                    bound = std::min(bound, destroyed_ids[dpos]);
                }
                if (bound != no_bound) {
                    end = std::min(
                        end, static_cast<std::size_t>(
                                 std::lower_bound(base.begin() + static_cast<std::ptrdiff_t>(i),
                                                  base.begin() + static_cast<std::ptrdiff_t>(end), bound) -
                                 base.begin()));
                }
                own_runs.push_back({static_cast<std::uint32_t>(tt.size()), static_cast<std::uint32_t>(i),
                                    no_second, static_cast<std::uint32_t>(end - i)});
                tt.insert(tt.end(), base.begin() + static_cast<std::ptrdiff_t>(i),
                          base.begin() + static_cast<std::ptrdiff_t>(end));
                i = end;
            }
            // Every entry must belong to an entity of the new state.
            if (!coverage_started) {
                covered.assign(et.size(), 0);
                coverage_started = true;
            }
            std::size_t at = 0;
            for (const auto id : tt) {
                while (at < et.size() && et[at] < id) {
                    ++at;
                }
                if (at == et.size() || et[at] != id) {
                    return inconsistent("component '" + layout[comp].name + "' on entity " +
                                        std::to_string(id) + " which does not exist");
                }
                covered[at] = 1;
            }
        }
        if (predict) {
            const bool second_follows = second->components[comp].ids_are_entities;
            if (follows_entities && second_follows) {
                runs = &entity_second_runs;
            } else {
                if (ep == nullptr) {
                    find_fresh();
                }
                const std::vector<std::uint32_t>* tp = ep;
                if (!second_follows) {
                    flatten(second->ids(comp), work.second_ids);
                    tp = &work.second_ids;
                }
                split_by_second(*ids, *runs, *tp, fresh, work.second_runs);
                runs = &work.second_runs;
            }
        }
        const auto nt = ids->size();

        // Which entries may differ from the baseline ("written", below): without extrapolation only the
        // changed ones; with it, also those that moved between the two baselines, known when the baseline was
        // itself built from the second baseline (its `written`), else found by scanning the columns.
        const bool scan = predict && !(baseline->written_since && *baseline->written_since == second->tick);
        // With a scan, the positions of the changed entries in the new column, through the runs; without
        // one, the candidates pass (below) walks them with the other candidates.
        const auto changed_outside = [&] {
            return inconsistent("component '" + layout[comp].name +
                                "' changed on an entity that does not keep it");
        };
        auto& changed_t = work.changed_t;
        auto& candidates = work.candidates;
        if (scan && !map_through_runs(*runs, cd.changed, changed_t, false)) {
            return changed_outside();
        }

        // The values: references over the runs, then the added values, then the residuals.
        for (std::size_t f = 0; f < fields.size(); ++f) {
            const bool linear = predict && fields[f].predict == prediction::linear;
            auto& column = state.fields[f];
            column.resize(nt);
            column.visit([&](auto& dst) {
                using T = typename std::decay_t<decltype(dst)>::value_type;
                const T* bv = baseline != nullptr
                                  ? static_cast<const T*>(baseline->components[comp].fields[f].raw())
                                  : nullptr;
                const T* pv =
                    linear ? static_cast<const T*>(second->components[comp].fields[f].raw()) : nullptr;
                for (const auto& r : *runs) {
                    const bool extrapolated = linear && r.p != no_second;
                    reference_run<T>(bv + r.b, extrapolated ? pv + r.p : nullptr, dst.data() + r.t, r.length,
                                     extrapolated, x, fields[f].bits);
                }
                const auto& added = cd.added_values[f];
                for (std::size_t k = 0; k < eff.added.size(); ++k) {
                    dst[eff.added[k]] = static_cast<T>(added[k]);
                }
                if (!scan) {
                    return; // the residuals are added in the candidates' pass
                }
                const auto mask = fields[f].mask();
                const auto& residuals = cd.residuals[f];
                std::size_t next = 0;
                for (std::size_t k = 0; k < cd.changed.size(); ++k) {
                    if ((cd.masks[k] >> f) & 1U) {
                        const auto pos = changed_t[k];
                        dst[pos] = static_cast<T>((std::uint32_t{dst[pos]} + residuals[next++]) & mask);
                    }
                }
            });
        }

        // Written: survivors whose values differ from the baseline's.
        auto& written = eff.written;
        auto& written_b = work.written_b;
        if (scan) {
            auto& differs = work.masks;
            differs.resize(nt);
            for (std::size_t f = 0; f < fields.size(); ++f) {
                state.fields[f].visit([&](const auto& dst) {
                    using T = typename std::decay_t<decltype(dst)>::value_type;
                    const T* bv = static_cast<const T*>(baseline->components[comp].fields[f].raw());
                    for (const auto& r : *runs) {
                        mark_differences(dst.data() + r.t, bv + r.b, differs.data() + r.t, r.length, f == 0);
                    }
                });
            }
            candidates.resize(nt + 8);
            std::size_t count = 0;
            for (const auto& r : *runs) {
                count = compact_nonzero(differs.data() + r.t, r.t, r.length, candidates.data(), count);
            }
            candidates.resize(count);
            written.assign(candidates.begin(), candidates.end());
        } else if (baseline != nullptr) {
            // The candidates pass (candidates.hpp): the changed entries, and with extrapolation the
            // baseline's written ones, row by row.
            const auto n = fields.size(); // at most max_fields_per_component (schema_layout checks)
            std::array<void*, max_fields_per_component> now{};
            std::array<const void*, max_fields_per_component> before{};
            std::array<const std::uint32_t*, max_fields_per_component> residuals{};
            std::array<std::size_t, max_fields_per_component> residual_counts{};
            std::array<std::uint32_t, max_fields_per_component> value_masks{};
            std::array<unsigned, max_fields_per_component> widths{};
            for (std::size_t f = 0; f < n; ++f) {
                now[f] = state.fields[f].raw();
                before[f] = baseline->components[comp].fields[f].raw();
                residuals[f] = cd.residuals[f].data();
                residual_counts[f] = cd.residuals[f].size();
                value_masks[f] = fields[f].mask();
                widths[f] = state.fields[f].width();
            }
            candidate_pass pass;
            pass.runs = *runs;
            pass.written_before = predict ? std::span<const std::uint32_t>{baseline->written[comp]}
                                          : std::span<const std::uint32_t>{};
            pass.changed = cd.changed;
            pass.change_masks = cd.masks;
            pass.fields = n;
            pass.now = now.data();
            pass.before = before.data();
            pass.residuals = residuals.data();
            pass.residual_counts = residual_counts.data();
            pass.value_masks = value_masks.data();
            pass.widths = widths.data();
            pass.weights = cw.fields.data();
            pass.entity_weights = w;
            pass.ids = ids->data();
            pass.written = &work.written_rows;
            pass.sum = sum;
            auto outcome = comp < kernels.size() && kernels[comp] != nullptr ? kernels[comp](pass)
                                                                             : candidate_outcome::wrong_types;
            if (outcome == candidate_outcome::wrong_types) {
                outcome = dynamic_candidates(pass);
            }
            if (outcome != candidate_outcome::done) {
                return changed_outside();
            }
            sum = pass.sum;
            written.assign(work.written_rows.begin(),
                           work.written_rows.begin() + static_cast<std::ptrdiff_t>(pass.written_count));
        } else if (!cd.changed.empty()) {
            return changed_outside(); // a full state has no baseline to change
        } else {
            written.clear();
        }
        const bool summed = !scan; // the candidate path summed the written differences already
        if (scan && !written.empty()) {
            std::size_t r = 0;
            written_b.resize(written.size());
            for (std::size_t k = 0; k < written.size(); ++k) {
                while ((*runs)[r].t + (*runs)[r].length <= written[k]) {
                    ++r;
                }
                written_b[k] = (*runs)[r].b + (written[k] - (*runs)[r].t);
            }
        }

        // Checksum: + written differences, + added entries, - entries gone from the baseline's column.
        auto& acc = work.sums;
        const auto weigh = [&](const std::vector<std::uint32_t>& at, const std::vector<std::uint32_t>& id_of,
                               const replicated_state& s, std::uint64_t presence) {
            acc.assign(at.size(), presence);
            for (std::size_t f = 0; f < fields.size(); ++f) {
                with_values(s.components[comp].fields[f], [&](const auto* v) {
                    accumulate(acc.data(), v, at.data(), at.size(), cw.fields[f]);
                });
            }
            std::uint64_t total = 0;
            for (std::size_t k = 0; k < at.size(); ++k) {
                total += w[id_of[at[k]]] * acc[k];
            }
            return total;
        };
        if (!summed && !written.empty()) {
            acc.assign(written.size(), 0);
            for (std::size_t f = 0; f < fields.size(); ++f) {
                state.fields[f].visit([&](const auto& now) {
                    using T = typename std::decay_t<decltype(now)>::value_type;
                    accumulate_difference(acc.data(), now.data(), written.data(),
                                          static_cast<const T*>(baseline->components[comp].fields[f].raw()),
                                          written_b.data(), written.size(), cw.fields[f]);
                });
            }
            const auto* id_of = ids->data();
            for (std::size_t k = 0; k < written.size(); ++k) {
                sum += w[id_of[written[k]]] * acc[k];
            }
        }
        sum += weigh(eff.added, *ids, out, cw.presence);
        if (!base_gone.empty()) {
            sum -= weigh(base_gone, *tb, *baseline, cw.presence);
        }

        state.ids_are_entities = follows_entities || *ids == et;
        if (!state.ids_are_entities) {
            state.own_ids.append(ids->begin(), ids->end());
        } else {
            all_covered = true;
        }
        out.written[comp] = written;
    }
    if (!all_covered) {
        if (!coverage_started) {
            covered.assign(et.size(), 0);
        }
        for (std::size_t i = 0; i < et.size(); ++i) {
            if (covered[i] == 0) {
                return inconsistent("entity " + std::to_string(et[i]) + " has no replicated component");
            }
        }
    }
    out.checksum = sum;
    if (baseline != nullptr) {
        out.written_since = baseline->tick;
        out.continuing = entity_runs;
    }
    // Keep the flat entities with the state: it is the next baseline.
    std::swap(out.flat_entities, work.target_entities);
    out.flat_valid = true;
    return {};
}

} // namespace ecsnet::proto
