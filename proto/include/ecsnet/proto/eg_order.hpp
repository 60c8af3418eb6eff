#pragma once

// The order k of an exp-Golomb coded list (bitstream.hpp): the writer picks the k that makes the list
// shortest, the smallest one on a tie (eg_order_finder), and the reader refuses any other (eg_order_check),
// so that a list has one encoding.
//
// n's code of order k has 2 max(w, k + 1) - k - 1 bits, w = bit_width(n): from k - 1 to k it shrinks by
// one bit while k < w and grows by one from then on, a convex function of k. The list's length, a sum of
// convex functions, is convex too, and from k - 1 to k it changes by 2 #(n < 2^k) - N bits (N numbers:
// those of at most k bits grow, the others shrink). So a k is the writer's choice exactly when that
// change is negative at k (the list got shorter) and not at k + 1 (it stops getting shorter): two counts,
// #(n < 2^k) and #(n < 2^(k + 1)), tell it, where finding k takes a histogram of the widths. The reader's
// loops add two compares a number instead of incrementing a counter in memory that the next number, of
// the same width most of the time, has to wait for.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace ecsnet::proto {

/// The largest order the format has room for (a 5-bit field).
inline constexpr unsigned max_eg_order = 31;

/// The writer's side: the order that minimises the size of a list, from the histogram of the widths.
class eg_order_finder {
public:
    void add(std::uint64_t n) noexcept {
        ++histogram_[std::bit_width(n)];
        ++count_;
    }

    /// The smallest order of the shortest encoding of what was added (0 for nothing).
    [[nodiscard]] unsigned best() const noexcept {
        // The list stops getting shorter at the first k where 2 #(n < 2^(k + 1)) >= N (above): with w the
        // fewest bits that at least half the numbers fit in, k = w - 1 (0 when w <= 1). A walk up the
        // widths until half are counted: a few steps for the short lists of small numbers a view's lists
        // are, where a search over every order from the widest width down was a third of writing them.
        std::uint64_t within = histogram_[0]; // numbers of at most `width` bits
        unsigned width = 0;
        while (2 * within < count_) {
            within += histogram_[++width];
        }
        return std::min(width == 0 ? 0U : width - 1, max_eg_order);
    }

private:
    std::array<std::uint32_t, 65> histogram_{};
    std::uint64_t count_{};
};

/// The reader's side: whether an order read from the stream (k <= max_eg_order) is the one eg_order_finder
/// picks for the numbers that follow it.
class eg_order_check {
public:
    explicit eg_order_check(unsigned k) noexcept
        : k_{k}
        , limit_k_{std::uint64_t{1} << k}
        , limit_next_{std::uint64_t{1} << (k + 1)} {}

    [[gnu::always_inline]] void add(std::uint64_t n) noexcept {
        within_k_ += n < limit_k_ ? 1U : 0U;
        within_next_ += n < limit_next_ ? 1U : 0U;
    }

    /// True if k is eg_order_finder::best() of the `count` numbers added.
    [[nodiscard]] bool canonical(std::size_t count) const noexcept {
        const bool shorter_than_k_minus_1 = k_ == 0 || 2 * within_k_ < count;
        const bool no_longer_than_k_plus_1 = k_ >= max_eg_order || 2 * within_next_ >= count;
        return shorter_than_k_minus_1 && no_longer_than_k_plus_1;
    }

private:
    unsigned k_;
    std::uint64_t limit_k_;
    std::uint64_t limit_next_;
    std::size_t within_k_{};    // numbers of at most k bits (below 2^k)
    std::size_t within_next_{}; // numbers of at most k + 1 bits
};

} // namespace ecsnet::proto
