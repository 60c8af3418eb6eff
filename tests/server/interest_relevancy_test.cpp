// client_relevancy (issue 15): hysteresis, the entering cap, always-relevant ids, leave reasons, the filter
// and force_out, slots and accumulators; then a seeded differential test against a brute-force model over
// many ticks of moving ids, moving and teleporting clients, mass spawns and despawns and re-used ids. Also
// id_slot_map against std::unordered_map.

#include <ecsnet/server/interest/client_relevancy.hpp>
#include <ecsnet/server/interest/id_slot_map.hpp>
#include <ecsnet/server/interest/spatial_grid.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

namespace interest_relevancy_test {

namespace {

using namespace ecsnet::server::interest;

std::vector<id_type> sorted(std::span<const id_type> ids) {
    std::vector<id_type> v(ids.begin(), ids.end());
    std::sort(v.begin(), v.end());
    return v;
}

TEST(ClientRelevancy, HysteresisKeepsABorderEntityWithoutFlicker) {
    spatial_grid grid({0, 0, 1000, 1000}, 32);
    grid.insert(1, 500, 500); // the client's avatar
    grid.insert(2, 590, 500); // 90 m away: beyond enter (80), within leave (100)
    client_relevancy relevancy;
    relevancy_changes changes;
    const id_type avatar[] = {1};
    relevancy.update(grid, 500, 500, 80, 100, avatar, changes);
    EXPECT_EQ(changes.entered, (std::vector<id_type>{1}));
    EXPECT_FALSE(relevancy.contains(2));

    grid.move(2, 579, 500); // inside the enter radius: enters
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, avatar, changes);
    EXPECT_EQ(changes.entered, (std::vector<id_type>{2}));
    for (int tick = 0; tick < 50; ++tick) { // pacing between 70 and 99 m: stays, no change reported
        grid.move(2, 570.0f + static_cast<float>(tick % 30), 500);
        changes.clear();
        relevancy.update(grid, 500, 500, 80, 100, avatar, changes);
        EXPECT_TRUE(changes.empty()) << "tick " << tick;
    }
    grid.move(2, 601, 500); // beyond the leave radius
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, avatar, changes);
    EXPECT_EQ(changes.left, (std::vector<left_id>{{2, leave_reason::out_of_range}}));
    EXPECT_TRUE(changes.entered.empty());
    EXPECT_EQ(sorted(relevancy.members()), (std::vector<id_type>{1}));
}

TEST(ClientRelevancy, AMassSpawnEntersNearestFirstOverSeveralUpdates) {
    spatial_grid grid({0, 0, 1000, 1000}, 32);
    for (id_type id = 0; id < 100; ++id) {
        grid.insert(id, 500.0f + static_cast<float>(id) * 0.5f, 500); // id k at 0.5 k m
    }
    client_relevancy relevancy(10);
    relevancy_changes changes;
    for (id_type round = 0; round < 10; ++round) {
        changes.clear();
        relevancy.update(grid, 500, 500, 80, 100, {}, changes);
        std::vector<id_type> expected;
        for (id_type k = 0; k < 10; ++k) {
            expected.push_back(round * 10 + k);
        }
        EXPECT_EQ(changes.entered, expected) << "round " << round;
    }
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, {}, changes);
    EXPECT_TRUE(changes.empty());
    EXPECT_EQ(relevancy.size(), 100u);
}

TEST(ClientRelevancy, AlwaysRelevantIdsEnterFirstAndStayAnywhere) {
    spatial_grid grid({0, 0, 1000, 1000}, 32);
    grid.insert(1, 10, 10);   // far away
    grid.insert(2, 500, 501); // near
    client_relevancy relevancy(2);
    relevancy_changes changes;
    // 77 is not in the grid (global state), listed twice; all ones is no entity index and is ignored.
    const id_type always[] = {77, 1, 77, 0xFFFFFFFFu};
    relevancy.update(grid, 500, 500, 80, 100, always, changes);
    EXPECT_EQ(changes.entered, (std::vector<id_type>{1, 77})) << "always-relevant first, by id, once each";
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, always, changes);
    EXPECT_EQ(changes.entered, (std::vector<id_type>{2}));
    // No longer always-relevant: 1 is out of range, 77 (not in the grid) too.
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, {}, changes);
    std::sort(changes.left.begin(), changes.left.end(), [](auto a, auto b) { return a.id < b.id; });
    EXPECT_EQ(changes.left,
              (std::vector<left_id>{{1, leave_reason::out_of_range}, {77, leave_reason::out_of_range}}));
}

TEST(ClientRelevancy, DestroyedAndReusedIdsLeaveAsRemoved) {
    spatial_grid grid({0, 0, 1000, 1000}, 32);
    grid.insert(1, 500, 500);
    grid.insert(2, 510, 500);
    grid.insert(3, 520, 500);
    client_relevancy relevancy;
    relevancy_changes changes;
    relevancy.update(grid, 500, 500, 80, 100, {}, changes);
    ASSERT_EQ(relevancy.size(), 3u);

    grid.erase(2);            // destroyed
    grid.erase(3);            // destroyed, and its index re-used at once by a new entity, in range
    grid.insert(3, 530, 500); // ... which must be announced as a new entity
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, {}, changes);
    std::sort(changes.left.begin(), changes.left.end(), [](auto a, auto b) { return a.id < b.id; });
    EXPECT_EQ(changes.left, (std::vector<left_id>{{2, leave_reason::removed_from_grid},
                                                  {3, leave_reason::removed_from_grid}}));
    EXPECT_EQ(changes.entered, (std::vector<id_type>{3}));
    EXPECT_EQ(relevancy.generation_at(relevancy.slot_of(3)), grid.generation_of(3));
}

TEST(ClientRelevancy, TheFilterAndForceOutRemoveWithTheForcedReason) {
    spatial_grid grid({0, 0, 1000, 1000}, 32);
    for (id_type id = 1; id <= 4; ++id) {
        grid.insert(id, 500.0f + static_cast<float>(id), 500);
    }
    client_relevancy relevancy;
    relevancy_changes changes;
    const id_type always[] = {4};
    bool veto_even = true;
    const auto filter = [&](id_type id) { return !(veto_even && id % 2 == 0); };
    relevancy.update(grid, 500, 500, 80, 100, always, changes, filter);
    EXPECT_EQ(changes.entered, (std::vector<id_type>{4, 1, 3}))
        << "the filter does not veto always-relevant ids";

    veto_even = false;
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, always, changes, filter);
    EXPECT_EQ(changes.entered, (std::vector<id_type>{2}));

    veto_even = true;
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, always, changes, filter);
    EXPECT_EQ(changes.left, (std::vector<left_id>{{2, leave_reason::forced}}));

    changes.clear();
    EXPECT_TRUE(relevancy.force_out(3, changes));
    EXPECT_FALSE(relevancy.force_out(3, changes));
    EXPECT_EQ(changes.left, (std::vector<left_id>{{3, leave_reason::forced}}));
    EXPECT_FALSE(relevancy.contains(3));
    changes.clear();
    relevancy.update(grid, 500, 500, 80, 100, always, changes, filter);
    EXPECT_EQ(changes.entered, (std::vector<id_type>{3}))
        << "force_out is one-shot; the filter is what lasts";
}

TEST(ClientRelevancy, AccumulatorsFollowTheirMemberThroughSwapRemoval) {
    spatial_grid grid({0, 0, 1000, 1000}, 32);
    for (id_type id = 0; id < 50; ++id) {
        grid.insert(id, 500.0f + static_cast<float>(id), 500);
    }
    client_relevancy relevancy(100);
    relevancy_changes changes;
    relevancy.update(grid, 500, 500, 80, 100, {}, changes);
    ASSERT_EQ(relevancy.size(), 50u);
    for (std::size_t slot = 0; slot < relevancy.size(); ++slot) {
        EXPECT_EQ(relevancy.accumulators()[slot], 0.0f);
        relevancy.accumulators()[slot] = static_cast<float>(relevancy.members()[slot]) + 0.5f;
    }
    for (id_type id = 0; id < 50; id += 3) {
        grid.erase(id);
    }
    relevancy.force_out(1, changes);
    relevancy.update(grid, 500, 500, 80, 100, {}, changes, [](id_type id) { return id != 1; });
    for (std::size_t slot = 0; slot < relevancy.size(); ++slot) {
        const id_type id = relevancy.members()[slot];
        EXPECT_EQ(relevancy.slot_of(id), slot);
        EXPECT_EQ(relevancy.accumulators()[slot], static_cast<float>(id) + 0.5f);
    }
    EXPECT_EQ(relevancy.size(), 50u - 17u - 1u);
}

// ---- the differential test -------------------------------------------------------------------------------

struct model_relevancy {
    std::map<id_type, generation_type> members;
    std::size_t max_entering;

    template<typename Filter>
    void update(const spatial_grid& grid, const std::vector<id_type>& live, float cx, float cy, float enter,
                float leave, const std::vector<id_type>& always, Filter filter, std::vector<left_id>& left,
                std::vector<id_type>& entered) {
        const float query = std::max(enter, leave);
        const float query2 = query * query;
        const float enter2 = enter * enter;
        const std::set<id_type> always_set(always.begin(), always.end());
        const auto within = [&](id_type id, float r2) {
            if (!grid.contains(id)) {
                return false;
            }
            const auto p = grid.position_of(id);
            return distance_squared(cx, cy, p.x, p.y) <= r2;
        };
        std::map<id_type, generation_type> kept;
        for (const auto& [id, entered_as] : members) {
            const generation_type now = grid.generation_of(id);
            const bool same = entered_as == 0 || entered_as == now;
            if (same && always_set.count(id)) {
                kept[id] = now;
            } else if (same && now != 0 && within(id, query2)) {
                if (filter(id)) {
                    kept[id] = now;
                } else {
                    left.push_back({id, leave_reason::forced});
                }
            } else {
                left.push_back({id, entered_as != 0 && now != entered_as ? leave_reason::removed_from_grid
                                                                         : leave_reason::out_of_range});
            }
        }
        std::map<id_type, float> candidates;
        for (const id_type id : always) {
            if (!kept.count(id)) {
                candidates[id] = -1.0f;
            }
        }
        for (const id_type id : live) {
            if (kept.count(id) || candidates.count(id) || !filter(id)) {
                continue;
            }
            const auto p = grid.position_of(id);
            const float d2 = distance_squared(cx, cy, p.x, p.y);
            if (d2 <= query2 && d2 <= enter2) {
                candidates[id] = d2;
            }
        }
        std::vector<std::pair<float, id_type>> order;
        for (const auto& [id, key] : candidates) {
            order.emplace_back(key, id);
        }
        std::sort(order.begin(), order.end());
        for (std::size_t k = 0; k < order.size() && k < max_entering; ++k) {
            const id_type id = order[k].second;
            kept[id] = grid.generation_of(id);
            entered.push_back(id);
        }
        members = std::move(kept);
    }
};

struct test_client {
    id_type avatar;
    client_relevancy relevancy;
    model_relevancy model;
    float enter;
    float leave;
    int veto_residue; // vetoes ids with id % 13 == veto_residue, -1: none
};

TEST(ClientRelevancy, MatchesABruteForceModelOverManyTicks) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::mt19937 rng{2024};
    const auto pick = [&](int n) { return std::uniform_int_distribution<int>{0, n - 1}(rng); };
    const auto uniform = [&](float a, float b) { return std::uniform_real_distribution<float>{a, b}(rng); };
    constexpr float side = 1000;
    constexpr id_type pool = 4000;
    spatial_grid grid({0, 0, side, side}, 25);
    std::vector<bool> alive(pool, false);
    const auto spawn = [&](id_type id, float x, float y) {
        if (!alive[id]) {
            grid.insert(id, x, y);
            alive[id] = true;
        }
    };
    for (id_type id = 0; id < pool / 2; ++id) {
        spawn(id, uniform(0, side), uniform(0, side));
    }
    std::vector<test_client> clients;
    for (id_type c = 0; c < 5; ++c) {
        const std::size_t cap = c % 2 == 0 ? 16 : 1000;
        clients.push_back({c, client_relevancy(cap), model_relevancy{{}, cap}, 80, 100, -1});
        spawn(c, uniform(0, side), uniform(0, side));
    }
    clients[3].leave = 60; // below the enter radius: counts as the enter radius
    std::size_t entered_total = 0;
    std::size_t left_total[3] = {};
    int tick = 0;
    for (; tick < 3000 && std::chrono::steady_clock::now() < deadline; ++tick) {
        // The world moves: small steps for most, a few teleports.
        for (id_type id = 0; id < pool; ++id) {
            if (!alive[id] || pick(10) >= 3) {
                continue;
            }
            auto p = grid.position_of(id);
            if (pick(100) == 0) {
                p = {uniform(-50, side + 50), uniform(-50, side + 50)};
            } else {
                p.x += uniform(-3, 3);
                p.y += uniform(-3, 3);
            }
            grid.move(id, p.x, p.y);
        }
        // Deaths and births, some re-using an index at once; avatars (ids 0-4) live on.
        for (int k = 0; k < 20; ++k) {
            const auto id = static_cast<id_type>(5 + pick(pool - 5));
            if (alive[id]) {
                const auto p = grid.position_of(id);
                grid.erase(id);
                alive[id] = false;
                if (pick(4) == 0) {
                    spawn(id, p.x + uniform(-5, 5), p.y);
                }
            } else {
                spawn(id, uniform(0, side), uniform(0, side));
            }
        }
        if (pick(40) == 0) { // a mass spawn around a client
            const auto p = grid.position_of(clients[static_cast<std::size_t>(pick(5))].avatar);
            for (int k = 0; k < 150; ++k) {
                spawn(static_cast<id_type>(5 + pick(pool - 5)), p.x + uniform(-60, 60),
                      p.y + uniform(-60, 60));
            }
        }
        if (pick(60) == 0) { // a mass despawn of a region
            const float x0 = uniform(0, side);
            const float y0 = uniform(0, side);
            grid.query_circle(x0, y0, 150, [&](id_type id, float) { alive[id] = id < 5; });
            for (id_type id = 5; id < pool; ++id) {
                if (!alive[id] && grid.contains(id)) {
                    grid.erase(id);
                }
            }
        }
        std::vector<id_type> live;
        for (id_type id = 0; id < pool; ++id) {
            if (alive[id]) {
                live.push_back(id);
            }
        }
        for (std::size_t c = 0; c < clients.size(); ++c) {
            auto& client = clients[c];
            if (pick(50) == 0) { // the client teleports
                grid.move(client.avatar, uniform(0, side), uniform(0, side));
            }
            if (pick(50) == 0) {
                client.veto_residue = pick(2) == 0 ? -1 : pick(13);
            }
            std::vector<id_type> always{client.avatar};
            if (tick % 100 < 50) { // some global state (not in the grid) and a far id, part of the time
                always.push_back(static_cast<id_type>(pool + c));
                always.push_back(static_cast<id_type>(100 + 7 * c));
                always.push_back(client.avatar); // listed twice
            }
            const int residue = client.veto_residue;
            const auto filter = [residue](id_type id) {
                return residue < 0 || static_cast<int>(id % 13) != residue;
            };
            if (pick(20) == 0 && !client.relevancy.empty()) { // the world forces one out
                const id_type victim =
                    client.relevancy
                        .members()[static_cast<std::size_t>(pick(static_cast<int>(client.relevancy.size())))];
                relevancy_changes forced;
                ASSERT_TRUE(client.relevancy.force_out(victim, forced));
                ASSERT_EQ(client.model.members.erase(victim), 1u);
            }
            const auto center = grid.position_of(client.avatar);
            relevancy_changes got;
            std::vector<left_id> want_left;
            std::vector<id_type> want_entered;
            client.relevancy.update(grid, center.x, center.y, client.enter, client.leave, always, got,
                                    filter);
            client.model.update(grid, live, center.x, center.y, client.enter, client.leave, always, filter,
                                want_left, want_entered);
            const auto by_id = [](const left_id& a, const left_id& b) { return a.id < b.id; };
            std::sort(got.left.begin(), got.left.end(), by_id);
            std::sort(want_left.begin(), want_left.end(), by_id);
            ASSERT_EQ(got.left, want_left) << "tick " << tick << " client " << c;
            ASSERT_EQ(got.entered, want_entered) << "tick " << tick << " client " << c;
            ASSERT_EQ(client.relevancy.size(), client.model.members.size());
            for (std::size_t slot = 0; slot < client.relevancy.size(); ++slot) {
                const id_type id = client.relevancy.members()[slot];
                ASSERT_EQ(client.relevancy.slot_of(id), slot);
                const auto it = client.model.members.find(id);
                ASSERT_NE(it, client.model.members.end()) << "tick " << tick << " id " << id;
                ASSERT_EQ(client.relevancy.generation_at(static_cast<client_relevancy::slot_type>(slot)),
                          it->second);
            }
            ASSERT_EQ(client.relevancy.accumulators().size(), client.relevancy.size());
            entered_total += got.entered.size();
            for (const auto& l : got.left) {
                ++left_total[static_cast<int>(l.reason)];
            }
        }
    }
    // The scenario must have exercised every path.
    EXPECT_GT(tick, 300) << "the deadline cut the test short";
    EXPECT_GT(entered_total, 5000u);
    EXPECT_GT(left_total[static_cast<int>(leave_reason::out_of_range)], 500u);
    EXPECT_GT(left_total[static_cast<int>(leave_reason::removed_from_grid)], 200u);
    EXPECT_GT(left_total[static_cast<int>(leave_reason::forced)], 50u);
}

// ---- id_slot_map
// -------------------------------------------------------------------------------------------

TEST(IdSlotMap, MatchesAnUnorderedMap) {
    std::mt19937 rng{5};
    id_slot_map map;
    std::unordered_map<std::uint32_t, std::uint32_t> model;
    for (int round = 0; round < 40; ++round) {
        // Key ranges from dense to sparse, sizes that grow and shrink, so probe runs wrap and shift.
        const std::uint32_t range = round % 4 == 0   ? 64
                                    : round % 4 == 1 ? 5000
                                    : round % 4 == 2 ? 0xFFFFFFFEu
                                                     : 300;
        std::uniform_int_distribution<std::uint32_t> key{0, range - 1};
        const int target = (round * 37) % 400;
        for (int step = 0; step < 4000; ++step) {
            const std::uint32_t k = key(rng);
            const auto value = static_cast<std::uint32_t>(rng() >> 1);
            const bool grow = static_cast<int>(model.size()) < target;
            switch (rng() % 4) {
            case 0:
            case 1:
                if (grow) {
                    ASSERT_EQ(map.insert(k, value), model.emplace(k, value).second);
                } else {
                    ASSERT_EQ(map.erase(k), model.erase(k) == 1);
                }
                break;
            case 2:
                if (model.count(k)) {
                    map.assign(k, value);
                    model[k] = value;
                }
                break;
            default: {
                const auto it = model.find(k);
                ASSERT_EQ(map.find(k), it == model.end() ? id_slot_map::npos : it->second);
                break;
            }
            }
            ASSERT_EQ(map.size(), model.size());
        }
        for (const auto& [k, v] : model) {
            ASSERT_EQ(map.find(k), v);
        }
        if (range <= 5000) {
            for (std::uint32_t k = 0; k < range; ++k) {
                ASSERT_EQ(map.contains(k), model.count(k) == 1);
            }
        }
        EXPECT_LE(map.size() * 2, map.capacity());
    }
    map.clear();
    EXPECT_EQ(map.find(3), id_slot_map::npos);
    EXPECT_FALSE(map.erase(3));
}

} // namespace

} // namespace interest_relevancy_test
