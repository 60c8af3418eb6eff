#pragma once

// Asking for memory ahead of its use. A server handling a thousand clients finds each one's state cold in
// cache; where it knows which client comes next (the next datagram of a received batch), it asks for that
// one's lines while it works on the current one.

#include <cstddef>

namespace ecsnet::transport::detail {

/// Asks for the cache lines of [data, data + bytes) without waiting for them (a prefetch never faults).
inline void prefetch_bytes(const void* data, std::size_t bytes) noexcept {
    const auto* at = static_cast<const char*>(data);
    for (std::size_t offset = 0; offset < bytes; offset += 64) {
        __builtin_prefetch(at + offset);
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
