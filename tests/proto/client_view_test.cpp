// client_view's admission under a budget (in flight first, whatever the budget, then by priority, ties by
// index, the first one even alone over budget, no more once nothing fits) and the view it keeps (entries
// sorted by index, its checksum the sum of its entries' terms), on the arena scene. The randomized
// differential test (view_differential_test.cpp) checks what clients show; this one pins the order and the
// bookkeeping, and that a client's views stop allocating once their buffers have grown, however its acks
// come.

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/client_view.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/row_history.hpp"
#include "ecsnet/proto/view_encoder.hpp"

#include "allocation_counter.hpp"

namespace client_view_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::proto;

struct world {
    explicit world(std::size_t entities)
        : scene{reg, options(entities)}
        , history{arena::replicated_schema(), reg}
        , rows{arena::replicated_schema().layout(), 64}
        , encoder{rows} {
        scene.populate();
    }

    static arena::scene_options options(std::size_t entities) {
        arena::scene_options o;
        o.entities = entities;
        o.seed = 11;
        return o;
    }

    void step() {
        scene.step();
        ++tick;
        history.capture(tick, std::uint64_t{tick} * 33'333);
        rows.update(history);
        encoder.begin_tick();
    }

    std::vector<net_entity> everything() const {
        std::vector<net_entity> out;
        for (const auto index : rows.alive()) {
            out.push_back({index, rows.generation(index)});
        }
        return out;
    }

    registry reg;
    arena::scene scene;
    snapshot_history history;
    row_history rows;
    view_encoder encoder;
    tick_type tick{0};
};

std::vector<std::uint32_t> indices_of(const view_frame& frame) {
    std::vector<std::uint32_t> out;
    for (const auto& e : frame.entries) {
        out.push_back(e.index);
    }
    return out;
}

std::uint64_t sum_of_terms(const view_frame& frame) {
    return std::accumulate(frame.entries.begin(), frame.entries.end(), std::uint64_t{0},
                           [](std::uint64_t sum, const view_entry& e) { return sum + e.term; });
}

// The admission rule, restated: candidates by weight (all waited one tick), ties by the smaller index; each
// taken while the budget is positive if it fits or is the first; its cost is the row's estimate plus an
// index (client_view.cpp: 14 bits), the budget less the snapshot's fixed cost (40 bytes). Sorted by index.
std::vector<std::uint32_t> admitted(const view_encoder& encoder, const std::vector<net_entity>& ids,
                                    const std::vector<float>& weights, std::int64_t budget_bits) {
    std::vector<std::size_t> order(ids.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return weights[a] != weights[b] ? weights[a] > weights[b] : ids[a].index < ids[b].index;
    });
    std::int64_t budget = budget_bits - 40 * 8;
    std::vector<std::uint32_t> out;
    for (const auto k : order) {
        const auto cost = static_cast<std::int64_t>(encoder.row_bits_estimate(ids[k].index)) + 14;
        if (budget > 0 && (out.empty() || budget >= cost)) {
            out.push_back(ids[k].index);
            budget -= cost;
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The header check's bytes are the wire's (docs/protocol.md, 12.2): 25 bytes, the checksum's low four.
// The expected value is CRC-16/CCITT-FALSE of struct.pack("<IBIqII", 0x01020304, 3, 7, -5, 123, 0x55667788),
// computed apart from this code.
TEST(ClientView, TheHeaderCheckCoversTheDocumentedBytes) {
    constexpr std::uint64_t checksum = 0x1122334455667788ULL;
    EXPECT_EQ(view_header_check(0x01020304, true, true, 7, -5, 123, checksum), 0x76B7);
    EXPECT_EQ(view_header_check(0x01020304, true, true, 7, -5, 123, checksum ^ (0xFFULL << 40)), 0x76B7)
        << "the checksum's high bytes are not covered";
    EXPECT_NE(view_header_check(0x01020304, true, true, 7, -5, 123, checksum ^ 1), 0x76B7);
    EXPECT_NE(view_header_check(0x01020304, true, false, 7, -5, 123, checksum), 0x76B7);
    EXPECT_NE(view_header_check(0x01020304, true, true, 7, -4, 123, checksum), 0x76B7);
    EXPECT_NE(view_header_check(0x01020304, true, true, 7, -5, 124, checksum), 0x76B7);
}

TEST(ClientView, UnderABudgetTheHighestPrioritiesEnterFirstTiesByIndex) {
    world w{300};
    w.step();
    const auto ids = w.everything();
    ASSERT_GT(ids.size(), 100U);
    // Weights in a few tiers, so that ties by index matter too.
    std::vector<float> weights;
    std::mt19937 random{5};
    for (std::size_t i = 0; i < ids.size(); ++i) {
        weights.push_back(static_cast<float>(1 + random() % 4));
    }
    client_view view{w.encoder};
    v1::Envelope envelope;
    // Room for a dozen entering rows or so: far fewer than are relevant.
    const auto report = view.write(ids, weights, 4'000, 0, envelope);
    ASSERT_NE(view.newest(), nullptr);
    EXPECT_GT(report.entered, 3U);
    EXPECT_LT(report.entered, ids.size() / 4);
    EXPECT_EQ(report.entered + report.waiting, ids.size());
    EXPECT_EQ(indices_of(*view.newest()), admitted(w.encoder, ids, weights, 4'000));
}

TEST(ClientView, TheFirstCandidateIsTakenEvenAloneOverBudgetAndNothingWithoutBudget) {
    world w{50};
    w.step();
    const auto ids = w.everything();
    std::vector<float> weights(ids.size(), 1.0F);
    weights[ids.size() / 2] = 5.0F; // the one to enter first

    client_view starved{w.encoder};
    v1::Envelope envelope;
    EXPECT_EQ(starved.write(ids, weights, 0, 0, envelope).entered, 0U);

    client_view view{w.encoder};
    // Positive but smaller than any row: the first (highest) candidate alone.
    const auto report = view.write(ids, weights, 400, 0, envelope);
    EXPECT_EQ(report.entered, 1U);
    EXPECT_EQ(indices_of(*view.newest()), std::vector<std::uint32_t>{ids[ids.size() / 2].index});
}

// What a view still in flight carried is sent again whatever the budget: otherwise, when that view arrives
// and then the next, the client would show the newer value and then step back to its base's.
TEST(ClientView, WhatIsInFlightIsSentAgainWhateverTheBudget) {
    world w{300};
    client_view view{w.encoder};
    v1::Envelope envelope;
    w.step();
    std::vector<net_entity> ids = w.everything();
    std::vector<float> weights(ids.size(), 1.0F);
    view.write(ids, weights, 1'000'000, 0, envelope);
    const tick_type base = w.tick;
    view.on_ack(base, false);
    w.step();
    ASSERT_EQ(w.everything(), ids); // the same entities, some moving
    const auto second = view.write(ids, weights, 1'000'000, 0, envelope);
    ASSERT_GT(second.changed, 10U);
    std::vector<std::uint32_t> carried; // changed in the view in flight
    for (const auto& e : view.newest()->entries) {
        if (e.sent() == w.tick) {
            carried.push_back(e.index);
        }
    }
    ASSERT_EQ(carried.size(), second.changed);
    // The next view, from the same base, with a budget for nothing (1 bit): what the view in flight carried
    // is sent all the same, and nothing else is.
    w.step();
    const auto third = view.write(ids, weights, 1, 0, envelope);
    EXPECT_GE(third.mandatory, carried.size() / 2);
    EXPECT_EQ(third.changed + third.refreshed, third.mandatory);
    std::size_t stepped_back = 0;
    for (const auto& e : view.newest()->entries) {
        if (std::binary_search(carried.begin(), carried.end(), e.index) && e.tick <= base) {
            ++stepped_back; // holds its base's value again
        }
    }
    EXPECT_EQ(stepped_back, 0U);
}

// Likewise what entered in a view in flight: the next view from the same base enters it again, whatever
// the budget, or the client would create it and then destroy it.
TEST(ClientView, WhatEnteredInFlightEntersAgainWhateverTheBudget) {
    world w{300};
    client_view view{w.encoder};
    v1::Envelope envelope;
    w.step();
    const std::vector<net_entity> all = w.everything();
    std::vector<net_entity> some; // every third entity stays out of the first view
    std::vector<std::uint32_t> later;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (i % 3 == 0) {
            later.push_back(all[i].index);
        } else {
            some.push_back(all[i]);
        }
    }
    view.write(some, std::vector<float>(some.size(), 1.0F), 1'000'000, 0, envelope);
    const tick_type base = w.tick;
    view.on_ack(base, false);
    const std::vector<float> weights(all.size(), 1.0F);
    w.step();
    ASSERT_EQ(view.write(all, weights, 1'000'000, 0, envelope).entered, later.size());
    w.step(); // not acked: the next view is from the same base, with a budget for nothing
    const auto third = view.write(all, weights, 1, 0, envelope);
    EXPECT_EQ(third.entered, later.size());
    EXPECT_EQ(third.waiting, 0U);
    std::size_t present = 0;
    for (const auto& e : view.newest()->entries) {
        present += std::binary_search(later.begin(), later.end(), e.index) ? 1 : 0;
    }
    EXPECT_EQ(present, later.size());
}

// Acks are only noted until the next write, which settles them in their order: however many came, in any
// order, with ticks never sent or long retired among them, the base is the newest view acked that is kept.
TEST(ClientView, AcksNotedBetweenWritesSettleToTheNewestKeptViewAcked) {
    world w{300};
    client_view view{w.encoder};
    v1::Envelope envelope;
    const std::vector<net_entity> all = w.everything();
    const std::vector<float> weights(all.size(), 1.0F);
    std::vector<tick_type> sent;
    for (int t = 0; t < 10; ++t) {
        w.step();
        view.write(all, weights, 1'000'000, 0, envelope);
        sent.push_back(w.tick);
    }
    // Seven acks (more than are noted before settling): out of order, one of a tick never sent, one of a
    // tick from the future; the newest kept one is sent[7].
    for (const tick_type tick : {sent[3], sent[9] + 50, sent[7], sent[5], sent[2], sent[6], sent[1]}) {
        view.on_ack(tick, false);
    }
    w.step();
    auto report = view.write(all, weights, 1'000'000, 0, envelope);
    ASSERT_TRUE(report.base);
    EXPECT_EQ(*report.base, sent[7]);
    EXPECT_FALSE(report.full_state);
    // An older ack after that changes nothing; a full-state request forgets the acks noted before it.
    view.on_ack(sent[4], false);
    w.step();
    report = view.write(all, weights, 1'000'000, 0, envelope);
    ASSERT_TRUE(report.base);
    EXPECT_EQ(*report.base, sent[7]);
    view.on_ack(sent[9], false);
    view.on_ack(0, true);
    w.step();
    report = view.write(all, weights, 1'000'000, 0, envelope);
    EXPECT_TRUE(report.full_state);
    EXPECT_FALSE(report.base);
}

TEST(ClientView, EveryViewIsSortedAndItsChecksumIsTheSumOfItsTerms) {
    world w{600};
    client_view view{w.encoder};
    v1::Envelope envelope;
    std::mt19937 random{9};
    std::vector<tick_type> sent;
    for (int t = 0; t < 120; ++t) {
        w.step();
        // A changing relevant set: a random two thirds of the world each tick, with random weights.
        std::vector<net_entity> relevant;
        std::vector<float> weights;
        for (const auto& id : w.everything()) {
            if (random() % 3 != 0) {
                relevant.push_back(id);
                weights.push_back(static_cast<float>(1 + random() % 8));
            }
        }
        const auto report =
            view.write(relevant, weights, 2'000 + static_cast<std::int64_t>(random() % 20'000), 0, envelope);
        const auto& frame = *view.newest();
        ASSERT_EQ(frame.tick, w.tick);
        ASSERT_TRUE(
            std::is_sorted(frame.entries.begin(), frame.entries.end(),
                           [](const view_entry& a, const view_entry& b) { return a.index < b.index; }));
        ASSERT_EQ(frame.checksum, sum_of_terms(frame)) << "tick " << w.tick;
        ASSERT_EQ(frame.entries.size(), report.view_size);
        // Acks two ticks late, every fifth lost.
        sent.push_back(frame.tick);
        if (sent.size() > 2) {
            if (random() % 5 != 0) {
                view.on_ack(sent[sent.size() - 3], false);
            }
        }
    }
}

// A client's thread late by a few ticks acks them all at once: the views in flight pile up, then most go
// at once. A deque freed its node blocks and a few spare views kept only four buffers, so every burst
// made the next ticks allocate views of a few kilobytes again. Clients whose acks come steadily, in
// bursts of up to 8, or not at all for a while (the view falls back to a full state), each played for a
// while first: then writing and acking allocate nothing, and each keeps no more views than it needed.
TEST(ClientView, AcksInBurstsAllocateNothingOnceTheBuffersHaveGrown) {
    world w{400};
    constexpr std::size_t clients = 12;
    std::vector<client_view> views;
    views.reserve(clients);
    for (std::size_t c = 0; c < clients; ++c) {
        views.emplace_back(w.encoder, 16);
    }
    std::vector<v1::Envelope> envelopes(clients);
    std::vector<std::vector<tick_type>> unacked(clients);
    for (auto& ticks : unacked) {
        ticks.reserve(64); // the test's own list: its allocations are not the views'
    }
    const auto relevant = w.everything();
    const std::vector<float> weights(relevant.size(), 1.0F);
    std::size_t bursts = 0;
    std::size_t full_states = 0;
    const auto play = [&](int ticks, bool count) {
        for (int t = 0; t < ticks; ++t) {
            w.step(); // the world's own allocations are not the views'
            ecsnet::test_support::count_allocations(count);
            for (std::size_t c = 0; c < clients; ++c) {
                const auto report = views[c].write(relevant, weights, 60'000, 0, envelopes[c]);
                full_states += report.full_state ? 1 : 0;
                unacked[c].push_back(w.tick);
                // Client c acks every c % 8 + 1 ticks, every view it has at once. Client 11 also goes
                // silent for 20 ticks of every 60, past the 16 views kept.
                const bool silent = c == 11 && w.tick % 60 < 20;
                if (!silent && unacked[c].size() > c % 8) {
                    bursts += unacked[c].size() > 1 ? 1 : 0;
                    for (const auto tick : unacked[c]) {
                        views[c].on_ack(tick, false);
                    }
                    unacked[c].clear();
                }
            }
            ecsnet::test_support::count_allocations(false);
        }
    };
    play(300, false);
    ecsnet::test_support::reset_allocation_count();
    bursts = 0;
    full_states = 0;
    play(300, true);
    EXPECT_EQ(ecsnet::test_support::allocations_counted(), 0U)
        << "over 300 ticks of " << clients << " clients";
    EXPECT_GT(bursts, 600U) << "acks must come in bursts, or this proves little";
    EXPECT_GT(full_states, 0U) << "the silent client must fall back to a full state";
    for (const auto& view : views) {
        EXPECT_LE(view.frames_kept(), 17U) << "at most the views kept and the one being written";
    }
}

} // namespace

} // namespace client_view_test
