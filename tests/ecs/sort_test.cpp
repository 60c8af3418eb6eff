// Sorting sparse sets and storages (sort.hpp, seed 000_19edbd8e7898577e.txt): the position-based
// algorithms against the standard library, every method x stability x comparator kind on storages (typed
// and through a base reference), sort_n, sort_as, rearrange, throwing comparators, registry-level sorting
// and views over sorted pools, and a randomized differential test of 100,000 operations checking after
// every step that the pool invariants hold, no component is lost, duplicated or detached, the comparator
// holds along every sorted range and stable sorts kept the order of equal elements.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace sort_test {

namespace {

using ecsnet::entity;
using ecsnet::sort_method;
using ecsnet::sort_options;

constexpr sort_method every_method[] = {sort_method::automatic, sort_method::in_place,
                                        sort_method::permutation, sort_method::mixed};

struct Item {
    int key;
    std::string payload; // moves for real, and tells which entity the component belongs to
};
struct Tag {};

entity make_entity(std::uint32_t index, std::uint32_t version = 0) {
    return ecsnet::entity_traits::construct(index, version);
}

constexpr std::string_view payload_prefix = "payload of entity ";

std::string payload_of(entity e) {
    return std::string{payload_prefix} + std::to_string(ecsnet::to_integral(e));
}

// payload == payload_of(e), without allocating.
bool payload_matches(const std::string& payload, entity e) {
    std::uint32_t value = 0;
    const auto* first = payload.data() + payload_prefix.size();
    const auto* last = payload.data() + payload.size();
    return payload.size() > payload_prefix.size() && payload.starts_with(payload_prefix) &&
           std::from_chars(first, last, value).ptr == last && value == ecsnet::to_integral(e);
}

// sparse[packed[i]] == i, every component with its entity (payload), sizes agree. Mismatches are counted
// and reported once, which keeps the check cheap under the sanitizers.
template<typename Pool>
void expect_consistent(const Pool& pool, const std::map<entity, int>& model) {
    ASSERT_EQ(pool.size(), model.size());
    for (std::size_t pos = 0; pos < pool.size(); ++pos) {
        const auto e = pool[pos];
        const auto found = model.find(e);
        bool right = pool.index(e) == pos && found != model.end();
        if constexpr (!Pool::is_tag) {
            right = right && pool.element_at(pos).key == found->second &&
                    payload_matches(pool.element_at(pos).payload, e); // the component is still its entity's
        }
        if (!right) {
            FAIL() << "position " << pos << " (entity " << ecsnet::to_integral(e) << ") is inconsistent";
        }
    }
}

// ---- the algorithms ---------------------------------------------------------------------------------------

TEST(SortAlgorithms, IntrosortAndStableSortAgreeWithTheStandardLibrary) {
    std::mt19937 rng{7};
    for (int round = 0; round < 300; ++round) {
        const auto count =
            static_cast<std::size_t>(round < 100 ? round : std::uniform_int_distribution<int>{0, 3000}(rng));
        const int distinct = std::uniform_int_distribution<int>{1, 50}(rng);
        std::vector<std::pair<int, int>> values(count); // (key, original position)
        for (std::size_t i = 0; i < count; ++i) {
            values[i] = {std::uniform_int_distribution<int>{0, distinct}(rng), static_cast<int>(i)};
        }
        if (round % 7 == 1) {
            std::sort(values.begin(), values.end());
        } else if (round % 7 == 2) {
            std::sort(values.rbegin(), values.rend());
        }
        auto expected = values;
        std::stable_sort(expected.begin(), expected.end(),
                         [](auto lhs, auto rhs) { return lhs.first < rhs.first; });

        auto unstable = values;
        ecsnet::detail::introsort(
            0, count, [&](std::size_t l, std::size_t r) { return unstable[l].first < unstable[r].first; },
            [&](std::size_t l, std::size_t r) { std::swap(unstable[l], unstable[r]); });
        ASSERT_TRUE(std::is_sorted(unstable.begin(), unstable.end(),
                                   [](auto l, auto r) { return l.first < r.first; }));
        std::sort(unstable.begin(), unstable.end()); // same multiset
        auto all = values;
        std::sort(all.begin(), all.end());
        ASSERT_EQ(unstable, all);

        auto stable = values;
        ecsnet::detail::stable_in_place_sort(
            0, count, [&](std::size_t l, std::size_t r) { return stable[l].first < stable[r].first; },
            [&](std::size_t l, std::size_t r) { std::swap(stable[l], stable[r]); });
        ASSERT_EQ(stable, expected) << "count " << count;

        auto heap = values;
        auto less = [&](std::size_t l, std::size_t r) { return heap[l].first < heap[r].first; };
        auto swap = [&](std::size_t l, std::size_t r) { std::swap(heap[l], heap[r]); };
        if (count > 1) {
            ecsnet::detail::heap_sort(0, count, less, swap);
        }
        ASSERT_TRUE(
            std::is_sorted(heap.begin(), heap.end(), [](auto l, auto r) { return l.first < r.first; }));
    }
}

TEST(SortAlgorithms, IntrosortStaysNLogNOnAnOrganPipeOfDuplicates) {
    // Rising then falling, with many duplicates: a shape that hurts naive pivot choices.
    constexpr std::size_t count = 200'000;
    std::vector<int> values(count);
    for (std::size_t i = 0; i < count; ++i) {
        values[i] = static_cast<int>(i < count / 2 ? i : count - i) % 1000;
    }
    std::size_t comparisons = 0;
    ecsnet::detail::introsort(
        0, count,
        [&](std::size_t l, std::size_t r) {
            ++comparisons;
            return values[l] < values[r];
        },
        [&](std::size_t l, std::size_t r) { std::swap(values[l], values[r]); });
    EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
    EXPECT_LT(comparisons, 100 * count) << "quadratic behaviour";
}

TEST(SortAlgorithms, ApplyPermutationMovesEachElementOnceAndRestoresTheOrder) {
    std::mt19937 rng{11};
    for (std::size_t count : {0, 1, 2, 3, 10, 1000}) {
        std::vector<std::uint32_t> order(count);
        std::iota(order.begin(), order.end(), 0U);
        std::shuffle(order.begin(), order.end(), rng);
        const auto saved = order;
        std::vector<int> values(count);
        std::iota(values.begin(), values.end(), 100);
        int held = 0;
        std::size_t moves = 0;
        ecsnet::detail::apply_permutation(
            std::span<std::uint32_t>{order}, [&](std::size_t from) { held = values[from]; },
            [&](std::size_t from, std::size_t to) {
                values[to] = values[from];
                ++moves;
            },
            [&](std::size_t to) { values[to] = held; });
        EXPECT_EQ(order, saved);
        for (std::size_t i = 0; i < count; ++i) {
            EXPECT_EQ(values[i], 100 + static_cast<int>(saved[i]));
        }
        EXPECT_LE(moves, count);
    }
}

TEST(SortAlgorithms, AutomaticPicksTheMeasuredMethods) {
    // sort.hpp explains the measurements; a fixed capacity never allocates, so it stays in place.
    static_assert(ecsnet::detail::resolve(sort_options{}) == sort_method::in_place);
    static_assert(ecsnet::detail::resolve(ecsnet::stable_sort) == sort_method::permutation);
    static_assert(ecsnet::detail::resolve(ecsnet::stable_sort, true) == sort_method::in_place);
    static_assert(ecsnet::detail::resolve(sort_options{sort_method::mixed, true}, true) ==
                  sort_method::mixed);
    EXPECT_EQ(ecsnet::detail::resolve(sort_options{sort_method::permutation, false}),
              sort_method::permutation);
}

// ---- storages ---------------------------------------------------------------------------------------------

struct pool_fixture {
    ecsnet::storage<Item> pool;
    std::map<entity, int> model;

    void fill(std::mt19937& rng, std::size_t count, int distinct) {
        for (std::size_t i = 0; i < count; ++i) {
            const auto e =
                make_entity(static_cast<std::uint32_t>(i * 3 + 1), static_cast<std::uint32_t>(i % 5));
            const int key = std::uniform_int_distribution<int>{0, distinct}(rng);
            pool.emplace(e, key, payload_of(e));
            model[e] = key;
        }
    }
    std::map<entity, std::size_t> positions() const {
        std::map<entity, std::size_t> at;
        for (std::size_t pos = 0; pos < pool.size(); ++pos) {
            at[pool[pos]] = pos;
        }
        return at;
    }
};

TEST(StorageSort, EveryMethodSortsByComponentAndByEntityKeepingComponentsAttached) {
    std::mt19937 rng{3};
    for (const auto method : every_method) {
        for (const bool stable : {false, true}) {
            for (const std::size_t count :
                 {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{500}}) {
                pool_fixture f;
                f.fill(rng, count, 20);
                const auto before = f.positions();
                f.pool.sort([](const Item& lhs, const Item& rhs) { return lhs.key < rhs.key; },
                            {method, stable});
                expect_consistent(f.pool, f.model);
                for (std::size_t pos = 1; pos < f.pool.size(); ++pos) {
                    const auto& previous = f.pool.element_at(pos - 1);
                    const auto& current = f.pool.element_at(pos);
                    ASSERT_LE(previous.key, current.key);
                    if (stable && previous.key == current.key) {
                        ASSERT_LT(before.at(f.pool[pos - 1]), before.at(f.pool[pos])) << "not stable";
                    }
                }
                f.pool.sort([](entity lhs, entity rhs) { return lhs > rhs; }, {method, stable});
                expect_consistent(f.pool, f.model);
                ASSERT_TRUE(std::is_sorted(f.pool.begin(), f.pool.end(), std::greater<>{}));
            }
        }
    }
}

TEST(StorageSort, ThroughABaseReferenceTheComponentsFollowToo) {
    std::mt19937 rng{5};
    for (const auto method : every_method) {
        for (const bool stable : {false, true}) {
            pool_fixture f;
            f.fill(rng, 300, 1000);
            ecsnet::sparse_set<>& base = f.pool;
            base.sort([](entity lhs, entity rhs) { return ecsnet::to_index(lhs) > ecsnet::to_index(rhs); },
                      {method, stable});
            expect_consistent(f.pool, f.model);
            for (std::size_t pos = 1; pos < f.pool.size(); ++pos) {
                ASSERT_GT(ecsnet::to_index(f.pool[pos - 1]), ecsnet::to_index(f.pool[pos]));
            }
        }
    }
}

TEST(StorageSort, TagsSortByEntity) {
    for (const auto method : every_method) {
        ecsnet::storage<Tag> tags;
        for (std::uint32_t i = 0; i < 100; ++i) {
            tags.emplace(make_entity((i * 37) % 101));
        }
        tags.sort([](entity lhs, entity rhs) { return lhs < rhs; }, {method, false});
        ASSERT_TRUE(std::is_sorted(tags.begin(), tags.end()));
        for (std::size_t pos = 0; pos < tags.size(); ++pos) {
            ASSERT_EQ(tags.index(tags[pos]), pos);
        }
    }
}

TEST(StorageSort, SortNLeavesTheTailAlone) {
    std::mt19937 rng{9};
    for (const auto method : every_method) {
        pool_fixture f;
        f.fill(rng, 100, 50);
        const std::vector<entity> tail(f.pool.begin() + 60, f.pool.end());
        f.pool.sort_n(60, [](const Item& lhs, const Item& rhs) { return lhs.key < rhs.key; },
                      {method, false});
        expect_consistent(f.pool, f.model);
        EXPECT_TRUE(std::equal(tail.begin(), tail.end(), f.pool.begin() + 60));
        for (std::size_t pos = 1; pos < 60; ++pos) {
            ASSERT_LE(f.pool.element_at(pos - 1).key, f.pool.element_at(pos).key);
        }
    }
}

TEST(StorageSort, SortAsPutsTheSharedEntitiesFirstInTheOtherOrder) {
    std::mt19937 rng{13};
    pool_fixture f;
    f.fill(rng, 200, 1000);
    ecsnet::storage<Tag> other;
    std::vector<entity> order;
    for (const auto& [e, key] : f.model) {
        if (key % 3 != 0) {
            order.push_back(e);
        }
    }
    order.push_back(make_entity(100'000)); // not in the pool: skipped
    std::shuffle(order.begin(), order.end(), rng);
    for (const auto e : order) {
        other.emplace(e);
    }
    f.pool.sort_as(other);
    expect_consistent(f.pool, f.model);
    std::size_t shared = 0;
    for (const auto e : other) {
        if (f.pool.contains(e)) {
            ASSERT_EQ(f.pool[shared++], e);
        }
    }
    for (std::size_t pos = shared; pos < f.pool.size(); ++pos) {
        ASSERT_FALSE(other.contains(f.pool[pos]));
    }
    // Any range of entities will do, and through a base reference the components follow as well.
    std::reverse(order.begin(), order.end());
    ecsnet::sparse_set<>& base = f.pool;
    base.sort_as(order);
    expect_consistent(f.pool, f.model);
    shared = 0;
    for (const auto e : order) {
        if (f.pool.contains(e)) {
            ASSERT_EQ(f.pool[shared++], e);
        }
    }
}

TEST(StorageSort, RearrangeAppliesAPermutation) {
    std::mt19937 rng{17};
    pool_fixture f;
    f.fill(rng, 64, 10);
    const std::vector<entity> before(f.pool.begin(), f.pool.end());
    std::vector<std::uint32_t> order(40);
    std::iota(order.begin(), order.end(), 0U);
    std::shuffle(order.begin(), order.end(), rng);
    f.pool.rearrange(order);
    expect_consistent(f.pool, f.model);
    for (std::size_t pos = 0; pos < 40; ++pos) {
        ASSERT_EQ(f.pool[pos], before[order[pos]]);
    }
    EXPECT_TRUE(std::equal(before.begin() + 40, before.end(), f.pool.begin() + 40));
}

TEST(StorageSort, AThrowingComparatorLeavesThePoolConsistent) {
    std::mt19937 rng{19};
    for (const auto method : every_method) {
        for (const bool stable : {false, true}) {
            for (const bool by_entity : {false, true}) {
                for (const int throw_after : {0, 5, 300, 2000}) {
                    pool_fixture f;
                    f.fill(rng, 200, 30);
                    int calls = 0;
                    const auto tick = [&] {
                        if (calls++ == throw_after) {
                            throw std::runtime_error("comparator failed");
                        }
                    };
                    try {
                        if (by_entity) {
                            f.pool.sort(
                                [&](entity lhs, entity rhs) {
                                    tick();
                                    return lhs < rhs;
                                },
                                {method, stable});
                        } else {
                            f.pool.sort(
                                [&](const Item& lhs, const Item& rhs) {
                                    tick();
                                    return lhs.key < rhs.key;
                                },
                                {method, stable});
                        }
                    } catch (const std::runtime_error&) {
                    }
                    expect_consistent(f.pool, f.model);
                }
            }
        }
    }
}

TEST(StorageSort, FixedCapacityStoragesSortToo) {
    ecsnet::storage<Item, ecsnet::fixed_capacity<128>> pool;
    std::map<entity, int> model;
    for (std::uint32_t i = 0; i < 128; ++i) {
        const auto e = make_entity(127 - i);
        pool.emplace(e, static_cast<int>((i * 13) % 29), payload_of(e));
        model[e] = static_cast<int>((i * 13) % 29);
    }
    for (const auto method : every_method) {
        pool.sort([](const Item& lhs, const Item& rhs) { return lhs.key < rhs.key; }, {method, true});
        expect_consistent(pool, model);
        pool.sort([](entity lhs, entity rhs) { return lhs < rhs; }, {method, false});
        expect_consistent(pool, model);
        EXPECT_TRUE(std::is_sorted(pool.begin(), pool.end()));
    }
}

// ---- the registry -----------------------------------------------------------------------------------------

struct Position {
    float x, y, z;
};
struct Velocity {
    float x, y, z;
};

TEST(RegistrySort, SortAndSortAsThroughTheRegistryAlignViews) {
    ecsnet::registry registry;
    std::mt19937 rng{23};
    std::map<entity, float> x_of;
    for (int i = 0; i < 3000; ++i) {
        const auto e = registry.create();
        const float x = std::uniform_real_distribution<float>{0.F, 100.F}(rng);
        registry.emplace<Position>(e, x, 0.F, 0.F);
        if (i % 4 != 0) {
            registry.emplace<Velocity>(e, x, 1.F, 0.F);
        }
        x_of[e] = x;
    }
    registry.sort<Position>([](const Position& lhs, const Position& rhs) { return lhs.x < rhs.x; });
    const auto& positions = registry.storage<Position>();
    for (std::size_t pos = 1; pos < positions.size(); ++pos) {
        ASSERT_LE(positions.element_at(pos - 1).x, positions.element_at(pos).x);
    }
    registry.sort_as<Velocity, Position>();
    const auto& velocities = registry.storage<Velocity>();
    std::size_t shared = 0;
    for (const auto e : positions) {
        if (velocities.contains(e)) {
            ASSERT_EQ(velocities[shared++], e);
        }
    }
    ASSERT_EQ(shared, velocities.size());
    // A view over both now walks aligned blocks; it must still yield exactly the right entities.
    std::set<entity> seen;
    registry.view<Position, const Velocity>().each([&](entity e, Position& p, const Velocity& v) {
        EXPECT_EQ(p.x, v.x);
        EXPECT_EQ(p.x, x_of.at(e));
        EXPECT_TRUE(seen.insert(e).second);
    });
    EXPECT_EQ(seen.size(), velocities.size());
}

// ---- randomized differential ------------------------------------------------------------------------------

TEST(SortDifferential, PoolsStayExactOverRandomOperations) {
    std::mt19937 rng{29};
    const auto number = [&](int low, int high) { return std::uniform_int_distribution<int>{low, high}(rng); };
    pool_fixture f;
    ecsnet::storage<Tag> other;
    std::uint32_t next_index = 0;
    int sorts = 0;
    for (int step = 0; step < 100'000; ++step) {
        const int op = number(0, 99);
        if (op < 35) {
            if (f.model.size() < 48) {
                const auto e = make_entity(next_index++ % 200, static_cast<std::uint32_t>(step % 4096));
                if (std::none_of(f.pool.begin(), f.pool.end(),
                                 [&](entity in) { return ecsnet::to_index(in) == ecsnet::to_index(e); })) {
                    const int key = number(0, 15);
                    f.pool.emplace(e, key, payload_of(e));
                    f.model[e] = key;
                    if (number(0, 1) == 0) {
                        other.insert(e);
                    }
                }
            }
        } else if (op < 60) {
            if (!f.model.empty()) {
                auto it = f.model.begin();
                std::advance(it, number(0, static_cast<int>(f.model.size()) - 1));
                f.pool.erase(it->first);
                other.remove(it->first);
                f.model.erase(it);
            }
        } else if (op < 85) {
            const sort_options options{static_cast<sort_method>(number(0, 3)), number(0, 1) == 1};
            const auto before = options.stable ? f.positions() : std::map<entity, std::size_t>{};
            const auto count =
                f.pool.size() == 0 ? 0 : static_cast<std::size_t>(number(0, static_cast<int>(f.pool.size())));
            const std::vector<entity> tail(f.pool.begin() + static_cast<std::ptrdiff_t>(count), f.pool.end());
            if (number(0, 2) == 0) {
                f.pool.sort_n(
                    count,
                    [](entity lhs, entity rhs) { return ecsnet::to_index(lhs) < ecsnet::to_index(rhs); },
                    options);
                for (std::size_t pos = 1; pos < count; ++pos) {
                    ASSERT_LT(ecsnet::to_index(f.pool[pos - 1]), ecsnet::to_index(f.pool[pos]));
                }
            } else {
                f.pool.sort_n(
                    count, [](const Item& lhs, const Item& rhs) { return lhs.key < rhs.key; }, options);
                for (std::size_t pos = 1; pos < count; ++pos) {
                    const auto& previous = f.pool.element_at(pos - 1);
                    const auto& current = f.pool.element_at(pos);
                    ASSERT_LE(previous.key, current.key) << "step " << step;
                    if (options.stable && previous.key == current.key) {
                        ASSERT_LT(before.at(f.pool[pos - 1]), before.at(f.pool[pos]))
                            << "not stable, step " << step;
                    }
                }
            }
            ASSERT_TRUE(
                std::equal(tail.begin(), tail.end(), f.pool.begin() + static_cast<std::ptrdiff_t>(count)));
            ++sorts;
        } else if (op < 95) {
            // Shuffle `other`, then order the pool like it.
            if (other.size() > 1) {
                other.sort(
                    [&](entity lhs, entity rhs) {
                        return (ecsnet::to_integral(lhs) * 2654435761U) % 97 <
                               (ecsnet::to_integral(rhs) * 2654435761U) % 97;
                    },
                    {static_cast<sort_method>(number(0, 3)), false});
            }
            f.pool.sort_as(other);
            std::size_t shared = 0;
            for (const auto e : other) {
                if (f.pool.contains(e)) {
                    ASSERT_EQ(f.pool[shared++], e);
                }
            }
            for (std::size_t pos = shared; pos < f.pool.size(); ++pos) {
                ASSERT_FALSE(other.contains(f.pool[pos]));
            }
            ++sorts;
        } else {
            std::vector<std::uint32_t> order(f.pool.size());
            std::iota(order.begin(), order.end(), 0U);
            std::shuffle(order.begin(), order.end(), rng);
            const std::vector<entity> before(f.pool.begin(), f.pool.end());
            f.pool.rearrange(order);
            for (std::size_t pos = 0; pos < order.size(); ++pos) {
                ASSERT_EQ(f.pool[pos], before[order[pos]]);
            }
        }
        expect_consistent(f.pool, f.model);
        if (HasFatalFailure()) {
            FAIL() << "after step " << step;
        }
        for (std::size_t pos = 0; pos < other.size(); ++pos) {
            ASSERT_EQ(other.index(other[pos]), pos);
        }
    }
    EXPECT_GT(sorts, 30'000);
}

} // namespace

} // namespace sort_test
