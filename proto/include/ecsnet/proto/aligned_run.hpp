#pragma once

// How the entries of two sorted id columns line up: the stretches where both hold the same ids, which a
// delta's reader and writer copy, extrapolate and compare position by position without searching.

#include <cstdint>

namespace ecsnet::proto {

/// A stretch of entries with the same ids in the target column (from position t), the baseline's (from b)
/// and, when p != no_second, the second baseline's (from p).
struct aligned_run {
    static constexpr std::uint32_t no_second = 0xFFFFFFFFU;
    std::uint32_t t{};
    std::uint32_t b{};
    std::uint32_t p{no_second};
    std::uint32_t length{};
    bool operator==(const aligned_run&) const = default;
};

} // namespace ecsnet::proto
