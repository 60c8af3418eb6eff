#pragma once

// The list primitives of the packed formats (docs/protocol.md, "Bit stream"): a strictly increasing list
// (entity indices or positions) is its count, then an exp-Golomb order k, then the first value and the
// gaps minus one, all coded with that k. The writer picks the k that makes the list shortest (eg_order.hpp)
// and the reader refuses any other, so that a list has one encoding. Used by the whole-world deltas
// (delta_columns.cpp) and the interest-managed views (view_coding.hpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bitstream.hpp"

namespace ecsnet::proto {

/// Width of an exp-Golomb order on the wire.
inline constexpr unsigned eg_order_bits = 5;
/// Width of a frame-of-reference width on the wire.
inline constexpr unsigned value_width_bits = 6;

/// Writes a strictly increasing list. `gaps` is scratch memory.
void write_ascending(bit_writer& out, const std::vector<std::uint32_t>& list,
                     std::vector<std::uint32_t>& gaps);

/// Reads a strictly increasing list of at most `max_count` values, each at most `max_value`. On any error
/// (truncation, too many, too large, not the writer's order) the reader fails and false is returned.
bool read_ascending(bit_reader& in, std::vector<std::uint32_t>& list, std::size_t max_count,
                    std::uint64_t max_value);

/// Resizes without zeroing what is new when the capacity suffices (every element is written next).
void resize_for_overwrite(std::vector<std::uint32_t>& v, std::size_t n);

} // namespace ecsnet::proto
