#pragma once

// Views: iterate the entities that have all of some components and none of others (seed 002, "A quick
// recap"). A view owns nothing and costs nothing to build; it picks the shortest of its pools when it
// starts iterating and probes the others for each of that pool's entities.
//
// Probing tries the leader's position first (sparse_set::find with a hint): pools filled together hold
// their entities in the same order, so the guess is usually right and the other pool's sparse array is
// never read; otherwise it falls back to the sparse lookup.
//
// each(func) calls func(entity, components...) or func(components...); tags are not passed. Iteration runs
// from the back of the leading pool, so func may remove the current entity's components or destroy it;
// any other structural change during iteration (emplacing into an iterated pool, removing other entities)
// invalidates it.

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "entity.hpp"
#include "sparse_set.hpp"
#include "type_list.hpp"

namespace ecsnet {

namespace detail {

template<typename Storage>
using component_ref_t = std::conditional_t<std::is_const_v<Storage>, const typename Storage::value_type&,
                                           typename Storage::value_type&>;

/// What each() passes for one storage: a reference to its component, or nothing for a tag.
template<typename Storage>
using each_args_t =
    std::conditional_t<Storage::is_tag, std::tuple<>, std::tuple<component_ref_t<Storage>>>;

template<typename Func, typename Tuple>
struct applicable;
template<typename Func, typename... Args>
struct applicable<Func, std::tuple<Args...>> : std::is_invocable<Func, Args...> {};

} // namespace detail

template<typename, typename>
class basic_view;

/// A view over storages Get... (const-qualified for read-only access), excluding Exclude...
template<typename... Get, typename... Exclude>
class basic_view<get_t<Get...>, exclude_t<Exclude...>> {
    static_assert(sizeof...(Get) > 0, "a view iterates at least one pool");

    using first_storage = std::remove_const_t<std::tuple_element_t<0, std::tuple<Get...>>>;
    using base_type = sparse_set<typename first_storage::capacity_type>;
    using position_type = typename base_type::position_type;
    static constexpr std::size_t get_count = sizeof...(Get);
    static constexpr auto npos = base_type::npos;

    using args_tuple = decltype(std::tuple_cat(std::declval<detail::each_args_t<Get>>()...));
    using entity_args_tuple = decltype(std::tuple_cat(std::tuple<entity>{}, std::declval<args_tuple>()));

public:
    class iterator {
    public:
        using value_type = entity;
        using difference_type = std::ptrdiff_t;
        using iterator_category = std::forward_iterator_tag;

        iterator() noexcept = default;

        [[nodiscard]] entity operator*() const noexcept { return lead_->data()[remaining_ - 1]; }
        iterator& operator++() noexcept {
            --remaining_;
            skip();
            return *this;
        }
        iterator operator++(int) noexcept {
            auto copy = *this;
            ++*this;
            return copy;
        }
        [[nodiscard]] bool operator==(const iterator& other) const noexcept {
            return remaining_ == other.remaining_;
        }

    private:
        friend class basic_view;
        iterator(const basic_view* view, const base_type* lead, std::size_t remaining) noexcept
            : view_{view}
            , lead_{lead}
            , remaining_{remaining} {
            skip();
        }
        void skip() noexcept {
            while (remaining_ != 0 && !view_->contains(lead_->data()[remaining_ - 1])) {
                --remaining_;
            }
        }

        const basic_view* view_{};
        const base_type* lead_{};
        std::size_t remaining_{};
    };

    basic_view(std::tuple<Get*...> pools, std::tuple<const Exclude*...> filter) noexcept
        : pools_{pools}
        , filter_{filter} {}

    /// An upper bound of the number of entities yielded: the size of the shortest pool.
    [[nodiscard]] std::size_t size_hint() const noexcept { return lead()->size(); }

    [[nodiscard]] bool contains(entity e) const noexcept {
        return std::apply([e](auto*... pool) { return (pool->contains(e) && ...); }, pools_) &&
               !std::apply([e](auto*... pool) { return (pool->contains(e) || ...); }, filter_);
    }

    /// The component of type Type (one of the view's) of an entity the view contains.
    template<typename Type>
    [[nodiscard]] decltype(auto) get(entity e) const noexcept {
        constexpr auto at = detail::index_of<std::remove_const_t<Type>, typename Get::value_type...>();
        static_assert(at < get_count, "the view does not iterate this component");
        return std::get<at>(pools_)->get(e);
    }

    [[nodiscard]] iterator begin() const noexcept {
        const auto* leader = lead();
        return iterator{this, leader, leader->size()};
    }
    [[nodiscard]] iterator end() const noexcept { return iterator{this, lead(), 0}; }

    template<typename Func>
    void each(Func func) const {
        static_assert(detail::applicable<Func&, entity_args_tuple>::value ||
                          detail::applicable<Func&, args_tuple>::value,
                      "each() takes func(entity, components...) or func(components...), tags left out");
        const auto leader = lead_index();
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            static_cast<void>(((I == leader ? (each_led_by<I>(func), true) : false) || ...));
        }(std::index_sequence_for<Get...>{});
    }

private:
    [[nodiscard]] std::size_t lead_index() const noexcept {
        const std::array<std::size_t, get_count> sizes =
            std::apply([](auto*... pool) { return std::array<std::size_t, get_count>{pool->size()...}; }, pools_);
        return static_cast<std::size_t>(std::min_element(sizes.begin(), sizes.end()) - sizes.begin());
    }

    [[nodiscard]] const base_type* lead() const noexcept {
        const base_type* leader = nullptr;
        std::apply(
            [&leader](auto*... pool) {
                ((leader = (leader == nullptr || pool->size() < leader->size()) ? pool : leader), ...);
            },
            pools_);
        return leader;
    }

    template<std::size_t Lead, typename Func>
    void each_led_by(Func& func) const {
        const auto& leader = *std::get<Lead>(pools_);
        for (auto pos = leader.size(); pos != 0;) {
            --pos;
            const entity e = leader.data()[pos];
            std::array<position_type, get_count> at;
            const bool matches = [&]<std::size_t... I>(std::index_sequence<I...>) {
                return ((I == Lead ? (at[I] = static_cast<position_type>(pos), true)
                                   : (at[I] = std::get<I>(pools_)->find(e, pos)) != npos) &&
                        ...);
            }(std::index_sequence_for<Get...>{});
            if (!matches || excluded(e)) {
                continue;
            }
            invoke(func, e, at, std::index_sequence_for<Get...>{});
        }
    }

    [[nodiscard]] bool excluded(entity e) const noexcept {
        if constexpr (sizeof...(Exclude) == 0) {
            static_cast<void>(e);
            return false;
        } else {
            return std::apply([e](auto*... pool) { return (pool->contains(e) || ...); }, filter_);
        }
    }

    template<std::size_t I>
    [[nodiscard]] auto component_args(const std::array<position_type, get_count>& at) const noexcept {
        using storage_type = std::tuple_element_t<I, std::tuple<Get...>>;
        if constexpr (storage_type::is_tag) {
            return std::tuple<>{};
        } else {
            return std::tuple<detail::component_ref_t<storage_type>>{std::get<I>(pools_)->element_at(at[I])};
        }
    }

    template<typename Func, std::size_t... I>
    void invoke(Func& func, entity e, const std::array<position_type, get_count>& at,
                std::index_sequence<I...>) const {
        if constexpr (detail::applicable<Func&, entity_args_tuple>::value) {
            std::apply(func, std::tuple_cat(std::tuple<entity>{e}, component_args<I>(at)...));
        } else {
            std::apply(func, std::tuple_cat(component_args<I>(at)...));
        }
    }

    std::tuple<Get*...> pools_;
    std::tuple<const Exclude*...> filter_;
};

} // namespace ecsnet
