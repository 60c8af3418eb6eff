#pragma once

// A view split into chunks that threads can iterate independently: what ctx.parallel_each() runs.
//
// The view's leading pool (its shortest, as in view.hpp) is cut into chunks of `chunk_size` consecutive
// positions; each_in(chunk, func) visits the entities of that range that the view contains, front to back,
// calling func(entity, components...) or func(components...) exactly as basic_view::each does (tags are not
// passed). Where every other pool holds the chunk's entities at the same positions (pools filled together),
// one comparison of the packed arrays replaces the per-entity probes and the chunk runs as a plain indexed
// loop over the component arrays; elsewhere each entity is probed, the leader's position as a hint.
//
// The split depends only on the registry's content and the chunk size, never on the number of threads, so
// what each chunk records (commands) is the same whichever thread runs it.
//
// Complexity: O(chunk_size) per chunk, O(size of the leading pool) in all.
// Invalidation: no structural change to the iterated pools while chunks run (the scheduler defers them);
// writing the components of the visited entity is what it is for.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "entity.hpp"
#include "type_list.hpp"
#include "view.hpp"

namespace ecsnet {

template<typename Registry, typename Get, typename Exclude>
class view_chunks;

/// Chunks of the view of Get... (const-qualified for read-only access) without Exclude...
template<typename Registry, typename... Get, typename... Exclude>
class view_chunks<Registry, type_list<Get...>, type_list<Exclude...>> {
    static_assert(sizeof...(Get) > 0, "a view iterates at least one pool");

    template<typename Type>
    using storage_t = typename Registry::template storage_for_t<Type>;
    using base_type = typename Registry::base_type;
    using position_type = typename base_type::position_type;
    static constexpr std::size_t get_count = sizeof...(Get);
    static constexpr auto npos = base_type::npos;

    using args_tuple = decltype(std::tuple_cat(std::declval<detail::each_args_t<storage_t<Get>>>()...));
    using entity_args_tuple = decltype(std::tuple_cat(std::tuple<entity>{}, std::declval<args_tuple>()));

public:
    /// The pools must exist already if other threads read the registry meanwhile (registry.prepare<>()).
    view_chunks(Registry& registry, std::size_t chunk_size)
        : pools_{&pool_of<Get>(registry)...}
        , filter_{&registry.template storage<Exclude>()...}
        , chunk_size_{std::max<std::size_t>(chunk_size, 1)} {
        const std::array<std::size_t, get_count> sizes = std::apply(
            [](auto*... pool) { return std::array<std::size_t, get_count>{pool->size()...}; }, pools_);
        lead_ = static_cast<std::size_t>(std::min_element(sizes.begin(), sizes.end()) - sizes.begin());
        lead_size_ = sizes[lead_];
    }

    /// Positions of the leading pool: an upper bound of the entities visited.
    [[nodiscard]] std::size_t size_hint() const noexcept { return lead_size_; }
    [[nodiscard]] std::size_t chunk_size() const noexcept { return chunk_size_; }
    [[nodiscard]] std::size_t chunk_count() const noexcept {
        return (lead_size_ + chunk_size_ - 1) / chunk_size_;
    }

    /// Visits the view's entities in chunk `chunk` (< chunk_count()), from its first position to its last.
    template<typename Func>
    void each_in(std::size_t chunk, Func& func) const {
        static_assert(detail::applicable<Func&, entity_args_tuple>::value ||
                          detail::applicable<Func&, args_tuple>::value,
                      "the function takes (entity, components...) or (components...), tags left out");
        ECSNET_ASSERT(chunk < chunk_count(), "chunk out of range");
        const auto first = chunk * chunk_size_;
        const auto last = std::min(first + chunk_size_, lead_size_);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            static_cast<void>(((I == lead_ ? (each_led_by<I>(first, last, func), true) : false) || ...));
        }
        (std::index_sequence_for<Get...>{});
    }

private:
    // The registry hands out its storages read-only; the objects themselves are not const, and writing
    // components in place through them is what a view's references do too.
    template<typename Type>
    static storage_t<Type>& pool_of(Registry& registry) {
        auto& pool = registry.template storage<std::remove_const_t<Type>>();
        return const_cast<std::remove_const_t<std::remove_reference_t<decltype(pool)>>&>(pool);
    }

    template<std::size_t Lead, typename Func>
    void each_led_by(std::size_t first, std::size_t last, Func& func) const {
        const auto& leader = *std::get<Lead>(pools_);
        const entity* entities = leader.data();
        const bool aligned = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return ((I == Lead || same_entities(entities, *std::get<I>(pools_), first, last)) && ...);
        }
        (std::index_sequence_for<Get...>{});
        if (aligned) {
            run_aligned(func, entities, first, last, std::index_sequence_for<Get...>{});
            return;
        }
        for (auto pos = first; pos != last; ++pos) {
            const entity e = entities[pos];
            std::array<position_type, get_count> at;
            const bool matches = [&]<std::size_t... I>(std::index_sequence<I...>) {
                return ((I == Lead ? (at[I] = static_cast<position_type>(pos), true)
                                   : (at[I] = std::get<I>(pools_)->find(e, pos)) != npos) &&
                        ...);
            }
            (std::index_sequence_for<Get...>{});
            if (!matches || excluded(e)) {
                continue;
            }
            invoke(func, e, at, std::index_sequence_for<Get...>{});
        }
    }

    // Every pool holds entity i of the chunk at position i: index the component arrays directly.
    template<typename Func, std::size_t... I>
    void run_aligned(Func& func, const entity* entities, std::size_t first, std::size_t last,
                     std::index_sequence<I...>) const {
        const auto arrays = std::make_tuple(raw_of<I>()...);
        for (auto pos = first; pos != last; ++pos) {
            const entity e = entities[pos];
            if (excluded(e)) {
                continue;
            }
            if constexpr (detail::applicable<Func&, entity_args_tuple>::value) {
                std::apply(func, std::tuple_cat(std::tuple<entity>{e}, element<I>(arrays, pos)...));
            } else {
                std::apply(func, std::tuple_cat(element<I>(arrays, pos)...));
            }
        }
    }

    [[nodiscard]] static bool same_entities(const entity* lead, const base_type& other, std::size_t first,
                                            std::size_t last) noexcept {
        if (other.size() < last) {
            return false;
        }
        const entity* theirs = other.data();
        std::uint32_t differ = 0; // branch-free, so that it vectorises
        for (auto at = first; at != last; ++at) {
            differ |= to_integral(lead[at]) ^ to_integral(theirs[at]);
        }
        return differ == 0;
    }

    template<std::size_t I>
    [[nodiscard]] auto raw_of() const noexcept {
        using storage_type = storage_t<std::tuple_element_t<I, std::tuple<Get...>>>;
        if constexpr (storage_type::is_tag) {
            return nullptr;
        } else {
            return std::get<I>(pools_)->raw();
        }
    }

    template<std::size_t I, typename Arrays>
    [[nodiscard]] static auto element(const Arrays& arrays, std::size_t pos) noexcept {
        using storage_type = storage_t<std::tuple_element_t<I, std::tuple<Get...>>>;
        if constexpr (storage_type::is_tag) {
            return std::tuple<>{};
        } else {
            return std::tuple<detail::component_ref_t<storage_type>>{std::get<I>(arrays)[pos]};
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
        using storage_type = storage_t<std::tuple_element_t<I, std::tuple<Get...>>>;
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

    std::tuple<storage_t<Get>*...> pools_;
    std::tuple<const storage_t<const Exclude>*...> filter_;
    std::size_t chunk_size_;
    std::size_t lead_{};
    std::size_t lead_size_{};
};

} // namespace ecsnet
