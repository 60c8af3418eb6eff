#pragma once

// Component storage: a sparse set plus a packed array of components kept in the same order, so the i-th
// entity of the packed array owns the i-th component (seed 002, "A quick recap").
//
// Components are moved, never copied, when the arrays are rearranged (swap-and-pop, swaps, growth: growth
// moves even a type whose move constructor may throw, instead of copying it as std::vector would; past
// 2 MiB the array grows in place, huge_vector.hpp).
// Empty types (tags) store no instances: the storage is then only its sparse set.
// Aggregates are constructed from their fields: emplace(e, 1.f, 2.f, 3.f) builds Position{1, 2, 3}.
//
// Complexity: as the sparse set; get is one sparse lookup and one load.
// Invalidation: emplace may reallocate the component array (references and pointers to components are
// invalidated); erase moves the last component into the erased one's place; sorting moves components
// (a reference then designates whatever component was moved into its place).
//
// Sorting (seed 000_19edbd8e7898577e.txt; methods, options and the measured default in sort.hpp): sort()
// takes compare(const Type&, const Type&) or compare(entity, entity); sort_as(other) orders the pool like
// another set. Every entity keeps its component. The comparator may throw: the pool stays consistent.
// Components are assumed not to throw when moved or swapped during a sort.

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "config.hpp"
#include "entity.hpp"
#include "huge_vector.hpp"
#include "sort.hpp"
#include "sparse_set.hpp"

namespace ecsnet {

namespace detail {
struct no_components {
    explicit constexpr no_components(std::size_t /*expected_max*/) noexcept {}
};
} // namespace detail

template<typename Type, capacity_policy Capacity = dynamic_capacity>
class storage final : public sparse_set<Capacity> {
    static_assert(std::is_same_v<Type, std::remove_cvref_t<Type>>, "components are plain object types");
    static_assert(std::is_move_constructible_v<Type> && std::is_move_assignable_v<Type>,
                  "components must be movable: storages move them when they rearrange");

    using base_type = sparse_set<Capacity>;

public:
    using value_type = Type;
    using size_type = typename base_type::size_type;
    using position_type = typename base_type::position_type;
    using base_type::npos;

    /// Tags carry no data: only membership is stored.
    static constexpr bool is_tag = std::is_empty_v<Type>;

    storage() {
        if constexpr (base_type::fixed && !is_tag) {
            components_.reserve(Capacity::value);
        }
    }

    /// Gives `e` a component built from `args` (aggregate initialisation for aggregates). Returns a
    /// reference to it (nothing for a tag). Precondition: `e` has none yet.
    template<typename... Args>
    decltype(auto) emplace(entity e, Args&&... args) {
        auto& slot = this->prepare_insert(e);
        if constexpr (is_tag) {
            static_cast<void>(Type{std::forward<Args>(args)...});
            this->commit_insert(e, slot);
        } else {
            if constexpr (std::is_aggregate_v<Type>) {
                // Braces: parenthesised aggregate initialisation is C++20 but clang 14 lacks it.
                components_.push_back(Type{std::forward<Args>(args)...});
            } else {
                components_.emplace_back(std::forward<Args>(args)...);
            }
            try {
                this->commit_insert(e, slot);
            } catch (...) {
                components_.pop_back();
                throw;
            }
            return (components_.back());
        }
    }

    /// The component of an entity that has one (checked in debug builds, undefined otherwise).
    [[nodiscard]] Type& get(entity e) noexcept requires(!is_tag) { return components_[this->index(e)]; }
    [[nodiscard]] const Type& get(entity e) const noexcept requires(!is_tag) {
        return components_[this->index(e)];
    }

    /// The component of `e`, or nullptr if it has none (stale identifiers included).
    [[nodiscard]] Type* try_get(entity e) noexcept requires(!is_tag) {
        const auto pos = this->find(e);
        return pos == npos ? nullptr : components_.data() + pos;
    }
    [[nodiscard]] const Type* try_get(entity e) const noexcept requires(!is_tag) {
        const auto pos = this->find(e);
        return pos == npos ? nullptr : components_.data() + pos;
    }

    /// The component at a position of the packed array.
    [[nodiscard]] Type& element_at(size_type pos) noexcept requires(!is_tag) {
        ECSNET_ASSERT(pos < this->size(), "position out of range");
        return components_[pos];
    }
    [[nodiscard]] const Type& element_at(size_type pos) const noexcept requires(!is_tag) {
        ECSNET_ASSERT(pos < this->size(), "position out of range");
        return components_[pos];
    }

    /// The packed component array: raw()[i] belongs to data()[i].
    [[nodiscard]] Type* raw() noexcept requires(!is_tag) { return components_.data(); }
    [[nodiscard]] const Type* raw() const noexcept requires(!is_tag) { return components_.data(); }

    void reserve(size_type count) {
        base_type::reserve(count);
        if constexpr (!is_tag && !base_type::fixed) {
            components_.reserve(count);
        }
    }

    /// Sorts the pool by compare(const Type&, const Type&), or by compare(entity, entity), with the method
    /// of `options` (sort.hpp). Every entity keeps its component.
    template<typename Compare>
    void sort(Compare compare, sort_options options = {}) {
        sort_n(this->size(), std::move(compare), options);
    }

    /// sort() of positions [0, count) only; the elements past `count` stay where they are.
    template<typename Compare>
    void sort_n(size_type count, Compare compare, sort_options options = {}) {
        constexpr bool by_component = compares_components<Compare>();
        ECSNET_ASSERT(count <= this->size(), "sort_n past the end of the pool");
        if (count < 2) {
            return;
        }
        switch (detail::resolve(options, base_type::fixed)) {
        case sort_method::in_place:
            sort_in_place<by_component>(count, compare, options.stable);
            break;
        case sort_method::permutation:
            sort_by_permutation<by_component>(count, compare, options.stable);
            break;
        default:
            sort_mixed<by_component>(count, compare, options.stable);
            break;
        }
    }

    /// Arranges the pool like `other` (a range of distinct entities, typically another pool): the entities
    /// both hold come first, in other's order; the others follow in an unspecified order. Afterwards a view
    /// over both pools finds them aligned. O(other.size()) lookups and swaps, no memory.
    template<typename Other>
    void sort_as(const Other& other) {
        size_type next = 0;
        for (const entity e : other) {
            const auto at = this->find(e);
            if (at != npos) {
                if (at != next) {
                    swap_at(at, next);
                }
                ++next;
            }
        }
        this->changed(0, this->size());
    }

    /// Moves the element at position order[i], component included, to position i (see sparse_set).
    void rearrange(std::span<position_type> order) override {
        ECSNET_ASSERT(order.size() <= this->size(), "permutation longer than the pool");
        if constexpr (is_tag) {
            base_type::rearrange(order);
        } else {
            std::optional<Type> held_component;
            entity held_entity = null_entity;
            detail::apply_permutation(
                order,
                [&](std::size_t from) {
                    held_component.emplace(std::move(components_[from]));
                    held_entity = this->packed_[from];
                },
                [this](std::size_t from, std::size_t to) {
                    components_[to] = std::move(components_[from]);
                    this->place(this->packed_[from], to);
                },
                [&](std::size_t to) {
                    components_[to] = std::move(*held_component);
                    this->place(held_entity, to);
                });
        }
    }

protected:
    void swap_and_pop(position_type pos) override {
        if constexpr (!is_tag) {
            if (pos + 1 != components_.size()) {
                components_[pos] = std::move(components_.back());
            }
            components_.pop_back();
        }
        base_type::swap_and_pop(pos);
    }

    void swap_at(size_type lhs, size_type rhs) noexcept override {
        swap_payload(lhs, rhs);
        base_type::swap_at(lhs, rhs);
    }

    void swap_payload(size_type lhs, size_type rhs) noexcept override {
        if constexpr (!is_tag) {
            using std::swap;
            swap(components_[lhs], components_[rhs]);
        }
    }

    void clear_all() noexcept override {
        if constexpr (!is_tag) {
            components_.clear();
        }
        base_type::clear_all();
    }

private:
    template<typename Compare>
    static constexpr bool compares_components() noexcept {
        // conjunction/disjunction: a generic comparator is tried with entities only if components do not
        // fit it (and with components only if the pool has any).
        using with_components =
            std::conjunction<std::bool_constant<!is_tag>,
                             std::is_invocable_r<bool, Compare&, const Type&, const Type&>>;
        static_assert(
            std::disjunction_v<with_components, std::is_invocable_r<bool, Compare&, entity, entity>>,
            "sort takes compare(const Type&, const Type&) or compare(entity, entity)");
        return with_components::value;
    }

    // In place (seed 000, "In-place sorting"). A comparator on entities may look components up by entity,
    // this pool's too, so every swap is the seed's sparse-aware swap and the pool is exact at every step.
    // A comparator on components sees only its arguments: swaps then exchange the two dense arrays and the
    // sparse slots are rewritten once at the end, which saves two scattered writes per swap (measured in
    // sort.hpp).
    template<bool ByComponent, typename Compare>
    void sort_in_place(size_type count, Compare& compare, bool stable) {
        if constexpr (ByComponent) {
            auto* entities = this->packed_.data();
            auto* components = components_.data();
            const auto less = [&compare, components](size_type lhs, size_type rhs) {
                return compare(std::as_const(components[lhs]), std::as_const(components[rhs]));
            };
            const auto swap = [entities, components](size_type lhs, size_type rhs) {
                using std::swap;
                swap(components[lhs], components[rhs]);
                swap(entities[lhs], entities[rhs]);
            };
            try {
                run_in_place(count, less, swap, stable);
            } catch (...) {
                this->rebuild_sparse(count);
                throw;
            }
            this->rebuild_sparse(count);
        } else {
            const auto less = [this, &compare](size_type lhs, size_type rhs) {
                return compare(this->packed_[lhs], this->packed_[rhs]);
            };
            const auto swap = [this](size_type lhs, size_type rhs) { swap_at(lhs, rhs); };
            try {
                run_in_place(count, less, swap, stable);
            } catch (...) {
                this->changed(0, count);
                throw;
            }
            this->changed(0, count);
        }
    }

    template<typename Less, typename Swap>
    static void run_in_place(size_type count, const Less& less, const Swap& swap, bool stable) {
        if (stable) {
            detail::stable_in_place_sort(0, count, less, swap);
        } else {
            detail::introsort(0, count, less, swap);
        }
    }

    // By permutation (seed 000, "Permutation"): sort an index array, then apply it cycle by cycle.
    template<bool ByComponent, typename Compare>
    void sort_by_permutation(size_type count, Compare& compare, bool stable) {
        std::vector<position_type> order(count);
        std::iota(order.begin(), order.end(), position_type{0});
        const auto less = [this, &compare](position_type lhs, position_type rhs) {
            if constexpr (ByComponent) {
                return compare(std::as_const(components_[lhs]), std::as_const(components_[rhs]));
            } else {
                return compare(this->packed_[lhs], this->packed_[rhs]);
            }
        };
        if (stable) {
            std::stable_sort(order.begin(), order.end(), less);
        } else {
            std::sort(order.begin(), order.end(), less);
        }
        rearrange(order);
    }

    // Mixed (seed 000, "Mixing in-place sorting and permutations"): sort the packed entities alone (a
    // comparator on components finds them through the sparse array, untouched meanwhile), then walk the
    // cycles through the sparse array and move each component once. The entities are sorted with the
    // swap-only algorithms of sort.hpp rather than std::sort, whose moves through a temporary could lose
    // an entity if the comparator threw; so the pool can always be made consistent again.
    template<bool ByComponent, typename Compare>
    void sort_mixed(size_type count, Compare& compare, bool stable) {
        auto* entities = this->packed_.data();
        const auto swap = [entities](size_type lhs, size_type rhs) {
            std::swap(entities[lhs], entities[rhs]);
        };
        if constexpr (ByComponent) {
            const auto& sparse = this->sparse_;
            const Type* components = components_.data();
            const auto less = [&compare, &sparse, components, entities](size_type lhs, size_type rhs) {
                return compare(components[sparse.existing(to_index(entities[lhs]))],
                               components[sparse.existing(to_index(entities[rhs]))]);
            };
            sort_entities_then_follow(count, less, swap, stable);
        } else {
            const auto less = [&compare, entities](size_type lhs, size_type rhs) {
                return compare(entities[lhs], entities[rhs]);
            };
            sort_entities_then_follow(count, less, swap, stable);
        }
    }

    template<typename Less, typename Swap>
    void sort_entities_then_follow(size_type count, const Less& less, const Swap& swap, bool stable) {
        try {
            run_in_place(count, less, swap, stable);
        } catch (...) {
            follow_sorted(count);
            throw;
        }
        follow_sorted(count);
    }

    // The components follow the sorted entities, one move each; a done position's sparse slot points at it.
    void follow_sorted(size_type count) noexcept {
        if constexpr (is_tag) {
            this->rebuild_sparse(count);
        } else {
            this->changed(0, count);
            auto& sparse = this->sparse_;
            const auto* entities = this->packed_.data();
            for (size_type start = 0; start < count; ++start) {
                auto from = sparse.at(to_index(entities[start]));
                if (from == start) {
                    continue;
                }
                Type held = std::move(components_[start]);
                auto hole = start;
                while (from != start) {
                    components_[hole] = std::move(components_[from]);
                    sparse.at(to_index(entities[hole])) = static_cast<position_type>(hole);
                    hole = from;
                    from = sparse.at(to_index(entities[hole]));
                }
                components_[hole] = std::move(held);
                sparse.at(to_index(entities[hole])) = static_cast<position_type>(hole);
            }
        }
    }

    std::conditional_t<is_tag, detail::no_components, detail::huge_vector<Type>> components_{
        base_type::max_size()};
};

} // namespace ecsnet
