#include "ecsnet/proto/view_encoder.hpp"

#include <algorithm>

#include "ecsnet/proto/view_coding.hpp"

namespace ecsnet::proto {

view_encoder::view_encoder(const row_history& rows, view_encoder_options options)
    : rows_{&rows}
    , chooser_{rows.layout(), options.tables_period, options.first_tables_version}
    , reference_(rows.layout().width()) {}

void view_encoder::begin_tick() {
    tick_ = rows_->tick();
    if (++epoch_ == 0) { // wrapped: no head may look filled in this tick
        std::fill(heads_.begin(), heads_.end(), head{});
        epoch_ = 1;
    }
    const auto& tables = chooser_.next(rows_->max_values());
    arena_.clear();
    cache_.clear();
    const auto& layout = rows_->layout();
    component_bits_.assign(layout.components(), 0);
    for (std::size_t c = 0; c < layout.components(); ++c) {
        for (std::size_t f = 0; f < layout.fields(c); ++f) {
            component_bits_[c] += tables.widths[layout.offset(c) + f];
        }
    }
}

std::uint32_t view_encoder::row_bits_estimate(std::uint32_t index) const noexcept {
    const auto* row = rows_->current(index);
    std::uint32_t bits = 16; // generation and presence, roughly
    for (std::size_t c = 0; c < component_bits_.size(); ++c) {
        if (row_layout::has(row, c)) {
            bits += component_bits_[c];
        }
    }
    return bits;
}

entity_code& view_encoder::insert(std::uint32_t index, tick_type base, tick_type previous) {
    if (index >= heads_.size()) {
        heads_.resize(std::max<std::size_t>(std::size_t{index} + 1, heads_.size() * 2));
    }
    auto& h = heads_[index];
    if (h.epoch != epoch_) { // the entity's first code this tick: in its head
        h = head{epoch_, base, previous, none, {}};
        return h.code;
    }
    cache_.push_back(cached{base, previous, {}, h.next});
    h.next = static_cast<std::uint32_t>(cache_.size() - 1);
    return cache_.back().code;
}

entity_code view_encoder::code_update(std::uint32_t index, tick_type base, tick_type previous) {
    const auto& layout = rows_->layout();
    auto& code = insert(index, base, previous);
    const auto* base_row = rows_->at(index, base);
    const auto* previous_row = previous == no_tick ? nullptr : rows_->at(index, previous);
    if (base_row == nullptr || (previous != no_tick && previous_row == nullptr)) {
        code.forgotten = true;
        return code;
    }
    const bool moved = layout.reference(base_row, previous_row, tick_ - base,
                                        previous == no_tick ? 0 : base - previous, reference_.data());
    const auto start = arena_.bit_size();
    code.offset = static_cast<std::uint32_t>(start);
    code.exact = !write_entity_update(layout, chooser_.current(), base_row, reference_.data(),
                                      rows_->current(index), arena_, &chooser_);
    code.unchanged = code.exact && !moved; // the reference is the base value itself
    code.bits = static_cast<std::uint32_t>(arena_.bit_size() - start);
    stats_.bits_coded += code.bits;
    return code;
}

entity_code view_encoder::code_row(std::uint32_t index) {
    auto& code = insert(index, whole_row, no_tick);
    const auto start = arena_.bit_size();
    code.offset = static_cast<std::uint32_t>(start);
    write_entity_row(rows_->layout(), chooser_.current(), rows_->generation(index), rows_->current(index),
                     arena_, &chooser_);
    code.bits = static_cast<std::uint32_t>(arena_.bit_size() - start);
    stats_.bits_coded += code.bits;
    return code;
}

} // namespace ecsnet::proto
