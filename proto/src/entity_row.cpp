#include "ecsnet/proto/entity_row.hpp"

#include <algorithm>
#include <bit>

#include "ecsnet/proto/quantize.hpp"

namespace ecsnet::proto {

row_layout::row_layout(const schema_layout& layout)
    : schema_{&layout}
    , presence_words_{(layout.size() + 31) / 32} {
    std::size_t at = presence_words_;
    const checksum_weights weights{layout};
    entity_weight_ = weights.entity;
    generation_weight_ = weights.generation;
    offsets_.reserve(layout.size());
    fields_.reserve(layout.size());
    component_of_.assign(presence_words_, 0);
    field_weights_.assign(presence_words_, 0);
    for (std::size_t c = 0; c < layout.size(); ++c) {
        offsets_.push_back(at);
        fields_.push_back(static_cast<std::uint8_t>(layout[c].fields.size()));
        presence_weights_.push_back(weights.components[c].presence);
        field_weights_.insert(field_weights_.end(), weights.components[c].fields.begin(),
                              weights.components[c].fields.end());
        component_of_.insert(component_of_.end(), layout[c].fields.size(), static_cast<std::uint32_t>(c));
        for (const auto& field : layout[c].fields) {
            if (field.predict == prediction::linear) {
                linear_.push_back(linear_field{static_cast<std::uint32_t>(at),
                                               static_cast<std::uint32_t>(c / 32), 1U << (c % 32), field.bits,
                                               bit_mask(field.bits)});
            }
            ++at;
        }
    }
    any_linear_ = !linear_.empty();
    width_ = at;
    not_linear_.assign(width_, ~std::uint32_t{0});
    for (const auto& field : linear_) {
        not_linear_[field.at] = 0;
    }
}

bool row_layout::empty(const std::uint32_t* row) const noexcept {
    return std::all_of(row, row + presence_words_, [](std::uint32_t w) { return w == 0; });
}

bool row_layout::reference(const std::uint32_t* base, const std::uint32_t* previous, std::uint32_t ahead,
                           std::uint32_t span, std::uint32_t* out) const noexcept {
    std::memcpy(out, base, width_ * sizeof(std::uint32_t));
    if (previous == nullptr || !any_linear_ || ahead == 0 || span == 0 || ahead > max_extrapolation_ticks ||
        span > max_extrapolation_ticks) {
        return false;
    }
    const extrapolation x{ahead, span};
    std::uint32_t moved = 0;
    for (const auto& field : linear_) {
        if ((base[field.word] & previous[field.word] & field.presence) == 0) {
            continue;
        }
        const auto value = base[field.at];
        const auto before = previous[field.at];
        // A span of 1 (the entity changed on each of its last two ticks, the common case) needs no rounded
        // division: extrapolate() is then base + (base - before) * ahead modulo 2^bits, which 32-bit
        // wrapping arithmetic computes exactly (2^bits divides 2^32).
        const auto extrapolated = span == 1 ? (value + (value - before) * ahead) & field.mask
                                            : extrapolate(value, before, field.bits, x);
        out[field.at] = extrapolated;
        moved |= extrapolated ^ value;
    }
    return moved != 0;
}

bool row_layout::continues_line(const std::uint32_t* before, const std::uint32_t* base,
                                const std::uint32_t* now) const noexcept {
    if (!any_linear_) {
        return false;
    }
    // Presence and the fields that are not extrapolated: as they were. Without a branch a word (rows are a
    // few words, and this runs for every entity that changed, each tick).
    std::uint32_t differ = 0;
    for (std::size_t at = 0; at < presence_words_; ++at) {
        differ |= before[at] ^ base[at];
    }
    for (std::size_t at = 0; at < width_; ++at) {
        differ |= (now[at] ^ base[at]) & not_linear_[at];
    }
    if (differ != 0) {
        return false;
    }
    for (const auto& field : linear_) {
        const std::uint32_t step = (base[field.at] - before[field.at]) & field.mask;
        // |step| x max_extrapolation_ticks below 2^(bits - 1): the difference over any span the references
        // use sign-extends to the true one, and extrapolate() lands on the line exactly.
        const std::uint32_t half = 1U << (field.bits - 1);
        const std::uint32_t magnitude = step < half ? step : field.mask - step + 1;
        if (magnitude >= half / max_extrapolation_ticks ||
            now[field.at] != ((base[field.at] + step) & field.mask)) {
            return false;
        }
    }
    return true;
}

std::uint64_t row_layout::checksum_term(const checksum_weights& weights, std::uint32_t index,
                                        std::uint32_t generation, const std::uint32_t* row) const noexcept {
    std::uint64_t sum = weights.identity(generation);
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

// Rows are short (the arena's: 10 values): vectorized by GCC (64-bit products emulated in SSE2), the loop
// takes more instructions than the scalar one (callgrind, bot_apply_bench: 113 against 85 per term).
#if defined(__GNUC__) && !defined(__clang__)
#define ECSNET_SCALAR_LOOP [[gnu::optimize("no-tree-vectorize")]]
#else
#define ECSNET_SCALAR_LOOP
#endif

ECSNET_SCALAR_LOOP std::uint64_t row_layout::checksum_term(std::uint32_t index, std::uint32_t generation,
                                                           const std::uint32_t* row) const noexcept {
    std::uint64_t sum = entity_weight_ + std::uint64_t{generation} * generation_weight_;
    // Absent components' fields are 0: every field is summed, without a test of its component.
    for (std::size_t at = presence_words_; at < width_; ++at) {
        sum += std::uint64_t{row[at]} * field_weights_[at];
    }
    for (std::size_t word = 0; word < presence_words_; ++word) {
        for (auto present = row[word]; present != 0; present &= present - 1) {
            const auto c = word * 32 + static_cast<std::size_t>(std::countr_zero(present));
            if (c >= presence_weights_.size()) {
                break;
            }
            sum += presence_weights_[c];
        }
    }
    return entity_weight(index) * sum;
}

std::uint64_t row_layout::reference_term(std::uint64_t base_term, std::uint32_t index,
                                         const std::uint32_t* base,
                                         const std::uint32_t* reference) const noexcept {
    std::uint64_t moved = 0;
    for (const auto& field : linear_) {
        moved +=
            (std::uint64_t{reference[field.at]} - std::uint64_t{base[field.at]}) * field_weights_[field.at];
    }
    return base_term + entity_weight(index) * moved;
}

void row_layout::gather_row(const replicated_state& state, const std::uint32_t* positions,
                            std::uint32_t* row) const noexcept {
    std::fill(row, row + width_, 0U);
    for (std::size_t c = 0; c < offsets_.size(); ++c) {
        const auto at = positions[c];
        if (at == absent) {
            continue;
        }
        row[c / 32] |= 1U << (c % 32);
        const auto& fields = state.components[c].fields;
        for (std::size_t f = 0; f < fields.size(); ++f) {
            row[offsets_[c] + f] = fields[f].get(at);
        }
    }
}

} // namespace ecsnet::proto
