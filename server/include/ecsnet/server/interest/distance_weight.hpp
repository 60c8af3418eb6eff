#pragma once

// Distance importance: how much a relevant entity's priority grows per tick, from its distance to the
// client's focus (its avatar or camera). Closer is higher.
//
// The shape follows Unity Netcode for Entities' distance importance: full weight near the focus (NFE treats
// the tiles adjacent to the focus's tile as "here", so that a focus near a tile edge does not lose what is
// in front of it), then the weight falls with the inverse square of the distance. Unlike NFE's tiles, the
// distance is the exact one, so the weight is continuous; and it is clamped to [min, max] of a
// weight_range, which is what bounds starvation (priority_selector.hpp): a far entity still gains `min` per
// tick and is sent eventually.

#include "weight_range.hpp"

#include <stdexcept>

namespace ecsnet::server::interest {

class distance_weight {
public:
    /// weights.max within `full_weight_radius` of the focus, weights.max * (full_weight_radius / d)^2 at a
    /// distance d beyond it, never below weights.min. Throws std::invalid_argument for a radius that is not
    /// positive and finite or an invalid range.
    distance_weight(float full_weight_radius, weight_range weights)
        : range_{weights} {
        weights.validate();
        if (!(full_weight_radius > 0.0f) || !(full_weight_radius < std::numeric_limits<float>::infinity())) {
            throw std::invalid_argument("distance_weight needs a positive, finite full-weight radius");
        }
        full_radius_squared_ = full_weight_radius * full_weight_radius;
        falloff_ = weights.max * full_radius_squared_;
    }

    /// The weight at a squared distance (spatial_grid's queries report squared distances). NaN gives min.
    [[nodiscard]] float operator()(float distance_squared) const noexcept {
        if (distance_squared <= full_radius_squared_) {
            return range_.max;
        }
        // Clamped both ways: rounding (or an overflowing falloff) must not leave the range.
        return range_.clamp(falloff_ / distance_squared);
    }

    [[nodiscard]] const weight_range& range() const noexcept { return range_; }

private:
    weight_range range_;
    float full_radius_squared_{};
    float falloff_{};
};

} // namespace ecsnet::server::interest
