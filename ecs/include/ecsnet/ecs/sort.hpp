#pragma once

// Sorting sparse sets whose packed array has companions (a storage's components, the other pools of a
// group): the options a caller picks from, and the position-based algorithms the sets use (seed
// 000_19edbd8e7898577e.txt).
//
// The three methods of seed 000:
// - in_place: an introsort (quicksort, heapsort past 2 log n levels, insertion sort below 16 elements) of
//   the set's own arrays, whose exchange is the seed's sparse-aware swap: packed entity, every companion
//   element and the sparse slots of both entities. A comparator on components sees nothing but its
//   arguments, so then the sparse slots are rewritten once at the end instead of at every swap. Stable
//   variant: a merge sort whose merges rotate in place (O(n log^2 n) swaps). No memory.
// - permutation: std::sort (std::stable_sort) of an index array by the comparator, then the permutation is
//   applied cycle by cycle, moving each element once. O(n) extra memory (one 32-bit index per element).
// - mixed: the packed entities alone are sorted, then the cycles are walked through the sparse array, which
//   still holds every entity's old position, and the companions follow ("adjust"), one move each. The
//   entities are sorted with the swap-only algorithms below rather than std::sort, whose moves through a
//   temporary could lose an entity if the comparator threw. No memory.
// Every method leaves the set consistent if the comparator throws (partly sorted).
//
// What `automatic` picks, measured on the benchmark workload (1M entities, bench/ecs_bench.cpp, figures and
// commands in bench/RESULTS.md "Groups and sorting"; medians of 5, time per entity over std::sort of a
// plain std::vector<Position>):
// - unstable: in_place. By a component (BM_SortByXMethod/*/0): in_place 1.36, permutation 3.60, mixed
//   8.32. In place, the comparator reads the components in the order the sort walks them, as std::sort
//   would; the index sort reads them scattered, and mixed reaches each one through the sparse array.
//   Deferring the sparse slots to one pass at the end is what brings in_place to 1.36: with the seed's
//   swap that rewrites both slots at every exchange it measured 1.76. By entity, with a comparator that
//   looks components up in another pool (BM_SortByEntityMethod): in_place 1.00, permutation 1.21, mixed
//   1.33, relative to in_place.
// - stable: permutation (std::stable_sort of the indices, BM_SortByXMethod/*/1): 3.84, against in_place
//   4.20 (rotating merges) and mixed 10.47. Except with a fixed capacity, which must not allocate:
//   in_place. The permutation method allocates its index array even then, when asked for by name.
//
// Complexity: O(n log n) comparisons for every method (in_place stable: O(n log^2 n) swaps). Invalidation:
// sorting moves components, so references and pointers to them then designate other entities' components.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace ecsnet {

/// How a sort arranges the arrays of a set; see the header comment.
enum class sort_method : std::uint8_t { automatic, in_place, permutation, mixed };

/// What a sort is asked for: a method, and whether elements that compare equal keep their order.
struct sort_options {
    sort_method method = sort_method::automatic;
    bool stable = false;
};

/// Sort keeping the relative order of elements that compare equal: sort(compare, ecsnet::stable_sort).
inline constexpr sort_options stable_sort{sort_method::automatic, true};

namespace detail {

/// The method `automatic` stands for (measured: see the header comment). A set of fixed capacity allocates
/// nothing after its construction (capacity.hpp), so it sorts stably in place rather than by permutation.
[[nodiscard]] constexpr sort_method resolve(sort_options options, bool fixed_capacity = false) noexcept {
    if (options.method != sort_method::automatic) {
        return options.method;
    }
    return options.stable && !fixed_capacity ? sort_method::permutation : sort_method::in_place;
}

// Every algorithm here works on positions [first, last) of a set, through two callables: less(i, j) says
// whether the element now at position i orders before the one at position j, and swap(i, j) exchanges
// them (with whatever companions and bookkeeping the caller attaches to a swap).

inline constexpr std::size_t insertion_sort_threshold = 16;

// Stable: only adjacent elements are exchanged, and only when strictly out of order.
template<typename Less, typename Swap>
void insertion_sort(std::size_t first, std::size_t last, Less& less, Swap& swap) {
    for (auto next = first + 1; next < last; ++next) {
        for (auto at = next; at > first && less(at, at - 1); --at) {
            swap(at, at - 1);
        }
    }
}

template<typename Less, typename Swap>
void sift_down(std::size_t base, std::size_t root, std::size_t count, Less& less, Swap& swap) {
    for (auto child = 2 * root + 1; child < count; child = 2 * root + 1) {
        if (child + 1 < count && less(base + child, base + child + 1)) {
            ++child;
        }
        if (!less(base + root, base + child)) {
            return;
        }
        swap(base + root, base + child);
        root = child;
    }
}

template<typename Less, typename Swap>
void heap_sort(std::size_t first, std::size_t last, Less& less, Swap& swap) {
    const auto count = last - first;
    for (auto root = count / 2; root-- != 0;) {
        sift_down(first, root, count, less, swap);
    }
    for (auto end = count - 1; end > 0; --end) {
        swap(first, first + end);
        sift_down(first, 0, end, less, swap);
    }
}

// Moves the median of the elements at a, b and c to position `to`.
template<typename Less, typename Swap>
void move_median_to(std::size_t to, std::size_t a, std::size_t b, std::size_t c, Less& less, Swap& swap) {
    std::size_t median = 0;
    if (less(a, b)) {
        median = less(b, c) ? b : (less(a, c) ? c : a);
    } else {
        median = less(a, c) ? a : (less(b, c) ? c : b);
    }
    if (median != to) {
        swap(to, median);
    }
}

template<typename Less, typename Swap>
void introsort_loop(std::size_t first, std::size_t last, std::size_t depth, Less& less, Swap& swap) {
    while (last - first > insertion_sort_threshold) {
        if (depth == 0) {
            heap_sort(first, last, less, swap);
            return;
        }
        --depth;
        // The pivot waits at `first` during the partition; the median of three guarantees an element not
        // below it and one not above it in the range, so neither scan needs a bounds check.
        move_median_to(first, first + 1, first + (last - first) / 2, last - 1, less, swap);
        auto low = first + 1;
        auto high = last;
        for (;;) {
            while (less(low, first)) {
                ++low;
            }
            --high;
            while (less(first, high)) {
                --high;
            }
            if (low >= high) {
                break;
            }
            swap(low, high);
            ++low;
        }
        introsort_loop(low, last, depth, less, swap);
        last = low;
    }
    insertion_sort(first, last, less, swap);
}

/// Unstable in-place sort of positions [first, last): introsort, O(n log n) in the worst case.
template<typename Less, typename Swap>
void introsort(std::size_t first, std::size_t last, Less less, Swap swap) {
    if (last - first < 2) {
        return;
    }
    std::size_t depth = 0;
    for (auto count = last - first; count > 1; count >>= 1U) {
        depth += 2;
    }
    introsort_loop(first, last, depth, less, swap);
}

// Rotates [first, last) so that the element at `middle` comes first: three reversals, swaps only.
template<typename Swap>
void rotate_by_swaps(std::size_t first, std::size_t middle, std::size_t last, Swap& swap) {
    const auto reverse = [&swap](std::size_t low, std::size_t high) {
        while (low + 1 < high) {
            swap(low++, --high);
        }
    };
    reverse(first, middle);
    reverse(middle, last);
    reverse(first, last);
}

// Merges the sorted runs [first, middle) and [middle, last) in place, stably: split the longer run in two,
// find where its middle element falls in the other run, rotate the two inner pieces past each other and
// merge both halves the same way.
template<typename Less, typename Swap>
void merge_in_place(std::size_t first, std::size_t middle, std::size_t last, Less& less, Swap& swap) {
    while (first < middle && middle < last) {
        if (!less(middle, middle - 1)) {
            return; // already in order
        }
        if (last - first == 2) {
            swap(first, middle);
            return;
        }
        std::size_t cut_left = 0;
        std::size_t cut_right = 0;
        if (middle - first > last - middle) {
            cut_left = first + (middle - first) / 2;
            // The first element of the right run not below the left cut (equal ones stay on the right).
            auto low = middle;
            auto high = last;
            while (low < high) {
                const auto probe = low + (high - low) / 2;
                if (less(probe, cut_left)) {
                    low = probe + 1;
                } else {
                    high = probe;
                }
            }
            cut_right = low;
        } else {
            cut_right = middle + (last - middle) / 2;
            // The first element of the left run above the right cut (equal ones stay on the left).
            auto low = first;
            auto high = middle;
            while (low < high) {
                const auto probe = low + (high - low) / 2;
                if (less(cut_right, probe)) {
                    high = probe;
                } else {
                    low = probe + 1;
                }
            }
            cut_left = low;
        }
        rotate_by_swaps(cut_left, middle, cut_right, swap);
        const auto new_middle = cut_left + (cut_right - middle);
        // Recurse into the smaller side, loop on the larger one: the stack stays O(log n).
        if (new_middle - first < last - new_middle) {
            merge_in_place(first, cut_left, new_middle, less, swap);
            first = new_middle;
            middle = cut_right;
        } else {
            merge_in_place(new_middle, cut_right, last, less, swap);
            last = new_middle;
            middle = cut_left;
        }
    }
}

/// Stable in-place sort of positions [first, last): merge sort with rotating merges. O(n log n)
/// comparisons, O(n log^2 n) swaps, no memory.
template<typename Less, typename Swap>
void stable_in_place_sort(std::size_t first, std::size_t last, Less less, Swap swap) {
    if (last - first <= insertion_sort_threshold) {
        insertion_sort(first, last, less, swap);
        return;
    }
    // Bottom-up: insertion-sorted runs of 16, then merges of doubling width.
    for (auto run = first; run < last; run += insertion_sort_threshold) {
        insertion_sort(run, std::min(run + insertion_sort_threshold, last), less, swap);
    }
    for (auto width = insertion_sort_threshold; width < last - first; width *= 2) {
        for (auto low = first; low + width < last; low += 2 * width) {
            merge_in_place(low, low + width, std::min(low + 2 * width, last), less, swap);
        }
    }
}

/// Walks the cycles of a permutation: order[i] is the position whose element must end at position i.
/// For each cycle, hold(start) lifts the start's element out, move(from, to) moves one element into its
/// place, release(to) drops the lifted one into the last hole: one move per element. The top bit of each
/// entry marks visited positions while it runs; `order` is as it was on return.
template<typename Position, typename Hold, typename Move, typename Release>
void apply_permutation(std::span<Position> order, Hold hold, Move move, Release release) {
    constexpr Position visited = Position{1} << (sizeof(Position) * 8 - 1);
    const auto count = order.size();
    for (std::size_t start = 0; start < count; ++start) {
        if ((order[start] & visited) != 0 || order[start] == start) {
            continue;
        }
        hold(start);
        auto hole = start;
        for (;;) {
            const auto from = static_cast<std::size_t>(order[hole]);
            order[hole] |= visited;
            if (from == start) {
                break;
            }
            move(from, hole);
            hole = from;
        }
        release(hole);
    }
    for (auto& entry : order) {
        entry &= ~visited;
    }
}

} // namespace detail

} // namespace ecsnet
