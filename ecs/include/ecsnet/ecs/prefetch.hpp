#pragma once

// Asking for memory ahead of its use. A server visiting a thousand clients in turn finds each one's state
// cold in cache; where it knows which comes next, it asks for that one's lines while it works on the
// current one. (The transport, which depends on nothing of ours, keeps its own: transport/src/prefetch.hpp.)

#include <cstddef>
#include <cstdint>

namespace ecsnet {

/// Asks for every cache line [data, data + bytes) touches, without waiting for them (a prefetch never
/// faults). Locality as __builtin_prefetch's: 3 keeps the lines close, 0 is for what is read once.
template<int Locality = 3>
inline void prefetch_bytes(const void* data, std::size_t bytes) noexcept {
    constexpr std::uintptr_t line = 64;
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    for (auto at = begin & ~(line - 1); at < begin + bytes; at += line) {
        __builtin_prefetch(reinterpret_cast<const void*>(at), 0, Locality);
    }
}

} // namespace ecsnet
