#pragma once

// The server-only components a game asks checkpoints to keep (game_world::declare_saveable). Replicated
// components are always saved (as their quantized values, which is what clients see); server-only state
// the world needs to come back identical (velocities, AI state...) is declared here, one component type
// at a time, under a stable name.
//
// A saveable component is trivially copyable and saved as its bytes: a checkpoint is for the same build
// of the same game (its header carries a hash of these names and sizes, and the replicated schema's hash;
// a checkpoint whose hashes differ is refused, never half-loaded).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <ecsnet/ecs/registry.hpp>

namespace ecsnet::server {

class saveable_components {
public:
    struct entry {
        std::string name;
        std::size_t size{};
        id_type type{};
        /// Appends the pool's entities and their components' bytes.
        void (*copy)(const registry& reg, std::vector<entity>& entities, std::vector<std::byte>& bytes){};
        /// Emplaces (or replaces) the component of `e` from `size` bytes.
        void (*paste)(registry& reg, entity e, const std::byte* bytes){};
    };

    /// Declares Component saveable under `name` (unique). Throws std::invalid_argument on a repeated name
    /// or type.
    template<typename Component>
    void add(std::string_view name) {
        static_assert(std::is_trivially_copyable_v<Component> && std::is_default_constructible_v<Component>,
                      "a saveable component is trivially copyable and default-constructible");
        static_assert(!std::is_empty_v<Component>, "tags are not saveable (they have no bytes)");
        for (const auto& e : entries_) {
            if (e.name == name || e.type == type_id<Component>()) {
                throw std::invalid_argument("saveable component '" + std::string{name} + "' declared twice");
            }
        }
        entries_.push_back(entry{std::string{name}, sizeof(Component), type_id<Component>(),
                                 &copy_pool<Component>, &paste_one<Component>});
    }

    [[nodiscard]] std::span<const entry> entries() const noexcept { return entries_; }
    /// FNV-1a 64 over the names and sizes, in order: a checkpoint written with other declarations is
    /// refused.
    [[nodiscard]] std::uint64_t hash() const noexcept {
        std::uint64_t h = 0xcbf29ce484222325ULL;
        const auto mix = [&h](std::uint64_t byte) {
            h ^= byte;
            h *= 0x100000001b3ULL;
        };
        for (const auto& e : entries_) {
            for (const char c : e.name) {
                mix(static_cast<unsigned char>(c));
            }
            mix(0);
            for (int shift = 0; shift < 64; shift += 8) {
                mix((e.size >> shift) & 0xFF);
            }
        }
        return h;
    }

private:
    template<typename Component>
    static void copy_pool(const registry& reg, std::vector<entity>& entities, std::vector<std::byte>& bytes) {
        const auto* pool = reg.try_storage<Component>();
        if (pool == nullptr || pool->size() == 0) {
            return;
        }
        entities.insert(entities.end(), pool->data(), pool->data() + pool->size());
        const auto* first = reinterpret_cast<const std::byte*>(pool->raw());
        bytes.insert(bytes.end(), first, first + pool->size() * sizeof(Component));
    }

    template<typename Component>
    static void paste_one(registry& reg, entity e, const std::byte* bytes) {
        Component c;
        std::memcpy(static_cast<void*>(&c), bytes, sizeof(Component));
        reg.emplace_or_replace<Component>(e, c);
    }

    std::vector<entry> entries_;
};

} // namespace ecsnet::server
