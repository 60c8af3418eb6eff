#include "ecsnet/proto/candidates.hpp"

namespace ecsnet::proto {

namespace {

std::uint32_t load_value(const void* column, std::uint32_t pos, unsigned width) noexcept {
    switch (width) {
    case 1:
        return static_cast<const std::uint8_t*>(column)[pos];
    case 2:
        return static_cast<const std::uint16_t*>(column)[pos];
    default:
        return static_cast<const std::uint32_t*>(column)[pos];
    }
}

void store_value(void* column, std::uint32_t pos, unsigned width, std::uint32_t value) noexcept {
    switch (width) {
    case 1:
        static_cast<std::uint8_t*>(column)[pos] = static_cast<std::uint8_t>(value);
        break;
    case 2:
        static_cast<std::uint16_t*>(column)[pos] = static_cast<std::uint16_t>(value);
        break;
    default:
        static_cast<std::uint32_t*>(column)[pos] = value;
        break;
    }
}

} // namespace

candidate_outcome dynamic_candidates(candidate_pass& pass) {
    for (std::size_t f = 0; f < pass.fields; ++f) {
        if (pass.widths[f] != 1 && pass.widths[f] != 2 && pass.widths[f] != 4) {
            return candidate_outcome::wrong_types;
        }
    }
    // The residual cursors, advanced as rows consume them.
    std::vector<const std::uint32_t*> next(pass.residuals, pass.residuals + pass.fields);
    return detail::walk_candidates(
        pass, [&](std::uint32_t at, std::uint32_t b, std::uint32_t change, std::uint64_t& total) {
            std::uint64_t differs = 0;
            for (std::size_t f = 0; f < pass.fields; ++f, change >>= 1) {
                const auto width = pass.widths[f];
                auto value = load_value(pass.now[f], at, width);
                if ((change & 1U) != 0) {
                    value = (value + *next[f]++) & pass.value_masks[f];
                    store_value(pass.now[f], at, width, value);
                }
                const auto d = std::uint64_t{value} - std::uint64_t{load_value(pass.before[f], b, width)};
                differs |= d;
                total += d * pass.weights[f];
            }
            return differs != 0;
        });
}

} // namespace ecsnet::proto
