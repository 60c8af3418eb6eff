#pragma once

// A copy of a registry's entity slots, to save a world and bring it back with the same identifiers
// (registry::entity_pool() and registry::restore_entity_pool()).
//
// slots[i] is what the registry keeps for index i: a live entity (its index is i, its version the slot's
// current one), or a free slot, holding the index of the next free slot (null's index ends the list) and
// the version its next occupant will get. free_head is the first free slot (null's index: none). Restoring
// the free list as well as the live entities makes the restored registry hand out the same identifiers
// afterwards, so a world that is saved and restored evolves as the original would have.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "entity.hpp"

namespace ecsnet {

struct entity_pool_image {
    std::vector<entity> slots;
    entity_traits::integral_type free_head{entity_traits::index_mask};

    bool operator==(const entity_pool_image&) const = default;
};

/// Why `image` is not a consistent set of slots for a registry of at most `max_slots` entities: a slot
/// past the maximum, a free list that loops or leaves the slots, a free slot missing from it. Nothing when
/// it is consistent. O(slots).
[[nodiscard]] inline std::optional<std::string> entity_pool_image_error(const entity_pool_image& image,
                                                                        std::size_t max_slots) {
    constexpr auto end = entity_traits::index_mask;
    const auto count = image.slots.size();
    if (count > max_slots) {
        return "entity pool image of " + std::to_string(count) + " slots exceeds " +
               std::to_string(max_slots);
    }
    std::size_t live = 0;
    for (std::size_t index = 0; index < count; ++index) {
        live += to_index(image.slots[index]) == index ? 1 : 0;
    }
    std::size_t free = 0;
    std::vector<bool> visited(count, false);
    for (auto at = image.free_head; at != end; at = to_index(image.slots[at])) {
        if (at >= count || visited[at] || to_index(image.slots[at]) == at) {
            return "entity pool image: the free list is broken at slot " + std::to_string(at);
        }
        visited[at] = true;
        ++free;
    }
    if (live + free != count) {
        return "entity pool image: " + std::to_string(count - live - free) +
               " free slot(s) missing from the free list";
    }
    return std::nullopt;
}

/// Live entities in `image`.
[[nodiscard]] inline std::size_t live_entities(const entity_pool_image& image) noexcept {
    std::size_t live = 0;
    for (std::size_t index = 0; index < image.slots.size(); ++index) {
        live += to_index(image.slots[index]) == index ? 1 : 0;
    }
    return live;
}

} // namespace ecsnet
