#pragma once

// Tags that name lists of component types in calls: registry.view<A, B>(exclude<C>),
// registry.group<A>(get<B>, exclude<C>).

#include <cstddef>
#include <type_traits>

namespace ecsnet {

template<typename... Type>
struct type_list {
    static constexpr std::size_t size = sizeof...(Type);
};

/// Types read through their pools but not owned (groups), or iterated (views).
template<typename... Type>
struct get_t final : type_list<Type...> {
    explicit constexpr get_t() = default;
};
template<typename... Type>
inline constexpr get_t<Type...> get{};

/// Types an entity must not have to be yielded.
template<typename... Type>
struct exclude_t final : type_list<Type...> {
    explicit constexpr exclude_t() = default;
};
template<typename... Type>
inline constexpr exclude_t<Type...> exclude{};

/// Types a group owns.
template<typename... Type>
struct owned_t final : type_list<Type...> {
    explicit constexpr owned_t() = default;
};

namespace detail {

template<typename Type, typename... List>
constexpr std::size_t index_of() noexcept {
    constexpr bool matches[]{std::is_same_v<Type, List>..., false};
    for (std::size_t at = 0; at < sizeof...(List); ++at) {
        if (matches[at]) {
            return at;
        }
    }
    return sizeof...(List);
}

template<typename Type, typename... List>
inline constexpr bool contains_v = (std::is_same_v<Type, List> || ...);

} // namespace detail

} // namespace ecsnet
