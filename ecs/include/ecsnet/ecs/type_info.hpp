#pragma once

// Compile-time names and process-wide sequential ids of types.
//
// type_id<T>() numbers types densely (0, 1, 2...) in the order they are first asked for, so a registry can
// index its pools with a plain vector instead of a hash map. Ids are per process: never send them over the
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

template<typename Type>
struct type_id_holder {
    static id_type value() noexcept {
        static const id_type id = next_type_id();
        return id;
    }
};

template<typename Type>
constexpr std::string_view pretty_function() noexcept {
    return __PRETTY_FUNCTION__;
}

} // namespace detail

template<typename Type>
[[nodiscard]] id_type type_id() noexcept {
    return detail::type_id_holder<std::remove_cvref_t<Type>>::value();
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
