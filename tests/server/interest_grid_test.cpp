// spatial_grid (issue 15): construction, the border and NaN rules, and a seeded differential test of every
// operation and of query_circle against a scan of every id, with positions inside and outside the bounds
// and exactly on cell borders.

#include <ecsnet/server/interest/spatial_grid.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace interest_grid_test {

namespace {

using ecsnet::server::interest::distance_squared;
using ecsnet::server::interest::generation_type;
using ecsnet::server::interest::grid_bounds;
using ecsnet::server::interest::grid_entry;
using ecsnet::server::interest::id_type;
using ecsnet::server::interest::spatial_grid;

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();

using hit = std::pair<id_type, float>; // id, squared distance

std::vector<hit> query(const spatial_grid& grid, float x, float y, float radius) {
    std::vector<hit> hits;
    grid.query_circle(x, y, radius, [&](id_type id, float d2) { hits.emplace_back(id, d2); });
    std::sort(hits.begin(), hits.end());
    return hits;
}

TEST(SpatialGrid, RejectsInvalidConfigurations) {
    EXPECT_THROW(spatial_grid({0, 0, 0, 10}, 1), std::invalid_argument);
    EXPECT_THROW(spatial_grid({0, 0, 10, -1}, 1), std::invalid_argument);
    EXPECT_THROW(spatial_grid({nan, 0, 10, 10}, 1), std::invalid_argument);
    EXPECT_THROW(spatial_grid({0, 0, inf, 10}, 1), std::invalid_argument);
    EXPECT_THROW(spatial_grid({0, 0, 10, 10}, 0), std::invalid_argument);
    EXPECT_THROW(spatial_grid({0, 0, 10, 10}, -2), std::invalid_argument);
    EXPECT_THROW(spatial_grid({0, 0, 10, 10}, nan), std::invalid_argument);
    EXPECT_THROW(spatial_grid({0, 0, 1e6f, 1e6f}, 0.01f), std::invalid_argument); // 10^16 cells
    const spatial_grid grid({-10, 0, 90, 50}, 20);
    EXPECT_EQ(grid.columns(), 5u);
    EXPECT_EQ(grid.rows(), 3u);
    EXPECT_EQ(grid.cell_count(), 15u);
    const spatial_grid tiny({0, 0, 1, 1}, 100);
    EXPECT_EQ(tiny.cell_count(), 1u);
}

TEST(SpatialGrid, InsertMoveEraseKeepPositionsAndGenerations) {
    spatial_grid grid({0, 0, 100, 100}, 10);
    EXPECT_TRUE(grid.insert(7, 5, 5));
    EXPECT_FALSE(grid.insert(7, 50, 50)); // already there: nothing changes
    EXPECT_EQ(grid.position_of(7).x, 5);
    EXPECT_TRUE(grid.insert(8, 95, 95));
    EXPECT_EQ(grid.size(), 2u);
    const generation_type first = grid.generation_of(7);
    EXPECT_NE(first, 0u);
    EXPECT_NE(grid.generation_of(8), first);
    EXPECT_EQ(grid.generation_of(9), 0u);

    grid.move(7, 6, 7); // same cell
    EXPECT_EQ(grid.cell_of(6, 7), grid.cell_of(5, 5));
    EXPECT_EQ(grid.position_of(7).x, 6);
    EXPECT_EQ(grid.position_of(7).y, 7);
    grid.move(7, 55, 45); // another cell
    EXPECT_EQ(grid.position_of(7).x, 55);
    EXPECT_EQ(grid.generation_of(7), first) << "a move keeps the occupant";
    EXPECT_EQ(grid.cell_entries(grid.cell_of(55, 45)).size(), 1u);
    EXPECT_TRUE(grid.cell_entries(grid.cell_of(5, 5)).empty());

    EXPECT_TRUE(grid.erase(7));
    EXPECT_FALSE(grid.erase(7));
    EXPECT_FALSE(grid.contains(7));
    EXPECT_EQ(grid.generation_of(7), 0u);
    EXPECT_TRUE(grid.insert(7, 55, 45));
    EXPECT_NE(grid.generation_of(7), first) << "a re-inserted id is a new occupant";

    EXPECT_THROW(grid.insert(spatial_grid::max_id + 1, 0, 0), std::out_of_range);
    EXPECT_FALSE(grid.contains(spatial_grid::max_id + 1));
    EXPECT_TRUE(grid.insert(spatial_grid::max_id, 1, 1));
    EXPECT_TRUE(grid.contains(spatial_grid::max_id));
    grid.clear();
    EXPECT_EQ(grid.size(), 0u);
    EXPECT_TRUE(query(grid, 50, 50, 1000).empty());
}

TEST(SpatialGrid, OutsidePositionsGoToBorderCellsAndAreStillFound) {
    spatial_grid grid({0, 0, 100, 100}, 10);
    EXPECT_EQ(grid.cell_of(-5, -5), 0u);
    EXPECT_EQ(grid.cell_of(1e30f, 1e30f), grid.cell_count() - 1);
    EXPECT_EQ(grid.cell_of(-inf, 50), grid.cell_of(0, 50));
    EXPECT_EQ(grid.cell_of(nan, nan), 0u);
    EXPECT_EQ(grid.cell_of(100, 100), grid.cell_count() - 1) << "the max edge belongs to the last cell";

    grid.insert(1, -500, 50); // far left of the bounds, in a column-0 cell
    grid.insert(2, 50, 1000); // far above
    grid.insert(3, nan, 5);
    EXPECT_EQ(grid.position_of(1).x, -500) << "positions are kept exact, only the cell is clamped";
    // A circle around the outside point, entirely outside the bounds, still finds it.
    EXPECT_EQ(query(grid, -510, 50, 20), (std::vector<hit>{{1, 100.0f}}));
    EXPECT_EQ(query(grid, 50, 1000, 0), (std::vector<hit>{{2, 0.0f}}));
    // A large circle covering the whole grid (its column-0 cells entirely inside) must not report id 1.
    const auto hits = query(grid, 50, 50, 100);
    EXPECT_TRUE(std::none_of(hits.begin(), hits.end(), [](const hit& h) { return h.first == 1; }));
    // NaN is within no radius, not even an infinite one.
    for (const auto& h : query(grid, 0, 5, inf)) {
        EXPECT_NE(h.first, 3u);
    }
    EXPECT_TRUE(query(grid, nan, 0, 10).empty());
    EXPECT_TRUE(query(grid, 0, 0, -1).empty());
    EXPECT_TRUE(query(grid, 0, 0, nan).empty());
    EXPECT_TRUE(query(grid, inf, 0, inf).empty());
}

// ---- the differential test -------------------------------------------------------------------------------

struct model_entry {
    float x;
    float y;
    generation_type generation;
};

std::vector<hit> scan(const std::map<id_type, model_entry>& model, float x, float y, float radius) {
    std::vector<hit> hits;
    if (!(radius >= 0.0f) || !std::isfinite(x) || !std::isfinite(y)) {
        return hits;
    }
    const float r2 = radius * radius;
    for (const auto& [id, e] : model) {
        const float d2 = distance_squared(x, y, e.x, e.y);
        if (d2 <= r2) {
            hits.emplace_back(id, d2);
        }
    }
    std::sort(hits.begin(), hits.end());
    return hits;
}

class coordinate_source {
public:
    coordinate_source(std::mt19937& rng, float low, float high, float cell)
        : rng_{rng}
        , low_{low}
        , high_{high}
        , cell_{cell} {}

    float operator()() {
        const float extent = high_ - low_;
        switch (pick(12)) {
        case 0: // exactly on a cell border (or the bounds)
            return low_ + static_cast<float>(pick(static_cast<int>(extent / cell_) + 2)) * cell_;
        case 1: // a hair off a cell border
            return std::nextafter(low_ +
                                      static_cast<float>(pick(static_cast<int>(extent / cell_) + 2)) * cell_,
                                  pick(2) == 0 ? -inf : inf);
        case 2: // outside the bounds
            return pick(2) == 0 ? low_ - uniform(0, 2 * extent) : high_ + uniform(0, 2 * extent);
        case 3:
            return pick(2) == 0 ? low_ : high_;
        default:
            return uniform(low_, high_);
        }
    }

    float uniform(float a, float b) { return std::uniform_real_distribution<float>{a, b}(rng_); }
    int pick(int n) { return std::uniform_int_distribution<int>{0, n - 1}(rng_); }

private:
    std::mt19937& rng_;
    float low_;
    float high_;
    float cell_;
};

void check_same(const spatial_grid& grid, const std::map<id_type, model_entry>& model, float x, float y,
                float r) {
    const auto got = query(grid, x, y, r);
    const auto want = scan(model, x, y, r);
    ASSERT_EQ(got, want) << "query at (" << x << ", " << y << ") radius " << r;
}

TEST(SpatialGrid, MatchesAScanOfEveryIdUnderRandomOperations) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    struct configuration {
        grid_bounds bounds;
        float cell;
    };
    const configuration configurations[] = {
        {{0, 0, 1000, 1000}, 64}, {{-300, 50, 200, 250}, 7.3f}, {{-1, -1, 1, 1}, 0.25f},
        {{0, 0, 2048, 512}, 160}, {{10, 10, 20, 20}, 100},      {{-4096, -4096, 4096, 4096}, 33.3f},
    };
    std::size_t queries = 0;
    for (std::size_t round = 0; round < std::size(configurations); ++round) {
        const auto& config = configurations[round];
        std::mt19937 rng{static_cast<std::uint32_t>(1234 + round)};
        spatial_grid grid(config.bounds, config.cell);
        std::map<id_type, model_entry> model;
        coordinate_source xs(rng, config.bounds.min_x, config.bounds.max_x, config.cell);
        coordinate_source ys(rng, config.bounds.min_y, config.bounds.max_y, config.cell);
        const float extent =
            std::max(config.bounds.max_x - config.bounds.min_x, config.bounds.max_y - config.bounds.min_y);
        const auto random_id = [&] {
            // Mostly a small pool (so ids come back), sometimes the largest ids.
            return xs.pick(20) == 0 ? spatial_grid::max_id - static_cast<id_type>(xs.pick(4))
                                    : static_cast<id_type>(xs.pick(1500));
        };
        for (int step = 0; step < 40000 && std::chrono::steady_clock::now() < deadline; ++step) {
            const int op = xs.pick(100);
            if (op < 30) {
                const id_type id = random_id();
                float x = xs();
                float y = ys();
                if (xs.pick(200) == 0) {
                    x = nan;
                }
                const bool added = grid.insert(id, x, y);
                ASSERT_EQ(added, model.count(id) == 0);
                if (added) {
                    model[id] = {x, y, grid.generation_of(id)};
                }
            } else if (op < 75 && !model.empty()) {
                auto it = model.begin();
                std::advance(it, xs.pick(static_cast<int>(model.size())));
                float x = it->second.x;
                float y = it->second.y;
                if (xs.pick(3) == 0 || !std::isfinite(x) || !std::isfinite(y)) {
                    x = xs();
                    y = ys();
                } else { // a small step, as most entities take
                    x += xs.uniform(-1, 1) * config.cell * 0.1f;
                    y += ys.uniform(-1, 1) * config.cell * 0.1f;
                }
                grid.move(it->first, x, y);
                it->second.x = x;
                it->second.y = y;
            } else if (op < 90) {
                const id_type id = random_id();
                ASSERT_EQ(grid.erase(id), model.erase(id) == 1);
            } else {
                float radius = 0;
                switch (xs.pick(6)) {
                case 0:
                    radius = 0;
                    break;
                case 1:
                    radius = config.cell * static_cast<float>(xs.pick(4));
                    break;
                case 2:
                    radius = xs.uniform(0, extent * 2);
                    break;
                case 3:
                    radius = xs.pick(10) == 0 ? inf : extent * 10;
                    break;
                default:
                    radius = xs.uniform(0, config.cell * 3);
                    break;
                }
                float x = xs();
                float y = ys();
                if (!model.empty() && xs.pick(4) == 0) { // centered on an id: distance 0 and exact borders
                    auto it = model.begin();
                    std::advance(it, xs.pick(static_cast<int>(model.size())));
                    if (std::isfinite(it->second.x) && std::isfinite(it->second.y)) {
                        x = it->second.x;
                        y = it->second.y;
                        if (xs.pick(2) == 0 && !model.empty()) { // radius exactly reaching another id
                            auto other = model.begin();
                            std::advance(other, xs.pick(static_cast<int>(model.size())));
                            radius = std::sqrt(distance_squared(x, y, other->second.x, other->second.y));
                        }
                    }
                }
                check_same(grid, model, x, y, radius);
                ++queries;
            }
            ASSERT_EQ(grid.size(), model.size());
        }
        // Every id's position and generation, at the end of the round.
        for (const auto& [id, e] : model) {
            ASSERT_TRUE(grid.contains(id));
            const auto p = grid.position_of(id);
            EXPECT_TRUE((p.x == e.x || (std::isnan(p.x) && std::isnan(e.x))) && p.y == e.y);
            EXPECT_EQ(grid.generation_of(id), e.generation);
        }
        EXPECT_LE(grid.entry_capacity(), 4 * (grid.size() + grid.cell_count()));
    }
    EXPECT_GT(queries, 1000u) << "the deadline cut the test too short to mean much";
}

TEST(SpatialGrid, MemoryFollowsTheIdsAfterACrowdDisperses) {
    spatial_grid grid({0, 0, 1000, 1000}, 10);
    for (id_type id = 0; id < 20000; ++id) { // everyone in one cell
        grid.insert(id, 5, 5);
    }
    EXPECT_GE(grid.cell_entries(grid.cell_of(5, 5)).capacity(), 20000u);
    std::mt19937 rng{7};
    std::uniform_real_distribution<float> coordinate{0, 1000};
    for (id_type id = 0; id < 20000; ++id) { // then spread out
        grid.move(id, coordinate(rng), coordinate(rng));
    }
    EXPECT_LE(grid.cell_entries(grid.cell_of(5, 5)).capacity(), 16u);
    EXPECT_LE(grid.entry_capacity(), 4 * (grid.size() + grid.cell_count()));
    for (id_type id = 0; id < 20000; id += 2) {
        grid.erase(id);
    }
    EXPECT_LE(grid.entry_capacity(), 4 * (grid.size() + grid.cell_count()));
}

TEST(SpatialGrid, HundredThousandIdsAgreeWithAScan) {
    spatial_grid grid({0, 0, 2048, 2048}, 64);
    std::map<id_type, model_entry> model;
    std::mt19937 rng{99};
    std::uniform_real_distribution<float> coordinate{0, 2048};
    for (id_type id = 0; id < 100000; ++id) {
        const float x = coordinate(rng);
        const float y = coordinate(rng);
        grid.insert(id * 7 % 1000003, x, y); // scattered ids
        model[id * 7 % 1000003] = {x, y, 0};
    }
    for (int q = 0; q < 40; ++q) {
        check_same(grid, model, coordinate(rng), coordinate(rng), 160);
    }
    const auto hits = query(grid, 1024, 1024, 160);
    EXPECT_GT(hits.size(), 1500u); // ~100,000 * pi 160^2 / 2048^2 = 1,917
}

} // namespace

} // namespace interest_grid_test
