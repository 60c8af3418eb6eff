#pragma once

// Views: iterate the entities that have all of some components and none of others (seed 002, "A quick
// recap"). A view owns nothing and costs nothing to build; it picks the shortest of its pools when it
// starts iterating and probes the others for each of that pool's entities.
//
// Pools filled together hold their entities in the same order. each() exploits it: it compares blocks of
// the packed arrays, and where they agree it iterates the block without probing; elsewhere it probes,
// trying the leader's position first (sparse_set::find with a hint) before the sparse array. A block found
// aligned is not compared again until one of the pools changes it (the pools' block stamps,
// sparse_set.hpp), so a view over aligned pools reads what a plain array loop reads.
//
// each(func) calls func(entity, components...) or func(components...); tags are not passed. func may
// remove the current entity's components or destroy it, and each() still visits every other entity once;
// any other structural change during each() (emplacing into an iterated pool, removing other entities)
// is not allowed. The iterators (range-for over entities) walk from the back of the leading pool, so the
// current entity may be removed there too.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
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
using each_args_t = std::conditional_t<Storage::is_tag, std::tuple<>, std::tuple<component_ref_t<Storage>>>;

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
        each_between(lead_index(), 0, std::numeric_limits<std::size_t>::max(), func);
    }

    /// Which of the Get... pools each() walks: the shortest (the first of equals).
    [[nodiscard]] std::size_t lead_index() const noexcept {
        const std::array<std::size_t, get_count> sizes = std::apply(
            [](auto*... pool) { return std::array<std::size_t, get_count>{pool->size()...}; }, pools_);
        return static_cast<std::size_t>(std::min_element(sizes.begin(), sizes.end()) - sizes.begin());
    }

    /// each() over the positions [first, last) of pool number `lead` (< sizeof...(Get)) only: the entities
    /// there that the view contains, front to back. Disjoint ranges of one leader visit disjoint entities,
    /// which is how view_chunks splits a view among threads.
    template<typename Func>
    void each_between(std::size_t lead, std::size_t first, std::size_t last, Func& func) const {
        static_assert(detail::applicable<Func&, entity_args_tuple>::value ||
                          detail::applicable<Func&, args_tuple>::value,
                      "each() takes func(entity, components...) or func(components...), tags left out");
        ECSNET_ASSERT(lead < get_count, "no such pool in the view");
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            static_cast<void>(((I == lead ? (each_led_by<I>(func, first, last), true) : false) || ...));
        }
        (std::index_sequence_for<Get...>{});
    }

private:
    [[nodiscard]] const base_type* lead() const noexcept {
        const base_type* leader = nullptr;
        std::apply(
            [&leader](auto*... pool) {
                ((leader = (leader == nullptr || pool->size() < leader->size()) ? pool : leader), ...);
            },
            pools_);
        return leader;
    }

    // Walks the leader front to back in blocks (forward streams are what the prefetcher and the vectoriser
    // like best; a backward walk of plain arrays already costs 1.5x here). When every other pool holds the
    // block's entities at the same positions (pools filled together, or aligned by a group or sort_as), the
    // pools' block stamps or one vectorised comparison of the packed arrays replace a probe per entity per
    // pool, and the block runs as a plain indexed loop. Otherwise each entity of the block is probed.
    //
    // func may remove the current entity's components or destroy it: that moves the leader's last entity
    // into the current position, so the walk stays on a position whose entity changed. In the aligned loop
    // any change of a pool's size or buffer ends the block early and the walk resumes probing. When func
    // cannot touch the pools (it only writes components), the compiler proves these checks invariant.
    template<std::size_t Lead, typename Func>
    void each_led_by(Func& func, std::size_t first, std::size_t last) const {
        constexpr std::size_t block = base_type::block_size;
        const auto& leader = *std::get<Lead>(pools_);
        for (std::size_t pos = first; pos < std::min(last, leader.size());) {
            // Blocks end where the pools' stamp blocks do, so that a whole one is checked by its stamps.
            const auto end = std::min({(pos / block + 1) * block, last, leader.size()});
            pos = aligned<Lead>(pos, end)
                      ? run_aligned(func, leader, pos, end, std::index_sequence_for<Get...>{})
                      : run_probing<Lead>(func, leader, pos, end);
        }
    }

    template<std::size_t Lead, typename Func>
    std::size_t run_probing(Func& func, const base_type& leader, std::size_t pos, std::size_t last) const {
        while (pos < std::min(last, leader.size())) {
            const entity e = leader.data()[pos];
            std::array<position_type, get_count> at;
            const bool matches = [&]<std::size_t... I>(std::index_sequence<I...>) {
                return ((I == Lead ? (at[I] = static_cast<position_type>(pos), true)
                                   : (at[I] = std::get<I>(pools_)->find(e, pos)) != npos) &&
                        ...);
            }
            (std::index_sequence_for<Get...>{});
            if (matches && !excluded(e)) {
                invoke(func, e, at, std::index_sequence_for<Get...>{});
            }
            pos = next_position(leader, pos, e);
        }
        return pos;
    }

    // The block [pos, last) of aligned pools, straight from the packed arrays.
    template<typename Func, std::size_t... I>
    std::size_t run_aligned(Func& func, const base_type& leader, std::size_t pos, std::size_t last,
                            std::index_sequence<I...>) const {
        const entity* entities = leader.data();
        const auto arrays = std::make_tuple(raw_of<I>()...);
        const std::array<std::size_t, get_count> sizes{std::get<I>(pools_)->size()...};
        for (; pos != last; ++pos) {
            const entity e = entities[pos];
            if (excluded(e)) {
                continue;
            }
            if constexpr (detail::applicable<Func&, entity_args_tuple>::value) {
                std::apply(func, std::tuple_cat(std::tuple<entity>{e}, element<I>(arrays, pos)...));
            } else {
                std::apply(func, std::tuple_cat(element<I>(arrays, pos)...));
            }
            if (((std::get<I>(pools_)->size() != sizes[I]) || ...) || leader.data() != entities ||
                ((raw_of<I>() != std::get<I>(arrays)) || ...)) {
                return next_position(leader, pos, e);
            }
        }
        return pos;
    }

    // Where the walk goes after visiting `e` at `pos`: the next position, unless func removed `e` and
    // another entity took its place.
    [[nodiscard]] static std::size_t next_position(const base_type& leader, std::size_t pos,
                                                   entity e) noexcept {
        return (pos < leader.size() && leader.data()[pos] == e) ? pos + 1 : pos;
    }

    // Whether every pool holds, at positions [first, last), the same entities as the leader: the pools'
    // block stamps answer for a block found aligned before and unchanged since (sparse_set.hpp); otherwise
    // the packed arrays are compared. Comparing them every time read 8 more bytes per entity than the
    // update itself (24 read, 12 written): 1.3x the plain loop where memory bandwidth is the limit.
    template<std::size_t Lead>
    [[nodiscard]] bool aligned(std::size_t first, std::size_t last) const noexcept {
        const base_type& lead = *std::get<Lead>(pools_);
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return ((I == Lead || std::get<I>(pools_)->same_entities_as(lead, first, last)) && ...);
        }
        (std::index_sequence_for<Get...>{});
    }

    // The packed component array of the I-th pool (nullptr for a tag).
    template<std::size_t I>
    [[nodiscard]] auto raw_of() const noexcept {
        using storage_type = std::tuple_element_t<I, std::tuple<Get...>>;
        if constexpr (storage_type::is_tag) {
            return nullptr;
        } else {
            return std::get<I>(pools_)->raw();
        }
    }

    template<std::size_t I, typename Arrays>
    [[nodiscard]] static auto element(const Arrays& arrays, std::size_t pos) noexcept {
        using storage_type = std::tuple_element_t<I, std::tuple<Get...>>;
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
