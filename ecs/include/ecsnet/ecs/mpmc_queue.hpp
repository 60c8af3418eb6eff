#pragma once

// A bounded, lock-free, multi-producer multi-consumer FIFO queue of small trivially copyable values: the
// ready queue of the thread pool. The design is the classic array of cells with per-cell sequence numbers
// (described by Dmitry Vyukov): a producer claims a position with a CAS on the tail and publishes its value
// by advancing the cell's sequence; a consumer claims a position with a CAS on the head once the cell's
// sequence says it is full, and frees the cell for the next lap by advancing the sequence again.
//
// Complexity: try_push and try_pop are O(1), lock-free (a thread retries only when another one succeeded).
// Capacity is rounded up to a power of two, fixed at construction; try_push fails when the queue is full
// instead of allocating.

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace ecsnet {

template<typename Type>
class mpmc_queue {
    static_assert(std::is_trivially_copyable_v<Type> && std::is_default_constructible_v<Type>,
                  "the queue copies values in and out of its cells");

public:
    explicit mpmc_queue(std::size_t capacity)
        : mask_{std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1}
        , cells_{std::make_unique<cell[]>(mask_ + 1)} {
        for (std::size_t at = 0; at <= mask_; ++at) {
            cells_[at].sequence.store(at, std::memory_order_relaxed);
        }
    }
    mpmc_queue(const mpmc_queue&) = delete;
    mpmc_queue& operator=(const mpmc_queue&) = delete;

    [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }

    /// Appends `value`; false if the queue is full.
    bool try_push(const Type& value) noexcept {
        auto position = tail_.load(std::memory_order_relaxed);
        for (;;) {
            auto& slot = cells_[position & mask_];
            const auto sequence = slot.sequence.load(std::memory_order_acquire);
            const auto lag = static_cast<std::intptr_t>(sequence) - static_cast<std::intptr_t>(position);
            if (lag == 0) {
                if (tail_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
                    slot.value = value;
                    slot.sequence.store(position + 1, std::memory_order_release);
                    return true;
                }
            } else if (lag < 0) {
                return false; // the cell still holds the value of the previous lap: full
            } else {
                position = tail_.load(std::memory_order_relaxed);
            }
        }
    }

    /// Takes the oldest value into `out`; false if the queue is empty.
    bool try_pop(Type& out) noexcept {
        auto position = head_.load(std::memory_order_relaxed);
        for (;;) {
            auto& slot = cells_[position & mask_];
            const auto sequence = slot.sequence.load(std::memory_order_acquire);
            const auto lag = static_cast<std::intptr_t>(sequence) - static_cast<std::intptr_t>(position + 1);
            if (lag == 0) {
                if (head_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
                    out = slot.value;
                    slot.sequence.store(position + mask_ + 1, std::memory_order_release);
                    return true;
                }
            } else if (lag < 0) {
                return false; // not written yet: empty
            } else {
                position = head_.load(std::memory_order_relaxed);
            }
        }
    }

    /// A snapshot that may be stale by the time it returns; for idle threads deciding whether to sleep.
    [[nodiscard]] bool maybe_empty() const noexcept {
        return head_.load(std::memory_order_acquire) >= tail_.load(std::memory_order_acquire);
    }

private:
    struct cell {
        std::atomic<std::size_t> sequence{};
        Type value{};
    };

    std::size_t mask_;
    std::unique_ptr<cell[]> cells_;
    alignas(64) std::atomic<std::size_t> head_{0};
    alignas(64) std::atomic<std::size_t> tail_{0};
};

} // namespace ecsnet
