// huge_vector: a randomized differential test against std::vector across the 2 MiB threshold, growth in
// place inside the reserved range, growth past the expected maximum, and what a throwing element leaves.

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/huge_vector.hpp>

namespace huge_vector_test {

namespace {

using ecsnet::detail::huge_page_size;
using ecsnet::detail::huge_vector;

template<typename Type, typename Make>
void run_differential(std::uint32_t seed, std::size_t expected_max, std::size_t steps, Make make) {
    std::mt19937 rng{seed};
    huge_vector<Type> vector{expected_max};
    std::vector<Type> model;
    for (std::size_t step = 0; step < steps; ++step) {
        const int kind = std::uniform_int_distribution<int>{0, 999}(rng);
        if (kind < 700) { // mostly growth, in bursts, so that it crosses 2 MiB and goes on growing
            const auto burst = std::uniform_int_distribution<std::size_t>{1, 2'000}(rng);
            for (std::size_t i = 0; i < burst; ++i) {
                const auto value = make(rng());
                vector.push_back(value);
                model.push_back(value);
            }
        } else if (kind < 950) {
            const auto burst = std::uniform_int_distribution<std::size_t>{1, 500}(rng);
            for (std::size_t i = 0; i < burst && !model.empty(); ++i) {
                vector.pop_back();
                model.pop_back();
            }
        } else if (kind < 970) {
            const auto count = std::uniform_int_distribution<std::size_t>{0, model.size() * 2 + 10}(rng);
            vector.reserve(count);
            model.reserve(count);
            ASSERT_GE(vector.capacity(), count);
        } else if (kind < 990) {
            const auto count = std::uniform_int_distribution<std::size_t>{0, model.size() + 5'000}(rng);
            const auto value = make(rng());
            vector.resize(count, value);
            model.resize(count, value);
        } else if (kind < 995) {
            vector.clear();
            model.clear();
        } else { // moved out and back
            huge_vector<Type> moved{std::move(vector)};
            ASSERT_TRUE(vector.empty());
            vector = std::move(moved);
        }
        ASSERT_EQ(vector.size(), model.size()) << "step " << step;
        ASSERT_GE(vector.capacity(), vector.size());
        if (!model.empty()) {
            ASSERT_EQ(vector.back(), model.back()) << "step " << step;
        }
        if (step % 64 == 0) {
            ASSERT_TRUE(std::equal(vector.begin(), vector.end(), model.begin(), model.end()))
                << "step " << step;
        }
    }
    ASSERT_TRUE(std::equal(vector.begin(), vector.end(), model.begin(), model.end()));
}

TEST(HugeVector, AgreesWithStdVectorAcrossTheHugeThreshold) {
    // Up to several MB of 4-byte elements: heap, then a reserved range, then past the expected maximum.
    run_differential<std::uint32_t>(1, 1'000'000, 3'000, [](std::uint32_t r) { return r; });
    run_differential<std::uint32_t>(2, 0, 3'000, [](std::uint32_t r) { return r; }); // no expectation
}

TEST(HugeVector, AgreesWithStdVectorForElementsWithRealMoves) {
    run_differential<std::string>(3, 100'000, 300, [](std::uint32_t r) {
        return std::string(r % 40, static_cast<char>('a' + r % 26));
    });
}

TEST(HugeVector, GrowsInPlaceInsideItsReservedRange) {
    huge_vector<std::uint64_t> vector{4'000'000}; // 32 MB expected
    for (std::uint64_t i = 0; i < huge_page_size / sizeof(std::uint64_t); ++i) {
        vector.push_back(i);
    }
#if defined(__linux__)
    ASSERT_TRUE(vector.in_reserved_range());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(vector.data()) % huge_page_size, 0U);
    const auto* first = vector.data();
    for (std::uint64_t i = vector.size(); i < 4'000'000; ++i) {
        vector.push_back(i);
    }
    EXPECT_EQ(vector.data(), first); // no relocation up to the expected maximum
    // Past it: one more relocation into a bigger block, elements intact.
    for (std::uint64_t i = vector.size(); i < 5'000'000; ++i) {
        vector.push_back(i);
    }
    EXPECT_NE(vector.data(), first);
#endif
    for (std::uint64_t i = 0; i < vector.size(); i += 9'973) {
        ASSERT_EQ(vector[i], i);
    }
    ASSERT_EQ(vector.back(), vector.size() - 1);
}

// Throws from its copy constructor when asked to, from its move constructor on the n-th move.
struct fragile {
    inline static int moves_before_throw = -1;
    int value = 0;
    bool throw_on_copy = false;

    explicit fragile(int v, bool throws = false)
        : value{v}
        , throw_on_copy{throws} {}
    fragile(const fragile& other)
        : value{other.value} {
        if (other.throw_on_copy) {
            throw std::runtime_error("copy");
        }
    }
    fragile(fragile&& other) // NOLINT: may throw on purpose
        : value{other.value} {
        if (moves_before_throw == 0) {
            throw std::runtime_error("move");
        }
        if (moves_before_throw > 0) {
            --moves_before_throw;
        }
        other.value = -1;
    }
    fragile& operator=(const fragile&) = default;
    fragile& operator=(fragile&&) = default;
    ~fragile() = default;
};

TEST(HugeVector, AThrowingElementLeavesTheVectorAsItWas) {
    huge_vector<fragile> vector{1'000};
    for (int i = 0; i < 8; ++i) {
        vector.emplace_back(i);
    }
    ASSERT_EQ(vector.size(), vector.capacity()); // the next insertion relocates
    const fragile bad{99, true};
    EXPECT_THROW(vector.push_back(bad), std::runtime_error); // the new element throws: nothing changed
    ASSERT_EQ(vector.size(), 8U);
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(vector[static_cast<std::size_t>(i)].value, i);
    }
    // A move that throws while relocating: the elements stay (those moved already are moved-from), the
    // size and the block are unchanged.
    const auto* before = vector.data();
    fragile::moves_before_throw = 3;
    EXPECT_THROW(vector.emplace_back(100), std::runtime_error);
    fragile::moves_before_throw = -1;
    EXPECT_EQ(vector.size(), 8U);
    EXPECT_EQ(vector.data(), before);
    for (int i = 3; i < 8; ++i) {
        EXPECT_EQ(vector[static_cast<std::size_t>(i)].value, i);
    }
    vector.emplace_back(100); // and it still grows
    EXPECT_EQ(vector.size(), 9U);
    EXPECT_EQ(vector.back().value, 100);
}

TEST(HugeVector, SwapAndMoveExchangeEverything) {
    huge_vector<int> small{10};
    huge_vector<int> big{1'000'000};
    small.push_back(1);
    for (int i = 0; i < 600'000; ++i) { // 2.4 MB: a reserved range
        big.push_back(i);
    }
    small.swap(big);
    EXPECT_EQ(small.size(), 600'000U);
    EXPECT_EQ(big.size(), 1U);
    EXPECT_EQ(small[599'999], 599'999);
    huge_vector<int> moved;
    moved = std::move(small);
    EXPECT_EQ(moved.size(), 600'000U);
    EXPECT_TRUE(small.empty());
    small.push_back(7); // a moved-from vector is usable
    EXPECT_EQ(small.back(), 7);
}

} // namespace

} // namespace huge_vector_test
