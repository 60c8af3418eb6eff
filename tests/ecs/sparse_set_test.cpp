// Sparse set and work queue: unit tests, then a randomized differential test against std::set with the
// invariants checked after every operation.

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/sparse_set.hpp>
#include <ecsnet/ecs/storage.hpp>
#include <ecsnet/ecs/work_queue.hpp>

namespace sparse_set_test {

namespace {

using ecsnet::entity;
using ecsnet::entity_traits;

entity make(std::uint32_t index, std::uint32_t version = 0) {
    return entity_traits::construct(index, version);
}

// sparse[packed[i]] == i for every element: the invariant everything else rests on.
template<typename Set>
void expect_consistent(const Set& set) {
    for (std::size_t pos = 0; pos < set.size(); ++pos) {
        ASSERT_EQ(set.index(set[pos]), pos);
        ASSERT_EQ(set.find(set[pos]), pos);
    }
}

TEST(SparseSet, StartsEmpty) {
    ecsnet::sparse_set<> set;
    EXPECT_TRUE(set.empty());
    EXPECT_EQ(set.size(), 0U);
    EXPECT_FALSE(set.contains(make(0)));
    EXPECT_EQ(set.find(make(7)), ecsnet::sparse_set<>::npos);
    EXPECT_EQ(set.sparse_pages(), 0U);
}

TEST(SparseSet, PushFindAndIterateInInsertionOrder) {
    ecsnet::sparse_set<> set;
    const std::vector<entity> inserted{make(5), make(1), make(9000), make(3, 2)};
    for (const auto e : inserted) {
        set.push(e);
    }
    EXPECT_EQ(set.size(), inserted.size());
    EXPECT_TRUE(std::equal(set.begin(), set.end(), inserted.begin(), inserted.end()));
    for (std::size_t pos = 0; pos < inserted.size(); ++pos) {
        EXPECT_EQ(set.index(inserted[pos]), pos);
    }
    expect_consistent(set);
}

TEST(SparseSet, StaleIdentifierIsNotContained) {
    ecsnet::sparse_set<> set;
    set.push(make(4, 1));
    EXPECT_TRUE(set.contains(make(4, 1)));
    EXPECT_FALSE(set.contains(make(4, 0)));
    EXPECT_FALSE(set.contains(make(4, 2)));
    EXPECT_FALSE(set.contains(ecsnet::null_entity));
}

TEST(SparseSet, EraseSwapsTheLastElementIn) {
    ecsnet::sparse_set<> set;
    for (std::uint32_t i = 0; i < 5; ++i) {
        set.push(make(i));
    }
    set.erase(make(1));
    EXPECT_EQ(set.size(), 4U);
    EXPECT_FALSE(set.contains(make(1)));
    EXPECT_EQ(set[1], make(4)); // the last one took its place
    expect_consistent(set);
    EXPECT_TRUE(set.remove(make(4)));
    EXPECT_FALSE(set.remove(make(4)));
    EXPECT_FALSE(set.remove(make(100)));
    expect_consistent(set);
}

TEST(SparseSet, InsertRefusesDuplicates) {
    ecsnet::sparse_set<> set;
    EXPECT_TRUE(set.insert(make(2)));
    EXPECT_FALSE(set.insert(make(2)));
    EXPECT_EQ(set.size(), 1U);
}

TEST(SparseSet, HugeIndexAllocatesOnePage) {
    ecsnet::sparse_set<> set;
    set.push(make(entity_traits::max_index));
    EXPECT_EQ(set.sparse_pages(), 1U);
    EXPECT_TRUE(set.contains(make(entity_traits::max_index)));
    set.push(make(3));
    EXPECT_EQ(set.sparse_pages(), 2U);
}

TEST(SparseSet, ClearIsConstantTimeAndLeavesTheSparseArrayAlone) {
    ecsnet::sparse_set<> set;
    for (std::uint32_t i = 0; i < 10'000; i += 3) {
        set.push(make(i));
    }
    const auto pages = set.sparse_pages();
    set.clear();
    EXPECT_TRUE(set.empty());
    EXPECT_EQ(set.sparse_pages(), pages); // nothing freed, nothing reset
    for (std::uint32_t i = 0; i < 10'000; ++i) {
        ASSERT_FALSE(set.contains(make(i)));
    }
    // Stale slots never fool the membership test after reuse.
    set.push(make(9));
    set.push(make(0));
    EXPECT_TRUE(set.contains(make(9)));
    EXPECT_FALSE(set.contains(make(3)));
    EXPECT_FALSE(set.contains(make(6)));
    expect_consistent(set);
}

TEST(SparseSet, FindWithHint) {
    ecsnet::sparse_set<> set;
    set.push(make(10));
    set.push(make(20));
    EXPECT_EQ(set.find(make(20), 1), 1U); // right guess
    EXPECT_EQ(set.find(make(20), 0), 1U); // wrong guess, falls back
    EXPECT_EQ(set.find(make(20), 99), 1U);
    EXPECT_EQ(set.find(make(30), 1), ecsnet::sparse_set<>::npos);
}

TEST(SparseSet, SwapElementsKeepsTheSparseArrayInStep) {
    ecsnet::sparse_set<> set;
    for (std::uint32_t i = 0; i < 4; ++i) {
        set.push(make(i));
    }
    set.swap_elements(0, 3);
    EXPECT_EQ(set[0], make(3));
    EXPECT_EQ(set[3], make(0));
    expect_consistent(set);
}

TEST(SparseSet, FixedCapacityRefusesPastItsBounds) {
    ecsnet::sparse_set<ecsnet::fixed_capacity<4>> set;
    EXPECT_EQ(set.capacity(), 4U);
    EXPECT_THROW(set.push(make(4)), ecsnet::capacity_error); // index beyond the fixed range
    for (std::uint32_t i = 0; i < 4; ++i) {
        set.push(make(i, 7));
    }
    set.erase(make(2, 7));
    set.push(make(2, 8));
    EXPECT_EQ(set.size(), 4U);
    EXPECT_FALSE(set.contains(make(2, 7)));
    EXPECT_TRUE(set.contains(make(2, 8)));
    try {
        set.push(make(5));
        FAIL() << "a fifth element fitted in a set of four";
    } catch (const ecsnet::capacity_error& error) {
        EXPECT_NE(std::string{error.what()}.find("capacity"), std::string::npos);
    }
    EXPECT_EQ(set.size(), 4U); // the refusal changed nothing
    expect_consistent(set);
}

TEST(SparseSet, MoveTransfersEverything) {
    ecsnet::sparse_set<> set;
    set.push(make(1));
    set.push(make(5000));
    ecsnet::sparse_set<> moved{std::move(set)};
    EXPECT_TRUE(moved.contains(make(1)));
    EXPECT_TRUE(moved.contains(make(5000)));
    expect_consistent(moved);
    ecsnet::sparse_set<> assigned;
    assigned.push(make(3));
    assigned = std::move(moved);
    EXPECT_FALSE(assigned.contains(make(3)));
    EXPECT_TRUE(assigned.contains(make(5000)));
}

// Indices are k * stride for k in [0, index_range): a stride spreads few elements over many sparse pages.
template<typename Set>
void run_differential(std::uint32_t index_range, std::uint32_t seed, std::uint32_t stride = 1) {
    std::mt19937 rng{seed};
    Set set;
    std::set<std::uint32_t> model;                   // integral identifiers
    std::map<std::uint32_t, std::uint32_t> by_index; // index -> identifier held
    const auto random_entity = [&] {
        return make(std::uniform_int_distribution<std::uint32_t>{0, index_range - 1}(rng)*stride,
                    std::uniform_int_distribution<std::uint32_t>{0, 2}(rng));
    };
    for (int step = 0; step < 100'000; ++step) {
        const auto e = random_entity();
        const bool present = model.count(ecsnet::to_integral(e)) != 0;
        switch (std::uniform_int_distribution<int>{0, 9}(rng)) {
        case 0:
        case 1:
        case 2:
        case 3: {
            // A set holds one identifier per index, as pools do: insert only if the index is free.
            if (by_index.count(ecsnet::to_index(e)) == 0) {
                set.push(e);
                model.insert(ecsnet::to_integral(e));
                by_index[ecsnet::to_index(e)] = ecsnet::to_integral(e);
            } else {
                ASSERT_EQ(set.contains(e), present);
            }
            break;
        }
        case 4:
        case 5:
        case 6:
            ASSERT_EQ(set.remove(e), present);
            if (model.erase(ecsnet::to_integral(e)) != 0) {
                by_index.erase(ecsnet::to_index(e));
            }
            break;
        case 7:
            if (set.size() > 1) {
                const auto a = std::uniform_int_distribution<std::size_t>{0, set.size() - 1}(rng);
                const auto b = std::uniform_int_distribution<std::size_t>{0, set.size() - 1}(rng);
                set.swap_elements(a, b);
            }
            break;
        case 8:
            ASSERT_EQ(set.contains(e), present);
            break;
        default:
            if (std::uniform_int_distribution<int>{0, 200}(rng) == 0) {
                set.clear();
                model.clear();
                by_index.clear();
            }
            break;
        }
        // Invariants after every step.
        ASSERT_EQ(set.size(), model.size());
        expect_consistent(set);
        for (const auto held : model) {
            ASSERT_TRUE(set.contains(entity{held}));
        }
    }
}

TEST(SparseSetDifferential, DynamicAgainstStdSet) {
    run_differential<ecsnet::sparse_set<>>(300, 1);
    run_differential<ecsnet::sparse_set<>>(20'000, 2); // several sparse pages
}

TEST(SparseSetDifferential, DynamicAgainstStdSetWhilePagesMoveIntoHugeBlocks) {
    // About 2,000 indices over 256 pages: runs of pages move into huge blocks while they hold elements.
    run_differential<ecsnet::sparse_set<>>(2'048, 4, 509);
}

TEST(SparseSetDifferential, FixedAgainstStdSet) {
    run_differential<ecsnet::sparse_set<ecsnet::fixed_capacity<300>>>(300, 3);
}

// same_entities_as answers from block stamps once a block was compared (views rely on it to skip comparing
// aligned pools): against a comparison of the packed arrays, after every kind of change of either pool,
// asked twice so that the second answer comes from what the first one recorded. Storages of a payload
// cover the component sorts, which write the packed arrays directly; bare sets, the sets' own sorts.
template<typename Pool>
void add(Pool& pool, entity e) {
    if constexpr (requires { pool.emplace(e, 0U); }) {
        pool.emplace(e, ecsnet::to_integral(e));
    } else {
        pool.push(e);
    }
}

template<typename pool_type>
void run_same_entities_differential(std::uint32_t seed, std::uint32_t index_range) {
    constexpr std::size_t block = pool_type::block_size;
    std::mt19937 rng{seed};
    pool_type lead;
    pool_type other;
    const auto chance = [&](int percent) { return std::uniform_int_distribution<int>{0, 99}(rng) < percent; };
    const auto pick = [&](const pool_type& pool) {
        return pool[std::uniform_int_distribution<std::size_t>{0, pool.size() - 1}(rng)];
    };
    const auto fill_both = [&](std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            const auto e = make(std::uniform_int_distribution<std::uint32_t>{0, index_range - 1}(rng));
            if (!lead.contains(e) && !other.contains(e)) {
                add(lead, e);
                add(other, e);
            }
        }
    };
    fill_both(index_range / 2);
    for (int step = 0; step < 3'000; ++step) {
        // Every block of positions, and a few ranges inside blocks and across them.
        for (int ask = 0; ask < 2; ++ask) {
            const auto longest = std::max(lead.size(), other.size());
            for (std::size_t first = 0; first < longest; first += block) {
                const auto last = std::min(first + block, longest);
                // A part of a block first, or the whole block first: only a whole block may be recorded.
                const std::pair whole{first, last};
                const auto a = std::uniform_int_distribution<std::size_t>{first, last}(rng);
                const auto b = std::uniform_int_distribution<std::size_t>{a, last}(rng);
                const auto shape = std::uniform_int_distribution<int>{0, 2}(rng); // a head, a tail, a middle
                const std::pair part{shape == 0 ? first : a, shape == 1 ? last : b};
                for (const auto& [from, to] :
                     (step + ask) % 2 == 0 ? std::array{whole, part} : std::array{part, whole}) {
                    const bool same = to <= lead.size() && to <= other.size() &&
                                      std::equal(lead.begin() + from, lead.begin() + std::max(from, to),
                                                 other.begin() + from);
                    ASSERT_EQ(other.same_entities_as(lead, from, to), same)
                        << "step " << step << ", positions " << from << " to " << to;
                }
            }
        }
        const int kind = std::uniform_int_distribution<int>{0, 99}(rng);
        auto& pool = chance(50) ? lead : other;
        if (kind < 20) { // the same new entities in both, or in one only
            fill_both(std::uniform_int_distribution<std::size_t>{1, 5}(rng));
            if (chance(30)) {
                const auto e = make(std::uniform_int_distribution<std::uint32_t>{0, index_range - 1}(rng));
                if (!pool.contains(e)) {
                    add(pool, e);
                }
            }
        } else if (kind < 40 && !pool.empty()) { // one leaves one pool, or both (swap-and-pop)
            const auto e = pick(pool);
            pool.erase(e);
            if (chance(50)) {
                lead.remove(e);
                other.remove(e);
            }
        } else if (kind < 55 && pool.size() > 1) { // a single exchange
            pool.swap_elements(std::uniform_int_distribution<std::size_t>{0, pool.size() - 1}(rng),
                               std::uniform_int_distribution<std::size_t>{0, pool.size() - 1}(rng));
        } else if (kind < 70) { // sorts, by payload (raw swaps, then the sparse array) or by entity
            const ecsnet::sort_options options{
                static_cast<ecsnet::sort_method>(std::uniform_int_distribution<int>{1, 3}(rng)), chance(50)};
            const auto salt = static_cast<std::uint32_t>(rng());
            const auto key = [salt](std::uint32_t value) { return (value * 2654435761U) ^ salt; };
            constexpr bool has_payload = requires(pool_type & set) {
                set.raw();
            };
            if (has_payload && chance(50)) {
                if constexpr (has_payload) {
                    pool.sort([&](std::uint32_t lhs, std::uint32_t rhs) { return key(lhs) < key(rhs); },
                              options);
                }
            } else {
                pool.sort(
                    [&](entity lhs, entity rhs) {
                        return key(ecsnet::to_integral(lhs)) < key(ecsnet::to_integral(rhs));
                    },
                    options);
            }
            if (chance(30)) { // sorted the same way: the common entities line up again
                auto& second = &pool == &lead ? other : lead;
                second.sort_as(pool);
            }
        } else if (kind < 90) { // realign: what pools filled together or a sort_as produce
            other.sort_as(lead);
        } else if (kind < 93) { // emptied, then refilled in another order
            std::vector<entity> held(pool.begin(), pool.end());
            std::shuffle(held.begin(), held.end(), rng);
            pool.clear();
            for (const auto e : held) {
                add(pool, e);
            }
        }
    }
}

TEST(SparseSet, SameEntitiesAsAgreesWithAComparisonAfterEveryChange) {
    run_same_entities_differential<ecsnet::storage<std::uint32_t>>(11, 6'000);
    run_same_entities_differential<ecsnet::storage<std::uint32_t, ecsnet::fixed_capacity<4'000>>>(12, 4'000);
    run_same_entities_differential<ecsnet::sparse_set<>>(13, 6'000);
}

TEST(WorkQueue, VisitsInInsertionOrderIncludingWhatItPushes) {
    ecsnet::work_queue<> queue;
    EXPECT_TRUE(queue.push(make(3)));
    EXPECT_TRUE(queue.push(make(1)));
    EXPECT_FALSE(queue.push(make(3))); // de-duplicated
    std::vector<entity> visited;
    queue.drain([&](entity e) {
        visited.push_back(e);
        if (e == make(1)) {
            queue.push(make(7));
            queue.push(make(3)); // already visited in this drain: not again
        }
        if (e == make(7)) {
            queue.push(make(8));
        }
    });
    EXPECT_EQ(visited, (std::vector<entity>{make(3), make(1), make(7), make(8)}));
    EXPECT_TRUE(queue.empty());
    EXPECT_FALSE(queue.contains(make(3)));
    EXPECT_TRUE(queue.push(make(3))); // a new drain, a new visit
}

} // namespace

} // namespace sparse_set_test
