// priority_selector, distance_weight and the starvation bound (issue 15): the selection against a full sort,
// accumulation, and thousands of randomized ticks checking that no id ever waits as long as the bound
// (the worst wait seen is printed against it).

#include <ecsnet/server/interest/distance_weight.hpp>
#include <ecsnet/server/interest/priority_selector.hpp>
#include <ecsnet/server/interest/weight_range.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace interest_priority_test {

namespace {

using namespace ecsnet::server::interest;

constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr float inf = std::numeric_limits<float>::infinity();

bool same(const priority_candidate& a, const priority_candidate& b) {
    return a.slot == b.slot && a.size_bits == b.size_bits &&
           (a.priority == b.priority || (std::isnan(a.priority) && std::isnan(b.priority)));
}

// The obvious version: sort everything (ties keep their input order, NaN ranks as -infinity), walk in
// order, take what fits (the first always).
std::vector<priority_candidate> model_select(std::vector<priority_candidate> candidates,
                                             std::uint64_t budget) {
    std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        const float pa = std::isnan(a.priority) ? -inf : a.priority;
        const float pb = std::isnan(b.priority) ? -inf : b.priority;
        return pa > pb;
    });
    std::vector<priority_candidate> chosen;
    std::uint64_t used = 0;
    for (const auto& c : candidates) {
        if (chosen.empty() || used + c.size_bits <= budget) {
            chosen.push_back(c);
            used += c.size_bits;
        }
    }
    return chosen;
}

TEST(PrioritySelector, MatchesAFullSortAndWalk) {
    std::mt19937_64 rng{77};
    const auto pick = [&](std::uint64_t n) {
        return std::uniform_int_distribution<std::uint64_t>{0, n - 1}(rng);
    };
    priority_selector selector;
    std::vector<priority_candidate> out;
    for (int round = 0; round < 20000; ++round) {
        const std::size_t count = round % 100 == 0 ? pick(3000) : pick(300);
        std::vector<std::uint32_t> slots(count + 50);
        std::iota(slots.begin(), slots.end(), 0u);
        std::shuffle(slots.begin(), slots.end(), rng);
        const std::uint64_t levels = 1 + pick(round % 2 == 0 ? 8 : 100000); // few levels: many ties
        const std::uint32_t max_size = round % 3 == 0 ? 64 : 2000;
        std::vector<priority_candidate> candidates(count);
        for (std::size_t k = 0; k < count; ++k) {
            auto& c = candidates[k];
            c.slot = slots[k];
            c.size_bits = pick(50) == 0 ? 0 : static_cast<std::uint32_t>(1 + pick(max_size));
            c.priority = static_cast<float>(pick(levels)) * 0.25f;
            if (pick(200) == 0) {
                c.priority = pick(2) == 0 ? nan : inf;
            }
        }
        std::uint64_t budget = 0;
        switch (pick(6)) {
        case 0:
            budget = 0;
            break;
        case 1:
            budget = std::numeric_limits<std::uint64_t>::max();
            break;
        case 2:
            budget = pick(max_size);
            break;
        default:
            budget = pick(std::uint64_t{max_size} * 40);
            break;
        }
        selector.select(candidates, budget, out);
        const auto want = model_select(candidates, budget);
        ASSERT_EQ(out.size(), want.size()) << "round " << round;
        for (std::size_t k = 0; k < want.size(); ++k) {
            ASSERT_TRUE(same(out[k], want[k])) << "round " << round << " position " << k;
        }
    }
}

TEST(PrioritySelector, TheTopCandidateGoesEvenAloneOverBudget) {
    priority_selector selector;
    std::vector<priority_candidate> out;
    const std::vector<priority_candidate> candidates{{1, 5000, 2.0f}, {2, 10, 1.0f}, {3, 10, 3.0f}};
    selector.select(candidates, 0, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].slot, 3u);
    selector.select(candidates, 100, out);
    ASSERT_EQ(out.size(), 2u) << "the big one is skipped, the small one after it still fits";
    EXPECT_EQ(out[0].slot, 3u);
    EXPECT_EQ(out[1].slot, 2u);
    selector.select({}, 100, out);
    EXPECT_TRUE(out.empty());
}

TEST(PrioritySelector, AccumulatesClampedWeightsAndResetsWhatItSends) {
    priority_selector selector({1.0f, 4.0f});
    std::vector<float> accumulators{0, 0, 0, nan};
    std::vector<priority_candidate> out;
    const std::vector<pending_send> pending{
        {0, 100, 0.5f}, {1, 100, 10.0f}, {2, 100, 2.0f}, {3, 100, 1.0f}, {9, 1, 9}};
    selector.accumulate_and_select(accumulators, pending, 100, out); // room for one
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].slot, 1u);
    EXPECT_EQ(out[0].priority, 4.0f) << "a weight above the range counts as its max";
    EXPECT_EQ(accumulators, (std::vector<float>{1.0f, 0.0f, 2.0f, 1.0f}))
        << "below the range: min; NaN: from 0";
    selector.accumulate_and_select(accumulators, pending, 200, out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].slot, 1u); // 4
    EXPECT_EQ(out[1].slot, 2u); // 4 too: ties keep the input order
    EXPECT_EQ(accumulators, (std::vector<float>{2.0f, 0.0f, 0.0f, 2.0f}));
    EXPECT_THROW(priority_selector({0.0f, 1.0f}), std::invalid_argument);
    EXPECT_THROW(priority_selector({2.0f, 1.0f}), std::invalid_argument);
    EXPECT_THROW(priority_selector({1.0f, inf}), std::invalid_argument);
}

TEST(StarvationBound, HasTheDocumentedValues) {
    EXPECT_EQ(starvation_bound(1, {1, 10}), 0.0);
    EXPECT_DOUBLE_EQ(starvation_bound(200, {1, 9}), 199.0 * 16);
    EXPECT_DOUBLE_EQ(starvation_bound(200, {1, 9}, 8), 199.0 * 16 / 8);
    EXPECT_DOUBLE_EQ(starvation_bound(3, {2, 2}), 8.0);
    for (const float max : {1.0f, 2.0f, 10.0f, 1000.0f}) { // never above the simpler 2 (N - 1)(1 + R) / m
        EXPECT_LE(starvation_bound(50, {1, max}, 3), 2.0 * 49 * (1 + max) / 3);
    }
}

// ---- starvation
// ---------------------------------------------------------------------------------------------

struct starvation_run {
    std::size_t ids;
    weight_range weights;
    std::size_t fits; // the budget always fits this many of the largest entities (1: any budget)
    double pending;   // chance an id has something to send at a tick (slot 0 always has)
    bool adversarial; // slot 0 always weighs min, the others max
    int ticks;
    bool one_per_tick = false; // budget 0: only the top candidate goes
};

struct starvation_result {
    std::uint64_t worst_wait;
    double bound;
};

starvation_result run_starvation(const starvation_run& run, std::uint64_t seed) {
    std::mt19937_64 rng{seed};
    std::uniform_real_distribution<float> unit{0, 1};
    constexpr std::uint32_t max_size = 1000;
    priority_selector selector(run.weights);
    std::vector<float> accumulators(run.ids, 0.0f);
    std::vector<std::uint64_t> waiting(run.ids, 0); // consecutive ticks pending and not sent
    std::vector<bool> sent(run.ids);
    std::vector<pending_send> pending;
    std::vector<priority_candidate> out;
    std::uint64_t worst = 0;
    for (int tick = 0; tick < run.ticks; ++tick) {
        pending.clear();
        for (std::uint32_t slot = 0; slot < run.ids; ++slot) {
            if (slot != 0 && unit(rng) >= run.pending) {
                waiting[slot] = 0; // nothing to send: the wait is over
                continue;
            }
            float weight = run.weights.min + unit(rng) * (run.weights.max - run.weights.min);
            if (run.adversarial) {
                weight = slot == 0 ? run.weights.min : run.weights.max;
            }
            // Sizes: slot 0 is often the largest, so a budget-filling greedy skips it as long as it can.
            const auto size = slot == 0 && unit(rng) < 0.5f
                                  ? max_size
                                  : 1 + static_cast<std::uint32_t>(unit(rng) * (max_size - 1));
            pending.push_back({slot, size, weight});
        }
        std::uint64_t budget = 0;
        if (run.one_per_tick) {
            budget = 0;
        } else if (run.fits > 1) {
            budget =
                std::uint64_t{max_size} * run.fits + static_cast<std::uint64_t>(unit(rng) * max_size * 2);
        } else {
            budget = unit(rng) < 0.3f ? 0 : static_cast<std::uint64_t>(unit(rng) * max_size * 3);
        }
        selector.accumulate_and_select(accumulators, pending, budget, out);
        std::fill(sent.begin(), sent.end(), false);
        for (const auto& c : out) {
            sent[c.slot] = true;
        }
        for (const auto& p : pending) {
            waiting[p.slot] = sent[p.slot] ? 0 : waiting[p.slot] + 1;
            worst = std::max(worst, waiting[p.slot]);
        }
    }
    return {worst, starvation_bound(run.ids, run.weights, run.fits)};
}

TEST(StarvationBound, NoIdWaitsAsLongAsTheBoundInRandomizedRuns) {
    const starvation_run runs[] = {
        {2, {1, 1}, 1, 1.0, false, 20000},
        {8, {1, 4}, 1, 0.9, false, 20000},
        {50, {1, 10}, 1, 0.95, false, 20000},
        {200, {1, 10}, 1, 1.0, false, 20000},
        {200, {0.1f, 10}, 1, 0.8, false, 20000},
        {64, {1, 100}, 1, 1.0, false, 20000},
        {200, {1, 10}, 8, 1.0, false, 20000},
        {100, {1, 4}, 4, 0.7, false, 20000},
        {20, {1, 10}, 1, 1.0, true, 20000},
        {100, {1, 10}, 1, 1.0, true, 20000},
        {50, {1, 100}, 1, 1.0, true, 30000},
        {100, {1, 10}, 4, 1.0, true, 20000},
        // The worst case for real: one entity per tick, constant weights. Slot 0 waits ~ (N - 1) R ticks.
        {20, {1, 10}, 1, 1.0, true, 20000, true},
        {100, {1, 10}, 1, 1.0, true, 20000, true},
    };
    std::uint64_t seed = 1;
    for (const auto& run : runs) {
        const auto result = run_starvation(run, seed++);
        std::printf(
            "starvation: N=%zu weights [%g, %g] fits %zu pending %.2f%s%s over %d ticks: worst wait %llu "
            "ticks, bound %.0f (%.1f%%)\n",
            run.ids, static_cast<double>(run.weights.min), static_cast<double>(run.weights.max), run.fits,
            run.pending, run.adversarial ? " adversarial" : "", run.one_per_tick ? " one per tick" : "",
            run.ticks, static_cast<unsigned long long>(result.worst_wait), result.bound,
            100.0 * static_cast<double>(result.worst_wait) / result.bound);
        EXPECT_LT(static_cast<double>(result.worst_wait), result.bound)
            << "N=" << run.ids << " ratio " << run.weights.ratio() << " fits " << run.fits;
        EXPECT_GT(result.worst_wait, 0u) << "the run never made anyone wait: it tests nothing";
    }
}

// ---- distance_weight
// ------------------------------------------------------------------------------------------

TEST(DistanceWeight, IsMaxNearThenFallsWithTheSquareAndStopsAtMin) {
    const distance_weight weight(10.0f, {0.5f, 8.0f});
    EXPECT_EQ(weight(0.0f), 8.0f);
    EXPECT_EQ(weight(100.0f), 8.0f);       // at the full-weight radius
    EXPECT_FLOAT_EQ(weight(400.0f), 2.0f); // twice as far: a quarter
    EXPECT_EQ(weight(1e6f), 0.5f);         // far: clamped to min
    EXPECT_EQ(weight(inf), 0.5f);
    EXPECT_EQ(weight(nan), 0.5f);
    float previous = weight(0.0f);
    for (float d = 1.0f; d < 200.0f; d += 0.5f) {
        const float w = weight(d * d);
        EXPECT_LE(w, previous) << "closer must never weigh less (d = " << d << ")";
        EXPECT_GE(w, 0.5f);
        EXPECT_LE(w, 8.0f);
        previous = w;
    }
    EXPECT_THROW(distance_weight(0.0f, {1, 2}), std::invalid_argument);
    EXPECT_THROW(distance_weight(nan, {1, 2}), std::invalid_argument);
    EXPECT_THROW(distance_weight(10.0f, {0, 2}), std::invalid_argument);
}

} // namespace

} // namespace interest_priority_test
