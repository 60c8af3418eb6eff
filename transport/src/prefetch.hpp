#pragma once

// Asking for memory ahead of its use. A server handling a thousand clients finds each one's state cold in
// cache; where it knows which client comes next (the next datagram of a received batch), it asks for that
// one's lines while it works on the current one.

#include <cstddef>
#include <cstdint>

namespace ecsnet::transport::detail {

/// Asks for every cache line [data, data + bytes) touches, without waiting for them (a prefetch never
/// faults). From the line holding `data`: a range that starts inside a line may end in one more line than
/// bytes / 64 steps from its start reach.
inline void prefetch_bytes(const void* data, std::size_t bytes) noexcept {
    constexpr std::uintptr_t line = 64;
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    for (auto at = begin & ~(line - 1); at < begin + bytes; at += line) {
        __builtin_prefetch(reinterpret_cast<const void*>(at));
    }
}

/// The lines of the members [first, last] of one object (last included).
template<typename First, typename Last>
void prefetch_members(const First& first, const Last& last) noexcept {
    const auto* begin = reinterpret_cast<const char*>(&first);
    const auto* end = reinterpret_cast<const char*>(&last) + sizeof(Last);
    prefetch_bytes(begin, static_cast<std::size_t>(end - begin));
}

} // namespace ecsnet::transport::detail
