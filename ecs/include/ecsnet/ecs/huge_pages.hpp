#pragma once

// Large blocks on huge pages.
//
// A random get() in a world of a million entities is two dependent loads into 16 MB (the sparse slot, then
// the component). On 4 KiB pages that is 4,096 pages, more than a second-level TLB covers, so most gets also
// pay a page walk (a two-dimensional one under a hypervisor). Blocks of 2 MiB and more are therefore mapped
// 2 MiB-aligned and marked MADV_HUGEPAGE, so that Linux backs them with transparent huge pages wherever it
// has them ("madvise" mode, Debian's default): 16 MB is then 8 TLB entries. The hint costs nothing where
// huge pages are off. Smaller blocks come from the ordinary heap, as do all blocks on other systems.
//
// Memory: a huge block is faulted in 2 MiB at a time, so a vector of 2 MiB and more holds at most one
// partly used huge page beyond its capacity. Big blocks are ranges of address space (reserve_range), which
// huge_vector grows in place; released ranges are kept for reuse by the next array of the same length, up
// to a bound, with their pages handed back lazily (range_recycler).

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ecsnet::detail {

inline constexpr std::size_t huge_page_size = std::size_t{2} << 20;

/// Whether a block of `bytes` is mapped on its own, 2 MiB-aligned and hinted for huge pages.
[[nodiscard]] constexpr bool is_huge_block(std::size_t bytes) noexcept {
    return bytes >= huge_page_size;
}

[[nodiscard]] constexpr std::size_t huge_block_length(std::size_t bytes) noexcept {
    return (bytes + huge_page_size - 1) / huge_page_size * huge_page_size;
}

/// Address space from reserve_range(): `length` bytes, 2 MiB-aligned and hinted for huge pages, of which the
/// first `writable` are readable and writable (commit_range()), the rest inaccessible.
struct reserved_range {
    std::byte* first = nullptr;
    std::size_t length = 0;
    std::size_t writable = 0;
};

/// Ranges released by big arrays, kept for the next ones of the same length: a registry created after
/// another was destroyed (a world reset, a test, a benchmark iteration) then reuses pages the kernel already
/// zeroed and mapped, instead of faulting in fresh ones (creating 1M entities faults ~62 MB of huge pages:
/// zeroing them was 8 of BM_Create's 20 ns per entity on the Xeon, bench/RESULTS.md). Bounded in count and
/// in bytes; kept pages are given back with MADV_FREE, so under memory pressure the kernel takes them
/// anyway (they then read as zeros, which no new array relies on either way). Thread-safe.
class range_recycler {
public:
    static constexpr std::size_t max_ranges = 32;
    static constexpr std::size_t max_bytes = std::size_t{256} << 20; // writable bytes kept

    /// The process's recycler. Never destroyed: arrays of static objects may release ranges during exit.
    [[nodiscard]] static range_recycler& instance() {
        static auto* const recycler = new range_recycler;
        return *recycler;
    }

    /// A kept range of exactly `length` bytes, the one with the most writable bytes; an empty one if none.
    [[nodiscard]] reserved_range take(std::size_t length) noexcept {
        const std::lock_guard lock{mutex_};
        std::size_t best = count_;
        for (std::size_t i = 0; i < count_; ++i) {
            if (kept_[i].length == length && (best == count_ || kept_[i].writable > kept_[best].writable)) {
                best = i;
            }
        }
        if (best == count_) {
            return {};
        }
        const auto range = kept_[best];
        kept_[best] = kept_[--count_];
        bytes_ -= range.writable;
        return range;
    }

    /// Keeps `range` for reuse if there is room; returns false (and keeps nothing) otherwise.
    [[nodiscard]] bool keep(reserved_range range) noexcept {
#if defined(__linux__) && defined(MADV_FREE)
        const std::lock_guard lock{mutex_};
        if (count_ == max_ranges || bytes_ + range.writable > max_bytes) {
            return false;
        }
        if (range.writable != 0) {
            ::madvise(range.first, range.writable, MADV_FREE);
        }
        kept_[count_++] = range;
        bytes_ += range.writable;
        return true;
#else
        static_cast<void>(range);
        return false;
#endif
    }

    /// Unmaps every kept range (for tests, or a program that wants its memory back now).
    void clear() noexcept {
        const std::lock_guard lock{mutex_};
        for (std::size_t i = 0; i < count_; ++i) {
            unmap(kept_[i]);
        }
        count_ = 0;
        bytes_ = 0;
    }

    /// How many ranges are kept, and their writable bytes.
    [[nodiscard]] std::pair<std::size_t, std::size_t> kept() noexcept {
        const std::lock_guard lock{mutex_};
        return {count_, bytes_};
    }

    static void unmap(reserved_range range) noexcept {
#if defined(__linux__)
        ::munmap(range.first, range.length);
#else
        static_cast<void>(range);
#endif
    }

private:
    range_recycler() = default;

    std::mutex mutex_;
    std::array<reserved_range, max_ranges> kept_{};
    std::size_t count_ = 0; // kept_[0, count_)
    std::size_t bytes_ = 0;
};

/// Address space for `length` bytes (a multiple of huge_page_size), 2 MiB-aligned and hinted for huge pages:
/// a recycled range if one of that length is kept (part of it may be writable already), else a fresh one,
/// inaccessible until commit_range(): reserving costs no memory and no commit charge. An empty range where
/// none can be had (and on systems without mmap).
[[nodiscard]] inline reserved_range reserve_range(std::size_t length) noexcept {
#if defined(__linux__)
    if (const auto recycled = range_recycler::instance().take(length); recycled.first != nullptr) {
        return recycled;
    }
    const auto reserved = length + huge_page_size;
    void* mapped = ::mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED) {
        return {};
    }
    auto* const first = static_cast<std::byte*>(mapped);
    const auto head =
        (huge_page_size - reinterpret_cast<std::uintptr_t>(first) % huge_page_size) % huge_page_size;
    if (head != 0) {
        ::munmap(first, head);
    }
    if (reserved - head - length != 0) {
        ::munmap(first + head + length, reserved - head - length);
    }
    ::madvise(first + head, length, MADV_HUGEPAGE);
    return {first + head, length, 0};
#else
    static_cast<void>(length);
    return {};
#endif
}

/// Makes the first `writable` bytes of `range` readable and writable (no-op for what already is); pages are
/// still faulted in only when touched. Returns false where the system refuses (strict overcommit).
[[nodiscard]] inline bool commit_range(reserved_range& range, std::size_t writable) noexcept {
    if (writable <= range.writable) {
        return true;
    }
#if defined(__linux__)
    if (::mprotect(range.first + range.writable, writable - range.writable, PROT_READ | PROT_WRITE) != 0) {
        return false;
    }
    range.writable = writable;
    return true;
#else
    return false;
#endif
}

/// Gives a range from reserve_range() back: kept for reuse if the recycler has room, else unmapped.
inline void release_range(reserved_range range) noexcept {
    if (range.first != nullptr && !range_recycler::instance().keep(range)) {
        range_recycler::unmap(range);
    }
}

/// `bytes` of uninitialized memory aligned to `alignment` (at most 2 MiB): a range of its own from
/// reserve_range() for 2 MiB and more, the heap otherwise. Throws std::bad_alloc.
[[nodiscard]] inline void* allocate_block(std::size_t bytes, std::size_t alignment) {
#if defined(__linux__)
    if (is_huge_block(bytes)) {
        const auto length = huge_block_length(bytes);
        auto range = reserve_range(length);
        if (range.first == nullptr) {
            throw std::bad_alloc{};
        }
        if (!commit_range(range, length)) {
            range_recycler::unmap(range);
            throw std::bad_alloc{};
        }
        return range.first;
    }
#endif
    return ::operator new (bytes, std::align_val_t{alignment});
}

/// Frees a block from allocate_block(bytes, alignment), given the same two values.
inline void deallocate_block(void* block, std::size_t bytes, std::size_t alignment) noexcept {
#if defined(__linux__)
    if (is_huge_block(bytes)) {
        const auto length = huge_block_length(bytes);
        release_range({static_cast<std::byte*>(block), length, length});
        return;
    }
#endif
    ::operator delete (block, std::align_val_t{alignment});
}

/// A standard allocator over allocate_block: the big arrays of a pool (components, packed entities) land on
/// huge pages once they reach 2 MiB; small pools stay on the heap.
template<typename Type>
class huge_page_allocator {
public:
    static_assert(alignof(Type) <= huge_page_size, "a component aligned beyond 2 MiB");
    using value_type = Type;

    huge_page_allocator() noexcept = default;
    // Not explicit: containers rebind an allocator by converting it.
    template<typename Other>
    huge_page_allocator(const huge_page_allocator<Other>& /*other*/) noexcept {}

    [[nodiscard]] Type* allocate(std::size_t count) {
        if (count > std::numeric_limits<std::size_t>::max() / sizeof(Type)) {
            throw std::bad_array_new_length{};
        }
        return static_cast<Type*>(allocate_block(count * sizeof(Type), alignof(Type)));
    }

    void deallocate(Type* block, std::size_t count) noexcept {
        deallocate_block(block, count * sizeof(Type), alignof(Type));
    }

    // Stateless: any instance frees what any other allocated.
    friend bool operator==(const huge_page_allocator& /*lhs*/, const huge_page_allocator& /*rhs*/) noexcept {
        return true;
    }
};

} // namespace ecsnet::detail
