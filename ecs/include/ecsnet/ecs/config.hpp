#pragma once

// Build-wide switches of the ECS core.
//
// ECSNET_ASSERT checks preconditions (a stale entity passed to get, a component emplaced twice...). It is on
// in debug builds and compiled out with NDEBUG, where breaking a precondition is undefined behaviour, as in
// EnTT. Define ECSNET_FORCE_ASSERTS to keep the checks in an optimised build.

#include <cstdio>
#include <cstdlib>

#if !defined(NDEBUG) || defined(ECSNET_FORCE_ASSERTS)
#define ECSNET_ASSERTS_ENABLED 1
#else
#define ECSNET_ASSERTS_ENABLED 0
#endif

// Keeps a rarely taken path (allocating a page, growing an array) out of the hot function that calls it,
// so that the hot path saves fewer registers and stays small enough to inline.
#if defined(__GNUC__) || defined(__clang__)
#define ECSNET_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define ECSNET_NOINLINE __declspec(noinline)
#else
#define ECSNET_NOINLINE
#endif

namespace ecsnet::detail {

[[noreturn]] inline void assertion_failed(const char* condition, const char* message, const char* file,
                                          int line) noexcept {
    std::fprintf(stderr, "ecsnet: %s (%s) at %s:%d\n", message, condition, file, line);
    std::abort();
}

} // namespace ecsnet::detail

#if ECSNET_ASSERTS_ENABLED
#define ECSNET_ASSERT(condition, message)                                                                    \
    ((condition) ? static_cast<void>(0)                                                                      \
                 : ::ecsnet::detail::assertion_failed(#condition, message, __FILE__, __LINE__))
#else
#define ECSNET_ASSERT(condition, message) static_cast<void>(0)
#endif
