#include "ecsnet/proto/view_tables.hpp"

#include <algorithm>
#include <bit>

#include "ecsnet/proto/bit_lists.hpp"

namespace ecsnet::proto {

namespace {

unsigned set_bits(std::size_t members) noexcept {
    return static_cast<unsigned>(std::min<std::size_t>(members, 64));
}

bit_set all_of(std::size_t members) noexcept {
    return members >= 64 ? ~bit_set{0} : (bit_set{1} << members) - 1;
}

} // namespace

view_tables view_tables::defaults(const row_layout& layout) {
    view_tables t;
    t.orders.assign(layout.width(), 0);
    t.widths.assign(layout.width(), 0);
    const auto& schema = layout.schema();
    for (std::size_t c = 0; c < layout.components(); ++c) {
        for (std::size_t f = 0; f < layout.fields(c); ++f) {
            t.widths[layout.offset(c) + f] = static_cast<std::uint8_t>(schema[c].fields[f].bits);
        }
    }
    t.field_masks.assign(layout.components(), dictionary{});
    return t;
}

void write_with_dictionary(bit_writer& out, const dictionary& d, bit_set value, unsigned bits) {
    for (std::size_t i = 0; i < dictionary::size; ++i) {
        if (d.entries[i] == value) {
            // i ones then a zero: 0, 10, 110 (least significant bit first)
            out.put((std::uint64_t{1} << i) - 1, static_cast<unsigned>(i + 1));
            return;
        }
    }
    out.put(0b111, 3);
    out.put(value, bits);
}

bit_set read_with_dictionary(bit_reader& in, const dictionary& d, unsigned bits) {
    for (std::size_t i = 0; i < dictionary::size; ++i) {
        if (!in.get_bit()) {
            return d.entries[i];
        }
    }
    const auto value = static_cast<bit_set>(get_wide(in, bits));
    for (const auto entry : d.entries) {
        if (entry == value) {
            in.fail(); // an escape where the dictionary has a code: not what a writer writes
            return 0;
        }
    }
    return value;
}

unsigned dictionary_cost(const dictionary& d, bit_set value, unsigned bits) noexcept {
    for (std::size_t i = 0; i < dictionary::size; ++i) {
        if (d.entries[i] == value) {
            return static_cast<unsigned>(i + 1);
        }
    }
    return 3 + bits;
}

void view_tables::write(const row_layout& layout, bit_writer& out) const {
    out.put(generation_order, eg_order_bits);
    for (std::size_t c = 0; c < layout.components(); ++c) {
        for (std::size_t f = 0; f < layout.fields(c); ++f) {
            const auto at = layout.offset(c) + f;
            out.put(orders[at], eg_order_bits);
            out.put(widths[at], value_width_bits);
        }
    }
    const auto component_bits = set_bits(layout.components());
    for (const auto entry : presence.entries) {
        out.put(entry, component_bits);
    }
    for (const auto entry : changes.entries) {
        out.put(entry, component_bits);
    }
    for (std::size_t c = 0; c < layout.components(); ++c) {
        if (layout.fields(c) > 1) {
            for (const auto entry : field_masks[c].entries) {
                out.put(entry, set_bits(layout.fields(c)));
            }
        }
    }
}

bool view_tables::read(const row_layout& layout, bit_reader& in) {
    const auto& schema = layout.schema();
    orders.assign(layout.width(), 0);
    widths.assign(layout.width(), 0);
    generation_order = static_cast<unsigned>(in.get(eg_order_bits));
    for (std::size_t c = 0; c < layout.components(); ++c) {
        for (std::size_t f = 0; f < layout.fields(c); ++f) {
            const auto at = layout.offset(c) + f;
            orders[at] = static_cast<std::uint8_t>(in.get(eg_order_bits));
            widths[at] = static_cast<std::uint8_t>(in.get(value_width_bits));
            if (widths[at] > schema[c].fields[f].bits) {
                in.fail();
                return false;
            }
        }
    }
    const auto component_bits = set_bits(layout.components());
    for (auto& entry : presence.entries) {
        entry = static_cast<bit_set>(get_wide(in, component_bits));
    }
    for (auto& entry : changes.entries) {
        entry = static_cast<bit_set>(get_wide(in, component_bits));
    }
    field_masks.assign(layout.components(), dictionary{});
    for (std::size_t c = 0; c < layout.components(); ++c) {
        if (layout.fields(c) > 1) {
            for (auto& entry : field_masks[c].entries) {
                entry = static_cast<bit_set>(get_wide(in, set_bits(layout.fields(c))));
            }
        }
    }
    return in.ok();
}

// ---- the server's choice ------------------------------------------------------------------------------

void view_table_chooser::frequency::add(bit_set value) {
    for (auto& [set, count] : counts) {
        if (set == value) {
            ++count;
            return;
        }
    }
    if (counts.size() < 64) { // a bounded list: the rare sets beyond it are not dictionary material
        counts.emplace_back(value, 1);
    }
}

dictionary view_table_chooser::frequency::top() const {
    auto sorted = counts;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    dictionary d;
    for (std::size_t i = 0; i < dictionary::size && i < sorted.size(); ++i) {
        d.entries[i] = sorted[i].first;
    }
    return d;
}

view_table_chooser::view_table_chooser(const row_layout& layout, std::uint32_t period,
                                       std::uint32_t first_version)
    : layout_{&layout}
    , period_{std::max<std::uint32_t>(period, 1)}
    , version_{first_version}
    , tables_{view_tables::defaults(layout)}
    , residuals_(layout.width())
    , fields_(layout.components()) {
    // Until statistics exist: a one-bit code for "every component" and "the first component".
    const bit_set all = all_of(layout.components());
    tables_.presence.entries = {all, 0, 0};
    tables_.changes.entries = {1, all, 0};
    for (std::size_t c = 0; c < layout.components(); ++c) {
        tables_.field_masks[c].entries = {all_of(layout.fields(c)), 0, 0};
    }
}

void view_table_chooser::count_presence(bit_set presence) {
    presence_.add(presence);
}
void view_table_chooser::count_changes(bit_set components) {
    changes_.add(components);
}
void view_table_chooser::count_fields(std::size_t component, bit_set fields) {
    fields_[component].add(fields);
}

const view_tables& view_table_chooser::next(const std::vector<std::uint32_t>& max_values) {
    auto next = tables_;
    if (++ticks_ >= period_) {
        ticks_ = 0;
        next.generation_order = generations_.best();
        generations_ = {};
        for (std::size_t at = layout_->presence_words(); at < layout_->width(); ++at) {
            next.orders[at] = static_cast<std::uint8_t>(residuals_[at].best());
            residuals_[at] = {};
        }
        if (!presence_.counts.empty()) {
            next.presence = presence_.top();
        }
        if (!changes_.counts.empty()) {
            next.changes = changes_.top();
        }
        for (std::size_t c = 0; c < fields_.size(); ++c) {
            if (!fields_[c].counts.empty()) {
                next.field_masks[c] = fields_[c].top();
            }
            fields_[c].clear();
        }
        presence_.clear();
        changes_.clear();
        // Widths may shrink at a period's end only (fewer table changes): to what this tick needs.
        for (std::size_t at = layout_->presence_words(); at < layout_->width(); ++at) {
            next.widths[at] = static_cast<std::uint8_t>(std::bit_width(max_values[at]));
        }
    }
    for (std::size_t at = layout_->presence_words(); at < layout_->width(); ++at) {
        const auto needed = static_cast<std::uint8_t>(std::bit_width(max_values[at]));
        next.widths[at] = std::max(next.widths[at], needed);
    }
    if (!(next == tables_)) {
        tables_ = std::move(next);
        ++version_;
    }
    return tables_;
}

} // namespace ecsnet::proto
