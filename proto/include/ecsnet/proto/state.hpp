#pragma once

// The replicated state of one tick, quantized and in columns (what the server's history keeps per tick and
// what a client's mirror keeps per applied tick):
//
//   entities     the sorted indices of the replicated entities (those with at least one declared component),
//                a compact_id_array (seed 003_9749a93fa14adb31.txt): about 2 bytes per id
//   generations  parallel to entities: the generation of each index's occupant (see net_entity). Kept by
//                client states; on the server only by the newest tick (older ones do not need it)
//   components   per declared component: its sorted id column (stored once and shared with `entities`
//                when they are equal, the usual case) and one column per field, by position in the ids
//
// A field column stores each value in 1, 2 or 4 bytes (the smallest holding the field's bits).
// Complexity: random access O(1); finding an entity O(log n) (lower_bound on the id column).
// Invalidation: reset() and any write invalidate pointers from data().

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "aligned_run.hpp"
#include "ecsnet/ecs/compact_id_array.hpp"
#include "schema.hpp"

namespace ecsnet::proto {

using tick_type = std::uint32_t;

/// The id column type; switch here if the compact array's interface changes.
using id_column = ecsnet::compact_id_array;

/// The identity of a replicated entity on the wire: the server's entity index and a generation that
/// changes whenever a new occupant of that index enters replication (the server's entity version,
/// extended past its 12 bits so that it never wraps within a session).
struct net_entity {
    std::uint32_t index{};
    std::uint32_t generation{};
    bool operator==(const net_entity&) const = default;
};

/// The largest entity index on the wire (the server's entity index is 20 bits; 0xFFFFF is null).
inline constexpr std::uint32_t max_net_index = entity_traits::max_index;

namespace detail {
/// An allocator whose value-less construct() default-initialises: resize() then leaves integers
/// uninitialised instead of zeroing them (columns are always overwritten after a resize).
template<typename T>
struct default_init_allocator : std::allocator<T> {
    template<typename U>
    struct rebind {
        using other = default_init_allocator<U>;
    };
    using std::allocator<T>::allocator;
    template<typename U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template<typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};
template<typename T>
using column_vector = std::vector<T, default_init_allocator<T>>;
} // namespace detail

/// Values of one field by position, 1, 2 or 4 bytes each. resize() does not initialise new values.
class field_column {
public:
    explicit field_column(unsigned storage_bytes = 4) noexcept
        : width_{storage_bytes} {}

    /// Calls f(std::vector<T>&) with the vector in use (T = uint8_t, uint16_t or uint32_t).
    template<typename F>
    decltype(auto) visit(F&& f) {
        return width_ == 1 ? f(u8_) : width_ == 2 ? f(u16_) : f(u32_);
    }
    template<typename F>
    decltype(auto) visit(F&& f) const {
        return width_ == 1 ? f(u8_) : width_ == 2 ? f(u16_) : f(u32_);
    }

    [[nodiscard]] unsigned width() const noexcept { return width_; }
    [[nodiscard]] std::size_t size() const noexcept {
        return width_ == 1 ? u8_.size() : width_ == 2 ? u16_.size() : u32_.size();
    }
    /// Resizes; new values are left uninitialised (write them).
    void resize(std::size_t n) {
        visit([n](auto& v) { v.resize(n); });
    }
    void clear() noexcept {
        u8_.clear();
        u16_.clear();
        u32_.clear();
    }
    void reserve(std::size_t n) {
        visit([n](auto& v) { v.reserve(n); });
    }
    [[nodiscard]] std::uint32_t get(std::size_t i) const noexcept {
        return width_ == 1 ? u8_[i] : width_ == 2 ? u16_[i] : u32_[i];
    }
    void set(std::size_t i, std::uint32_t value) noexcept {
        if (width_ == 1) {
            u8_[i] = static_cast<std::uint8_t>(value);
        } else if (width_ == 2) {
            u16_[i] = static_cast<std::uint16_t>(value);
        } else {
            u32_[i] = value;
        }
    }
    void push_back(std::uint32_t value) {
        if (width_ == 1) {
            u8_.push_back(static_cast<std::uint8_t>(value));
        } else if (width_ == 2) {
            u16_.push_back(static_cast<std::uint16_t>(value));
        } else {
            u32_.push_back(value);
        }
    }
    [[nodiscard]] void* raw() noexcept {
        return width_ == 1   ? static_cast<void*>(u8_.data())
               : width_ == 2 ? static_cast<void*>(u16_.data())
                             : static_cast<void*>(u32_.data());
    }
    [[nodiscard]] const void* raw() const noexcept { return const_cast<field_column*>(this)->raw(); }

    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        return u8_.capacity() + u16_.capacity() * 2 + u32_.capacity() * 4;
    }
    /// Releases spare capacity.
    void shrink_to_fit() {
        visit([](auto& v) { v.shrink_to_fit(); });
    }

    bool operator==(const field_column& other) const {
        return width_ == other.width_ && u8_ == other.u8_ && u16_ == other.u16_ && u32_ == other.u32_;
    }

private:
    unsigned width_;
    detail::column_vector<std::uint8_t> u8_;
    detail::column_vector<std::uint16_t> u16_;
    detail::column_vector<std::uint32_t> u32_;
};

struct component_state {
    /// True when the component's ids are exactly the state's entities (then `own_ids` is empty).
    bool ids_are_entities{true};
    id_column own_ids;
    std::vector<field_column> fields;
};

class replicated_state {
public:
    replicated_state() = default;
    explicit replicated_state(const schema_layout& layout) { reset(layout); }

    /// Empties every column (keeping capacity) and shapes them after `layout`.
    void reset(const schema_layout& layout);

    tick_type tick{};
    /// State checksum (checksum.hpp).
    std::uint64_t checksum{};
    /// Server time of the tick, microseconds since the server's epoch.
    std::uint64_t server_time_us{};

    /// The entity ids as a compact array. Client states do not build it unless asked (entity_ids()): they
    /// keep the flat form, which is faster to rebuild every tick; read through entity_ids() or flat().
    mutable id_column entities;
    /// True when `entities` is not built and the flat form (flat_valid) is the truth.
    mutable bool entities_stale{false};
    std::vector<std::uint32_t> generations;
    std::vector<component_state> components;

    /// A cache of `entities` as a flat array, filled by whoever builds the state (capture, apply_delta);
    /// valid when flat_valid. Saves decoding the compact ids again when the state serves as a baseline.
    std::vector<std::uint32_t> flat_entities;
    bool flat_valid{false};

    /// The tick this state's changes are listed against (a client state: its baseline; a recent server
    /// state: the previous tick), and per component the positions (in this state's columns) of the entries
    /// that continue from it with other values. Deltas whose baselines chain the same way visit only these
    /// entries instead of comparing whole columns.
    std::optional<tick_type> written_since;
    std::vector<std::vector<std::uint32_t>> written;
    /// With written_since: the entities that continue from that tick with the same occupant, as runs
    /// (t: positions in this state's entities, b: in that tick's; p unused). Everything else here was
    /// created since, everything else there destroyed. A delta whose second baseline is that tick composes
    /// these runs with its own instead of aligning the entity lists again (delta_runs.hpp, compose_runs).
    std::vector<aligned_run> continuing;

    /// The entities as a flat array: the cache when valid, else decoded into `scratch`.
    [[nodiscard]] const std::vector<std::uint32_t>& flat(std::vector<std::uint32_t>& scratch) const;

    /// The entity ids as a compact array (built from the flat form on first use if needed).
    [[nodiscard]] const id_column& entity_ids() const;
    [[nodiscard]] std::size_t entity_count() const noexcept {
        return entities_stale ? flat_entities.size() : entities.size();
    }

    [[nodiscard]] const id_column& ids(std::size_t component) const {
        const auto& c = components[component];
        return c.ids_are_entities ? entity_ids() : c.own_ids;
    }
    [[nodiscard]] std::size_t size(std::size_t component) const {
        const auto& c = components[component];
        return c.ids_are_entities ? entity_count() : c.own_ids.size();
    }

    /// Heap bytes held (ids, generations, field columns), for memory accounting.
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

    /// Same entities, generations (when both have them) and quantized components.
    [[nodiscard]] bool same_contents(const replicated_state& other, bool compare_generations = true) const;
    /// A readable description of the first difference from `other` ("" if none), for tests and logs.
    [[nodiscard]] std::string first_difference(const replicated_state& other, const schema_layout& layout,
                                               bool compare_generations = true) const;
};

/// Copies the ids of `column` into `out` (resized), in order.
void flatten(const id_column& column, std::vector<std::uint32_t>& out);

} // namespace ecsnet::proto
