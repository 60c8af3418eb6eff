#include "allocation_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0};

} // namespace

namespace ecsnet::test_support {

void count_allocations(bool on) noexcept {
    counting.store(on, std::memory_order_relaxed);
}

void reset_allocation_count() noexcept {
    allocations.store(0, std::memory_order_relaxed);
}

std::size_t allocations_counted() noexcept {
    return allocations.load(std::memory_order_relaxed);
}

} // namespace ecsnet::test_support

// The replacements pair malloc with free; GCC cannot see that both sides are replaced.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
    if (counting.load(std::memory_order_relaxed)) {
        allocations.fetch_add(1, std::memory_order_relaxed);
    }
    if (void* p = std::malloc(size == 0 ? 1 : size)) {
        return p;
    }
    throw std::bad_alloc{};
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
#pragma GCC diagnostic pop
