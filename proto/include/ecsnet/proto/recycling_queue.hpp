#pragma once

// A FIFO queue whose slots outlive what they hold: pop_front() leaves the element in its slot, and the
// push_back() that reaches that slot again hands the same object back to be refilled, buffers and all. For
// queues of objects that own buffers (a client's views in flight, each a few kilobytes of entries): a
// std::deque frees a node block as its front moves past it and allocates one as its back needs one, and a
// side list of spare objects must pick a size; with acks that arrive in bursts (a client's thread late by a
// few ticks, then acking them all at once) both allocated on every burst.
//
// Storage is a ring of slots that doubles when a push finds it full, up to whatever the caller allows, so
// it holds as many objects as the most the queue ever held at once. release_spare() gives back what a
// burst long past made it keep. References to elements stay valid until the next push_back() that grows
// the ring, or release_spare().

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "ecsnet/ecs/config.hpp"

namespace ecsnet::proto {

template<typename T>
class recycling_queue {
public:
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// Slots, filled or not: the objects the queue keeps.
    [[nodiscard]] std::size_t capacity() const noexcept { return slots_.size(); }

    /// The i-th element from the front (0: the oldest).
    [[nodiscard]] T& operator[](std::size_t i) noexcept {
        ECSNET_ASSERT(i < size_, "recycling_queue index out of range");
        return slots_[wrap(first_ + i)];
    }
    [[nodiscard]] const T& operator[](std::size_t i) const noexcept {
        ECSNET_ASSERT(i < size_, "recycling_queue index out of range");
        return slots_[wrap(first_ + i)];
    }
    [[nodiscard]] T& front() noexcept { return (*this)[0]; }
    [[nodiscard]] const T& front() const noexcept { return (*this)[0]; }
    [[nodiscard]] T& back() noexcept { return (*this)[size_ - 1]; }
    [[nodiscard]] const T& back() const noexcept { return (*this)[size_ - 1]; }

    /// Makes room for `count` elements, so that pushes up to that size do not move the elements (or
    /// invalidate references to them): at least doubles the slots, but to no more than `limit` if that
    /// is enough.
    void reserve(std::size_t count, std::size_t limit = static_cast<std::size_t>(-1)) {
        if (count > slots_.size()) {
            relocate(std::max(count, std::min(slots_.size() * 2, limit)));
        }
    }

    /// Appends a slot and returns its object as the last pop left it (default-constructed if the slot is
    /// new): the caller overwrites what it needs and keeps the buffers.
    T& push_back() {
        reserve(size_ + 1);
        ++size_;
        return back();
    }

    /// Drops the oldest element; its object stays in its slot for a later push_back().
    void pop_front() noexcept {
        ECSNET_ASSERT(size_ > 0, "pop_front on an empty recycling_queue");
        first_ = wrap(first_ + 1);
        --size_;
    }

    /// Drops the newest element (one pushed and then given up); its object stays in its slot.
    void pop_back() noexcept {
        ECSNET_ASSERT(size_ > 0, "pop_back on an empty recycling_queue");
        --size_;
    }

    /// Drops every element (their objects stay for later pushes).
    void clear() noexcept {
        first_ = 0;
        size_ = 0;
    }

    /// Keeps at most max(size(), keep) slots: the objects beyond are destroyed with their buffers.
    void release_spare(std::size_t keep) {
        if (slots_.size() > std::max(size_, keep)) {
            relocate(std::max(size_, keep));
        }
    }

private:
    [[nodiscard]] std::size_t wrap(std::size_t at) const noexcept {
        return at >= slots_.size() ? at - slots_.size() : at;
    }

    // A ring of `count` slots (at least size_), the elements first and in order, then the other slots'
    // objects (their buffers kept), as many as fit.
    void relocate(std::size_t count) {
        std::vector<T> slots;
        slots.reserve(count);
        for (std::size_t i = 0; i < slots_.size() && slots.size() < count; ++i) {
            slots.push_back(std::move(slots_[wrap(first_ + i)]));
        }
        slots.resize(count);
        slots_ = std::move(slots);
        first_ = 0;
    }

    std::vector<T> slots_;
    std::size_t first_{0};
    std::size_t size_{0};
};

} // namespace ecsnet::proto
