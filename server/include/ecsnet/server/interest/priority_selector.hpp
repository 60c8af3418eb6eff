#pragma once

// Which relevant entities go into this tick's snapshot for one client, under a byte budget: priority
// accumulation (Glenn Fiedler's "State Synchronization", Unreal Iris's accumulated priorities, Netcode for
// Entities' importance * ticksSinceLastSent).
//
// Each relevant id has an accumulator (client_relevancy::accumulators(), one float per slot). Every tick
// an id has something to send it gains a weight (its importance, e.g. distance_weight.hpp, clamped to the
// selector's weight_range) and is a candidate with its accumulator as priority; the selection walks the
// candidates by decreasing priority (ties: the earlier in the input first) and takes each one that still
// fits the budget;
// the first is taken even when it alone exceeds the budget, so every tick makes progress. Those sent start
// again from zero, the others keep what they have, so a far or unimportant entity is late, never forgotten.
//
// Cost: O(c log k) for c candidates of which the first k in priority order are examined (nth_element then
// sort on batches of doubling size, on a buffer kept between calls); no allocation in steady state.
//
// Starvation bound. Let weights be clamped to [w_min, w_max], R = w_max / w_min, N the number of distinct
// slots that are candidates while an id i waits (its relevant set), and m >= 1 such that the budget fits
// any m candidates (m = 1 always holds, the first being always taken; m = floor(budget / largest size)
// otherwise). If i is a candidate at W consecutive ticks and is sent at none of them, then
//
//     W < B = (N - 1) (1 + sqrt(R))^2 / m   <=   2 (N - 1) (1 + R) / m.
//
// Proof. Number the ticks of the wait 1..W. At tick u, i's accumulator is at least u * w_min (it was >= 0
// and gained >= w_min at each of the u ticks). The first m candidates in priority order all fit, so all are
// sent; i is not among them, so each of them "beats" i: its accumulator is >= i's. Take a slot j != i and two
// consecutive ticks u' < u at which j beats i. j was reset at u' (or later), so at u its accumulator is at
// most (u - u') * w_max; beating i means (u - u') * w_max >= u * w_min, that is u - u' >= u / R.
// Fix a in (0, 1) and look at the ticks u > aW (at least (1 - a) W of them). There, successive beats of
// one j are more than aW / R apart and all lie in a span shorter than (1 - a) W, so j beats i fewer than
// 1 + (1 - a) R / a times. Each of those ticks has m beats:
//     m (1 - a) W <= (beats) < (N - 1) (1 + (1 - a) R / a),   so   W < (N - 1) / m * (1 / (1 - a) + R / a).
// a = 1/2 gives 2 (N - 1)(1 + R) / m; the best a, sqrt(R) / (1 + sqrt(R)), gives (N - 1)(1 + sqrt(R))^2 / m.
//
// It is nearly tight: with one entity per tick, i always at w_min and the N - 1 others always at w_max,
// each other one is sent every N - 1 ticks with N - 1 accumulated weights, and i waits (N - 1) R - 1 ticks
// (the randomized test finds exactly that), against B = (N - 1)(R + 2 sqrt(R) + 1). Example: 200 relevant
// ids, weights in [1, 10], one entity per tick: no id waits more than 3,447 ticks (B = 3,447.6; the worst
// case above waits 1,989); with a budget that fits 8 of the largest entities, at most 430. The bound needs no
// assumption on sizes, on which ids are candidates when, or on the weights beyond the clamp. It is for
// exact arithmetic; the accumulators are floats, whose rounding (below u * 2^-24 relative after u ticks) can
// only reorder near-exact ties, moving a wait by a tick or so; the randomized test runs on the floats.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "weight_range.hpp"

namespace ecsnet::server::interest {

struct priority_candidate {
    /// A client_relevancy slot (or any key of the caller's: an id works too).
    std::uint32_t slot;
    std::uint32_t size_bits;
    float priority; // NaN ranks lowest (as -infinity); -0 as +0
};

struct pending_send {
    std::uint32_t slot; // index into the accumulators, distinct per call
    std::uint32_t size_bits;
    float weight; // clamped to the selector's weight_range
};

/// B of the starvation bound above, (N - 1)(1 + sqrt(R))^2 / m: an id that is a candidate keeps waiting
/// fewer than B ticks (0 when it is alone: it is sent every tick).
[[nodiscard]] inline double starvation_bound(std::size_t relevant_ids, weight_range weights,
                                             std::size_t sends_per_tick = 1) noexcept {
    if (relevant_ids <= 1) {
        return 0.0;
    }
    const double m = static_cast<double>(std::max<std::size_t>(1, sends_per_tick));
    const double root = 1.0 + std::sqrt(weights.ratio());
    return static_cast<double>(relevant_ids - 1) * root * root / m;
}

class priority_selector {
public:
    /// Throws std::invalid_argument for an invalid range (weight_range::validate).
    explicit priority_selector(weight_range weights = {})
        : weights_{weights} {
        weights.validate();
    }

    [[nodiscard]] const weight_range& weights() const noexcept { return weights_; }

    /// The selection alone: replaces `out` with the chosen candidates, in priority order. At most 2^32
    /// candidates.
    void select(std::span<const priority_candidate> candidates, std::uint64_t budget_bits,
                std::vector<priority_candidate>& out) {
        scratch_.assign(candidates.begin(), candidates.end());
        choose(budget_bits, out);
    }

    /// One tick of one client: each pending slot's accumulator gains its clamped weight, the selection runs
    /// on the accumulators, and those chosen are reset to 0. `out` gets the chosen ones with the priority
    /// they were chosen at. Slots beyond the accumulators are ignored; an accumulator that is negative or
    /// NaN (never made by this class) counts as 0.
    void accumulate_and_select(std::span<float> accumulators, std::span<const pending_send> pending,
                               std::uint64_t budget_bits, std::vector<priority_candidate>& out) {
        scratch_.resize(pending.size()); // written by index below: no capacity check per candidate
        std::size_t count = 0;
        for (const pending_send& p : pending) {
            if (p.slot >= accumulators.size()) {
                continue;
            }
            float& accumulated = accumulators[p.slot];
            accumulated = (accumulated > 0.0f ? accumulated : 0.0f) + weights_.clamp(p.weight);
            scratch_[count++] = {p.slot, p.size_bits, accumulated};
        }
        scratch_.resize(count);
        choose(budget_bits, out);
        for (const priority_candidate& chosen : out) {
            accumulators[chosen.slot] = 0.0f;
        }
    }

private:
    // The greedy walk in priority order, sorting only as far as the walk goes: batches of doubling size are
    // split off the rest with nth_element and sorted, until the budget cannot take even the smallest
    // candidate; after each batch the rest loses what can no longer fit. What is sorted is one 64-bit key per
    // candidate, its priority mapped to an order-preserving unsigned (inverted: highest first) above its
    // position, so a comparison is one integer compare.
    void choose(std::uint64_t budget_bits, std::vector<priority_candidate>& out) {
        out.clear();
        std::size_t count = scratch_.size();
        if (count == 0) {
            return;
        }
        keys_.resize(count);
        std::uint64_t total_bits = 0;
        std::uint32_t smallest = std::numeric_limits<std::uint32_t>::max();
        for (std::size_t k = 0; k < count; ++k) {
            const priority_candidate& c = scratch_[k];
            keys_[k] = std::uint64_t{descending(c.priority)} << 32 | k;
            total_bits += c.size_bits;
            smallest = std::min(smallest, c.size_bits);
        }
        // First batch: about what the budget holds at the mean size, plus a margin for skipped ones.
        const std::uint64_t fits = budget_bits / std::max<std::uint64_t>(1, total_bits / count);
        std::size_t batch = fits >= count ? count : std::min<std::size_t>(count, fits + fits / 2 + 8);
        std::uint64_t used = 0;
        const auto at = [this](std::size_t k) { return keys_.begin() + static_cast<std::ptrdiff_t>(k); };
        for (std::size_t first = 0; first < count; first += batch, batch *= 2) {
            const std::size_t last = std::min(count, first + batch);
            if (last < count) {
                std::nth_element(at(first), at(last), at(count));
            }
            std::sort(at(first), at(last));
            for (std::size_t k = first; k < last; ++k) {
                const priority_candidate& c = scratch_[keys_[k] & 0xFFFFFFFFu];
                if (out.empty() || used + c.size_bits <= budget_bits) {
                    out.push_back(c);
                    used += c.size_bits;
                    if (used > budget_bits || budget_bits - used < smallest) {
                        return;
                    }
                }
            }
            // The rest all rank below what was walked, and the room only shrinks: those larger than the room
            // now would be skipped anyway. Dropping them (branch-free) keeps the next batches small.
            const std::uint64_t room = budget_bits - used;
            std::size_t kept = last;
            for (std::size_t k = last; k < count; ++k) {
                const std::uint64_t key = keys_[k];
                keys_[kept] = key;
                kept += scratch_[key & 0xFFFFFFFFu].size_bits <= room ? 1 : 0;
            }
            count = kept;
        }
    }

    // Higher priority -> smaller value: the float's bits flipped into an unsigned order (negative floats
    // inverted, positive ones above them), then inverted. NaN ranks as -infinity, -0 as +0.
    [[nodiscard]] static std::uint32_t descending(float priority) noexcept {
        const float p = priority != priority ? -std::numeric_limits<float>::infinity() : priority + 0.0f;
        const auto bits = std::bit_cast<std::uint32_t>(p);
        const std::uint32_t ascending = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
        return ~ascending;
    }

    weight_range weights_;
    std::vector<priority_candidate> scratch_;
    std::vector<std::uint64_t> keys_;
};

} // namespace ecsnet::server::interest
