#pragma once

// The registry: creates and recycles entities, owns one storage per component type, keeps a bitset of
// components per entity, fires signals, and builds views.
//
// Entities: destroyed indices are recycled (most recently freed first) with their version bumped, so a
// stale identifier is never valid() again until its version wraps after 4096 reuses of the same slot.
// Every function taking an entity requires a valid one: checked in debug builds (ECSNET_ASSERT), undefined
// behaviour in release builds, except valid(), try_get() and current() which accept anything.
//
// Component bitsets (seed 001, "Component bitset creation"): one bit per component type per entity, in a
// flat array of 64-bit words. They make destroy() visit only the pools the entity is in (instead of probing
// every pool, a cache miss each), and all_of/any_of a single load; see BM_DestroyManyPools in
// bench/RESULTS.md for what that buys.
//
// Signals: on_construct<T> after a component is added, on_update<T> after patch() or replace(),
// on_destroy<T> before a component is removed (the component is still readable then). Listeners receive
// (registry&, entity).
//
// Not thread-safe: one thread mutates a registry at a time. Concurrent readers of distinct pools are fine
// once every pool they touch exists (the scheduler creates them up front).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "config.hpp"
#include "entity.hpp"
#include "sigh.hpp"
#include "sparse_set.hpp"
#include "storage.hpp"
#include "type_info.hpp"
#include "type_list.hpp"
#include "view.hpp"

namespace ecsnet {

template<capacity_policy Capacity = dynamic_capacity>
class basic_registry {
public:
    using capacity_type = Capacity;
    using base_type = sparse_set<Capacity>;
    using size_type = std::size_t;
    using signal_type = sigh<void(basic_registry&, entity)>;
    using sink_type = sink<signal_type>;

    /// The storage type of component Type (const-qualified if Type is).
    template<typename Type>
    using storage_for_t = std::conditional_t<std::is_const_v<Type>,
                                             const ecsnet::storage<std::remove_const_t<Type>, Capacity>,
                                             ecsnet::storage<std::remove_const_t<Type>, Capacity>>;

    template<typename... Type>
    using view_type = basic_view<get_t<storage_for_t<Type>...>, exclude_t<>>;

    basic_registry() {
        if constexpr (Capacity::is_fixed) {
            entities_.reserve(Capacity::value);
            masks_.reserve(Capacity::value);
        }
    }
    // Signals and views point into the registry: it stays where it is.
    basic_registry(const basic_registry&) = delete;
    basic_registry& operator=(const basic_registry&) = delete;

    // ---- entities ----------------------------------------------------------------------------------

    /// Creates an entity, recycling a destroyed index if there is one. Throws capacity_error when every
    /// index is taken.
    [[nodiscard]] entity create() {
        if (free_head_ != null_index) {
            const auto index = free_head_;
            const auto version = to_version(entities_[index]);
            free_head_ = to_index(entities_[index]);
            entities_[index] = entity_traits::construct(index, version);
            ++alive_;
            return entities_[index];
        }
        const auto index = entities_.size();
        if (index > max_entities() - 1) {
            throw capacity_error("registry full: " + std::to_string(max_entities()) + " entities");
        }
        entities_.push_back(entity_traits::construct(static_cast<entity_traits::integral_type>(index), 0));
        masks_.resize(masks_.size() + words_);
        ++alive_;
        return entities_.back();
    }

    /// Removes every component of `e` (firing on_destroy for each), then frees its index. O(components).
    void destroy(entity e) {
        ECSNET_ASSERT(valid(e), "destroy of an invalid entity");
        const auto index = to_index(e);
        // Listeners may add components while others are removed: stop only once the whole mask is clear.
        for (bool any = true; any;) {
            any = false;
            for (size_type word = 0; word < words_; ++word) {
                while (const auto bits = masks_[index * words_ + word]) {
                    any = true;
                    erase_component(*records_[word * 64 + static_cast<size_type>(std::countr_zero(bits))], e);
                }
            }
        }
        entities_[index] = entity_traits::construct(free_head_, entity_traits::next_version(to_version(e)));
        free_head_ = index;
        --alive_;
    }

    /// Whether `e` is a live entity of this registry (false for null and for stale identifiers).
    [[nodiscard]] bool valid(entity e) const noexcept {
        const auto index = to_index(e);
        return index < entities_.size() && entities_[index] == e;
    }

    /// The identifier a live entity with this index has now, or null_entity.
    [[nodiscard]] entity current(entity_traits::integral_type index) const noexcept {
        return index < entities_.size() && to_index(entities_[index]) == index ? entities_[index] : null_entity;
    }

    /// Number of live entities.
    [[nodiscard]] size_type alive() const noexcept { return alive_; }

    [[nodiscard]] static constexpr size_type max_entities() noexcept {
        if constexpr (Capacity::is_fixed) {
            return Capacity::value;
        } else {
            return size_type{entity_traits::max_index} + 1;
        }
    }

    /// Calls func(entity) for every live entity, by ascending index.
    template<typename Func>
    void each(Func func) const {
        for (size_type index = 0; index < entities_.size(); ++index) {
            if (to_index(entities_[index]) == index) {
                func(entities_[index]);
            }
        }
    }

    // ---- components --------------------------------------------------------------------------------

    /// Gives `e` a component of type Type built from args; fires on_construct<Type>. Returns a reference to
    /// it (nothing for a tag). Precondition: `e` is valid and has no Type yet.
    template<typename Type, typename... Args>
    decltype(auto) emplace(entity e, Args&&... args) {
        ECSNET_ASSERT(valid(e), "emplace on an invalid entity");
        auto& record = assure<Type>();
        auto& pool = static_cast<ecsnet::storage<Type, Capacity>&>(*record.pool);
        ECSNET_ASSERT(!pool.contains(e), "the entity already has this component");
        if constexpr (ecsnet::storage<Type, Capacity>::is_tag) {
            pool.emplace(e, std::forward<Args>(args)...);
            set_bit(e, record.bit);
            record.on_construct.publish(*this, e);
        } else {
            auto& component = pool.emplace(e, std::forward<Args>(args)...);
            set_bit(e, record.bit);
            if (record.on_construct.empty()) {
                return component;
            }
            record.on_construct.publish(*this, e);
            return pool.get(e); // a listener may have moved it
        }
    }

    /// Replaces the component of `e` with one built from args; fires on_update<Type>.
    template<typename Type, typename... Args>
    Type& replace(entity e, Args&&... args) {
        return patch<Type>(e, [&args...](Type& component) {
            component = make_component<Type>(std::forward<Args>(args)...);
        });
    }

    /// Emplaces or replaces, whichever applies.
    template<typename Type, typename... Args>
    decltype(auto) emplace_or_replace(entity e, Args&&... args) {
        if (all_of<Type>(e)) {
            return replace<Type>(e, std::forward<Args>(args)...);
        }
        return emplace<Type>(e, std::forward<Args>(args)...);
    }

    /// The component of `e`, emplaced from args first if it has none.
    template<typename Type, typename... Args>
    Type& get_or_emplace(entity e, Args&&... args) {
        if (auto* component = try_get<Type>(e)) {
            return *component;
        }
        return emplace<Type>(e, std::forward<Args>(args)...);
    }

    /// Calls each func(Type&) on the component of `e`, then fires on_update<Type>.
    template<typename Type, typename... Func>
    Type& patch(entity e, Func&&... func) {
        ECSNET_ASSERT(valid(e), "patch on an invalid entity");
        auto& record = assure<Type>();
        auto& pool = static_cast<ecsnet::storage<Type, Capacity>&>(*record.pool);
        auto& component = pool.get(e);
        (std::forward<Func>(func)(component), ...);
        if (record.on_update.empty()) {
            return component;
        }
        record.on_update.publish(*this, e);
        return pool.get(e);
    }

    /// Removes the given components of `e` where present (firing on_destroy); returns how many it removed.
    template<typename... Type>
    size_type remove(entity e) {
        ECSNET_ASSERT(valid(e), "remove on an invalid entity");
        return (size_type{0} + ... + remove_one<Type>(e));
    }

    /// Removes components `e` is known to have.
    template<typename... Type>
    void erase(entity e) {
        ECSNET_ASSERT(valid(e), "erase on an invalid entity");
        ECSNET_ASSERT(all_of<Type...>(e), "erase of a component the entity does not have");
        (erase_component(assure<Type>(), e), ...);
    }

    /// The components of `e` (one reference, or a tuple of them). Precondition: it has them.
    template<typename... Type>
    [[nodiscard]] decltype(auto) get(entity e) {
        ECSNET_ASSERT(valid(e), "get on an invalid entity");
        if constexpr (sizeof...(Type) == 1) {
            return (pool_of<Type...>().get(e));
        } else {
            return std::forward_as_tuple(pool_of<Type>().get(e)...);
        }
    }
    template<typename... Type>
    [[nodiscard]] decltype(auto) get(entity e) const {
        ECSNET_ASSERT(valid(e), "get on an invalid entity");
        if constexpr (sizeof...(Type) == 1) {
            return (std::as_const(pool_of<Type...>()).get(e));
        } else {
            return std::forward_as_tuple(std::as_const(pool_of<Type>()).get(e)...);
        }
    }

    /// The component of `e`, or nullptr if it has none or `e` is not valid.
    template<typename Type>
    [[nodiscard]] Type* try_get(entity e) noexcept {
        auto* pool = find_pool<Type>();
        return pool == nullptr ? nullptr : pool->try_get(e);
    }
    template<typename Type>
    [[nodiscard]] const Type* try_get(entity e) const noexcept {
        const auto* pool = find_pool<Type>();
        return pool == nullptr ? nullptr : pool->try_get(e);
    }

    template<typename... Type>
    [[nodiscard]] bool all_of(entity e) const noexcept {
        ECSNET_ASSERT(valid(e), "all_of on an invalid entity");
        return (has_bit<Type>(e) && ...);
    }

    template<typename... Type>
    [[nodiscard]] bool any_of(entity e) const noexcept {
        ECSNET_ASSERT(valid(e), "any_of on an invalid entity");
        return (has_bit<Type>(e) || ...);
    }

    /// Whether `e` has no component at all.
    [[nodiscard]] bool orphan(entity e) const noexcept {
        ECSNET_ASSERT(valid(e), "orphan on an invalid entity");
        const auto* first = masks_.data() + to_index(e) * words_;
        return std::all_of(first, first + words_, [](std::uint64_t word) { return word == 0; });
    }

    /// Removes every component of the given types from every entity (firing on_destroy where connected).
    /// O(size of those pools).
    template<typename... Type>
    void clear() {
        if constexpr (sizeof...(Type) == 0) {
            clear_everything();
        } else {
            (clear_pool(assure<Type>()), ...);
        }
    }

    // ---- pools, signals, views ---------------------------------------------------------------------

    /// Read access to the storage of Type (created empty if missing). Mutate through the registry (or a
    /// view's component references) so that bitsets, signals and groups stay in step.
    template<typename Type>
    [[nodiscard]] const ecsnet::storage<Type, Capacity>& storage() {
        return static_cast<const ecsnet::storage<Type, Capacity>&>(*assure<Type>().pool);
    }

    /// The storage of Type, or nullptr if the registry has never seen Type.
    template<typename Type>
    [[nodiscard]] const ecsnet::storage<Type, Capacity>* try_storage() const noexcept {
        return find_pool<Type>();
    }

    template<typename Type>
    [[nodiscard]] sink_type on_construct() {
        return sink_type{assure<Type>().on_construct};
    }
    template<typename Type>
    [[nodiscard]] sink_type on_update() {
        return sink_type{assure<Type>().on_update};
    }
    template<typename Type>
    [[nodiscard]] sink_type on_destroy() {
        return sink_type{assure<Type>().on_destroy};
    }

    /// A view of the entities that have every Type (const Type for read-only) and none of Exclude.
    template<typename... Type, typename... Exclude>
    [[nodiscard]] basic_view<get_t<storage_for_t<Type>...>, exclude_t<storage_for_t<const Exclude>...>>
    view(exclude_t<Exclude...> = exclude_t<>{}) {
        return {std::tuple<storage_for_t<Type>*...>{&mutable_pool<std::remove_const_t<Type>>()...},
                std::tuple<storage_for_t<const Exclude>*...>{&mutable_pool<Exclude>()...}};
    }

    /// Creates the storage of each Type now (it is otherwise created on first use), e.g. before threads
    /// start reading the registry.
    template<typename... Type>
    void prepare() {
        (static_cast<void>(assure<Type>()), ...);
    }

    /// Number of component types this registry has a storage for.
    [[nodiscard]] size_type pool_count() const noexcept { return records_.size(); }

    /// The name of the component type behind the i-th storage (in order of creation), for diagnostics.
    [[nodiscard]] std::string_view pool_name(size_type i) const noexcept { return records_[i]->name; }

    /// The i-th storage, type-erased (read-only): for diagnostics, tests and benchmarks.
    [[nodiscard]] const base_type& pool_at(size_type i) const noexcept { return *records_[i]->pool; }

private:
    static constexpr auto null_index = entity_traits::index_mask;
    static constexpr id_type no_bit = ~id_type{};

    struct pool_record {
        std::unique_ptr<base_type> pool;
        signal_type on_construct;
        signal_type on_update;
        signal_type on_destroy;
        id_type bit{};
        std::string_view name;
    };

    template<typename Type, typename... Args>
    static Type make_component(Args&&... args) {
        if constexpr (std::is_aggregate_v<Type>) {
            return Type{std::forward<Args>(args)...};
        } else {
            return Type(std::forward<Args>(args)...);
        }
    }

    template<typename Type>
    pool_record& assure() {
        static_assert(std::is_same_v<Type, std::remove_cvref_t<Type>>, "pools are of plain component types");
        const auto id = type_id<Type>();
        if (id < by_type_.size() && by_type_[id] != nullptr) {
            return *by_type_[id];
        }
        auto record = std::make_unique<pool_record>();
        record->pool = std::make_unique<ecsnet::storage<Type, Capacity>>();
        record->bit = static_cast<id_type>(records_.size());
        record->name = type_name<Type>();
        if (id >= by_type_.size()) {
            by_type_.resize(id + 1, nullptr);
            pools_.resize(id + 1, nullptr);
        }
        if (records_.size() == words_ * 64) {
            widen_masks();
        }
        by_type_[id] = record.get();
        pools_[id] = record->pool.get();
        records_.push_back(std::move(record));
        return *records_.back();
    }

    template<typename Type>
    [[nodiscard]] ecsnet::storage<Type, Capacity>* find_pool() const noexcept {
        const auto id = type_id<Type>();
        return id < pools_.size() ? static_cast<ecsnet::storage<Type, Capacity>*>(pools_[id]) : nullptr;
    }

    template<typename Type>
    [[nodiscard]] ecsnet::storage<Type, Capacity>& mutable_pool() {
        return static_cast<ecsnet::storage<Type, Capacity>&>(*assure<Type>().pool);
    }

    // The pool of a component the caller knows exists (an entity has it).
    template<typename Type>
    [[nodiscard]] ecsnet::storage<std::remove_const_t<Type>, Capacity>& pool_of() const noexcept {
        auto* pool = find_pool<std::remove_const_t<Type>>();
        ECSNET_ASSERT(pool != nullptr, "no entity has this component");
        return *pool;
    }

    template<typename Type>
    [[nodiscard]] bool has_bit(entity e) const noexcept {
        const auto id = type_id<Type>();
        if (id >= by_type_.size() || by_type_[id] == nullptr) {
            return false;
        }
        const auto bit = by_type_[id]->bit;
        return ((masks_[to_index(e) * words_ + bit / 64] >> (bit % 64)) & 1U) != 0;
    }

    void set_bit(entity e, id_type bit) noexcept { masks_[to_index(e) * words_ + bit / 64] |= std::uint64_t{1} << (bit % 64); }
    void reset_bit(entity e, id_type bit) noexcept {
        masks_[to_index(e) * words_ + bit / 64] &= ~(std::uint64_t{1} << (bit % 64));
    }

    template<typename Type>
    size_type remove_one(entity e) {
        auto* pool = find_pool<Type>();
        if (pool == nullptr || !pool->contains(e)) {
            return 0;
        }
        erase_component(*by_type_[type_id<Type>()], e);
        return 1;
    }

    void erase_component(pool_record& record, entity e) {
        record.on_destroy.publish(*this, e);
        // A listener may already have removed it (or destroyed the entity's other components).
        if (record.pool->remove(e)) {
            reset_bit(e, record.bit);
        }
    }

    void clear_pool(pool_record& record) {
        auto& pool = *record.pool;
        if (record.on_destroy.empty()) {
            for (const auto e : pool) {
                reset_bit(e, record.bit);
            }
            pool.clear();
        } else {
            while (!pool.empty()) {
                erase_component(record, pool.data()[pool.size() - 1]);
            }
        }
    }

    // Destroys every entity: O(entities). Fires on_destroy for every component where connected.
    void clear_everything() {
        for (auto& record : records_) {
            clear_pool(*record);
        }
        std::fill(masks_.begin(), masks_.end(), std::uint64_t{0});
        // Relink every slot into the free list in ascending order; live ones get a new version.
        auto head = null_index;
        for (auto index = entities_.size(); index != 0;) {
            --index;
            const bool live = to_index(entities_[index]) == index;
            const auto version = live ? entity_traits::next_version(to_version(entities_[index]))
                                      : to_version(entities_[index]);
            entities_[index] = entity_traits::construct(head, version);
            head = static_cast<entity_traits::integral_type>(index);
        }
        free_head_ = head;
        alive_ = 0;
    }

    // A 65th component type: give every entity one more word of bits.
    void widen_masks() {
        const auto wider = words_ + 1;
        std::vector<std::uint64_t> masks(entities_.size() * wider, 0);
        for (size_type index = 0; index < entities_.size(); ++index) {
            std::copy_n(masks_.begin() + static_cast<std::ptrdiff_t>(index * words_), words_,
                        masks.begin() + static_cast<std::ptrdiff_t>(index * wider));
        }
        masks_.swap(masks);
        words_ = wider;
    }

    std::vector<entity> entities_;
    entity_traits::integral_type free_head_{null_index};
    size_type alive_{};

    std::vector<std::uint64_t> masks_; // words_ words per entity index
    size_type words_{1};

    std::vector<std::unique_ptr<pool_record>> records_; // by bit, in order of creation
    std::vector<pool_record*> by_type_;                 // by type_id, null where unused
    std::vector<base_type*> pools_;                     // by type_id: the fast path of get()
};

using registry = basic_registry<dynamic_capacity>;

} // namespace ecsnet
