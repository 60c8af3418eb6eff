#pragma once

// Entity identifiers: 32 bits, a 20-bit index and a 12-bit version (generation).
//
// The index addresses the entity's slot; the version counts how many times that slot was recycled, so an
// identifier kept after its entity was destroyed (a stale one) never compares equal to the slot's new
// occupant. Index 0xFFFFF is reserved for null_entity, so a registry holds at most 1,048,575 entities.

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ecsnet {

enum class entity : std::uint32_t {};

struct entity_traits {
    using integral_type = std::uint32_t;

    static constexpr integral_type index_bits = 20;
    static constexpr integral_type version_bits = 12;
    static constexpr integral_type index_mask = (integral_type{1} << index_bits) - 1;
    static constexpr integral_type version_mask = (integral_type{1} << version_bits) - 1;
    /// The largest index a live entity can have; index_mask itself is null's.
    static constexpr integral_type max_index = index_mask - 1;

    [[nodiscard]] static constexpr integral_type to_integral(entity e) noexcept {
        return static_cast<integral_type>(e);
    }
    [[nodiscard]] static constexpr integral_type to_index(entity e) noexcept {
        return to_integral(e) & index_mask;
    }
    [[nodiscard]] static constexpr integral_type to_version(entity e) noexcept {
        return to_integral(e) >> index_bits;
    }
    [[nodiscard]] static constexpr entity construct(integral_type index, integral_type version) noexcept {
        return entity{(index & index_mask) | ((version & version_mask) << index_bits)};
    }
    /// The version a recycled slot gets; it wraps after 4096 generations.
    [[nodiscard]] static constexpr integral_type next_version(integral_type version) noexcept {
        return (version + 1) & version_mask;
    }
};

inline constexpr entity null_entity{~entity_traits::integral_type{}};

[[nodiscard]] constexpr entity_traits::integral_type to_integral(entity e) noexcept {
    return entity_traits::to_integral(e);
}
[[nodiscard]] constexpr entity_traits::integral_type to_index(entity e) noexcept {
    return entity_traits::to_index(e);
}
[[nodiscard]] constexpr entity_traits::integral_type to_version(entity e) noexcept {
    return entity_traits::to_version(e);
}

} // namespace ecsnet

template<>
struct std::hash<ecsnet::entity> {
    std::size_t operator()(ecsnet::entity e) const noexcept {
        return std::hash<std::uint32_t>{}(ecsnet::to_integral(e));
    }
};
