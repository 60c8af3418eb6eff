#include "ecsnet/proto/checksum.hpp"

#include <array>

#include "cpu_clones.hpp"
#include "little_endian_writer.hpp"

namespace ecsnet::proto {

checksum_weights::checksum_weights(const schema_layout& layout)
    : entity{checksum_constant(1)}
    , generation{checksum_constant(2)} {
    components.resize(layout.size());
    for (std::size_t c = 0; c < layout.size(); ++c) {
        const std::uint64_t base = 256 * (c + 1);
        components[c].presence = checksum_constant(base);
        for (std::size_t f = 0; f < layout[c].fields.size(); ++f) {
            components[c].fields.push_back(checksum_constant(base + f + 1));
        }
    }
}

namespace {

template<typename T>
void add_field(std::uint64_t* sums, const T* values, std::size_t n, std::uint64_t weight) {
    for (std::size_t i = 0; i < n; ++i) {
        sums[i] += static_cast<std::uint64_t>(values[i]) * weight;
    }
}

} // namespace

ECSNET_CPU_CLONES std::uint64_t state_checksum(const checksum_weights& weights, const replicated_state& state,
                                               const std::vector<std::uint32_t>& generations) {
    // Per entity, its generation's and its components' terms are summed first, then weighted once by w(i):
    // one mix64 per entity, not one per component (components whose ids are the entities' share the sums).
    std::vector<std::uint32_t> scratch;
    const auto& ids = state.flat(scratch);
    const auto n = ids.size();
    std::vector<std::uint64_t> sums(n);
    for (std::size_t i = 0; i < n; ++i) {
        sums[i] = weights.identity(i < generations.size() ? generations[i] : 0);
    }
    std::uint64_t total = 0;
    std::vector<std::uint32_t> own_ids;
    std::vector<std::uint64_t> own_sums;
    for (std::size_t c = 0; c < state.components.size(); ++c) {
        const auto& component = state.components[c];
        const auto& cw = weights.components[c];
        if (component.ids_are_entities) {
            for (std::size_t i = 0; i < n; ++i) {
                sums[i] += cw.presence;
            }
            for (std::size_t f = 0; f < component.fields.size(); ++f) {
                component.fields[f].visit(
                    [&](const auto& values) { add_field(sums.data(), values.data(), n, cw.fields[f]); });
            }
            continue;
        }
        flatten(component.own_ids, own_ids);
        own_sums.assign(own_ids.size(), cw.presence);
        for (std::size_t f = 0; f < component.fields.size(); ++f) {
            component.fields[f].visit([&](const auto& values) {
                add_field(own_sums.data(), values.data(), own_ids.size(), cw.fields[f]);
            });
        }
        for (std::size_t k = 0; k < own_ids.size(); ++k) {
            total += entity_weight(own_ids[k]) * own_sums[k];
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        total += entity_weight(ids[i]) * sums[i];
    }
    return total;
}

std::uint64_t state_checksum(const checksum_weights& weights, const replicated_state& state) {
    return state_checksum(weights, state, state.generations);
}

namespace {

// CRC-16/CCITT-FALSE a byte at a time: the table holds the eight shifts of each byte value (every snapshot
// header is checked, on the server once per client per tick).
constexpr std::array<std::uint16_t, 256> crc16_table = [] {
    std::array<std::uint16_t, 256> table{};
    for (unsigned value = 0; value < 256; ++value) {
        auto crc = static_cast<std::uint16_t>(value << 8);
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc & 0x8000U) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021U)
                                       : static_cast<std::uint16_t>(crc << 1);
        }
        table[value] = crc;
    }
    return table;
}();

} // namespace

std::uint16_t crc16(const std::uint8_t* data, std::size_t size) noexcept {
    std::uint16_t crc = 0xFFFF;
    for (std::size_t i = 0; i < size; ++i) {
        crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_table[((crc >> 8) ^ data[i]) & 0xFFU]);
    }
    return crc;
}

std::uint16_t header_check(const snapshot_header& header) noexcept {
    std::array<std::uint8_t, 4 + 1 + 4 + 4 + 8 + 4 + 8> bytes{};
    little_endian_writer out{bytes.data()};
    out.put<4>(header.tick);
    out.put<1>((header.full_state ? 1U : 0U) | (header.has_checksum ? 2U : 0U));
    out.put<4>(header.baseline_gap);
    out.put<4>(header.extrapolation_gap);
    out.put<8>(static_cast<std::uint64_t>(header.time_offset_us));
    out.put<4>(header.columns_size);
    out.put<8>(header.checksum);
    return crc16(bytes.data(), bytes.size());
}

} // namespace ecsnet::proto
