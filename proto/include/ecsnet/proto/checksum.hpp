#pragma once

// The state checksum (docs/protocol.md, "State checksum") and the snapshot header check.
//
// The checksum is a 64-bit sum over the replicated entities, so that it can be updated entity by entity:
//
//   checksum = sum over entities i of  w(i) * ( K(1) + g_i * K(2)
//                                               + sum over components c of i: ( K(256 (c+1))
//                                                 + sum over fields f of c: v(i,c,f) * K(256 (c+1) + f + 1) )
//                                                 )
//
// modulo 2^64, where g_i is the entity's generation, v the quantized field values, w(i) = mix64(i + 1) | 1
// and K(n) = mix64(n * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) | 1 (mix64 is MurmurHash3's 64-bit
// finalizer). Every weight is odd, so a single wrong value (or a missing or extra entity or component)
// always changes the checksum; several errors cancel out with probability about 2^-64.
//
// The header check is CRC-16/CCITT-FALSE of the header fields and the state checksum, so that a
// corrupted tick, baseline or timestamp is refused even on an idle tick (which carries no checksum).

#include <cstdint>
#include <vector>

#include "schema.hpp"
#include "state.hpp"

namespace ecsnet::proto {

[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

[[nodiscard]] constexpr std::uint64_t entity_weight(std::uint32_t index) noexcept {
    return mix64(std::uint64_t{index} + 1) | 1U;
}

[[nodiscard]] constexpr std::uint64_t checksum_constant(std::uint64_t tag) noexcept {
    return mix64(tag * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL) | 1U;
}

/// The constants of a schema's checksum, computed once.
class checksum_weights {
public:
    checksum_weights() = default;
    explicit checksum_weights(const schema_layout& layout);

    std::uint64_t entity{};
    std::uint64_t generation{};
    /// An entity's own term, before its entity weight: its presence and its generation.
    [[nodiscard]] constexpr std::uint64_t identity(std::uint32_t generation_of) const noexcept {
        return entity + std::uint64_t{generation_of} * generation;
    }
    struct component_weights {
        std::uint64_t presence{};
        std::vector<std::uint64_t> fields;
    };
    std::vector<component_weights> components;
};

/// The checksum of a whole state (O(entities x fields)).
[[nodiscard]] std::uint64_t state_checksum(const checksum_weights& weights, const replicated_state& state);
/// The same with generations supplied separately (the server's newest state keeps them there too).
[[nodiscard]] std::uint64_t state_checksum(const checksum_weights& weights, const replicated_state& state,
                                           const std::vector<std::uint32_t>& generations);

/// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor).
[[nodiscard]] std::uint16_t crc16(const std::uint8_t* data, std::size_t size) noexcept;

struct snapshot_header {
    tick_type tick{};
    bool full_state{};
    bool has_checksum{};
    std::uint32_t baseline_gap{};
    std::uint32_t extrapolation_gap{};
    std::int64_t time_offset_us{};
    std::uint32_t columns_size{};
    /// The state checksum of `tick` (sent, or the baseline's when not sent).
    std::uint64_t checksum{};
};

/// The header check: CRC-16 over tick (u32), flags (u8: 1 full_state, 2 has_checksum), baseline_gap (u32),
/// extrapolation_gap (u32), time_offset_us (i64), columns size (u32) and checksum (u64), little-endian.
[[nodiscard]] std::uint16_t header_check(const snapshot_header& header) noexcept;

} // namespace ecsnet::proto
