#pragma once

// Static dispatch of capacity (seed 001, "Static dispatching").
//
// A sparse set, a storage or a whole registry is declared either with a dynamic capacity (it grows on
// demand) or with a fixed capacity N chosen at compile time: everything is allocated once, at
// construction, and nothing afterwards, which is what a server that must not touch the allocator mid-tick
// wants. The choice is a template argument resolved with `if constexpr`, so it costs nothing at run time.
//
// With a fixed capacity N, entity indices must be below N (the sparse array is one flat block of N slots,
// like ECST's fixed entity storage) and at most N elements fit. Going past either is a capacity_error.

#include <cstddef>
#include <stdexcept>
#include <string>

#include "entity.hpp"

namespace ecsnet {

/// Thrown when a fixed-capacity container is full or an entity index exceeds what it can address.
class capacity_error : public std::length_error {
public:
    using std::length_error::length_error;
};

struct dynamic_capacity {
    static constexpr bool is_fixed = false;
};

template<std::size_t N>
struct fixed_capacity {
    static_assert(N > 0 && N <= std::size_t{entity_traits::max_index} + 1, "fixed capacity out of range");
    static constexpr bool is_fixed = true;
    static constexpr std::size_t value = N;
};

template<typename Policy>
concept capacity_policy = requires {
    { Policy::is_fixed } -> std::convertible_to<bool>;
};

} // namespace ecsnet
