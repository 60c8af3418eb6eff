// Component storage: components stay with their entities, are moved and never copied, tags store nothing,
// and a fixed-capacity storage never allocates after construction.

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include <ecsnet/ecs/storage.hpp>

#include "allocation_counter.hpp"

namespace storage_test {

namespace {

using ecsnet::entity;

entity make(std::uint32_t index, std::uint32_t version = 0) {
    return ecsnet::entity_traits::construct(index, version);
}

struct Position {
    float x, y;
};
struct Tag {};

// Counts copies; its move constructor may throw, so std::vector would copy it when growing.
struct Tracked {
    static inline int copies = 0;
    int value = 0;
    explicit Tracked(int v)
        : value{v} {}
    Tracked(const Tracked& other)
        : value{other.value} {
        ++copies;
    }
    Tracked(Tracked&& other) // NOLINT(performance-noexcept-move-constructor): deliberately may throw
        : value{other.value} {}
    Tracked& operator=(const Tracked& other) {
        value = other.value;
        ++copies;
        return *this;
    }
    Tracked& operator=(Tracked&& other) noexcept {
        value = other.value;
        return *this;
    }
    ~Tracked() = default;
};

TEST(Storage, EmplaceBuildsAggregatesFromTheirFields) {
    ecsnet::storage<Position> pool;
    auto& p = pool.emplace(make(3), 1.5F, -2.F);
    EXPECT_EQ(p.x, 1.5F);
    EXPECT_EQ(pool.get(make(3)).y, -2.F);
    EXPECT_EQ(pool.try_get(make(4)), nullptr);
    EXPECT_EQ(pool.try_get(make(3, 1)), nullptr); // stale version
    EXPECT_EQ(pool.raw()[0].x, 1.5F);
}

TEST(Storage, EraseMovesTheLastComponentIntoTheHole) {
    ecsnet::storage<Position> pool;
    for (std::uint32_t i = 0; i < 4; ++i) {
        pool.emplace(make(i), static_cast<float>(i), 0.F);
    }
    pool.erase(make(0));
    EXPECT_EQ(pool.data()[0], make(3));
    EXPECT_EQ(pool.element_at(0).x, 3.F);
    for (std::uint32_t i = 1; i < 4; ++i) {
        EXPECT_EQ(pool.get(make(i)).x, static_cast<float>(i));
    }
}

template<typename Storage>
concept has_component_array = requires(Storage& storage) {
    storage.raw();
};

TEST(Storage, TagsStoreNoInstances) {
    ecsnet::storage<Tag> tags;
    static_assert(ecsnet::storage<Tag>::is_tag);
    static_assert(!has_component_array<ecsnet::storage<Tag>>);
    static_assert(has_component_array<ecsnet::storage<Position>>);
    tags.emplace(make(1));
    tags.emplace(make(2));
    EXPECT_TRUE(tags.contains(make(2)));
    tags.erase(make(1));
    EXPECT_EQ(tags.size(), 1U);
    // A tag storage is only its sparse set: no component array at all.
    EXPECT_LE(sizeof(ecsnet::storage<Tag>), sizeof(ecsnet::sparse_set<>) + alignof(std::max_align_t));
}

TEST(Storage, MoveOnlyComponents) {
    ecsnet::storage<std::unique_ptr<int>> pool;
    for (int i = 0; i < 100; ++i) {
        pool.emplace(make(static_cast<std::uint32_t>(i)), std::make_unique<int>(i));
    }
    for (int i = 0; i < 100; i += 2) {
        pool.erase(make(static_cast<std::uint32_t>(i)));
    }
    pool.swap_elements(0, pool.size() - 1);
    for (int i = 1; i < 100; i += 2) {
        EXPECT_EQ(*pool.get(make(static_cast<std::uint32_t>(i))), i);
    }
}

TEST(Storage, ComponentsAreMovedNeverCopied) {
    Tracked::copies = 0;
    ecsnet::storage<Tracked> pool;
    std::mt19937 rng{5};
    for (std::uint32_t i = 0; i < 5000; ++i) {
        pool.emplace(make(i), static_cast<int>(i)); // grows many times
    }
    for (int k = 0; k < 2000; ++k) {
        const auto a = std::uniform_int_distribution<std::size_t>{0, pool.size() - 1}(rng);
        const auto b = std::uniform_int_distribution<std::size_t>{0, pool.size() - 1}(rng);
        pool.swap_elements(a, b);
        pool.erase(pool.data()[a]);
    }
    pool.clear();
    EXPECT_EQ(Tracked::copies, 0);
}

TEST(Storage, FixedCapacityNeverAllocatesAfterConstruction) {
    ecsnet::storage<Position, ecsnet::fixed_capacity<1024>> pool;
    ecsnet::test_support::reset_allocation_count();
    ecsnet::test_support::count_allocations(true);
    for (std::uint32_t round = 0; round < 10; ++round) {
        for (std::uint32_t i = 0; i < 1024; ++i) {
            pool.emplace(make(i, round), 1.F, 2.F);
        }
        for (std::uint32_t i = 0; i < 1024; i += 2) {
            pool.erase(make(i, round));
        }
        pool.clear();
    }
    ecsnet::test_support::count_allocations(false);
    EXPECT_EQ(ecsnet::test_support::allocations_counted(), 0U);
}

TEST(Storage, FixedCapacityOverflowIsAClearErrorAndChangesNothing) {
    ecsnet::storage<Position, ecsnet::fixed_capacity<2>> pool;
    pool.emplace(make(0), 1.F, 1.F);
    pool.emplace(make(1), 2.F, 2.F);
    EXPECT_THROW(pool.emplace(make(1, 1), 3.F, 3.F), ecsnet::capacity_error);
    EXPECT_EQ(pool.size(), 2U);
    EXPECT_EQ(pool.get(make(1)).x, 2.F);
}

TEST(StorageDifferential, ComponentsStayWithTheirEntities) {
    std::mt19937 rng{11};
    ecsnet::storage<std::string> pool; // a type with real moves
    std::map<std::uint32_t, std::string> model;
    for (int step = 0; step < 100'000; ++step) {
        const auto index = std::uniform_int_distribution<std::uint32_t>{0, 499}(rng);
        const auto e = make(index);
        switch (std::uniform_int_distribution<int>{0, 3}(rng)) {
        case 0:
        case 1:
            if (!pool.contains(e)) {
                auto value = std::string(20, 'a') + std::to_string(step); // heap-allocated strings
                pool.emplace(e, value);
                model[index] = value;
            }
            break;
        case 2:
            ASSERT_EQ(pool.remove(e), model.erase(index) == 1);
            break;
        default:
            if (pool.size() > 1) {
                pool.swap_elements(std::uniform_int_distribution<std::size_t>{0, pool.size() - 1}(rng),
                                   std::uniform_int_distribution<std::size_t>{0, pool.size() - 1}(rng));
            }
            break;
        }
        ASSERT_EQ(pool.size(), model.size());
        for (std::size_t pos = 0; pos < pool.size(); ++pos) {
            const auto owner = ecsnet::to_index(pool.data()[pos]);
            ASSERT_EQ(pool.index(pool.data()[pos]), pos);
            ASSERT_EQ(pool.element_at(pos), model.at(owner));
        }
    }
}

} // namespace

} // namespace storage_test
