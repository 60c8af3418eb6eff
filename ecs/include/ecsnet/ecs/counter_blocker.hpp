#pragma once

// A counter of unfinished work that threads count down and that another thread can wait on: the "counter
// blocker" of the atomic-counter scheduler in seed 001_9f36d8a5fef2b425.txt ("Compile-time breadth-first
// traversal": one blocker per connected component of the system DAG, sized with the component's node count,
// blocks the caller until every system of that chain has run).
//
// Lock-free: count_down is one atomic read-modify-write (acq_rel, so what a thread wrote before counting
// down is visible to whoever sees the count reach zero); wait() spins briefly, then sleeps on the counter
// itself (std::atomic::wait, a futex on Linux). The thread that brings the count to zero wakes the waiters,
// and only if there are any.
//
// reset() must not race with count_down() or wait(): a scheduler resets its blockers between ticks.

#include <atomic>
#include <cstdint>
#include <thread>

#include "config.hpp"

namespace ecsnet {

namespace detail {

/// A hint to the CPU that the thread is spinning (lets the sibling hyper-thread run).
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

} // namespace detail

class counter_blocker {
public:
    explicit counter_blocker(std::uint32_t count = 0) noexcept
        : remaining_{count} {}
    counter_blocker(const counter_blocker&) = delete;
    counter_blocker& operator=(const counter_blocker&) = delete;

    /// Sets the count; not concurrently with count_down() or wait().
    void reset(std::uint32_t count) noexcept { remaining_.store(count, std::memory_order_relaxed); }

    /// Counts `n` units of work as finished. Returns true for the call that brought the count to zero.
    bool count_down(std::uint32_t n = 1) noexcept {
        const auto before = remaining_.fetch_sub(n, std::memory_order_acq_rel);
        ECSNET_ASSERT(before >= n, "counter_blocker counted down below zero");
        if (before != n) {
            return false;
        }
        remaining_.notify_all();
        return true;
    }

    /// Whether the count reached zero; everything written before the last count_down is visible then.
    [[nodiscard]] bool done() const noexcept { return remaining_.load(std::memory_order_acquire) == 0; }

    [[nodiscard]] std::uint32_t remaining() const noexcept {
        return remaining_.load(std::memory_order_acquire);
    }

    /// Blocks until the count is zero.
    void wait() const noexcept {
        for (int spin = 0; spin < 128; ++spin) {
            if (done()) {
                return;
            }
            detail::spin_pause();
        }
        for (auto seen = remaining_.load(std::memory_order_acquire); seen != 0;
             seen = remaining_.load(std::memory_order_acquire)) {
            remaining_.wait(seen, std::memory_order_acquire);
        }
    }

private:
    std::atomic<std::uint32_t> remaining_;
};

} // namespace ecsnet
