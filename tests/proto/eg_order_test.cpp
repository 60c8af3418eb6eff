// The exp-Golomb order (eg_order.hpp): for random lists of numbers of every shape, the writer's order is
// the smallest of those that make the list shortest (against the sizes summed for every order), and the
// reader's two-count check accepts exactly that order and refuses every other from 0 to 31.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/eg_order.hpp"

namespace ecsnet::proto::eg_order_test {
namespace {

std::vector<std::uint64_t> random_numbers(arena::scene_random& rng) {
    std::vector<std::uint64_t> numbers(rng.below(4) == 0 ? rng.below(4) : 1 + rng.below(300));
    // A few widths around a centre, now and then a wide outlier: the shapes of gaps and residuals.
    const auto centre = static_cast<unsigned>(rng.below(rng.below(4) == 0 ? 41 : 12));
    for (auto& n : numbers) {
        auto width = static_cast<int>(centre) + static_cast<int>(rng.below(5)) - 2;
        if (rng.below(16) == 0) {
            width = static_cast<int>(rng.below(41));
        }
        width = std::max(width, 0);
        n = width == 0 ? 0 : (rng.next() >> (64 - width));
    }
    return numbers;
}

// The reference: the list's size at every order, summed number by number; the first smallest.
unsigned shortest_order(const std::vector<std::uint64_t>& numbers) {
    unsigned best = 0;
    std::uint64_t best_bits = ~std::uint64_t{0};
    for (unsigned k = 0; k <= max_eg_order; ++k) {
        std::uint64_t bits = 0;
        for (const auto n : numbers) {
            const auto width = static_cast<unsigned>(std::bit_width(n));
            bits += 2 * std::max(width, k + 1) - k - 1;
        }
        if (bits < best_bits) {
            best_bits = bits;
            best = k;
        }
    }
    return best;
}

unsigned writers_order(const std::vector<std::uint64_t>& numbers) {
    eg_order_finder finder;
    for (const auto n : numbers) {
        finder.add(n);
    }
    return finder.best();
}

TEST(EgOrder, TheWritersOrderIsTheFirstOfTheShortest) {
    arena::scene_random rng{29};
    for (int round = 0; round < 5000; ++round) {
        const auto numbers = random_numbers(rng);
        ASSERT_EQ(writers_order(numbers), shortest_order(numbers))
            << "round " << round << ", " << numbers.size() << " numbers";
    }
}

TEST(EgOrder, TheReadersCheckAcceptsExactlyTheWritersOrder) {
    arena::scene_random rng{31};
    for (int round = 0; round < 5000; ++round) {
        const auto numbers = random_numbers(rng);
        const auto best = writers_order(numbers);
        ASSERT_LE(best, max_eg_order);
        for (unsigned k = 0; k <= max_eg_order; ++k) {
            eg_order_check check{k};
            for (const auto n : numbers) {
                check.add(n);
            }
            ASSERT_EQ(check.canonical(numbers.size()), k == best)
                << "round " << round << ", k " << k << ", best " << best << ", " << numbers.size()
                << " numbers";
        }
    }
}

TEST(EgOrder, EdgeCases) {
    // Nothing, or only zeros: order 0.
    EXPECT_TRUE(eg_order_check{0}.canonical(0));
    EXPECT_FALSE(eg_order_check{1}.canonical(0));
    // Numbers of 40 bits: the widest order, 31, although a wider one would be shorter still.
    eg_order_finder finder;
    eg_order_check wide{max_eg_order};
    eg_order_check narrower{max_eg_order - 1};
    for (int i = 0; i < 10; ++i) {
        finder.add(std::uint64_t{1} << 39);
        wide.add(std::uint64_t{1} << 39);
        narrower.add(std::uint64_t{1} << 39);
    }
    EXPECT_EQ(finder.best(), max_eg_order);
    EXPECT_TRUE(wide.canonical(10));
    EXPECT_FALSE(narrower.canonical(10));
}

} // namespace
} // namespace ecsnet::proto::eg_order_test
