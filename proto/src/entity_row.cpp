#include "ecsnet/proto/entity_row.hpp"

#include <algorithm>

namespace ecsnet::proto {

row_layout::row_layout(const schema_layout& layout)
    : schema_{&layout}
    , presence_words_{(layout.size() + 31) / 32} {
    std::size_t at = presence_words_;
    offsets_.reserve(layout.size());
    linear_.assign(presence_words_, 0);
    bits_.assign(presence_words_, 0);
    component_of_.assign(presence_words_, 0);
    for (std::size_t c = 0; c < layout.size(); ++c) {
        offsets_.push_back(at);
        for (const auto& field : layout[c].fields) {
            const bool linear = field.predict == prediction::linear;
            linear_.push_back(linear ? 1 : 0);
            any_linear_ = any_linear_ || linear;
            bits_.push_back(field.bits);
            component_of_.push_back(static_cast<unsigned>(c));
            ++at;
        }
    }
    width_ = at;
}

bool row_layout::empty(const std::uint32_t* row) const noexcept {
    return std::all_of(row, row + presence_words_, [](std::uint32_t w) { return w == 0; });
}

void row_layout::reference(const std::uint32_t* base, const std::uint32_t* previous, std::uint32_t ahead,
                           std::uint32_t span, std::uint32_t* out) const noexcept {
    std::memcpy(out, base, width_ * sizeof(std::uint32_t));
    if (previous == nullptr || !any_linear_ || ahead == 0 || span == 0 || ahead > max_extrapolation_ticks ||
        span > max_extrapolation_ticks) {
        return;
    }
    const extrapolation x{ahead, span};
    for (std::size_t at = presence_words_; at < width_; ++at) {
        if (linear_[at] == 0) {
            continue;
        }
        const auto c = component_of_[at];
        if (has(base, c) && has(previous, c)) {
            out[at] = extrapolate(base[at], previous[at], bits_[at], x);
        }
    }
}

std::uint64_t row_layout::checksum_term(const checksum_weights& weights, std::uint32_t index,
                                        std::uint32_t generation, const std::uint32_t* row) const noexcept {
    std::uint64_t sum = weights.entity + std::uint64_t{generation} * weights.generation;
    for (std::size_t c = 0; c < offsets_.size(); ++c) {
        if (!has(row, c)) {
            continue;
        }
        const auto& w = weights.components[c];
        sum += w.presence;
        const auto* values = row + offsets_[c];
        for (std::size_t f = 0; f < w.fields.size(); ++f) {
            sum += std::uint64_t{values[f]} * w.fields[f];
        }
    }
    return entity_weight(index) * sum;
}

void row_layout::gather(const replicated_state& state, std::span<const std::uint32_t> entities,
                        std::vector<std::uint32_t>& rows, std::vector<std::uint32_t>& scratch) const {
    rows.assign(entities.size() * width_, 0);
    for (std::size_t c = 0; c < offsets_.size(); ++c) {
        const auto& component = state.components[c];
        const std::size_t n = state.size(c);
        if (n == 0) {
            continue;
        }
        // Row of each of the component's entries: the entity lists are both sorted by index.
        const std::uint32_t* positions = nullptr;
        if (component.ids_are_entities) {
            scratch.resize(n);
            for (std::size_t i = 0; i < n; ++i) {
                scratch[i] = static_cast<std::uint32_t>(i);
            }
        } else {
            std::vector<std::uint32_t> ids;
            flatten(component.own_ids, ids);
            scratch.resize(n);
            std::size_t at = 0;
            for (std::size_t i = 0; i < n; ++i) {
                while (at < entities.size() && entities[at] < ids[i]) {
                    ++at;
                }
                scratch[i] = static_cast<std::uint32_t>(at); // present: the state is consistent
            }
        }
        positions = scratch.data();
        const std::size_t word = c / 32;
        const std::uint32_t bit = 1U << (c % 32);
        for (std::size_t i = 0; i < n; ++i) {
            rows[positions[i] * width_ + word] |= bit;
        }
        for (std::size_t f = 0; f < component.fields.size(); ++f) {
            const std::size_t column = offsets_[c] + f;
            component.fields[f].visit([&](const auto& values) {
                for (std::size_t i = 0; i < n; ++i) {
                    rows[positions[i] * width_ + column] = values[i];
                }
            });
        }
    }
}

} // namespace ecsnet::proto
