#pragma once

// Compile-time names and process-wide sequential ids of types.
//
// type_id<T>() numbers types densely (0, 1, 2...) at start-up, so a registry can index its pools with a
// plain vector instead of a hash map. Ids are per process: never send them over the
// network (the replication layer uses its own declared schema).

#include <atomic>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace ecsnet {

using id_type = std::uint32_t;

namespace detail {

inline id_type next_type_id() noexcept {
    static std::atomic<id_type> counter{};
    return counter.fetch_add(1, std::memory_order_relaxed);
}

// Initialised before main like any namespace-scope variable, so reading it is a plain load: no guard,
// nothing that stops the compiler from hoisting a registry lookup out of a loop (a function-local static's
// guard costs 5x on a random get; see bench/RESULTS.md). Hence the one rule: no type ids, and so no
// registry use, from the constructor of a namespace-scope object.
template<typename Type>
inline const id_type type_id_v = next_type_id();

template<typename Type>
constexpr std::string_view pretty_function() noexcept {
    return __PRETTY_FUNCTION__;
}

} // namespace detail

template<typename Type>
[[nodiscard]] id_type type_id() noexcept {
    return detail::type_id_v<std::remove_cvref_t<Type>>;
}

/// The type's name as the compiler spells it ("Position", "game::Health"), for error messages and logs.
template<typename Type>
[[nodiscard]] constexpr std::string_view type_name() noexcept {
    // gcc: "... pretty_function() [with Type = X; std::string_view = ...]", clang: "... [Type = X]"
    constexpr std::string_view full = detail::pretty_function<std::remove_cvref_t<Type>>();
    constexpr std::string_view key = "Type = ";
    constexpr auto first = full.find(key) + key.size();
    constexpr auto last = full.find_first_of(";]", first);
    return full.substr(first, last - first);
}

} // namespace ecsnet
