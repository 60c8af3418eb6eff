#pragma once

// Component storage: a sparse set plus a packed array of components kept in the same order, so the i-th
// entity of the packed array owns the i-th component (seed 002, "A quick recap").
//
// Components are moved, never copied, when the arrays are rearranged (swap-and-pop, swaps, growth: growth
// moves even a type whose move constructor may throw, instead of copying it as std::vector would).
// Empty types (tags) store no instances: the storage is then only its sparse set.
// Aggregates are constructed from their fields: emplace(e, 1.f, 2.f, 3.f) builds Position{1, 2, 3}.
//
// Complexity: as the sparse set; get is one sparse lookup and one load.
// Invalidation: emplace may reallocate the component array (references and pointers to components are
// invalidated); erase moves the last component into the erased one's place.

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "config.hpp"
#include "entity.hpp"
#include "sparse_set.hpp"

namespace ecsnet {

namespace detail {
struct no_components {};
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
        this->prepare_insert(e);
        if constexpr (is_tag) {
            static_cast<void>(Type{std::forward<Args>(args)...});
            this->commit_insert(e);
        } else {
            grow_if_full();
            components_.emplace_back(std::forward<Args>(args)...);
            try {
                this->commit_insert(e);
            } catch (...) {
                components_.pop_back();
                throw;
            }
            return (components_.back());
        }
    }

    /// The component of an entity that has one (checked in debug builds, undefined otherwise).
    [[nodiscard]] Type& get(entity e) noexcept
        requires(!is_tag)
    {
        return components_[this->index(e)];
    }
    [[nodiscard]] const Type& get(entity e) const noexcept
        requires(!is_tag)
    {
        return components_[this->index(e)];
    }

    /// The component of `e`, or nullptr if it has none (stale identifiers included).
    [[nodiscard]] Type* try_get(entity e) noexcept
        requires(!is_tag)
    {
        const auto pos = this->find(e);
        return pos == npos ? nullptr : components_.data() + pos;
    }
    [[nodiscard]] const Type* try_get(entity e) const noexcept
        requires(!is_tag)
    {
        const auto pos = this->find(e);
        return pos == npos ? nullptr : components_.data() + pos;
    }

    /// The component at a position of the packed array.
    [[nodiscard]] Type& element_at(size_type pos) noexcept
        requires(!is_tag)
    {
        ECSNET_ASSERT(pos < this->size(), "position out of range");
        return components_[pos];
    }
    [[nodiscard]] const Type& element_at(size_type pos) const noexcept
        requires(!is_tag)
    {
        ECSNET_ASSERT(pos < this->size(), "position out of range");
        return components_[pos];
    }

    /// The packed component array: raw()[i] belongs to data()[i].
    [[nodiscard]] Type* raw() noexcept
        requires(!is_tag)
    {
        return components_.data();
    }
    [[nodiscard]] const Type* raw() const noexcept
        requires(!is_tag)
    {
        return components_.data();
    }

    void reserve(size_type count) {
        base_type::reserve(count);
        if constexpr (!is_tag && !base_type::fixed) {
            components_.reserve(count);
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
        if constexpr (!is_tag) {
            using std::swap;
            swap(components_[lhs], components_[rhs]);
        }
        base_type::swap_at(lhs, rhs);
    }

    void clear_all() noexcept override {
        if constexpr (!is_tag) {
            components_.clear();
        }
        base_type::clear_all();
    }

private:
    // std::vector grows with move_if_noexcept, which copies a type whose move may throw; grow by hand then.
    void grow_if_full() {
        if constexpr (!std::is_nothrow_move_constructible_v<Type> && !base_type::fixed) {
            if (components_.size() == components_.capacity()) {
                std::vector<Type> bigger;
                bigger.reserve(std::max<size_type>(8, components_.capacity() * 2));
                for (auto& component : components_) {
                    bigger.emplace_back(std::move(component));
                }
                components_.swap(bigger);
            }
        }
    }

    std::conditional_t<is_tag, detail::no_components, std::vector<Type>> components_;
};

} // namespace ecsnet
