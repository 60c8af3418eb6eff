#pragma once

// The registry: creates and recycles entities, owns one storage per component type, keeps a bitset of
// components per entity, fires signals, builds views and groups, and sorts pools.
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
// Groups (group.hpp, seed 002_c01289adc68b0dd6.txt): group<A, B>(get<C>, exclude<D>) is created on first
// request (filled from the existing entities) and returned as is afterwards; the registry keeps it exact on
// every emplace, remove, destroy and clear, before on_construct listeners run and after on_destroy
// listeners did. A request that conflicts with an existing group over a pool throws group_error.
//
// Sorting (sort.hpp, seed 000_19edbd8e7898577e.txt): sort<T>(compare) and sort_as<To, From>() reorder a
// pool; both throw group_error for a pool a group owns (sort the group instead).
//
// Not thread-safe: one thread mutates a registry at a time. Concurrent readers of distinct pools are fine
// once every pool they touch exists (the scheduler creates them up front).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "config.hpp"
#include "entity.hpp"
#include "entity_pool_image.hpp"
#include "group.hpp"
#include "huge_vector.hpp"
#include "sigh.hpp"
#include "sort.hpp"
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
    using storage_for_t =
        std::conditional_t<std::is_const_v<Type>, const ecsnet::storage<std::remove_const_t<Type>, Capacity>,
                           ecsnet::storage<std::remove_const_t<Type>, Capacity>>;

    template<typename... Type>
    using view_type = basic_view<get_t<storage_for_t<Type>...>, exclude_t<>>;

    /// The type registry.group<Owned...>(get<Get...>, exclude<Exclude...>) returns.
    template<typename Owned, typename Get = get_t<>, typename Exclude = exclude_t<>>
    using group_type = typename detail::group_type_of<Capacity, Owned, Get, Exclude>::type;

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
        for (size_type word = 0; word < words_; ++word) {
            masks_.push_back(0); // push_back stays inline; resize() is an out-of-line call (BM_Create)
        }
        ++alive_;
        return entities_.back();
    }

    /// Removes every component of `e` (firing on_destroy for each), then frees its index. O(components).
    void destroy(entity e) {
        ECSNET_ASSERT(valid(e), "destroy of an invalid entity");
        const auto index = to_index(e);
        auto* const mask = masks_.data() + index * words_;
        // Walk a copy of the bits (waiting for the mask after every removal would serialise them). A pool
        // nobody watches (no on_destroy listener, no group) just lets the entity go; its bits are cleared
        // at the end. The first watched pool runs the general path for the rest: listeners may remove or
        // add components of `e` meanwhile.
        for (size_type word = 0; word < words_; ++word) {
            for (auto bits = mask[word]; bits != 0; bits &= bits - 1) {
                const auto bit =
                    static_cast<id_type>(word * 64 + static_cast<size_type>(std::countr_zero(bits)));
                auto& record = *records_[bit];
                if (!record.watched_on_destroy()) [[likely]] {
                    record.pool->erase(e);
                    continue;
                }
                clear_bits_before(mask, bit);
                destroy_watched(e);
                free_index(e);
                return;
            }
        }
        // Not fill_n: with a count not known at compile time it becomes a call to memset.
        for (size_type word = 0; word < words_; ++word) {
            mask[word] = 0;
        }
        free_index(e);
    }

    /// Whether `e` is a live entity of this registry (false for null and for stale identifiers).
    [[nodiscard]] bool valid(entity e) const noexcept {
        const auto index = to_index(e);
        return index < entities_.size() && entities_[index] == e;
    }

    /// The identifier a live entity with this index has now, or null_entity.
    [[nodiscard]] entity current(entity_traits::integral_type index) const noexcept {
        return index < entities_.size() && to_index(entities_[index]) == index ? entities_[index]
                                                                               : null_entity;
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

    /// A copy of the entity slots, live and free (entity_pool_image.hpp). O(slots).
    [[nodiscard]] entity_pool_image entity_pool() const {
        return entity_pool_image{std::vector<entity>(entities_.begin(), entities_.end()), free_head_};
    }
    /// The same into `out`, reusing its memory (a copy taken again and again, as checkpoints are).
    void entity_pool(entity_pool_image& out) const {
        out.slots.assign(entities_.begin(), entities_.end());
        out.free_head = free_head_;
    }

    /// Makes the entity slots those of `image`: its live entities become valid, with their versions, and
    /// create() then recycles its free slots in its order. The registry must hold no live entity (after
    /// clear(), for instance); components are added afterwards as usual. Throws std::invalid_argument,
    /// changing nothing, when the registry has live entities or the image is inconsistent (a slot past the
    /// maximum, a free list that loops, leaves the slots, or misses a free slot).
    void restore_entity_pool(const entity_pool_image& image) {
        if (alive_ != 0) {
            throw std::invalid_argument("restore_entity_pool on a registry with live entities");
        }
        if (auto wrong = entity_pool_image_error(image, max_entities())) {
            throw std::invalid_argument(*wrong);
        }
        entities_.clear();
        masks_.clear();
        for (const auto slot : image.slots) {
            entities_.push_back(slot);
            for (size_type word = 0; word < words_; ++word) {
                masks_.push_back(0);
            }
        }
        free_head_ = image.free_head;
        alive_ = live_entities(image);
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
        return emplace_into(record, static_cast<ecsnet::storage<Type, Capacity>&>(*record.pool), e,
                            std::forward<Args>(args)...);
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
        return patch_component(record, pool, e, pool.get(e), std::forward<Func>(func)...);
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

private:
    struct pool_record;

public:
    /// A typed handle to the pool and signals of one component type, from pool_handle<Type>(): the same
    /// emplace, patch, replace and remove as the registry's (same signals, bitsets and groups), without
    /// finding the pool again on every call. For loops that write one component type many times (the
    /// replication mirror applies thousands of patches a tick).
    /// Complexity: each call is the registry's minus its type lookup (contains, try_get, try_patch: one
    /// sparse lookup). Invalidation: valid as long as the registry, which is neither copied nor moved and
    /// never destroys or moves a pool; component pointers and references follow the storage's rules
    /// (storage.hpp). Preconditions on entities are the registry's (checked in debug builds).
    template<typename Type>
    class pool_handle_type {
    public:
        using storage_type = ecsnet::storage<Type, Capacity>;

        /// Read access to the pool (mutate through the handle, so that signals and groups stay in step).
        [[nodiscard]] const storage_type& storage() const noexcept { return *pool_; }
        [[nodiscard]] bool contains(entity e) const noexcept { return pool_->contains(e); }
        /// The component of `e`, or nullptr if it has none (stale or invalid identifiers included).
        [[nodiscard]] Type* try_get(entity e) noexcept requires(!storage_type::is_tag) {
            return pool_->try_get(e);
        }

        /// registry.emplace<Type>(e, args...).
        template<typename... Args>
        decltype(auto) emplace(entity e, Args&&... args) {
            ECSNET_ASSERT(registry_->valid(e), "emplace on an invalid entity");
            return registry_->emplace_into(*record_, *pool_, e, std::forward<Args>(args)...);
        }
        /// registry.patch<Type>(e, func...).
        template<typename... Func>
        Type& patch(entity e, Func&&... func) requires(!storage_type::is_tag) {
            ECSNET_ASSERT(registry_->valid(e), "patch on an invalid entity");
            return registry_->patch_component(*record_, *pool_, e, pool_->get(e),
                                              std::forward<Func>(func)...);
        }
        /// patch(e, func...) if `e` has the component (one lookup for the test and the access); nullptr and
        /// nothing called or fired otherwise, also for a stale or invalid `e`.
        template<typename... Func>
        Type* try_patch(entity e, Func&&... func) requires(!storage_type::is_tag) {
            auto* component = pool_->try_get(e);
            if (component == nullptr) {
                return nullptr;
            }
            return &registry_->patch_component(*record_, *pool_, e, *component, std::forward<Func>(func)...);
        }
        /// registry.replace<Type>(e, args...).
        template<typename... Args>
        Type& replace(entity e, Args&&... args) requires(!storage_type::is_tag) {
            return patch(e, [&args...](Type& component) {
                component = make_component<Type>(std::forward<Args>(args)...);
            });
        }
        /// registry.remove<Type>(e): 1 if it had the component (on_destroy fired), else 0.
        size_type remove(entity e) {
            ECSNET_ASSERT(registry_->valid(e), "remove on an invalid entity");
            if (!pool_->contains(e)) {
                return 0;
            }
            registry_->erase_component(*record_, e);
            return 1;
        }

        [[nodiscard]] sink_type on_construct() const noexcept { return sink_type{record_->on_construct}; }
        [[nodiscard]] sink_type on_update() const noexcept { return sink_type{record_->on_update}; }
        [[nodiscard]] sink_type on_destroy() const noexcept { return sink_type{record_->on_destroy}; }

    private:
        friend class basic_registry;
        pool_handle_type(basic_registry& registry, pool_record& record) noexcept
            : registry_{&registry}
            , record_{&record}
            , pool_{static_cast<storage_type*>(record.pool)} {}

        basic_registry* registry_;
        pool_record* record_;
        storage_type* pool_;
    };

    /// The handle of Type's pool (created empty if missing), for repeated writes (pool_handle_type).
    template<typename Type>
    [[nodiscard]] pool_handle_type<Type> pool_handle() {
        return pool_handle_type<Type>{*this, assure<Type>()};
    }

    /// A view of the entities that have every Type (const Type for read-only) and none of Exclude.
    template<typename... Type, typename... Exclude>
    [[nodiscard]] basic_view<get_t<storage_for_t<Type>...>, exclude_t<storage_for_t<const Exclude>...>>
    view(exclude_t<Exclude...> = exclude_t<>{}) {
        return {std::tuple<storage_for_t<Type>*...>{&mutable_pool<std::remove_const_t<Type>>()...},
                std::tuple<storage_for_t<const Exclude>*...>{&mutable_pool<Exclude>()...}};
    }

    /// The group of the entities that have every Owned and Get type and no Exclude type (group.hpp), owning
    /// the pools of Owned... (const Type for read-only access): group<A, B>() full-owning,
    /// group<A>(get<B>) partial-owning, group<>(get<A, B>) non-owning. Created and filled on the first
    /// request, the same group afterwards (whatever the order the types are named in). Throws group_error
    /// if it would own a pool that an existing group owns and neither nests inside the other.
    template<typename... Owned, typename... Get, typename... Exclude>
    [[nodiscard]] group_type<owned_t<Owned...>, get_t<Get...>, exclude_t<Exclude...>>
    group(get_t<Get...> = get_t<>{}, exclude_t<Exclude...> = exclude_t<>{}) {
        static_assert(sizeof...(Owned) + sizeof...(Get) > 0, "a group needs at least one owned or get type");
        static_assert(
            detail::distinct_v<std::remove_const_t<Owned>..., std::remove_const_t<Get>..., Exclude...>,
            "a type appears twice in the group");
        using key = detail::group_key<owned_t<std::remove_const_t<Owned>...>,
                                      get_t<std::remove_const_t<Get>...>, exclude_t<Exclude...>>;
        const auto id = type_id<key>();
        if (id >= group_by_type_.size() || group_by_type_[id] == nullptr) {
            // Pools first: a new one may widen the bitsets the group's masks are built on.
            prepare<std::remove_const_t<Owned>..., std::remove_const_t<Get>..., Exclude...>();
            auto& handler = assure_group({bits_of<std::remove_const_t<Owned>...>(),
                                          bits_of<std::remove_const_t<Get>...>(), bits_of<Exclude...>()},
                                         {&mutable_pool<std::remove_const_t<Owned>>()...});
            if (id >= group_by_type_.size()) {
                group_by_type_.resize(id + 1, nullptr);
            }
            group_by_type_[id] = &handler;
        }
        return {*group_by_type_[id],
                std::tuple<ecsnet::storage<std::remove_const_t<Owned>, Capacity>*...>{
                    &mutable_pool<std::remove_const_t<Owned>>()...},
                std::tuple<storage_for_t<Get>*...>{&mutable_pool<std::remove_const_t<Get>>()...}};
    }

    /// group<Owned...>(get<>, exclude<Exclude...>).
    template<typename... Owned, typename... Exclude>
    [[nodiscard]] group_type<owned_t<Owned...>, get_t<>, exclude_t<Exclude...>>
    group(exclude_t<Exclude...> filter) {
        return group<Owned...>(get_t<>{}, filter);
    }

    /// Whether a group owns the pool of Type.
    template<typename Type>
    [[nodiscard]] bool owned() const noexcept {
        const auto id = type_id<Type>();
        return id < by_type_.size() && by_type_[id] != nullptr && owner_of(*by_type_[id]) != nullptr;
    }

    /// Sorts the pool of Type by compare(const Type&, const Type&) or compare(entity, entity) (sort.hpp,
    /// storage.hpp). Throws group_error if a group owns the pool: sort the group instead. Fires no signal.
    template<typename Type, typename Compare>
    void sort(Compare compare, sort_options options = {}) {
        refuse_if_owned(assure<Type>(), "sort");
        mutable_pool<Type>().sort(std::move(compare), options);
    }

    /// Sorts the pool of To like the pool of From: the entities both have first, in From's order, then the
    /// others; views over both then find them aligned. O(size of From's pool). Throws group_error if a
    /// group owns To's pool.
    template<typename To, typename From>
    void sort_as() {
        refuse_if_owned(assure<To>(), "sort_as");
        mutable_pool<To>().sort_as(mutable_pool<From>());
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

    using group_handler_type = detail::group_handler<Capacity>;

    // What the registry keeps per component type. The storage lives in the same allocation (see
    // typed_record), so destroy() reaches the signals and the pool of a bit with one dependent load.
    struct pool_record {
        pool_record(base_type& storage, id_type bit_index, std::string_view type) noexcept
            : pool{&storage}
            , bit{bit_index}
            , name{type} {}
        pool_record(const pool_record&) = delete;
        pool_record& operator=(const pool_record&) = delete;
        virtual ~pool_record() = default;

        [[nodiscard]] bool grouped() const noexcept { return in_groups; }
        /// Whether removing the component must run more than the pool's erase: listeners or groups.
        [[nodiscard]] bool watched_on_destroy() const noexcept { return in_groups || !on_destroy.empty(); }

        base_type* pool;
        id_type bit;
        std::string_view name;
        signal_type on_construct;
        signal_type on_update;
        signal_type on_destroy;
        // The groups whose signature names this type, outer groups first (see group.hpp, "Ownership").
        std::vector<group_handler_type*> requiring; // as an owned or get type
        std::vector<group_handler_type*> excluding;
        bool in_groups = false; // !requiring.empty() || !excluding.empty(), read on every emplace and erase
    };

    template<typename Type>
    struct typed_record final : pool_record {
        typed_record(id_type bit_index)
            : pool_record{storage, bit_index, type_name<Type>()} {}
        ecsnet::storage<Type, Capacity> storage;
    };

    template<typename Type, typename... Args>
    static Type make_component(Args&&... args) {
        if constexpr (std::is_aggregate_v<Type>) {
            return Type{std::forward<Args>(args)...};
        } else {
            return Type(std::forward<Args>(args)...);
        }
    }

    // The body of emplace() once the pool is known (shared with pool_handle).
    template<typename Type, typename... Args>
    decltype(auto) emplace_into(pool_record& record, ecsnet::storage<Type, Capacity>& pool, entity e,
                                Args&&... args) {
        ECSNET_ASSERT(!pool.contains(e), "the entity already has this component");
        if constexpr (ecsnet::storage<Type, Capacity>::is_tag) {
            pool.emplace(e, std::forward<Args>(args)...);
            set_bit(e, record.bit);
            if (record.grouped()) {
                groups_after_emplace(record, e);
            }
            record.on_construct.publish(*this, e);
        } else {
            auto& component = pool.emplace(e, std::forward<Args>(args)...);
            set_bit(e, record.bit);
            if (!record.grouped() && record.on_construct.empty()) {
                return component;
            }
            if (record.grouped()) {
                groups_after_emplace(record, e); // may move the component within its pool
            }
            record.on_construct.publish(*this, e);
            return pool.get(e); // a group or a listener may have moved it
        }
    }

    // The body of patch() once the component is found (shared with pool_handle).
    template<typename Type, typename... Func>
    Type& patch_component(pool_record& record, ecsnet::storage<Type, Capacity>& pool, entity e,
                          Type& component, Func&&... func) {
        (std::forward<Func>(func)(component), ...);
        if (record.on_update.empty()) {
            return component;
        }
        record.on_update.publish(*this, e);
        return pool.get(e);
    }

    template<typename Type>
    pool_record& assure() {
        static_assert(std::is_same_v<Type, std::remove_cvref_t<Type>>, "pools are of plain component types");
        const auto id = type_id<Type>();
        if (id < by_type_.size() && by_type_[id] != nullptr) {
            return *by_type_[id];
        }
        std::unique_ptr<pool_record> record =
            std::make_unique<typed_record<Type>>(static_cast<id_type>(records_.size()));
        if (id >= by_type_.size()) {
            by_type_.resize(id + 1, nullptr);
            pools_.resize(id + 1, nullptr);
        }
        if (records_.size() == words_ * 64) {
            widen_masks();
        }
        by_type_[id] = record.get();
        pools_[id] = record->pool;
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

    // The pool of a component the caller knows exists (an entity has it): no bounds check in release.
    template<typename Type>
    [[nodiscard]] ecsnet::storage<std::remove_const_t<Type>, Capacity>& pool_of() const noexcept {
        const auto id = type_id<Type>();
        ECSNET_ASSERT(id < pools_.size() && pools_[id] != nullptr, "no entity has this component");
        return *static_cast<ecsnet::storage<std::remove_const_t<Type>, Capacity>*>(pools_[id]);
    }

    [[nodiscard]] bool has_bit(entity e, id_type bit) const noexcept {
        return ((masks_[to_index(e) * words_ + bit / 64] >> (bit % 64)) & 1U) != 0;
    }

    template<typename Type>
    [[nodiscard]] bool has_bit(entity e) const noexcept {
        const auto id = type_id<Type>();
        if (id >= by_type_.size() || by_type_[id] == nullptr) {
            return false;
        }
        return has_bit(e, by_type_[id]->bit);
    }

    void set_bit(entity e, id_type bit) noexcept {
        masks_[to_index(e) * words_ + bit / 64] |= std::uint64_t{1} << (bit % 64);
    }
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

    // destroy() let the components below bit `bit` go without touching the mask: clear their bits.
    void clear_bits_before(std::uint64_t* mask, id_type bit) const noexcept {
        std::fill_n(mask, bit / 64, std::uint64_t{0});
        mask[bit / 64] &= ~((std::uint64_t{1} << (bit % 64)) - 1);
    }

    // The rest of destroy() once a watched pool comes up: a listener may remove or add components of `e`,
    // so each bit is checked before its removal, and the mask is read again until it is empty.
    ECSNET_NOINLINE void destroy_watched(entity e) {
        const auto index = to_index(e);
        do {
            for (size_type word = 0; word < words_; ++word) {
                for (auto bits = masks_[index * words_ + word]; bits != 0; bits &= bits - 1) {
                    const auto bit =
                        static_cast<id_type>(word * 64 + static_cast<size_type>(std::countr_zero(bits)));
                    if (has_bit(e, bit)) {
                        erase_component(*records_[bit], e);
                    }
                }
            }
        } while (!orphan(e));
    }

    void free_index(entity e) noexcept {
        const auto index = to_index(e);
        entities_[index] = entity_traits::construct(free_head_, entity_traits::next_version(to_version(e)));
        free_head_ = index;
        --alive_;
    }

    void erase_component(pool_record& record, entity e) {
        record.on_destroy.publish(*this, e);
        if (record.grouped()) {
            // A listener may already have removed it (or destroyed the entity's other components).
            if (!record.pool->contains(e)) {
                return;
            }
            groups_before_erase(record, e);
        }
        if (record.pool->remove(e)) {
            reset_bit(e, record.bit);
        }
    }

    [[nodiscard]] const std::uint64_t* mask_of(entity e) const noexcept {
        return masks_.data() + to_index(e) * words_;
    }

    // After `e` got the component of `record`: it may enter the groups requiring it (outer first) and
    // leaves those excluding it (inner first). Strong guarantee: if a non-owning group cannot grow, the
    // component is taken back and nothing changed.
    void groups_after_emplace(pool_record& record, entity e) {
        const auto* mask = mask_of(e);
        std::size_t entered = 0;
        try {
            for (; entered < record.requiring.size(); ++entered) {
                if (record.requiring[entered]->matches(mask)) {
                    record.requiring[entered]->enter(e);
                }
            }
        } catch (...) {
            while (entered-- != 0) {
                if (record.requiring[entered]->contains(e)) {
                    record.requiring[entered]->leave(e);
                }
            }
            reset_bit(e, record.bit);
            record.pool->remove(e);
            throw;
        }
        for (auto group = record.excluding.rbegin(); group != record.excluding.rend(); ++group) {
            if ((*group)->contains(e)) {
                (*group)->leave(e);
            }
        }
    }

    // Before `e` loses the component of `record` (its on_destroy listeners have run): it enters the groups
    // excluding it that it will match (outer first; these may throw, and then nothing changed), and leaves
    // the groups requiring it (inner first) while the component is still in its pool.
    void groups_before_erase(pool_record& record, entity e) {
        const auto* mask = mask_of(e);
        std::size_t entered = 0;
        try {
            for (; entered < record.excluding.size(); ++entered) {
                if (record.excluding[entered]->matches(mask, record.bit)) {
                    record.excluding[entered]->enter(e);
                }
            }
        } catch (...) {
            while (entered-- != 0) {
                if (record.excluding[entered]->contains(e)) {
                    record.excluding[entered]->leave(e);
                }
            }
            throw;
        }
        for (auto group = record.requiring.rbegin(); group != record.requiring.rend(); ++group) {
            if ((*group)->contains(e)) {
                (*group)->leave(e);
            }
        }
    }

    template<typename... Type>
    [[nodiscard]] std::vector<id_type> bits_of() {
        std::vector<id_type> bits{assure<Type>().bit...};
        std::sort(bits.begin(), bits.end());
        return bits;
    }

    // The outermost group owning the pool of `record`, or nullptr.
    [[nodiscard]] static const group_handler_type* owner_of(const pool_record& record) noexcept {
        for (const auto* group : record.requiring) {
            const auto& owned = group->types().owned;
            if (std::binary_search(owned.begin(), owned.end(), record.bit)) {
                return group;
            }
        }
        return nullptr;
    }

    void refuse_if_owned(const pool_record& record, const char* what) const {
        if (const auto* owner = owner_of(record)) {
            throw group_error(std::string{"cannot "} + what + " the pool of " + std::string{record.name} +
                              ": " + owner->name() + " owns it; sort the group instead");
        }
    }

    [[nodiscard]] std::string group_name(const typename group_handler_type::signature& types) const {
        const auto list = [this](const std::vector<id_type>& bits) {
            std::string names;
            for (const auto bit : bits) {
                names += (names.empty() ? "" : ", ") + std::string{records_[bit]->name};
            }
            return names;
        };
        std::string name = "group<" + list(types.owned) + ">";
        if (!types.get.empty() || !types.exclude.empty()) {
            name += "(";
            if (!types.get.empty()) {
                name += "get<" + list(types.get) + ">";
            }
            if (!types.exclude.empty()) {
                name += std::string{types.get.empty() ? "" : ", "} + "exclude<" + list(types.exclude) + ">";
            }
            name += ")";
        }
        return name;
    }

    // The group of this signature: the existing one, or a new one checked against the others, hooked into
    // its pools' records and filled from the entities that match now.
    group_handler_type& assure_group(typename group_handler_type::signature types,
                                     std::vector<base_type*> owned) {
        for (auto& group : groups_) {
            if (group->types() == types) {
                return *group;
            }
        }
        auto name = group_name(types);
        std::vector<group_handler_type*> outer;
        std::vector<group_handler_type*> inner;
        for (auto& group : groups_) {
            if (!types.shares_ownership(group->types())) {
                continue;
            }
            if (types.nests_inside(group->types())) {
                outer.push_back(group.get());
            } else if (group->types().nests_inside(types)) {
                inner.push_back(group.get());
            } else {
                const auto& theirs = group->types().owned;
                const auto shared =
                    *std::find_if(types.owned.begin(), types.owned.end(), [&theirs](id_type bit) {
                        return std::binary_search(theirs.begin(), theirs.end(), bit);
                    });
                throw group_error(
                    "cannot create " + name + ": it would own " + std::string{records_[shared]->name} +
                    ", which " + group->name() +
                    " owns, and neither group nests inside the other (the inner one must own every "
                    "type the outer one owns, and require and exclude at least as much)");
            }
        }
        auto handler =
            std::make_unique<group_handler_type>(std::move(name), std::move(types), std::move(owned), words_);
        auto& group = *handler;
        // Reserve every slot first, so that nothing can throw once the group is hooked in.
        groups_.reserve(groups_.size() + 1);
        for (const auto bit : group.types().required()) {
            records_[bit]->requiring.reserve(records_[bit]->requiring.size() + 1);
        }
        for (const auto bit : group.types().exclude) {
            records_[bit]->excluding.reserve(records_[bit]->excluding.size() + 1);
        }
        fill_group(group, inner);
        for (auto* outer_group : outer) {
            outer_group->add_nested(group);
        }
        if (!inner.empty()) {
            group.add_nested(*inner.front());
        }
        const auto by_rank = [](const group_handler_type* lhs, const group_handler_type* rhs) {
            return lhs->nesting_rank() < rhs->nesting_rank();
        };
        const auto hook = [&](std::vector<group_handler_type*>& list) {
            list.insert(std::upper_bound(list.begin(), list.end(), &group, by_rank), &group);
        };
        for (const auto bit : group.types().required()) {
            hook(records_[bit]->requiring);
            records_[bit]->in_groups = true;
        }
        for (const auto bit : group.types().exclude) {
            hook(records_[bit]->excluding);
            records_[bit]->in_groups = true;
        }
        groups_.push_back(std::move(handler));
        return group;
    }

    // A new group takes in the entities that match now. An owning group starts from the members of the
    // widest group nested inside it, which already sit in front of its pools. Then the shortest required
    // pool is walked front to back and every match enters (if that pool is owned, what a match swaps out
    // sits at a position already looked at). May throw (memory) for a non-owning group, before it is
    // hooked in.
    void fill_group(group_handler_type& group, const std::vector<group_handler_type*>& inner) {
        const base_type* shortest = nullptr;
        for (const auto bit : group.types().required()) {
            const auto* pool = records_[bit]->pool;
            shortest = (shortest == nullptr || pool->size() < shortest->size()) ? pool : shortest;
        }
        if (group.owning()) {
            std::size_t start = 0;
            for (const auto* nested : inner) {
                start = std::max(start, nested->extent());
            }
            group.start_from(start);
        }
        for (std::size_t pos = 0; pos < shortest->size(); ++pos) {
            const entity e = shortest->data()[pos];
            if (!group.contains(e) && group.matches(mask_of(e))) {
                group.enter(e);
            }
        }
    }

    void clear_pool(pool_record& record) {
        auto& pool = *record.pool;
        if (record.on_destroy.empty() && record.excluding.empty()) {
            // Every member of a group requiring this type leaves it at once.
            for (auto* group : record.requiring) {
                group->reset();
            }
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
        const bool observed = std::any_of(records_.begin(), records_.end(),
                                          [](const auto& record) { return !record->on_destroy.empty(); });
        if (observed) {
            for (auto& record : records_) {
                clear_pool(*record);
            }
        } else {
            // Nobody watches: every group empties and every pool clears at once; the bits are zeroed below.
            for (auto& group : groups_) {
                group->reset();
            }
            for (auto& record : records_) {
                record->pool->clear();
            }
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
        decltype(masks_) masks{max_entities() * wider};
        masks.resize(entities_.size() * wider, 0);
        for (size_type index = 0; index < entities_.size(); ++index) {
            std::copy_n(masks_.begin() + static_cast<std::ptrdiff_t>(index * words_), words_,
                        masks.begin() + static_cast<std::ptrdiff_t>(index * wider));
        }
        masks_.swap(masks);
        words_ = wider;
        for (auto& group : groups_) {
            group->widen();
        }
    }

    // The per-entity arrays are the registry's big ones: on huge pages once they reach 2 MiB.
    detail::huge_vector<entity> entities_{max_entities()};
    entity_traits::integral_type free_head_{null_index};
    size_type alive_{};

    // words_ words per entity index
    detail::huge_vector<std::uint64_t> masks_{max_entities()};
    size_type words_{1};

    std::vector<std::unique_ptr<pool_record>> records_; // by bit, in order of creation
    std::vector<pool_record*> by_type_;                 // by type_id, null where unused
    std::vector<base_type*> pools_;                     // by type_id: the fast path of get()

    std::vector<std::unique_ptr<group_handler_type>> groups_; // in order of creation
    std::vector<group_handler_type*> group_by_type_;          // by type_id of the group's key type
};

using registry = basic_registry<dynamic_capacity>;

} // namespace ecsnet
