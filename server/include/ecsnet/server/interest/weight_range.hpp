#pragma once

// The range every per-tick priority weight is clamped to. The starvation bound of priority_selector.hpp
// depends on it only through the ratio max / min: the narrower the range, the shorter the longest wait.

#include <limits>
#include <stdexcept>

namespace ecsnet::server::interest {

struct weight_range {
    float min = 1.0f;
    float max = 1.0f;

    /// Throws std::invalid_argument unless 0 < min <= max < infinity.
    void validate() const {
        if (!(min > 0.0f) || !(min <= max) || !(max < std::numeric_limits<float>::infinity())) {
            throw std::invalid_argument("weight range needs 0 < min <= max < infinity");
        }
    }

    /// `weight` clamped to [min, max]; NaN becomes min.
    [[nodiscard]] float clamp(float weight) const noexcept {
        const float above = weight >= min ? weight : min; // NaN fails the comparison
        return above <= max ? above : max;
    }

    /// max / min, the one figure the starvation bound needs.
    [[nodiscard]] double ratio() const noexcept {
        return static_cast<double>(max) / static_cast<double>(min);
    }
};

} // namespace ecsnet::server::interest
