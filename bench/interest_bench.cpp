// Interest management (issue 15): the spatial grid, client relevancy and the priority selector, each against
// its floor in the same binary and run (the machine is shared: ratios, not absolute times, are the figures).
//
// Every benchmark runs its subject and its floor in each iteration (alternating which goes first), times
// both, and reports:
//   ratio            subject time / floor time
//   ns_per_tick      subject time per tick (a tick: every id moved once, or every client updated once)
//   floor_ns_per_tick
//   ns_per_op        subject time per move / per client / per selection
// plus what the work was (results per query, members per client).
//
// The scene (issue 15's target): a 2048 x 2048 m arena, 10,000 NPCs spread uniformly and 1,000 players;
// each tick 20% of the ids move about 1 m. Relevancy radius 160 m (about 200 relevant ids per client),
// leave radius 176 m.
//
// BM_GridMove/<ids>/<cell>: move() on every id of a tick's positions, against writing the same positions
//   into a plain array by id.
// BM_GridMoveChanged/<ids>/<cell>: move() on the 20% that moved only (what a caller with change tracking
//   does), against the same writes into the array.
// BM_QueryCircle/<ids>/<radius>/<cell>: one query per player, collecting ids, against scanning every id.
// BM_RelevancyUpdate/<cell>/<period>: client_relevancy::update for the players due at a tick (all of them
//   with period 1, a quarter with period 4: the staggered schedule), against the brute-force scan of every
//   id for the same clients.
// BM_Select/<candidates>: priority_selector::select of 200 candidates (40-400 bits) under 9,600 bits,
//   against sorting all of them and walking; BM_AccumulateAndSelect the same with accumulation (weights
//   1-10) and reset, on both sides.
//
// `interest_bench --probe=<kernel> <ticks>` runs one kernel for valgrind --tool=callgrind instruction counts
// (run it with two tick counts and divide the difference): move_still (11,000 moves that stay in their
// cell), move_tick (a tick of the scene: 20% moving), relevancy (a tick of the scene and 1,000 client
// updates), select and accumulate (1,000 of them).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>

#include <ecsnet/server/interest/client_relevancy.hpp>
#include <ecsnet/server/interest/priority_selector.hpp>
#include <ecsnet/server/interest/spatial_grid.hpp>
#include <ecsnet/server/interest/staggered_schedule.hpp>

namespace {

using namespace ecsnet::server::interest;

constexpr float arena = 2048.0f;
constexpr std::size_t players = 1000;
constexpr float enter_radius = 160.0f;
constexpr float leave_radius = 176.0f;

// ---- the scene -------------------------------------------------------------------------------------------

/// `ticks` successive position arrays of `ids` ids (players are ids 0..999): each tick 20% of the ids, a
/// fresh random fifth, step 1 m in a random direction, staying inside the arena.
struct trajectory {
    std::vector<std::vector<grid_position>> ticks;
    std::vector<std::vector<id_type>> moved; // per tick, the ids that moved into it

    trajectory(std::size_t ids, std::size_t count, std::uint64_t seed) {
        std::mt19937_64 rng{seed};
        std::uniform_real_distribution<float> coordinate{0, arena};
        std::uniform_real_distribution<float> angle{0, 6.2831853f};
        std::bernoulli_distribution moves{0.2};
        ticks.resize(count);
        moved.resize(count);
        ticks[0].resize(ids);
        for (auto& p : ticks[0]) {
            p = {coordinate(rng), coordinate(rng)};
        }
        for (std::size_t t = 1; t < count; ++t) {
            ticks[t] = ticks[t - 1];
            for (id_type id = 0; id < ids; ++id) {
                if (moves(rng)) {
                    const float a = angle(rng);
                    auto& p = ticks[t][id];
                    p.x = std::clamp(p.x + std::cos(a), 0.0f, arena);
                    p.y = std::clamp(p.y + std::sin(a), 0.0f, arena);
                    moved[t].push_back(id);
                }
            }
        }
    }
};

const trajectory& scene(std::size_t ids) {
    static std::map<std::size_t, std::unique_ptr<trajectory>> cache;
    auto& slot = cache[ids];
    if (!slot) {
        slot = std::make_unique<trajectory>(ids, 33, ids);
    }
    return *slot;
}

spatial_grid make_grid(const std::vector<grid_position>& positions, float cell) {
    spatial_grid grid({0, 0, arena, arena}, cell);
    for (id_type id = 0; id < positions.size(); ++id) {
        grid.insert(id, positions[id].x, positions[id].y);
    }
    return grid;
}

// ---- kernels (noinline: callgrind attributes instructions to them) ----------------------------------------

[[gnu::noinline]] void move_all(spatial_grid& grid, const std::vector<grid_position>& positions) {
    const auto count = static_cast<id_type>(positions.size());
    for (id_type id = 0; id < count; ++id) {
        grid.move(id, positions[id].x, positions[id].y);
    }
}
[[gnu::noinline]] void write_all(std::vector<grid_position>& array,
                                 const std::vector<grid_position>& positions) {
    for (id_type id = 0; id < positions.size(); ++id) {
        array[id] = positions[id];
    }
    benchmark::ClobberMemory();
}
[[gnu::noinline]] void move_some(spatial_grid& grid, const std::vector<grid_position>& positions,
                                 const std::vector<id_type>& ids) {
    for (const id_type id : ids) {
        grid.move(id, positions[id].x, positions[id].y);
    }
}
[[gnu::noinline]] void write_some(std::vector<grid_position>& array,
                                  const std::vector<grid_position>& positions,
                                  const std::vector<id_type>& ids) {
    for (const id_type id : ids) {
        array[id] = positions[id];
    }
    benchmark::ClobberMemory();
}

[[gnu::noinline]] std::size_t query_players(const spatial_grid& grid,
                                            const std::vector<grid_position>& positions, float radius,
                                            std::vector<id_type>& found) {
    std::size_t total = 0;
    for (id_type player = 0; player < players; ++player) {
        found.clear();
        grid.query_circle(positions[player].x, positions[player].y, radius,
                          [&found](id_type id, float) { found.push_back(id); });
        total += found.size();
    }
    return total;
}
// The floor: every id against every client, with the same distance formula (the compiler vectorizes the
// distance; the push is the same as the grid's).
[[gnu::noinline]] std::size_t scan_players(const std::vector<grid_position>& positions,
                                           std::span<const id_type> clients, float radius,
                                           std::vector<id_type>& found) {
    const float r2 = radius * radius;
    std::size_t total = 0;
    const auto count = static_cast<id_type>(positions.size());
    for (const id_type player : clients) {
        found.clear();
        const float cx = positions[player].x;
        const float cy = positions[player].y;
        for (id_type id = 0; id < count; ++id) {
            if (distance_squared(cx, cy, positions[id].x, positions[id].y) <= r2) {
                found.push_back(id);
            }
        }
        total += found.size();
    }
    return total;
}

[[gnu::noinline]] std::size_t update_clients(const spatial_grid& grid,
                                             const std::vector<grid_position>& positions,
                                             std::vector<client_relevancy>& clients,
                                             std::span<const id_type> due, relevancy_changes& changes) {
    std::size_t changed = 0;
    for (const id_type player : due) {
        changes.clear();
        const id_type avatar[] = {player};
        clients[player].update(grid, positions[player].x, positions[player].y, enter_radius, leave_radius,
                               avatar, changes);
        changed += changes.left.size() + changes.entered.size();
    }
    return changed;
}

// ---- the harness ------------------------------------------------------------------------------------------

template<typename Func>
double seconds(Func&& func) {
    const auto start = std::chrono::steady_clock::now();
    func();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Runs prepare() untimed, then subject() and floor() (alternating which goes first), each returning its
/// seconds; `ops` operations per iteration.
template<typename Prepare, typename Subject, typename Floor>
void compare(benchmark::State& state, double ops, Prepare prepare, Subject subject, Floor floor) {
    double subject_total = 0;
    double floor_total = 0;
    bool subject_first = true;
    for (auto _ : state) {
        prepare();
        double subject_time = 0;
        if (subject_first) {
            subject_time = subject();
            floor_total += floor();
        } else {
            floor_total += floor();
            subject_time = subject();
        }
        subject_first = !subject_first;
        subject_total += subject_time;
        state.SetIterationTime(subject_time);
    }
    const auto iterations = static_cast<double>(state.iterations());
    state.counters["ratio"] = subject_total / floor_total;
    state.counters["ns_per_tick"] = subject_total * 1e9 / iterations;
    state.counters["floor_ns_per_tick"] = floor_total * 1e9 / iterations;
    state.counters["ns_per_op"] = subject_total * 1e9 / (iterations * ops);
}

// ---- grid moves -------------------------------------------------------------------------------------------

void BM_GridMove(benchmark::State& state) {
    const auto ids = static_cast<std::size_t>(state.range(0));
    const auto cell = static_cast<float>(state.range(1));
    const auto& sc = scene(ids);
    spatial_grid grid = make_grid(sc.ticks[0], cell);
    std::vector<grid_position> array = sc.ticks[0];
    std::size_t tick = 0;
    std::size_t step = 1;
    compare(
        state, static_cast<double>(ids),
        [&] { // back and forth along the trajectory, so every tick is a 1 m step for 20% of the ids
            if (tick + step >= sc.ticks.size() || (step > 1 && tick == 0)) {
                step = 0 - step;
            }
            tick += step;
        },
        [&] { return seconds([&] { move_all(grid, sc.ticks[tick]); }); },
        [&] { return seconds([&] { write_all(array, sc.ticks[tick]); }); });
}

void BM_GridMoveChanged(benchmark::State& state) {
    const auto ids = static_cast<std::size_t>(state.range(0));
    const auto cell = static_cast<float>(state.range(1));
    const auto& sc = scene(ids);
    spatial_grid grid = make_grid(sc.ticks[0], cell);
    std::vector<grid_position> array = sc.ticks[0];
    std::size_t tick = 0;
    std::size_t moved = 0;
    compare(
        state, static_cast<double>(ids) * 0.2,
        [&] {
            if (++tick == sc.ticks.size()) { // restart from the first positions
                tick = 1;
                move_all(grid, sc.ticks[0]);
            }
            moved = tick;
        },
        [&] { return seconds([&] { move_some(grid, sc.ticks[tick], sc.moved[moved]); }); },
        [&] { return seconds([&] { write_some(array, sc.ticks[tick], sc.moved[moved]); }); });
}

// ---- queries and relevancy
// ----------------------------------------------------------------------------------

void BM_QueryCircle(benchmark::State& state) {
    const auto ids = static_cast<std::size_t>(state.range(0));
    const auto radius = static_cast<float>(state.range(1));
    const auto cell = static_cast<float>(state.range(2));
    const auto& sc = scene(ids);
    const spatial_grid grid = make_grid(sc.ticks[0], cell);
    std::vector<id_type> all_players(players);
    std::iota(all_players.begin(), all_players.end(), 0u);
    std::vector<id_type> found;
    std::size_t results = 0;
    compare(
        state, static_cast<double>(players), [] {},
        [&] { return seconds([&] { results = query_players(grid, sc.ticks[0], radius, found); }); },
        [&] {
            return seconds(
                [&] { benchmark::DoNotOptimize(scan_players(sc.ticks[0], all_players, radius, found)); });
        });
    state.counters["results_per_query"] = static_cast<double>(results) / players;
}

void BM_RelevancyUpdate(benchmark::State& state) {
    constexpr std::size_t ids = 11000; // 1,000 players and 10,000 NPCs
    const auto cell = static_cast<float>(state.range(0));
    const staggered_schedule schedule(static_cast<std::uint32_t>(state.range(1)));
    const auto& sc = scene(ids);
    spatial_grid grid = make_grid(sc.ticks[0], cell);
    std::vector<client_relevancy> clients(players, client_relevancy(64));
    relevancy_changes changes;
    std::vector<id_type> all_players(players);
    std::iota(all_players.begin(), all_players.end(), 0u);
    update_clients(grid, sc.ticks[0], clients, all_players, changes); // join: everyone's first set...
    for (int warm = 0; warm < 8; ++warm) {                            // ...filled past the entering cap
        update_clients(grid, sc.ticks[0], clients, all_players, changes);
    }
    std::vector<id_type> found;
    std::vector<id_type> due;
    std::size_t tick = 0;
    std::size_t step = 1;
    std::uint64_t clock = 0;
    std::size_t changed = 0;
    std::size_t updates = 0;
    compare(
        state, static_cast<double>(players) / schedule.period(),
        [&] { // the world moves one tick (untimed), then the clients due at this tick update
            if (tick + step >= sc.ticks.size() || (step > 1 && tick == 0)) {
                step = 0 - step;
            }
            tick += step;
            move_all(grid, sc.ticks[tick]);
            due.clear();
            schedule.for_each_due(++clock, players,
                                  [&](std::size_t c) { due.push_back(static_cast<id_type>(c)); });
        },
        [&] {
            return seconds([&] {
                changed += update_clients(grid, sc.ticks[tick], clients, due, changes);
                updates += due.size();
            });
        },
        [&] {
            return seconds(
                [&] { benchmark::DoNotOptimize(scan_players(sc.ticks[tick], due, enter_radius, found)); });
        });
    std::size_t members = 0;
    for (const auto& c : clients) {
        members += c.size();
    }
    state.counters["members_per_client"] = static_cast<double>(members) / players;
    state.counters["changes_per_update"] =
        static_cast<double>(changed) / static_cast<double>(std::max<std::size_t>(1, updates));
}

// ---- selection
// ---------------------------------------------------------------------------------------------

struct selection_input {
    std::vector<priority_candidate> candidates;
    std::vector<pending_send> pending;
};

selection_input make_selection(std::size_t count, std::uint64_t seed) {
    std::mt19937_64 rng{seed};
    std::uniform_int_distribution<std::uint32_t> size{40, 400};
    std::uniform_real_distribution<float> priority{0, 100};
    std::uniform_real_distribution<float> weight{1, 10};
    selection_input in;
    for (std::uint32_t slot = 0; slot < count; ++slot) {
        in.candidates.push_back({slot, size(rng), priority(rng)});
        in.pending.push_back({slot, size(rng), weight(rng)});
    }
    return in;
}

constexpr std::uint64_t budget_bits = 9600; // 1,200 bytes

[[gnu::noinline]] std::size_t sort_and_walk(std::vector<priority_candidate>& buffer,
                                            std::span<const priority_candidate> candidates,
                                            std::vector<priority_candidate>& out) {
    buffer.assign(candidates.begin(), candidates.end());
    std::sort(buffer.begin(), buffer.end(), [](const auto& a, const auto& b) {
        return a.priority > b.priority || (a.priority == b.priority && a.slot < b.slot);
    });
    out.clear();
    std::uint64_t used = 0;
    for (const auto& c : buffer) {
        if (out.empty() || used + c.size_bits <= budget_bits) {
            out.push_back(c);
            used += c.size_bits;
        }
    }
    return out.size();
}

void BM_Select(benchmark::State& state) {
    const auto count = static_cast<std::size_t>(state.range(0));
    constexpr int reps = 1000;
    std::vector<selection_input> inputs;
    for (std::uint64_t k = 0; k < 16; ++k) {
        inputs.push_back(make_selection(count, k));
    }
    priority_selector selector;
    std::vector<priority_candidate> buffer;
    std::vector<priority_candidate> out;
    std::size_t chosen = 0;
    compare(
        state, reps, [] {},
        [&] {
            return seconds([&] {
                for (int r = 0; r < reps; ++r) {
                    selector.select(inputs[static_cast<std::size_t>(r) % inputs.size()].candidates,
                                    budget_bits, out);
                    chosen += out.size();
                }
            });
        },
        [&] {
            return seconds([&] {
                for (int r = 0; r < reps; ++r) {
                    benchmark::DoNotOptimize(sort_and_walk(
                        buffer, inputs[static_cast<std::size_t>(r) % inputs.size()].candidates, out));
                }
            });
        });
    state.counters["chosen"] = static_cast<double>(chosen) / (static_cast<double>(state.iterations()) * reps);
}

// The floor of accumulate_and_select: the same accumulation and reset around a full sort.
[[gnu::noinline]] std::size_t accumulate_sort_and_walk(std::vector<float>& accumulators,
                                                       std::span<const pending_send> pending,
                                                       std::vector<priority_candidate>& candidates,
                                                       std::vector<priority_candidate>& buffer,
                                                       std::vector<priority_candidate>& out) {
    candidates.clear();
    for (const auto& p : pending) {
        float& a = accumulators[p.slot];
        a += std::clamp(p.weight, 1.0f, 10.0f);
        candidates.push_back({p.slot, p.size_bits, a});
    }
    sort_and_walk(buffer, candidates, out);
    for (const auto& c : out) {
        accumulators[c.slot] = 0.0f;
    }
    return out.size();
}

void BM_AccumulateAndSelect(benchmark::State& state) {
    const auto count = static_cast<std::size_t>(state.range(0));
    constexpr int reps = 1000;
    const selection_input in = make_selection(count, 1);
    priority_selector selector({1, 10});
    std::vector<float> accumulators(count, 0.0f);
    std::vector<float> floor_accumulators(count, 0.0f);
    std::vector<priority_candidate> candidates;
    std::vector<priority_candidate> buffer;
    std::vector<priority_candidate> out;
    compare(
        state, reps, [] {},
        [&] {
            return seconds([&] {
                for (int r = 0; r < reps; ++r) {
                    selector.accumulate_and_select(accumulators, in.pending, budget_bits, out);
                }
            });
        },
        [&] {
            return seconds([&] {
                for (int r = 0; r < reps; ++r) {
                    benchmark::DoNotOptimize(
                        accumulate_sort_and_walk(floor_accumulators, in.pending, candidates, buffer, out));
                }
            });
        });
}

BENCHMARK(BM_GridMove)->Args({10000, 64})->Args({10000, 32})->Args({100000, 32})->UseManualTime();
BENCHMARK(BM_GridMoveChanged)->Args({10000, 64})->Args({100000, 32})->UseManualTime();
BENCHMARK(BM_QueryCircle)
    ->Args({11000, 176, 64})
    ->Args({11000, 160, 32})
    ->Args({11000, 160, 64})
    ->Args({11000, 160, 128})
    ->Args({100000, 52, 16})
    ->Args({100000, 52, 32})
    ->UseManualTime();
BENCHMARK(BM_RelevancyUpdate)->Args({64, 1})->Args({64, 4})->Args({32, 1})->Args({128, 1})->UseManualTime();
BENCHMARK(BM_Select)->Arg(200)->Arg(2000)->UseManualTime();
BENCHMARK(BM_AccumulateAndSelect)->Arg(200)->UseManualTime();

// ---- callgrind probes
// ----------------------------------------------------------------------------------------

int probe(const std::string& kernel, int ticks) {
    const auto& sc = scene(11000);
    spatial_grid grid = make_grid(sc.ticks[0], 64);
    if (kernel == "move_still") {
        for (int t = 0; t < ticks; ++t) {
            move_all(grid, sc.ticks[0]); // where they are: every move stays in its cell
        }
    } else if (kernel == "move_tick") {
        for (int t = 0; t < ticks; ++t) {
            move_all(grid, sc.ticks[1 + static_cast<std::size_t>(t) % (sc.ticks.size() - 1)]);
        }
    } else if (kernel == "relevancy") {
        std::vector<client_relevancy> clients(players, client_relevancy(64));
        std::vector<id_type> all(players);
        std::iota(all.begin(), all.end(), 0u);
        relevancy_changes changes;
        for (int t = 0; t < 10; ++t) { // fill the sets (cost independent of `ticks`)
            update_clients(grid, sc.ticks[0], clients, all, changes);
        }
        for (int t = 0; t < ticks; ++t) {
            const auto& positions = sc.ticks[1 + static_cast<std::size_t>(t) % (sc.ticks.size() - 1)];
            move_all(grid, positions);
            update_clients(grid, positions, clients, all, changes);
        }
    } else if (kernel == "accumulate") {
        const selection_input in = make_selection(200, 3);
        priority_selector selector({1, 10});
        std::vector<float> accumulators(200, 0.0f);
        std::vector<priority_candidate> out;
        for (int t = 0; t < ticks * 1000; ++t) {
            selector.accumulate_and_select(accumulators, in.pending, budget_bits, out);
        }
    } else if (kernel == "select") {
        const selection_input in = make_selection(200, 3);
        priority_selector selector;
        std::vector<priority_candidate> out;
        for (int t = 0; t < ticks * 1000; ++t) {
            selector.select(in.candidates, budget_bits, out);
        }
    } else {
        std::fprintf(stderr, "unknown probe %s (move_still, move_tick, relevancy, select, accumulate)\n",
                     kernel.c_str());
        return 2;
    }
    std::printf("%zu\n", grid.size());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--probe=", 8) == 0) {
            return probe(argv[i] + 8, i + 1 < argc ? std::atoi(argv[i + 1]) : 1);
        }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
