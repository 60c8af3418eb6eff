#pragma once

// Groups (seed 002_c01289adc68b0dd6.txt): the entities that have all of some components and none of others,
// tracked as components come and go, so that iterating them needs no test.
//
// - Full-owning, registry.group<A, B>(): the group owns the pools of A and B. The entities that belong sit
//   at the front of every owned packed array, in the same order, and size() says how many; each() is one
//   forward loop over N raw arrays, no lookup.
// - Partial-owning, registry.group<A>(get<B>): owns A's pool, reads B's components through its sparse array.
// - Non-owning, registry.group<>(get<A, B>): owns nothing; keeps its own sparse set of the members.
// - Any kind may exclude types: registry.group<A>(get<B>, exclude<C>).
//
// Maintenance (seed 002, "Groups"): when an entity starts to match, it is swapped into the position just
// past the group's members in every owned pool and the extent advances; when it stops matching, it is
// swapped with the last member and the extent shrinks. The registry drives this from emplace, remove,
// destroy and clear, before the user's on_construct listeners run and after its on_destroy listeners
// (which still see the entity in its groups, unless destroy() already removed one of its other required
// components). Whether an entity matches is read from the registry's component bitsets: one load and two
// mask tests per 64 component types, whatever the number of types in the group.
//
// Invalidation: entering and leaving swap components within owned pools, so with an owning group any
// emplace or remove of a type in its signature may move other entities' components of the owned types
// (a reference or pointer to one then designates another entity's). data()/begin() of a group, like a
// pool's, are invalidated by any change of its members.
//
// Ownership: a pool has one layout, so a type may be owned by several groups only if they nest: for any
// two owning groups that share an owned type, one (the inner) must own every type the other owns, and
// require and exclude at least what the other requires and excludes. Its members are then a subset of
// the outer group's and sit in front of them, in the same order in every pool both own: both stay exact.
// Anything else is refused with a group_error naming both groups. Entering runs outer groups first,
// leaving runs inner groups first, so an inner group only ever swaps inside the outer group's members.
//
// Complexity: entering or leaving an owning group is one swap per owned pool; a non-owning group, one
// sparse-set insertion or removal. Building a group over existing entities walks its shortest pool once.
//
// Iteration: each(func) calls func(entity, components...) or func(components...), owned types first,
// then get types, tags left out, in the group's order (front to back). func may make the current entity
// leave the group (remove one of its components, give it an excluded one, destroy it): the entity swapped
// into its place is still visited and none twice. Any other structural change during each() is not
// allowed (in particular one that moves the entity within a group nested inside this one). begin()/end()
// walk the entity array and must not see the group change.
//
// Sorting: sort() reorders the group's members and, for an owning group, all its owned arrays together;
// refused (group_error) while another owning group is nested inside this one, whose layout it would break.
// A pool owned by a group cannot be sorted on its own (registry.sort refuses it).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "config.hpp"
#include "entity.hpp"
#include "sort.hpp"
#include "sparse_set.hpp"
#include "storage.hpp"
#include "type_info.hpp"
#include "type_list.hpp"
#include "view.hpp"

namespace ecsnet {

/// A group, or a sort, that would break a group's layout: a group conflicting with another over a pool,
/// sorting a pool a group owns, sorting a group another one is nested in. API misuse, reported in release
/// builds too.
class group_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

namespace detail {

/// Whether no type appears twice in Type...
template<typename... Type>
struct distinct : std::true_type {};
template<typename First, typename... Rest>
struct distinct<First, Rest...>
    : std::bool_constant<!(std::is_same_v<First, Rest> || ...) && distinct<Rest...>::value> {};
template<typename... Type>
inline constexpr bool distinct_v = distinct<Type...>::value;

/// The registry's record of a group: what every group object of the same signature shares, whatever the
/// order its types were named in. Not a template of the component types, so that the registry keeps one
/// list of them and calls into them while it adds and removes components.
template<typename Capacity>
class group_handler {
public:
    using base_type = sparse_set<Capacity>;
    using size_type = std::size_t;

    /// The pools involved, by registry bit, each list sorted.
    struct signature {
        std::vector<id_type> owned;
        std::vector<id_type> get;
        std::vector<id_type> exclude;

        [[nodiscard]] bool operator==(const signature&) const = default;

        /// owned and get together, sorted: what an entity must have.
        [[nodiscard]] std::vector<id_type> required() const {
            std::vector<id_type> all(owned);
            all.insert(all.end(), get.begin(), get.end());
            std::sort(all.begin(), all.end());
            return all;
        }

        /// Whether a group of this signature nests inside one of `outer` (see the header comment).
        [[nodiscard]] bool nests_inside(const signature& outer) const {
            const auto mine = required();
            const auto theirs = outer.required();
            return std::includes(mine.begin(), mine.end(), theirs.begin(), theirs.end()) &&
                   std::includes(exclude.begin(), exclude.end(), outer.exclude.begin(),
                                 outer.exclude.end()) &&
                   std::includes(owned.begin(), owned.end(), outer.owned.begin(), outer.owned.end());
        }

        [[nodiscard]] bool shares_ownership(const signature& other) const {
            return std::any_of(owned.begin(), owned.end(), [&other](id_type bit) {
                return std::binary_search(other.owned.begin(), other.owned.end(), bit);
            });
        }
    };

    group_handler(std::string name, signature sig, std::vector<base_type*> owned_pools, size_type words)
        : name_{std::move(name)}
        , signature_{std::move(sig)}
        , owned_{std::move(owned_pools)}
        , required_(words, 0)
        , excluded_(words, 0) {
        for (const auto bit : signature_.required()) {
            required_[bit / 64] |= std::uint64_t{1} << (bit % 64);
        }
        for (const auto bit : signature_.exclude) {
            excluded_[bit / 64] |= std::uint64_t{1} << (bit % 64);
        }
        if (owned_.empty()) {
            members_ = std::make_unique<base_type>();
        }
    }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const signature& types() const noexcept { return signature_; }
    [[nodiscard]] bool owning() const noexcept { return members_ == nullptr; }

    /// Outer groups are maintained first: fewer types required or excluded, then fewer owned.
    [[nodiscard]] std::pair<size_type, size_type> nesting_rank() const noexcept {
        return {signature_.owned.size() + signature_.get.size() + signature_.exclude.size(),
                signature_.owned.size()};
    }

    /// The number of members: an owning group's extent, or the size of its own set.
    [[nodiscard]] size_type size() const noexcept { return members_ == nullptr ? extent_ : members_->size(); }
    [[nodiscard]] size_type extent() const noexcept { return extent_; }
    [[nodiscard]] const base_type& members() const noexcept { return *members_; }
    [[nodiscard]] base_type& members() noexcept { return *members_; }

    [[nodiscard]] bool contains(entity e) const noexcept {
        return members_ == nullptr ? owned_.front()->find(e) < extent_ : members_->contains(e);
    }

    /// Whether an entity with these component bits belongs, pretending bit `cleared` is off (no_bit: none).
    [[nodiscard]] bool matches(const std::uint64_t* mask, id_type cleared = ~id_type{}) const noexcept {
        for (size_type word = 0; word < required_.size(); ++word) {
            auto bits = mask[word];
            if (cleared / 64 == word) {
                bits &= ~(std::uint64_t{1} << (cleared % 64));
            }
            if ((bits & required_[word]) != required_[word] || (bits & excluded_[word]) != 0) {
                return false;
            }
        }
        return true;
    }

    /// Takes in an entity that matches and is not a member yet. Only a non-owning group can throw (memory),
    /// and then nothing changed.
    void enter(entity e) {
        if (members_ == nullptr) {
            // A new entity usually is there already: just appended past the members. Checking the packed
            // array first spares the sparse lookup then.
            for (auto* pool : owned_) {
                if (pool->data()[extent_] != e) {
                    pool->swap_elements(pool->index(e), extent_);
                }
            }
            ++extent_;
        } else {
            members_->push(e);
        }
    }

    /// Lets a member go.
    void leave(entity e) noexcept {
        if (members_ == nullptr) {
            --extent_;
            for (auto* pool : owned_) {
                if (pool->data()[extent_] != e) {
                    pool->swap_elements(pool->index(e), extent_);
                }
            }
        } else {
            members_->erase(e);
        }
    }

    /// Every member leaves at once (the pool of a required type was cleared).
    void reset() noexcept {
        extent_ = 0;
        if (members_ != nullptr) {
            members_->clear();
        }
    }

    /// An owning group that starts with the members of the widest group nested inside it, already in
    /// front of every pool it owns.
    void start_from(size_type extent) noexcept { extent_ = extent; }

    /// The registry gained a 65th (129th...) component type.
    void widen() {
        required_.push_back(0);
        excluded_.push_back(0);
    }

    /// Another owning group now nests inside this one: sorting this one would break it.
    void add_nested(const group_handler& inner) {
        if (nested_.empty()) {
            nested_ = inner.name();
        }
    }

    /// Throws group_error if sorting this group would break a group nested inside it.
    void check_sortable() const {
        if (!nested_.empty()) {
            throw group_error(
                "cannot sort " + name_ + ": " + nested_ +
                " is nested inside it and sorting would break its layout; sort the inner group");
        }
    }

private:
    std::string name_;
    signature signature_;
    std::vector<base_type*> owned_;
    size_type extent_{};
    std::unique_ptr<base_type> members_; // non-owning groups only
    std::vector<std::uint64_t> required_;
    std::vector<std::uint64_t> excluded_;
    std::string nested_; // the first group nested inside this one, if any
};

} // namespace detail

template<typename, typename, typename>
class basic_group;

namespace detail {

/// The type that names a group's signature, for the registry's fast lookup of an existing group.
template<typename Owned, typename Get, typename Exclude>
struct group_key {};

template<typename Type, typename Capacity>
using group_storage_t =
    std::conditional_t<std::is_const_v<Type>, const storage<std::remove_const_t<Type>, Capacity>,
                       storage<std::remove_const_t<Type>, Capacity>>;

template<typename Capacity, typename Owned, typename Get, typename Exclude>
struct group_type_of;

template<typename Capacity, typename... Owned, typename... Get, typename... Exclude>
struct group_type_of<Capacity, owned_t<Owned...>, get_t<Get...>, exclude_t<Exclude...>> {
    using type =
        basic_group<owned_t<group_storage_t<Owned, Capacity>...>, get_t<group_storage_t<Get, Capacity>...>,
                    exclude_t<group_storage_t<const Exclude, Capacity>...>>;
};

} // namespace detail

/// A group over storages Owned... (owned) and Get... (read through their sparse arrays), excluding
/// Exclude...; const-qualified storages give read-only components. Built by basic_registry::group(); a
/// light handle, cheap to copy, valid as long as its registry. Like a view, a const handle still gives
/// mutable components and can sort: constness is the components'.
template<typename... Owned, typename... Get, typename... Exclude>
class basic_group<owned_t<Owned...>, get_t<Get...>, exclude_t<Exclude...>> {
    static_assert(sizeof...(Owned) + sizeof...(Get) > 0, "a group needs at least one owned or get type");

    using first_storage = std::remove_const_t<std::tuple_element_t<0, std::tuple<Owned..., Get...>>>;
    using capacity_type = typename first_storage::capacity_type;
    using handler_type = detail::group_handler<capacity_type>;
    using base_type = sparse_set<capacity_type>;
    using position_type = typename base_type::position_type;

    static constexpr bool owning = sizeof...(Owned) != 0;
    static constexpr std::size_t owned_count = sizeof...(Owned);

    using args_tuple = decltype(std::tuple_cat(std::declval<detail::each_args_t<Owned>>()...,
                                               std::declval<detail::each_args_t<Get>>()...));
    using entity_args_tuple = decltype(std::tuple_cat(std::tuple<entity>{}, std::declval<args_tuple>()));

public:
    using size_type = std::size_t;
    using iterator = const entity*;

    basic_group(handler_type& handler, std::tuple<std::remove_const_t<Owned>*...> owned,
                std::tuple<Get*...> get) noexcept
        : handler_{&handler}
        , owned_{owned}
        , get_{get} {}

    /// The number of entities in the group: exact, O(1).
    [[nodiscard]] size_type size() const noexcept {
        if constexpr (owning) {
            return handler_->extent();
        } else {
            return handler_->members().size();
        }
    }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }

    /// The members, in the group's order: data()[0..size()).
    [[nodiscard]] const entity* data() const noexcept {
        if constexpr (owning) {
            return std::get<0>(owned_)->data();
        } else {
            return handler_->members().data();
        }
    }
    [[nodiscard]] iterator begin() const noexcept { return data(); }
    [[nodiscard]] iterator end() const noexcept { return data() + size(); }
    [[nodiscard]] entity operator[](size_type pos) const noexcept {
        ECSNET_ASSERT(pos < size(), "position out of range");
        return data()[pos];
    }

    [[nodiscard]] bool contains(entity e) const noexcept { return handler_->contains(e); }

    /// The group as the registry names it, e.g. "group<Position, Velocity>(get<Health>)".
    [[nodiscard]] const std::string& name() const noexcept { return handler_->name(); }

    /// The component(s) of types Type... (of the group's owned or get types) of a member.
    template<typename... Type>
    [[nodiscard]] decltype(auto) get(entity e) const noexcept {
        static_assert(sizeof...(Type) > 0, "get<Type...>() names at least one component type");
        ECSNET_ASSERT(contains(e), "the entity is not in the group");
        if constexpr (sizeof...(Type) == 1) {
            return (pool_of<Type...>().get(e));
        } else {
            return std::forward_as_tuple(pool_of<Type>().get(e)...);
        }
    }

    /// Calls func(entity, components...) or func(components...) for every member, front to back (see the
    /// header comment for what func may change).
    template<typename Func>
    void each(Func func) const {
        each_in(0, ~size_type{}, func);
    }

    /// each() over the members at positions [first, last) only (clamped to size()): what a scheduler's
    /// parallel chunks iterate, each its own range.
    template<typename Func>
    void each_in(size_type first, size_type last, Func& func) const {
        static_assert(detail::applicable<Func&, entity_args_tuple>::value ||
                          detail::applicable<Func&, args_tuple>::value,
                      "each() takes func(entity, components...) or func(components...), tags left out");
        if constexpr (owning) {
            // N arrays side by side (seed 002, "Full-owning groups"), as a counted loop: after func, the
            // extent, the entity array and the current entity are read again, and any change hands the rest
            // of the walk to walk_changing(). When func only writes components, the compiler sees that none
            // of these can change, drops the test and vectorises the plain array loop (the entity array is
            // then not read at all). A loop whose bound or step is re-read after func is not countable and
            // stays scalar: 1.2x the floor here, 2.9x on a machine with faster memory (bench/RESULTS.md).
            const auto& lead = *std::get<0>(owned_);
            const entity* const entities = lead.data();
            const size_type extent = handler_->extent();
            const size_type end = std::min(last, extent);
            for (size_type pos = first; pos < end; ++pos) {
                const entity e = entities[pos];
                invoke(func, e, pos, std::index_sequence_for<Owned...>{}, std::index_sequence_for<Get...>{});
                if (handler_->extent() != extent || lead.data() != entities || entities[pos] != e)
                    [[unlikely]] {
                    walk_changing(pos, e, last, func);
                    return;
                }
            }
        } else {
            const auto& members = handler_->members();
            for (size_type pos = first; pos < std::min(last, members.size());) {
                const entity e = members.data()[pos];
                invoke(func, e, pos, std::index_sequence<>{}, std::index_sequence_for<Get...>{});
                pos = (pos < members.size() && members.data()[pos] == e) ? pos + 1 : pos;
            }
        }
    }

    /// Sorts the group: by compare(entity, entity) without Type..., by compare(const T&, const T&) with one
    /// type, by compare(std::tuple<const T&...>, std::tuple<const T&...>) with several (owned or get
    /// types). An owning group moves all its owned arrays together. By entities or by one owned type, the
    /// pool of that type sorts its members with the method of `options` (sort.hpp), then the other owned
    /// pools follow it with one sort_as pass each (measured: 1.5x faster than swapping every pool at each
    /// exchange). Otherwise the members' positions are sorted: in_place swaps all owned arrays at each
    /// exchange, permutation and mixed sort an index array once and apply it to each array (automatic: as
    /// for a pool). Throws group_error while another owning group is nested inside this one.
    template<typename... Type, typename Compare>
    void sort(Compare compare, sort_options options = {}) const {
        handler_->check_sortable();
        const auto count = size();
        if (count < 2) {
            return;
        }
        if constexpr (owning && sizeof...(Type) == 0) {
            sort_by_lead<0>(
                count, [&compare](entity lhs, entity rhs) { return compare(lhs, rhs); }, options);
        } else if constexpr (owning && sizeof...(Type) == 1 && ((owned_index<Type> < owned_count) && ...)) {
            using value_type = std::remove_const_t<std::tuple_element_t<0, std::tuple<Type...>>>;
            sort_by_lead<owned_index<Type...>>(
                count, [&compare](const value_type& lhs, const value_type& rhs) { return compare(lhs, rhs); },
                options);
        } else {
            sort_by_positions<Type...>(count, compare, options);
        }
    }

private:
    template<typename Type>
    static constexpr std::size_t owned_index =
        detail::index_of<std::remove_const_t<Type>, typename std::remove_const_t<Owned>::value_type...>();
    template<typename Type>
    static constexpr std::size_t get_index =
        detail::index_of<std::remove_const_t<Type>, typename std::remove_const_t<Get>::value_type...>();

    // The storage of Type, with the constness the group was declared with.
    template<typename Type>
    [[nodiscard]] auto& pool_of() const noexcept {
        if constexpr (owned_index<Type> < owned_count) {
            using storage_type = std::tuple_element_t<owned_index<Type>, std::tuple<Owned...>>;
            return static_cast<storage_type&>(*std::get<owned_index<Type>>(owned_));
        } else {
            static_assert(get_index<Type> < sizeof...(Get), "the group has no such component type");
            return *std::get<get_index<Type>>(get_);
        }
    }

    // The component of Type of the member at `pos`, read-only (for comparators).
    template<typename Type>
    [[nodiscard]] const auto& component_at(size_type pos) const noexcept {
        if constexpr (owned_index<Type> < owned_count) {
            return std::as_const(*std::get<owned_index<Type>>(owned_)).element_at(pos);
        } else {
            return std::as_const(pool_of<Type>()).get(data()[pos]);
        }
    }

    // The owned pool Lead sorts the members, the other owned pools follow it.
    template<std::size_t Lead, typename Compare>
    void sort_by_lead(size_type count, Compare compare, sort_options options) const {
        auto& lead = *std::get<Lead>(owned_);
        lead.sort_n(count, std::move(compare), options);
        const std::span<const entity> order{lead.data(), count};
        [ this, order ]<std::size_t... I>(std::index_sequence<I...>) {
            ((I == Lead ? void() : std::get<I>(owned_)->sort_as(order)), ...);
        }
        (std::index_sequence_for<Owned...>{});
    }

    template<typename... Type, typename Compare>
    void sort_by_positions(size_type count, Compare& compare, sort_options options) const {
        const auto less = [this, &compare](size_type lhs, size_type rhs) {
            if constexpr (sizeof...(Type) == 0) {
                return compare(data()[lhs], data()[rhs]);
            } else if constexpr (sizeof...(Type) == 1) {
                return compare(component_at<Type...>(lhs), component_at<Type...>(rhs));
            } else {
                return compare(std::forward_as_tuple(component_at<Type>(lhs)...),
                               std::forward_as_tuple(component_at<Type>(rhs)...));
            }
        };
        if (detail::resolve(options, base_type::fixed) == sort_method::in_place) {
            const auto swap = [this](size_type lhs, size_type rhs) { swap_members(lhs, rhs); };
            if (options.stable) {
                detail::stable_in_place_sort(0, count, less, swap);
            } else {
                detail::introsort(0, count, less, swap);
            }
            return;
        }
        std::vector<position_type> order(count);
        std::iota(order.begin(), order.end(), position_type{0});
        if (options.stable) {
            std::stable_sort(order.begin(), order.end(), less);
        } else {
            std::sort(order.begin(), order.end(), less);
        }
        if constexpr (owning) {
            std::apply([&order](auto*... pool) { (pool->rearrange(order), ...); }, owned_);
        } else {
            handler_->members().rearrange(order);
        }
    }

    void swap_members(size_type lhs, size_type rhs) const {
        if constexpr (owning) {
            std::apply([lhs, rhs](auto*... pool) { (pool->swap_elements(lhs, rhs), ...); }, owned_);
        } else {
            handler_->members().swap_elements(lhs, rhs);
        }
    }

    // The rest of an owning group's walk once func changed the group while visiting `e` at `pos`: every load
    // is repeated after each call. If `e` left, another member took its position, which is visited next.
    template<typename Func>
    ECSNET_NOINLINE void walk_changing(size_type pos, entity e, size_type last, Func& func) const {
        const auto& lead = *std::get<0>(owned_);
        pos = (pos < handler_->extent() && lead.data()[pos] == e) ? pos + 1 : pos;
        while (pos < std::min(last, handler_->extent())) {
            e = lead.data()[pos];
            invoke(func, e, pos, std::index_sequence_for<Owned...>{}, std::index_sequence_for<Get...>{});
            pos = (pos < handler_->extent() && lead.data()[pos] == e) ? pos + 1 : pos;
        }
    }

    // What func gets for the I-th owned storage at `pos`: a reference into its packed array, or nothing.
    template<std::size_t I>
    [[nodiscard]] auto owned_args(size_type pos) const noexcept {
        using storage_type = std::tuple_element_t<I, std::tuple<Owned...>>;
        if constexpr (storage_type::is_tag) {
            return std::tuple<>{};
        } else {
            return std::tuple<detail::component_ref_t<storage_type>>{std::get<I>(owned_)->raw()[pos]};
        }
    }

    // What func gets for the I-th get storage: the member's component, found by trying the member's own
    // position first (pools filled together, or aligned by sort_as, hold it there: no sparse lookup), then
    // through the sparse array.
    template<std::size_t I>
    [[nodiscard]] auto get_args(entity e, size_type pos) const noexcept {
        using storage_type = std::tuple_element_t<I, std::tuple<Get...>>;
        if constexpr (storage_type::is_tag) {
            return std::tuple<>{};
        } else {
            auto& pool = *std::get<I>(get_);
            return std::tuple<detail::component_ref_t<storage_type>>{pool.element_at(pool.find(e, pos))};
        }
    }

    template<typename Func, std::size_t... O, std::size_t... G>
    void invoke(Func& func, entity e, size_type pos, std::index_sequence<O...>,
                std::index_sequence<G...>) const {
        if constexpr (detail::applicable<Func&, entity_args_tuple>::value) {
            std::apply(func,
                       std::tuple_cat(std::tuple<entity>{e}, owned_args<O>(pos)..., get_args<G>(e, pos)...));
        } else {
            std::apply(func, std::tuple_cat(owned_args<O>(pos)..., get_args<G>(e, pos)...));
        }
    }

    handler_type* handler_;
    std::tuple<std::remove_const_t<Owned>*...> owned_;
    std::tuple<Get*...> get_;
};

} // namespace ecsnet
