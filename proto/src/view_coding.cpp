#include "ecsnet/proto/view_coding.hpp"

#include <bit>
#include <cstring>

namespace ecsnet::proto {

namespace {

unsigned component_set_bits(const row_layout& layout) noexcept {
    return static_cast<unsigned>(layout.components());
}

bool contains(const dictionary& d, bit_set value) noexcept {
    for (const auto entry : d.entries) {
        if (entry == value) {
            return true;
        }
    }
    return false;
}

void set_presence(const row_layout& layout, std::uint32_t* row, bit_set set) noexcept {
    row[0] = static_cast<std::uint32_t>(set);
    if (layout.presence_words() > 1) {
        row[1] = static_cast<std::uint32_t>(set >> 32);
    }
}

bit_set all_components(const row_layout& layout) noexcept {
    return layout.components() >= 64 ? ~bit_set{0} : (bit_set{1} << layout.components()) - 1;
}

void write_full_fields(const row_layout& layout, const view_tables& tables, std::size_t c,
                       const std::uint32_t* row, bit_writer& out) {
    const auto at = layout.offset(c);
    for (std::size_t f = 0; f < layout.fields(c); ++f) {
        out.put(row[at + f], tables.widths[at + f]);
    }
}

bool read_full_fields(const row_layout& layout, const view_tables& tables, std::size_t c, bit_reader& in,
                      std::uint32_t* row) {
    const auto at = layout.offset(c);
    for (std::size_t f = 0; f < layout.fields(c); ++f) {
        row[at + f] = static_cast<std::uint32_t>(in.get(tables.widths[at + f]));
    }
    return in.ok();
}

} // namespace

bool write_entity_update(const row_layout& layout, const view_tables& tables, const std::uint32_t* base,
                         const std::uint32_t* reference, const std::uint32_t* now, bit_writer& out,
                         view_table_chooser* stats) {
    const bit_set before = presence_of(layout, base);
    const bit_set after = presence_of(layout, now);
    const bit_set kept = before & after;
    bit_set changes = 0;
    for (auto rest = kept; rest != 0; rest &= rest - 1) {
        const auto c = static_cast<std::size_t>(std::countr_zero(rest));
        const auto at = layout.offset(c);
        if (std::memcmp(now + at, reference + at, layout.fields(c) * sizeof(std::uint32_t)) != 0) {
            changes |= bit_set{1} << c;
        }
    }
    if (before == after && changes == 0) {
        return false;
    }
    if (before == after && contains(tables.changes, changes)) {
        write_with_dictionary(out, tables.changes, changes, component_set_bits(layout));
    } else {
        out.put(0b111, 3);
        out.put_bit(before != after);
        if (before != after) {
            out.put(after, component_set_bits(layout));
        }
        out.put(changes, component_set_bits(layout));
    }
    if (stats != nullptr) {
        stats->count_changes(changes);
    }
    const auto& schema = layout.schema();
    for (auto rest = changes; rest != 0; rest &= rest - 1) {
        const auto c = static_cast<std::size_t>(std::countr_zero(rest));
        const auto at = layout.offset(c);
        const auto n = layout.fields(c);
        bit_set mask = 0;
        for (std::size_t f = 0; f < n; ++f) {
            mask |= now[at + f] != reference[at + f] ? bit_set{1} << f : 0;
        }
        if (n > 1) {
            write_with_dictionary(out, tables.field_masks[c], mask, static_cast<unsigned>(n));
            if (stats != nullptr) {
                stats->count_fields(c, mask);
            }
        }
        for (auto fields = mask; fields != 0; fields &= fields - 1) {
            const auto f = static_cast<std::size_t>(std::countr_zero(fields));
            const unsigned bits = schema[c].fields[f].bits;
            const auto residual = sign_extend((now[at + f] - reference[at + f]) & bit_mask(bits), bits);
            const auto coded = zigzag(residual) - 1;
            out.put_eg(coded, tables.orders[at + f]);
            if (stats != nullptr) {
                stats->count_residual(at + f, coded);
            }
        }
    }
    for (auto added = after & ~before; added != 0; added &= added - 1) {
        write_full_fields(layout, tables, static_cast<std::size_t>(std::countr_zero(added)), now, out);
    }
    return true;
}

bool read_entity_update(const row_layout& layout, const view_tables& tables, const std::uint32_t* base,
                        const std::uint32_t* reference, bit_reader& in, std::uint32_t* out) {
    const auto bits_c = component_set_bits(layout);
    const bit_set all = all_components(layout);
    const bit_set before = presence_of(layout, base);
    bit_set after = before;
    bit_set changes = 0;
    bool escaped = true;
    for (std::size_t i = 0; i < dictionary::size && escaped; ++i) {
        if (!in.get_bit()) {
            changes = tables.changes.entries[i];
            escaped = false;
        }
    }
    if (escaped) {
        if (in.get_bit()) {
            after = get_wide(in, bits_c);
            if (after == before || after == 0 || (after & ~all) != 0) {
                in.fail();
                return false;
            }
        }
        changes = get_wide(in, bits_c);
        // Canonical: an escape only where the dictionary cannot say it.
        if (after == before && contains(tables.changes, changes)) {
            in.fail();
            return false;
        }
    }
    if (!in.ok() || (changes & ~(before & after)) != 0 || (after == before && changes == 0)) {
        in.fail();
        return false;
    }
    std::memcpy(out, reference, layout.width() * sizeof(std::uint32_t));
    set_presence(layout, out, after);
    const auto& schema = layout.schema();
    for (auto rest = changes; rest != 0; rest &= rest - 1) {
        const auto c = static_cast<std::size_t>(std::countr_zero(rest));
        const auto at = layout.offset(c);
        const auto n = layout.fields(c);
        bit_set mask = 1;
        if (n > 1) {
            mask = read_with_dictionary(in, tables.field_masks[c], static_cast<unsigned>(n));
            const bit_set fields_all = n >= 64 ? ~bit_set{0} : (bit_set{1} << n) - 1;
            if (mask == 0 || (mask & ~fields_all) != 0) {
                in.fail();
                return false;
            }
        }
        for (auto fields = mask; fields != 0; fields &= fields - 1) {
            const auto f = static_cast<std::size_t>(std::countr_zero(fields));
            const unsigned bits = schema[c].fields[f].bits;
            const auto coded = in.get_eg(tables.orders[at + f]);
            // zigzag(r) - 1 of a residual r != 0 within a bits-wide signed range: below 2^bits - 1.
            if (coded >= (std::uint64_t{1} << bits) - 1) {
                in.fail();
                return false;
            }
            const auto residual = unzigzag(coded + 1);
            out[at + f] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(reference[at + f]) +
                                                     static_cast<std::uint64_t>(residual)) &
                          bit_mask(bits);
        }
    }
    for (auto removed = before & ~after; removed != 0; removed &= removed - 1) {
        const auto c = static_cast<std::size_t>(std::countr_zero(removed));
        std::memset(out + layout.offset(c), 0, layout.fields(c) * sizeof(std::uint32_t));
    }
    for (auto added = after & ~before; added != 0; added &= added - 1) {
        if (!read_full_fields(layout, tables, static_cast<std::size_t>(std::countr_zero(added)), in, out)) {
            return false;
        }
    }
    return in.ok();
}

void write_entity_row(const row_layout& layout, const view_tables& tables, std::uint32_t generation,
                      const std::uint32_t* row, bit_writer& out, view_table_chooser* stats) {
    out.put_eg(generation, tables.generation_order);
    const bit_set presence = presence_of(layout, row);
    write_with_dictionary(out, tables.presence, presence, component_set_bits(layout));
    if (stats != nullptr) {
        stats->count_generation(generation);
        stats->count_presence(presence);
    }
    for (auto rest = presence; rest != 0; rest &= rest - 1) {
        write_full_fields(layout, tables, static_cast<std::size_t>(std::countr_zero(rest)), row, out);
    }
}

bool read_entity_row(const row_layout& layout, const view_tables& tables, bit_reader& in,
                     std::uint32_t& generation, std::uint32_t* out) {
    const auto g = in.get_eg(tables.generation_order);
    const bit_set presence = read_with_dictionary(in, tables.presence, component_set_bits(layout));
    if (!in.ok() || g > 0xFFFFFFFFULL || presence == 0 || (presence & ~all_components(layout)) != 0) {
        in.fail();
        return false;
    }
    generation = static_cast<std::uint32_t>(g);
    std::memset(out, 0, layout.width() * sizeof(std::uint32_t));
    set_presence(layout, out, presence);
    for (auto rest = presence; rest != 0; rest &= rest - 1) {
        if (!read_full_fields(layout, tables, static_cast<std::size_t>(std::countr_zero(rest)), in, out)) {
            return false;
        }
    }
    return in.ok();
}

} // namespace ecsnet::proto
