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
// partly used huge page beyond its capacity.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>

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

/// `bytes` of uninitialized memory aligned to `alignment` (at most 2 MiB). Throws std::bad_alloc.
[[nodiscard]] inline void* allocate_block(std::size_t bytes, std::size_t alignment) {
#if defined(__linux__)
    if (is_huge_block(bytes)) {
        const auto length = huge_block_length(bytes);
        // Map one huge page more than needed, then unmap the misaligned head and the tail.
        const auto reserved = length + huge_page_size;
        void* mapped = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapped == MAP_FAILED) {
            throw std::bad_alloc{};
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
        // Only a hint: where transparent huge pages are off, the block stays on ordinary pages.
        ::madvise(first + head, length, MADV_HUGEPAGE);
        return first + head;
    }
#endif
    return ::operator new (bytes, std::align_val_t{alignment});
}

/// Frees a block from allocate_block(bytes, alignment), given the same two values.
inline void deallocate_block(void* block, std::size_t bytes, std::size_t alignment) noexcept {
#if defined(__linux__)
    if (is_huge_block(bytes)) {
        ::munmap(block, huge_block_length(bytes));
        return;
    }
#endif
    ::operator delete (block, std::align_val_t{alignment});
}

/// Address space for `bytes` (a multiple of huge_page_size), 2 MiB-aligned and hinted for huge pages, but
/// inaccessible until commit_range(): reserving costs no memory and no commit charge. nullptr where it cannot
/// be had (and on systems without mmap).
[[nodiscard]] inline std::byte* reserve_range(std::size_t bytes) noexcept {
#if defined(__linux__)
    const auto reserved = bytes + huge_page_size;
    void* mapped = ::mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED) {
        return nullptr;
    }
    auto* const first = static_cast<std::byte*>(mapped);
    const auto head =
        (huge_page_size - reinterpret_cast<std::uintptr_t>(first) % huge_page_size) % huge_page_size;
    if (head != 0) {
        ::munmap(first, head);
    }
    if (reserved - head - bytes != 0) {
        ::munmap(first + head + bytes, reserved - head - bytes);
    }
    ::madvise(first + head, bytes, MADV_HUGEPAGE);
    return first + head;
#else
    static_cast<void>(bytes);
    return nullptr;
#endif
}

/// Makes [first, first + bytes) of a reserved range readable and writable; pages are still faulted in only
/// when touched. Returns false where the system refuses (strict overcommit).
[[nodiscard]] inline bool commit_range(std::byte* first, std::size_t bytes) noexcept {
#if defined(__linux__)
    return ::mprotect(first, bytes, PROT_READ | PROT_WRITE) == 0;
#else
    static_cast<void>(first);
    static_cast<void>(bytes);
    return false;
#endif
}

/// Returns a range from reserve_range(bytes).
inline void release_range(std::byte* first, std::size_t bytes) noexcept {
#if defined(__linux__)
    ::munmap(first, bytes);
#else
    static_cast<void>(first);
    static_cast<void>(bytes);
#endif
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
