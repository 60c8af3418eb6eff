#pragma once

// A view split into chunks that threads can iterate independently: what ctx.parallel_each() runs.
//
// The view's leading pool (its shortest, as in view.hpp) is cut into chunks of `chunk_size` consecutive
// positions; each_in(chunk, func) visits the entities of that range that the view contains, front to back,
// calling func(entity, components...) or func(components...) exactly as basic_view::each does (tags are not
// passed). The walk is basic_view's own (each_between), so a chunk gets the same treatment as a whole view:
// blocks where the pools hold the same entities run as plain indexed loops, the rest is probed.
//
// The split depends only on the registry's content and the chunk size, never on the number of threads, so
// what each chunk records (commands) is the same whichever thread runs it.
//
// Complexity: O(chunk_size) per chunk, O(size of the leading pool) in all.
// Invalidation: no structural change to the iterated pools while chunks run (the scheduler defers them);
// writing the components of the visited entity is what it is for.

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <type_traits>

#include "config.hpp"
#include "type_list.hpp"
#include "view.hpp"

namespace ecsnet {

template<typename Registry, typename Get, typename Exclude>
class view_chunks;

/// Chunks of the view of Get... (const-qualified for read-only access) without Exclude...
template<typename Registry, typename... Get, typename... Exclude>
class view_chunks<Registry, type_list<Get...>, type_list<Exclude...>> {
    template<typename Type>
    using storage_t = typename Registry::template storage_for_t<Type>;
    using view_type = basic_view<get_t<storage_t<Get>...>, exclude_t<storage_t<const Exclude>...>>;

public:
    /// The pools must exist already if other threads read the registry meanwhile (registry.prepare<>()).
    view_chunks(Registry& registry, std::size_t chunk_size)
        : view_{std::tuple<storage_t<Get>*...>{&pool_of<Get>(registry)...},
                std::tuple<const storage_t<const Exclude>*...>{&registry.template storage<Exclude>()...}}
        , chunk_size_{std::max<std::size_t>(chunk_size, 1)}
        , lead_{view_.lead_index()}
        , lead_size_{view_.size_hint()} {}

    /// Positions of the leading pool: an upper bound of the entities visited.
    [[nodiscard]] std::size_t size_hint() const noexcept { return lead_size_; }
    [[nodiscard]] std::size_t chunk_size() const noexcept { return chunk_size_; }
    [[nodiscard]] std::size_t chunk_count() const noexcept {
        return (lead_size_ + chunk_size_ - 1) / chunk_size_;
    }

    /// Visits the view's entities in chunk `chunk` (< chunk_count()), from its first position to its last.
    template<typename Func>
    void each_in(std::size_t chunk, Func& func) const {
        ECSNET_ASSERT(chunk < chunk_count(), "chunk out of range");
        const auto first = chunk * chunk_size_;
        view_.each_between(lead_, first, std::min(first + chunk_size_, lead_size_), func);
    }

private:
    // The registry hands out its storages read-only; the objects themselves are not const, and writing
    // components in place through them is what a view's references do too.
    template<typename Type>
    static storage_t<Type>& pool_of(Registry& registry) {
        auto& pool = registry.template storage<std::remove_const_t<Type>>();
        return const_cast<std::remove_const_t<std::remove_reference_t<decltype(pool)>>&>(pool);
    }

    view_type view_;
    std::size_t chunk_size_;
    std::size_t lead_;
    std::size_t lead_size_;
};

} // namespace ecsnet
