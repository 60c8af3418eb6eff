#include "ecsnet/proto/delta.hpp"

#include <algorithm>

namespace ecsnet::proto {

// ---- the delta, and extrapolation (delta.hpp) ----------------------------------------------------------

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

} // namespace ecsnet::proto
