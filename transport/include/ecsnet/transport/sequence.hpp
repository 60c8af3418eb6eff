#pragma once

// 16-bit sequence numbers that wrap: packet sequences, reliable message ids, redundant message ids and
// fragment group ids all count modulo 2^16. `a` is newer than `b` when it is less than half the space
// (32,768) ahead of it, so comparisons stay right across the wrap as long as the two numbers compared are
// never half the space apart (every window in the link is far smaller). Exactly half apart, neither is newer.

#include <cstdint>

namespace ecsnet::transport {

using sequence_t = std::uint16_t;

/// (a - b) mod 2^16: how far `a` is ahead of `b`, counting forward.
[[nodiscard]] constexpr std::uint16_t sequence_distance(sequence_t a, sequence_t b) noexcept {
    return static_cast<std::uint16_t>(a - b);
}

/// Whether `a` is newer than `b` (ahead by 1 to 32,767).
[[nodiscard]] constexpr bool sequence_greater_than(sequence_t a, sequence_t b) noexcept {
    const auto ahead = sequence_distance(a, b);
    return ahead != 0 && ahead < 0x8000U;
}

/// Whether `a` is older than `b`.
[[nodiscard]] constexpr bool sequence_less_than(sequence_t a, sequence_t b) noexcept {
    return sequence_greater_than(b, a);
}

} // namespace ecsnet::transport
