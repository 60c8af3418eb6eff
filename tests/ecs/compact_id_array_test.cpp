// Tests of the compact ordered id array (seed 003_9749a93fa14adb31.txt): unit tests per operation and per
// group boundary case, and a randomized differential test against a sorted std::vector.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <ranges>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/compact_id_array.hpp>

namespace compact_id_array_test {

namespace {

using ecsnet::compact_id_array;
using value_type = compact_id_array::value_type;
constexpr std::size_t group = compact_id_array::group_capacity;

static_assert(std::random_access_iterator<compact_id_array::const_iterator>);
static_assert(std::ranges::random_access_range<const compact_id_array>);
static_assert(std::is_nothrow_move_constructible_v<compact_id_array>);
static_assert(std::is_nothrow_move_assignable_v<compact_id_array>);

std::vector<value_type> contents(const compact_id_array& array) {
    std::vector<value_type> out;
    array.for_each([&](value_type v) { out.push_back(v); });
    return out;
}

compact_id_array build(const std::vector<value_type>& values) {
    compact_id_array array;
    for (const auto v : values) {
        array.push_back(v);
    }
    return array;
}

std::vector<value_type> iota_values(std::size_t n, value_type first = 0, value_type step = 1) {
    std::vector<value_type> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = first + static_cast<value_type>(i) * step;
    }
    return out;
}

/// Everything the structure promises, checked from the outside plus its own validate().
::testing::AssertionResult holds_invariants(const compact_id_array& array) {
    if (const auto problem = array.validate(); !problem.empty()) {
        return ::testing::AssertionFailure() << problem;
    }
    const std::size_t groups = array.group_count();
    if (groups != (array.size() + group - 1) / group) {
        return ::testing::AssertionFailure() << "group count " << groups << " for size " << array.size();
    }
    std::size_t sparse = 0;
    for (std::size_t g = 0; g < groups; ++g) {
        const auto info = array.group(g);
        if (g + 1 < groups && info.size != group) {
            return ::testing::AssertionFailure() << "full group " << g << " holds " << info.size;
        }
        if (info.size == 0 || info.size > group || info.head >= group) {
            return ::testing::AssertionFailure() << "group " << g << " size " << info.size;
        }
        if (info.sparse) {
            ++sparse;
            if (info.last - info.first <= 0xFFFF) {
                return ::testing::AssertionFailure() << "sparse group " << g << " fits 16 bits";
            }
        } else {
            const auto low = static_cast<std::int64_t>(info.base) - 32768;
            const auto high = static_cast<std::int64_t>(info.base) + 32767;
            if (low < 0 || high > std::int64_t{std::numeric_limits<value_type>::max()} || info.first < low ||
                info.last > high) {
                return ::testing::AssertionFailure() << "dense group " << g << " [" << info.first << ", "
                                                     << info.last << "] outside its window at " << info.base;
            }
        }
    }
    if (sparse != array.sparse_group_count() || groups - sparse != array.dense_group_count()) {
        return ::testing::AssertionFailure() << "group kinds disagree with the pools";
    }
    const auto needed = compact_id_array::bytes_for(groups - sparse, sparse);
    if (array.memory_bytes() < needed) {
        return ::testing::AssertionFailure() << "memory_bytes " << array.memory_bytes() << " < " << needed;
    }
    return ::testing::AssertionSuccess();
}

// ---- basics ------------------------------------------------------------------------------------------

TEST(CompactIdArray, EmptyArray) {
    const compact_id_array array;
    EXPECT_TRUE(array.empty());
    EXPECT_EQ(array.size(), 0u);
    EXPECT_EQ(array.begin(), array.end());
    EXPECT_EQ(array.lower_bound(0), 0u);
    EXPECT_EQ(array.lower_bound(12345), 0u);
    EXPECT_EQ(array.find(0), compact_id_array::npos);
    EXPECT_FALSE(array.contains(7));
    EXPECT_EQ(array.memory_bytes(), 0u);
    EXPECT_EQ(array.group_count(), 0u);
    EXPECT_TRUE(holds_invariants(array));
}

TEST(CompactIdArray, PushBackRandomAccessFrontBack) {
    for (const std::size_t n : {1u, 2u, 255u, 256u, 257u, 511u, 512u, 513u, 1000u}) {
        const auto values = iota_values(n, 10, 3);
        const auto array = build(values);
        ASSERT_EQ(array.size(), n);
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(array[i], values[i]) << "n=" << n << " i=" << i;
        }
        EXPECT_EQ(array.front(), values.front());
        EXPECT_EQ(array.back(), values.back());
        EXPECT_EQ(contents(array), values);
        EXPECT_TRUE(holds_invariants(array));
        EXPECT_EQ(array.group_count(), (n + group - 1) / group);
        EXPECT_EQ(array.sparse_group_count(), 0u);
    }
}

TEST(CompactIdArray, ExtremeValues) {
    const std::vector<value_type> values{0,          1,          2,          40000,     70000,
                                         0x7FFFFFFF, 0xFFFF0000, 0xFFFFFFFE, 0xFFFFFFFF};
    auto array = build(values);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
    EXPECT_EQ(array.find(0xFFFFFFFF), values.size() - 1);
    EXPECT_EQ(array.find(0), 0u);
    EXPECT_EQ(array.lower_bound(0xFFFFFFFF), values.size() - 1);
    EXPECT_EQ(array.lower_bound(3), 3u);

    // A dense group right at the top and one right at the bottom of the value range.
    const auto top = build(iota_values(300, 0xFFFFFFFFu - 299));
    EXPECT_TRUE(holds_invariants(top));
    EXPECT_EQ(top.sparse_group_count(), 0u);
    EXPECT_EQ(top.back(), 0xFFFFFFFFu);
    EXPECT_EQ(top.find(0xFFFFFFFFu - 150), 149u);
    compact_id_array bottom;
    for (value_type v = 65535; v >= 65535 - 299; --v) {
        ASSERT_TRUE(bottom.insert(v).second); // every insert at the front: re-bases downwards
        ASSERT_TRUE(holds_invariants(bottom));
    }
    for (value_type v = 0; v < 5; ++v) {
        ASSERT_TRUE(bottom.insert(v).second);
    }
    EXPECT_TRUE(holds_invariants(bottom));
    EXPECT_EQ(bottom.front(), 0u);
    EXPECT_EQ(bottom.back(), 65535u);
}

TEST(CompactIdArray, AppendEncodesWholeGroups) {
    // Dense, sparse and mixed runs, appended in pieces of every awkward length, give the same values and
    // the same group kinds as push_back one by one.
    std::vector<value_type> values = iota_values(700, 5, 2);
    const auto wide = iota_values(600, values.back() + 1000, 300);
    values.insert(values.end(), wide.begin(), wide.end());
    const auto tail = iota_values(300, values.back() + 7, 1);
    values.insert(values.end(), tail.begin(), tail.end());
    const auto reference = build(values);
    for (const std::size_t piece : {1u, 7u, 255u, 256u, 257u, 1000u, 5000u}) {
        compact_id_array array;
        for (std::size_t at = 0; at < values.size(); at += piece) {
            const auto end = std::min(values.size(), at + piece);
            array.append(values.begin() + static_cast<std::ptrdiff_t>(at),
                         values.begin() + static_cast<std::ptrdiff_t>(end));
            ASSERT_TRUE(holds_invariants(array)) << "piece " << piece << " at " << at;
        }
        ASSERT_EQ(array, reference) << "piece " << piece;
        ASSERT_EQ(array.sparse_group_count(), reference.sparse_group_count());
        for (std::size_t g = 0; g < array.group_count(); ++g) {
            ASSERT_EQ(array.group(g).sparse, reference.group(g).sparse);
        }
    }
    // Any input range, converted to value_type.
    compact_id_array from_ints;
    const std::vector<int> ints{3, 4, 70000, 70001};
    from_ints.append(ints.begin(), ints.end());
    from_ints.append(values.end(), values.end()); // empty range: nothing
    EXPECT_EQ(contents(from_ints), (std::vector<value_type>{3, 4, 70000, 70001}));
    EXPECT_TRUE(holds_invariants(from_ints));
}

TEST(CompactIdArray, LowerBoundFindContains) {
    const auto values = iota_values(1000, 100, 10); // 100, 110, ..., 10090
    const auto array = build(values);
    for (value_type v = 0; v < 10200; ++v) {
        const auto expected =
            static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
        ASSERT_EQ(array.lower_bound(v), expected) << v;
        const bool present = expected < values.size() && values[expected] == v;
        ASSERT_EQ(array.contains(v), present) << v;
        ASSERT_EQ(array.find(v), present ? expected : compact_id_array::npos) << v;
    }
    EXPECT_EQ(array.lower_bound(std::numeric_limits<value_type>::max()), values.size());
}

TEST(CompactIdArray, InsertKeepsOrderAndRejectsDuplicates) {
    compact_id_array array;
    EXPECT_EQ(array.insert(50), (std::pair<std::size_t, bool>{0, true}));
    EXPECT_EQ(array.insert(10), (std::pair<std::size_t, bool>{0, true}));
    EXPECT_EQ(array.insert(30), (std::pair<std::size_t, bool>{1, true}));
    EXPECT_EQ(array.insert(90), (std::pair<std::size_t, bool>{3, true}));
    EXPECT_EQ(array.insert(30), (std::pair<std::size_t, bool>{1, false}));
    EXPECT_EQ(array.insert(90), (std::pair<std::size_t, bool>{3, false}));
    EXPECT_EQ(contents(array), (std::vector<value_type>{10, 30, 50, 90}));
    EXPECT_TRUE(holds_invariants(array));
}

TEST(CompactIdArray, EraseAndEraseAt) {
    auto values = iota_values(600, 0, 2);
    auto array = build(values);
    EXPECT_FALSE(array.erase(1)); // absent
    EXPECT_FALSE(array.erase(5000));
    EXPECT_TRUE(array.erase(0)); // the very first
    values.erase(values.begin());
    EXPECT_TRUE(array.erase(values.back()));
    values.pop_back();
    array.erase_at(255); // tail of group 0
    values.erase(values.begin() + 255);
    array.erase_at(256); // head of group 1
    values.erase(values.begin() + 256);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
    while (!array.empty()) {
        array.erase_at(array.size() / 2);
        values.erase(values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2));
        ASSERT_EQ(contents(array), values);
        ASSERT_TRUE(holds_invariants(array));
    }
    EXPECT_EQ(array.group_count(), 0u);
}

// ---- group boundaries ----------------------------------------------------------------------------------

TEST(CompactIdArray, InsertAtEveryPositionAroundGroupSizes) {
    // 255, 256, 257 elements: insert a value at every position, and erase every position.
    for (const std::size_t n : {255u, 256u, 257u}) {
        const auto values = iota_values(n, 1000, 2); // even values: odd ones slot in between
        for (std::size_t position = 0; position <= n; ++position) {
            auto array = build(values);
            const auto v = static_cast<value_type>(999 + 2 * position);
            const auto [at, inserted] = array.insert(v);
            ASSERT_TRUE(inserted);
            ASSERT_EQ(at, position);
            auto expected = values;
            expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(position), v);
            ASSERT_EQ(contents(array), expected) << "n=" << n << " position=" << position;
            ASSERT_TRUE(holds_invariants(array));
            ASSERT_LE(array.last_move_count(), 127 + array.group_count());
        }
        for (std::size_t position = 0; position < n; ++position) {
            auto array = build(values);
            array.erase_at(position);
            auto expected = values;
            expected.erase(expected.begin() + static_cast<std::ptrdiff_t>(position));
            ASSERT_EQ(contents(array), expected) << "n=" << n << " position=" << position;
            ASSERT_TRUE(holds_invariants(array));
            ASSERT_LE(array.last_move_count(), 127 + array.group_count());
        }
    }
}

TEST(CompactIdArray, InsertAtHeadAndTailOfAGroup) {
    const auto values = iota_values(3 * group, 0, 4); // three full groups
    // Head of group 1: between the last value of group 0 and the first of group 1.
    {
        auto array = build(values);
        const value_type v = values[group] - 1;
        EXPECT_EQ(array.insert(v).first, group);
        EXPECT_EQ(array.group(1).first, v);
        EXPECT_EQ(array.group(0).last, values[group - 1]);
        EXPECT_EQ(array.group(2).first, values[2 * group - 1]); // pushed over from group 1
        EXPECT_EQ(array.group(3).size, 1u);                     // and group 2's last into a new group
        EXPECT_EQ(array.group(3).first, values.back());
        EXPECT_TRUE(holds_invariants(array));
        // Inserting at a group's head moves nothing inside it: one move into group 2, one into group 3.
        EXPECT_EQ(array.last_move_count(), 2u);
    }
    // Tail of group 1: just below its last value.
    {
        auto array = build(values);
        const value_type v = values[2 * group - 1] - 1;
        EXPECT_EQ(array.insert(v).first, 2 * group - 1);
        EXPECT_EQ(array.group(1).last, v);
        EXPECT_EQ(array.group(2).first, values[2 * group - 1]);
        EXPECT_EQ(array.last_move_count(), 2u); // nothing inside group 1, one move per following group
        EXPECT_TRUE(holds_invariants(array));
    }
    // Middle of group 1: the shorter side moves, 127 or 128 - 1 elements.
    {
        auto array = build(values);
        const value_type v = values[group + 128] - 1;
        array.insert(v);
        EXPECT_LE(array.last_move_count(), 127u + 2u);
        EXPECT_TRUE(holds_invariants(array));
    }
    // Erase the head and the tail of a middle group.
    {
        auto array = build(values);
        array.erase_at(group);
        EXPECT_EQ(array.group(1).first, values[group + 1]);
        EXPECT_EQ(array.group(1).last, values[2 * group]); // taken from group 2's head
        EXPECT_EQ(array.group(2).size, group - 1);
        array.erase_at(2 * group - 1);
        EXPECT_EQ(array.group(1).last, values[2 * group + 1]);
        EXPECT_TRUE(holds_invariants(array));
    }
}

TEST(CompactIdArray, CascadeOverManyGroups) {
    constexpr std::size_t groups = 100;
    auto values = iota_values(groups * group, 1000, 2);
    auto array = build(values);
    // Insert at the very front: every group passes its last value to the next one.
    for (value_type v = 999; v > 989; v -= 2) {
        array.insert(v);
        values.insert(values.begin(), v);
        ASSERT_EQ(contents(array), values);
        ASSERT_TRUE(holds_invariants(array));
        ASSERT_GE(array.last_move_count(), groups - 1);
        ASSERT_LE(array.last_move_count(), 127 + array.group_count());
    }
    EXPECT_EQ(array.group_count(), groups + 1);
    // Erase at the front until the extra group is gone again.
    while (values.size() > groups * group) {
        array.erase_at(0);
        values.erase(values.begin());
        ASSERT_EQ(contents(array), values);
        ASSERT_TRUE(holds_invariants(array));
        ASSERT_LE(array.last_move_count(), 127 + array.group_count());
    }
    EXPECT_EQ(array.group_count(), groups);
    // Every group's head has moved, random access still finds everything.
    for (std::size_t i = 0; i < values.size(); i += 37) {
        ASSERT_EQ(array[i], values[i]);
        ASSERT_EQ(array.find(values[i]), i);
    }
}

// ---- dense, sparse, re-basing ---------------------------------------------------------------------------

TEST(CompactIdArray, PromotionAndDemotion) {
    auto values = iota_values(2 * group, 100000, 1); // two dense groups
    auto array = build(values);
    ASSERT_EQ(array.sparse_group_count(), 0u);
    const auto dense_bytes = compact_id_array(array).memory_bytes();
    EXPECT_EQ(dense_bytes, compact_id_array::bytes_for(2, 0));

    // A value far below: group 0 then spans more than 65535 and becomes sparse; group 1 receives group 0's
    // last value (still dense) and pushes its own last value into a new group 2.
    array.insert(10);
    values.insert(values.begin(), 10);
    EXPECT_TRUE(array.group(0).sparse);
    EXPECT_FALSE(array.group(1).sparse);
    EXPECT_EQ(array.sparse_group_count(), 1u);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
    EXPECT_EQ(compact_id_array(array).memory_bytes(), compact_id_array::bytes_for(2, 1));

    // Erasing it makes group 0 fit again: eager demotion.
    EXPECT_TRUE(array.erase(10));
    values.erase(values.begin());
    EXPECT_EQ(array.sparse_group_count(), 0u);
    EXPECT_FALSE(array.group(0).sparse);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
    EXPECT_EQ(compact_id_array(array).memory_bytes(), compact_id_array::bytes_for(2, 0));

    // push_back far above into a partial last group promotes it; erasing the far value demotes it again.
    array.erase_at(array.size() - 1);
    values.pop_back();
    ASSERT_EQ(array.group_count(), 2u);
    array.push_back(5000000);
    EXPECT_TRUE(array.group(1).sparse);
    EXPECT_FALSE(array.group(0).sparse);
    EXPECT_TRUE(holds_invariants(array));
    array.insert(3); // and far below: the first group too
    EXPECT_TRUE(array.group(0).sparse);
    EXPECT_TRUE(holds_invariants(array));
    array.erase(5000000);
    array.erase(3);
    EXPECT_EQ(array.sparse_group_count(), 0u);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
}

TEST(CompactIdArray, PromotionInTheMiddleOfACascade) {
    // Group 0 holds 1..256, group 1 holds 70000..70255. Inserting 0 makes group 0 push 256 into group 1's
    // head: group 1 then spans 69,999 and is promoted in the middle of the cascade, and pushes 70255 into
    // a new group 2.
    auto values = iota_values(group, 1, 1);
    const auto second = iota_values(group, 70000, 1);
    values.insert(values.end(), second.begin(), second.end());
    auto array = build(values);
    ASSERT_EQ(array.sparse_group_count(), 0u);
    ASSERT_TRUE(array.insert(0).second);
    values.insert(values.begin(), 0);
    EXPECT_FALSE(array.group(0).sparse);
    EXPECT_TRUE(array.group(1).sparse);
    EXPECT_EQ(array.group(1).first, 256u);
    EXPECT_EQ(array.group(2).size, 1u);
    EXPECT_EQ(array.group(2).first, 70255u);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
    // And back: group 1 returns 256 to group 0, takes 70255 back, fits 16 bits again and is demoted.
    ASSERT_TRUE(array.erase(0));
    values.erase(values.begin());
    EXPECT_EQ(array.sparse_group_count(), 0u);
    EXPECT_EQ(array.group_count(), 2u);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
}

TEST(CompactIdArray, ConversionsMoveChunksWithoutLeavingHoles) {
    // Group 0 dense (0..255); groups 1 and 2 sparse (values 300 apart span 76,500 per group), built in
    // that order so group 1 owns the first sparse chunk; then a dense tail far above.
    auto values = iota_values(group, 0, 1);
    const auto wide = iota_values(2 * group, 100000, 300);
    const auto tail = iota_values(100, 10000000, 1);
    values.insert(values.end(), wide.begin(), wide.end());
    values.insert(values.end(), tail.begin(), tail.end());
    auto array = build(values);
    ASSERT_EQ(array.sparse_group_count(), 2u);
    ASSERT_TRUE(array.group(1).sparse);
    // Fill group 1 with 100001..100255: it pushes its wide values on (promoting the tail group, which
    // takes a third sparse chunk) and ends dense, releasing the first sparse chunk: the pool's last chunk
    // moves into the hole.
    for (value_type k = 1; k < group; ++k) {
        ASSERT_TRUE(array.insert(100000 + k).second);
        values.insert(values.begin() + static_cast<std::ptrdiff_t>(group + k), 100000 + k);
        ASSERT_EQ(contents(array), values);
        ASSERT_TRUE(holds_invariants(array));
    }
    EXPECT_FALSE(array.group(1).sparse);
    EXPECT_EQ(array.group(1).first, 100000u);
    EXPECT_EQ(array.group(1).last, 100255u);
    EXPECT_TRUE(array.group(2).sparse);
    EXPECT_TRUE(array.group(3).sparse);
    const compact_id_array copy = array;
    EXPECT_EQ(copy.memory_bytes(),
              compact_id_array::bytes_for(array.dense_group_count(), array.sparse_group_count()));
    // Empty it from the front: every group is re-cut at every step.
    while (!array.empty()) {
        array.erase_at(0);
        values.erase(values.begin());
        ASSERT_EQ(contents(array), values);
        ASSERT_TRUE(holds_invariants(array));
    }
}

TEST(CompactIdArray, RebaseKeepsGroupsDense) {
    // Ids 30,000 apart: a group of 3 fits 16 bits only if its base is re-centred as values arrive on both
    // sides.
    compact_id_array array;
    array.push_back(1000000);
    array.push_back(1030000);
    ASSERT_TRUE(array.insert(970000).second); // below the window started at 1,000,000: re-base
    EXPECT_FALSE(array.group(0).sparse);
    EXPECT_TRUE(holds_invariants(array));
    ASSERT_TRUE(array.insert(1040000).second); // span 70,000: promote
    EXPECT_TRUE(array.group(0).sparse);
    EXPECT_TRUE(array.erase(970000)); // span 40,000 again: demote
    EXPECT_FALSE(array.group(0).sparse);
    EXPECT_EQ(contents(array), (std::vector<value_type>{1000000, 1030000, 1040000}));
    EXPECT_TRUE(holds_invariants(array));
}

TEST(CompactIdArray, PushBackBuildsDenseGroupsWithTheWholeWindow) {
    // 256 values 250 apart span 63,750: dense only if push_back starts the window at the first value.
    const auto values = iota_values(4 * group, 12345, 250);
    const auto array = build(values);
    EXPECT_EQ(array.sparse_group_count(), 0u);
    EXPECT_EQ(contents(array), values);
    EXPECT_TRUE(holds_invariants(array));
    // 300 apart: 76,500 per group, sparse.
    const auto wide = build(iota_values(4 * group, 12345, 300));
    EXPECT_EQ(wide.sparse_group_count(), 4u);
    EXPECT_TRUE(holds_invariants(wide));
}

// ---- memory -----------------------------------------------------------------------------------------------

TEST(CompactIdArray, BytesPerIdOfDenseAndSparseColumns) {
    const auto dense = build(iota_values(100000, 5000, 1));
    const compact_id_array dense_copy = dense;
    const auto groups = (100000 + group - 1) / group;
    EXPECT_EQ(dense_copy.memory_bytes(), compact_id_array::bytes_for(groups, 0));
    EXPECT_LT(static_cast<double>(dense_copy.memory_bytes()) / 100000.0, 2.1);

    std::mt19937 rng{7};
    std::vector<value_type> random(100000);
    for (auto& v : random) {
        v = static_cast<value_type>(rng());
    }
    std::sort(random.begin(), random.end());
    random.erase(std::unique(random.begin(), random.end()), random.end());
    const auto sparse = build(random);
    EXPECT_EQ(sparse.sparse_group_count(), sparse.group_count());
    const compact_id_array sparse_copy = sparse;
    EXPECT_EQ(sparse_copy.memory_bytes(), compact_id_array::bytes_for(0, sparse.group_count()));
    EXPECT_LT(static_cast<double>(sparse_copy.memory_bytes()) / static_cast<double>(random.size()), 4.1);
}

TEST(CompactIdArray, ClearReserveShrink) {
    compact_id_array array;
    array.reserve(1000);
    EXPECT_GE(array.memory_bytes(), 1000 * 2u);
    const auto reserved = array.memory_bytes();
    for (value_type v = 0; v < 1000; ++v) {
        array.push_back(v * 7);
    }
    EXPECT_EQ(array.memory_bytes(), reserved); // no reallocation
    array.clear();
    EXPECT_TRUE(array.empty());
    EXPECT_EQ(array.group_count(), 0u);
    EXPECT_EQ(array.memory_bytes(), reserved); // keeps its memory for the next build
    EXPECT_TRUE(holds_invariants(array));
    for (value_type v = 0; v < 300; ++v) {
        array.push_back(v);
    }
    EXPECT_EQ(contents(array), iota_values(300));
    array.shrink_to_fit();
    EXPECT_EQ(array.memory_bytes(), compact_id_array::bytes_for(2, 0));
    EXPECT_TRUE(holds_invariants(array));
}

// ---- copy, move, equality, iteration ---------------------------------------------------------------------

TEST(CompactIdArray, CopyMoveEquality) {
    auto array = build(iota_values(1000, 3, 5));
    array.insert(1);
    array.erase_at(500); // heads are no longer 0
    compact_id_array copy = array;
    EXPECT_EQ(copy, array);
    EXPECT_EQ(contents(copy), contents(array));
    EXPECT_TRUE(holds_invariants(copy));

    copy.erase(1);
    EXPECT_NE(copy, array);
    copy.insert(1);
    EXPECT_EQ(copy, array); // same values, possibly another layout

    compact_id_array rebuilt = build(contents(array)); // heads all 0: another layout, same values
    EXPECT_EQ(rebuilt, array);
    rebuilt.erase(rebuilt.back());
    rebuilt.push_back(array.back() + 1);
    EXPECT_NE(rebuilt, array); // same size, same firsts, one value differs

    compact_id_array moved = std::move(copy);
    EXPECT_EQ(moved, array);
    EXPECT_TRUE(copy.empty()); // NOLINT(bugprone-use-after-move): moved-from is empty and usable
    EXPECT_EQ(copy.memory_bytes(), 0u);
    copy.push_back(4);
    EXPECT_EQ(copy.size(), 1u);

    compact_id_array assigned;
    assigned.push_back(99);
    assigned = array;
    EXPECT_EQ(assigned, array);

    // Copy-assignment into an array that has the room reuses its memory.
    compact_id_array roomy = build(iota_values(5000));
    const auto roomy_bytes = roomy.memory_bytes();
    roomy = array;
    EXPECT_EQ(roomy, array);
    EXPECT_EQ(roomy.memory_bytes(), roomy_bytes);
    EXPECT_TRUE(holds_invariants(roomy));
    roomy.push_back(array.back() + 1); // the copy's push_back cursor starts afresh
    EXPECT_EQ(roomy.back(), array.back() + 1);
    EXPECT_TRUE(holds_invariants(roomy));
    assigned = std::move(moved);
    EXPECT_EQ(assigned, array);
    EXPECT_TRUE(moved.empty()); // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(holds_invariants(moved));
    EXPECT_NE(assigned, compact_id_array{});
}

TEST(CompactIdArray, Iterators) {
    auto values = iota_values(700, 11, 3);
    auto array = build(values);
    array.erase_at(10); // rotate heads
    values.erase(values.begin() + 10);
    array.insert(12);
    values.insert(values.begin() + 1, 12);

    EXPECT_EQ(std::vector<value_type>(array.begin(), array.end()), values);
    EXPECT_EQ(static_cast<std::size_t>(array.end() - array.begin()), values.size());
    std::vector<value_type> backwards;
    for (auto it = array.end(); it != array.begin();) {
        backwards.push_back(*--it);
    }
    EXPECT_TRUE(std::equal(backwards.rbegin(), backwards.rend(), values.begin(), values.end()));
    auto it = array.begin() + 300;
    EXPECT_EQ(*it, values[300]);
    EXPECT_EQ(it[5], values[305]);
    EXPECT_EQ(*(it - 299), values[1]);
    EXPECT_EQ(it.index(), 300u);
    EXPECT_LT(array.begin(), it);
    EXPECT_EQ(*std::lower_bound(array.begin(), array.end(), values[400]), values[400]);
    EXPECT_EQ(std::ranges::lower_bound(array, values[401] + 1) - array.begin(), 402);
    value_type sum = 0;
    for (const auto v : array) {
        sum += v;
    }
    value_type expected = 0;
    for (const auto v : values) {
        expected += v;
    }
    EXPECT_EQ(sum, expected);
}

// ---- randomized differential test -------------------------------------------------------------------------

enum class distribution { dense_small, random_32bit, far_clusters, grid_at_16bit_limit };

class value_source {
public:
    value_source(distribution kind, std::uint32_t seed)
        : kind_{kind}
        , rng_{seed} {}

    value_type next() {
        switch (kind_) {
        case distribution::dense_small:
            return pick(0, 3000);
        case distribution::random_32bit:
            return static_cast<value_type>(rng_());
        case distribution::far_clusters: {
            // Clusters far apart: a dense one near 0, one near 3e9, one at the top of the value range, and
            // one above 5e6 as wide as makes 256 of its values span about 65,535 (given the array's size), so
            // that its groups flip between dense and sparse as inserts and erases shift the group cuts.
            const auto family = pick(0, 9);
            if (family < 4) {
                return 5000000 + pick(0, 250 * std::max<value_type>(expected_size_, 256));
            }
            if (family < 7) {
                return pick(0, 400);
            }
            if (family < 9) {
                return 3000000000u + pick(0, 300);
            }
            return pick(0, 1) == 0 ? 0xFFFFFFFFu - pick(0, 100) : static_cast<value_type>(rng_());
        }
        case distribution::grid_at_16bit_limit:
            // Multiples of 257 over as many slots as the array's size: 256 consecutive multiples span exactly
            // 65,535 (dense), a group with a hole in it spans 65,792 (sparse). Erases open holes anywhere and
            // inserts fill them (see fill_a_hole), so groups convert both ways at nearly every step.
            return grid_origin + pick(0, expected_size_) * grid_step;
        }
        return 0;
    }

    /// For the grid: a random empty slot below the highest value, or among the first expected_size_ slots.
    std::optional<value_type> fill_a_hole(const std::vector<value_type>& model) {
        std::vector<value_type> holes;
        auto it = std::lower_bound(model.begin(), model.end(), grid_origin);
        const value_type slots = std::max<value_type>(
            expected_size_,
            model.empty() || model.back() < grid_origin ? 0 : (model.back() - grid_origin) / grid_step);
        for (value_type slot = 0; slot < slots; ++slot) {
            const value_type v = grid_origin + slot * grid_step;
            while (it != model.end() && *it < v) {
                ++it;
            }
            if (it == model.end() || *it != v) {
                holes.push_back(v);
            }
        }
        if (holes.empty()) {
            return std::nullopt;
        }
        return holes[pick(0, static_cast<value_type>(holes.size() - 1))];
    }

    static constexpr value_type grid_origin = 1000000;
    static constexpr value_type grid_step = 257;

    /// The size the array is heading for, which sets the width of the cluster at the 16-bit limit.
    void expect_size(std::size_t n) { expected_size_ = static_cast<value_type>(n); }

    value_type pick(value_type lo, value_type hi) {
        return std::uniform_int_distribution<value_type>{lo, hi}(rng_);
    }

private:
    distribution kind_;
    std::mt19937 rng_;
    value_type expected_size_{256};
};

void run_differential(distribution kind, std::uint32_t seed, std::size_t operations) {
    value_source source{kind, seed};
    std::vector<value_type> model; // sorted, unique
    compact_id_array array;
    // Sizes drift between growth and shrink phases so that groups are created and dropped repeatedly.
    std::size_t target = 600;
    std::size_t steps_with_sparse_groups = 0;
    std::size_t conversions = 0; // group positions whose kind changed from one step to the next
    std::vector<bool> kinds;
    std::size_t largest = 0;

    for (std::size_t step = 0; step < operations; ++step) {
        if (step % 5000 == 0) {
            target = source.pick(0, 4) * 300 + 50;
            source.expect_size(target);
        }
        const auto op = source.pick(0, 99);
        const bool grow = model.size() < target;
        SCOPED_TRACE("step " + std::to_string(step) + " op " + std::to_string(op));
        if (op < 30) { // insert
            const value_type v = kind == distribution::grid_at_16bit_limit && grow
                                     ? source.fill_a_hole(model).value_or(source.next())
                                     : source.next();
            const auto it = std::lower_bound(model.begin(), model.end(), v);
            const bool fresh = it == model.end() || *it != v;
            const auto at = static_cast<std::size_t>(it - model.begin());
            if (grow || !fresh) {
                if (fresh) {
                    model.insert(it, v);
                }
                ASSERT_EQ(array.insert(v), (std::pair<std::size_t, bool>{at, fresh}));
                if (fresh) {
                    ASSERT_LE(array.last_move_count(), 127 + array.group_count());
                }
            }
        } else if (op < 45) { // erase by value (present or not)
            const value_type v = !model.empty() && op < 40
                                     ? model[source.pick(0, static_cast<value_type>(model.size() - 1))]
                                     : source.next();
            const auto it = std::lower_bound(model.begin(), model.end(), v);
            const bool present = it != model.end() && *it == v;
            if (!grow || !present) {
                ASSERT_EQ(array.erase(v), present);
                if (present) {
                    model.erase(it);
                    ASSERT_LE(array.last_move_count(), 127 + array.group_count());
                }
            }
        } else if (op < 55) { // erase_at
            if (!model.empty() && !grow) {
                const auto i = source.pick(0, static_cast<value_type>(model.size() - 1));
                array.erase_at(i);
                model.erase(model.begin() + i);
                ASSERT_LE(array.last_move_count(), 127 + array.group_count());
            }
        } else if (op < 65) { // push_back (on the grid: fill its holes first, they are what makes it sparse)
            const auto hole =
                kind == distribution::grid_at_16bit_limit && grow ? source.fill_a_hole(model) : std::nullopt;
            if (hole) {
                const auto it = std::lower_bound(model.begin(), model.end(), *hole);
                ASSERT_EQ(array.insert(*hole).first, static_cast<std::size_t>(it - model.begin()));
                model.insert(it, *hole);
            } else if (grow && (model.empty() || model.back() < 0xFFFFFFFFu)) {
                // One value by push_back, or a run of up to 600 (not past the target size) by append.
                const std::size_t run =
                    source.pick(0, 3) == 0
                        ? source.pick(
                              1, static_cast<value_type>(std::min<std::size_t>(600, target - model.size())))
                        : 1;
                std::vector<value_type> values;
                for (std::size_t k = 0; k < run; ++k) {
                    if (values.empty() && model.empty()) {
                        values.push_back(source.next());
                        continue;
                    }
                    const value_type top = values.empty() ? model.back() : values.back();
                    if (top == 0xFFFFFFFFu) {
                        break;
                    }
                    const value_type gap = kind == distribution::grid_at_16bit_limit ? value_source::grid_step
                                           : kind == distribution::random_32bit ? source.pick(1, 1u << 20)
                                           : kind == distribution::far_clusters && source.pick(0, 9) == 0
                                               ? source.pick(1, 200000)
                                               : source.pick(1, 3);
                    values.push_back(top > 0xFFFFFFFFu - gap ? 0xFFFFFFFFu : top + gap);
                }
                if (run == 1) {
                    array.push_back(values.front());
                } else {
                    array.append(values.begin(), values.end());
                }
                model.insert(model.end(), values.begin(), values.end());
            }
        } else if (op < 75) { // lower_bound, find, contains
            const value_type v = source.pick(0, 1) == 0 || model.empty()
                                     ? source.next()
                                     : model[source.pick(0, static_cast<value_type>(model.size() - 1))];
            const auto it = std::lower_bound(model.begin(), model.end(), v);
            const auto at = static_cast<std::size_t>(it - model.begin());
            const bool present = it != model.end() && *it == v;
            ASSERT_EQ(array.lower_bound(v), at);
            ASSERT_EQ(array.find(v), present ? at : compact_id_array::npos);
            ASSERT_EQ(array.contains(v), present);
        } else if (op < 85) { // random access, front, back
            if (!model.empty()) {
                for (int k = 0; k < 8; ++k) {
                    const auto i = source.pick(0, static_cast<value_type>(model.size() - 1));
                    ASSERT_EQ(array[i], model[i]);
                }
                ASSERT_EQ(array.front(), model.front());
                ASSERT_EQ(array.back(), model.back());
            }
        } else if (op < 92) { // iteration through the iterators: forwards, backwards, jumps
            ASSERT_TRUE(std::equal(array.begin(), array.end(), model.begin(), model.end()));
            if (!model.empty()) {
                auto it = array.end();
                for (std::size_t back = 1; back <= std::min<std::size_t>(model.size(), 300); ++back) {
                    ASSERT_EQ(*--it, model[model.size() - back]);
                }
                const auto i = source.pick(0, static_cast<value_type>(model.size() - 1));
                const auto j = source.pick(0, static_cast<value_type>(model.size() - 1));
                auto jump = array.begin() + i;
                ASSERT_EQ(*jump, model[i]);
                jump += static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i);
                ASSERT_EQ(*jump, model[j]);
                ASSERT_EQ(jump[0], model[j]);
                ASSERT_EQ(jump - array.begin(), static_cast<std::ptrdiff_t>(j));
            }
        } else if (op < 98) { // copy, compare, carry on with the copy
            compact_id_array copy = array;
            ASSERT_TRUE(holds_invariants(copy));
            ASSERT_EQ(copy, array);
            ASSERT_EQ(copy.memory_bytes(),
                      compact_id_array::bytes_for(copy.dense_group_count(), copy.sparse_group_count()));
            array = std::move(copy);
        } else if (op < 99) { // clear, rarely: sizes must have time to grow over many groups
            if (source.pick(0, 49) == 0) {
                array.clear();
                model.clear();
            }
        } else { // shrink, then keep going
            array.shrink_to_fit();
            ASSERT_EQ(array.memory_bytes(),
                      compact_id_array::bytes_for(array.dense_group_count(), array.sparse_group_count()));
        }

        steps_with_sparse_groups += array.sparse_group_count() != 0 ? 1 : 0;
        kinds.resize(array.group_count());
        for (std::size_t g = 0; g < array.group_count(); ++g) {
            conversions += kinds[g] != array.group(g).sparse ? 1 : 0;
            kinds[g] = array.group(g).sparse;
        }
        largest = std::max(largest, model.size());
        ASSERT_EQ(array.size(), model.size());
        ASSERT_EQ(array.empty(), model.empty());
        ASSERT_TRUE(holds_invariants(array));
        std::size_t i = 0;
        bool same = true;
        array.for_each([&](value_type v) {
            same = same && i < model.size() && model[i] == v;
            ++i;
        });
        ASSERT_TRUE(same && i == model.size()) << "content differs from the model";
    }
    std::printf("%zu steps: largest size %zu, %zu steps with sparse groups, %zu conversions\n", operations,
                largest, steps_with_sparse_groups, conversions);
    EXPECT_GE(largest, 1000u) << "never more than a few groups";
    if (kind == distribution::dense_small) {
        EXPECT_EQ(steps_with_sparse_groups, 0u);
    } else if (kind == distribution::far_clusters) {
        EXPECT_GE(conversions, 50u) << "too few promotions and demotions";
    } else if (kind == distribution::grid_at_16bit_limit) {
        EXPECT_GE(conversions, 5000u) << "too few promotions and demotions";
    } else {
        EXPECT_GT(steps_with_sparse_groups, operations / 2);
    }
}

TEST(CompactIdArrayDifferential, DenseSmallIndices) {
    run_differential(distribution::dense_small, 1, 100000);
}
TEST(CompactIdArrayDifferential, Random32BitValues) {
    run_differential(distribution::random_32bit, 2, 100000);
}
TEST(CompactIdArrayDifferential, FarClustersForceConversions) {
    run_differential(distribution::far_clusters, 3, 100000);
}
TEST(CompactIdArrayDifferential, GridAtTheSixteenBitLimit) {
    run_differential(distribution::grid_at_16bit_limit, 4, 100000);
}

} // namespace

} // namespace compact_id_array_test
