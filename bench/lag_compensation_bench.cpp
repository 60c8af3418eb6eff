// Lag compensation (issue 17): what recording the hit-testable entities costs per tick, against a plain
// copy of the same positions and radii, what a shot's query costs, and the history's memory per entity;
// and the tick's part after the capture as game_server runs it, the record beside the interest replicator's
// own updates (on its second worker) against after them.
//
//   build/bench/lag_compensation_bench [--benchmark_filter=...]
//   build/bench/lag_compensation_bench --benchmark_filter=AfterCapture --benchmark_repetitions=10
//       --benchmark_enable_random_interleaving=true   (one command line)
//
// The world: N entities of the arena (Transform, hit_target radius 0.5 m) at random positions; the history
// of the server's default window (500 ms at 30 Hz: 17 ticks).

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/hit_target.hpp"
#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/lag_compensation.hpp"
#include "ecsnet/server/server_metrics.hpp"

namespace {

using namespace ecsnet;

struct bench_world {
    registry reg;
    server::lag_compensation compensation{
        arena::replicated_schema(),
        server::spatial_layout{"Transform", "x", "y", -1024.0F, -1024.0F, 1024.0F, 1024.0F},
        server::lag_compensation_options{}};
    std::uint64_t tick{};
    std::unique_ptr<proto::snapshot_history> captured;

    explicit bench_world(std::size_t entities) {
        arena::scene_random random{7};
        for (std::size_t i = 0; i < entities; ++i) {
            const auto e = reg.create();
            reg.emplace<arena::Transform>(e, static_cast<float>(random.uniform(-1000, 1000)),
                                          static_cast<float>(random.uniform(-1000, 1000)), 0.0F, 0.0F);
            reg.emplace<server::hit_target>(e, 0.5F);
        }
    }
    void record() {
        ++tick;
        compensation.record(reg, tick, static_cast<std::int64_t>(tick) * 33'333);
    }
    /// The server's way: the tick's captured state at hand (captured outside the timed part).
    void capture() {
        if (!captured) {
            captured = std::make_unique<proto::snapshot_history>(arena::replicated_schema(), reg,
                                                                 proto::history_options{32, 30});
        }
        ++tick;
        captured->capture(static_cast<proto::tick_type>(tick), tick * 33'333);
    }
    void record_captured() {
        compensation.record(reg, tick, static_cast<std::int64_t>(tick) * 33'333, &captured->newest());
    }
};

// The history's record of one tick: every hit_target's quantized position and radius.
void BM_Record(benchmark::State& state) {
    bench_world w{static_cast<std::size_t>(state.range(0))};
    for (std::size_t i = 0; i < 40; ++i) { // warm: every frame of the ring allocated
        w.record();
    }
    for (auto _ : state) {
        w.record();
        benchmark::ClobberMemory();
    }
    const auto& history = w.compensation.history();
    state.counters["entities"] = static_cast<double>(history.newest_size());
    state.counters["frames"] = static_cast<double>(history.capacity());
    state.counters["history_bytes"] = static_cast<double>(history.memory_bytes());
    state.counters["bytes_per_entity"] =
        static_cast<double>(history.memory_bytes()) / static_cast<double>(history.newest_size());
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Record)->Arg(100)->Arg(10'000);

// The same, from the tick's captured columns (what the server does).
void BM_RecordFromCapture(benchmark::State& state) {
    bench_world w{static_cast<std::size_t>(state.range(0))};
    for (std::size_t i = 0; i < 40; ++i) {
        w.capture();
        w.record_captured();
    }
    for (auto _ : state) {
        state.PauseTiming();
        w.capture();
        state.ResumeTiming();
        w.record_captured();
        benchmark::ClobberMemory();
    }
    state.counters["entities"] = static_cast<double>(w.compensation.history().newest_size());
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RecordFromCapture)->Arg(100)->Arg(10'000);

// The floor: the same records copied from the registry with typed access (no quantization, no link to the
// previous frame) into a reused vector.
void BM_PlainCopy(benchmark::State& state) {
    bench_world w{static_cast<std::size_t>(state.range(0))};
    std::vector<server::hit_record> out;
    const auto& targets = w.reg.storage<server::hit_target>();
    for (auto _ : state) {
        out.clear();
        for (std::size_t at = 0; at < targets.size(); ++at) {
            const auto e = targets[at];
            const auto& t = w.reg.get<arena::Transform>(e);
            out.push_back(server::hit_record{e, 0, t.x, t.y, targets.get(e).radius});
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PlainCopy)->Arg(100)->Arg(10'000);

// One shot: a ray across the arena at a render time between two recorded ticks, 200 ms back.
void BM_Raycast(benchmark::State& state) {
    bench_world w{static_cast<std::size_t>(state.range(0))};
    for (std::size_t i = 0; i < 40; ++i) {
        w.record();
    }
    const auto time = static_cast<std::int64_t>(w.tick) * 33'333 - 200'000 + 12'345;
    arena::scene_random random{3};
    for (auto _ : state) {
        const server::hit_ray ray{
            static_cast<float>(random.uniform(-1000, 1000)), static_cast<float>(random.uniform(-1000, 1000)),
            static_cast<float>(random.uniform(-1, 1)), static_cast<float>(random.uniform(-1, 1)), 3000.0F};
        benchmark::DoNotOptimize(w.compensation.history().raycast(time, ray));
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Raycast)->Arg(100)->Arg(10'000);

// The tick after its capture, wall time: the interest replicator's tick (rows, grid, marks; 100 clients'
// relevant sets, a staggered eighth of them a tick) and lag compensation's record of the arena's 10,000
// NPCs, the record after the replicator (/0) or beside its updates, on its second worker (/1, as
// game_server::tick does). The arena's systems and the capture run untimed.
void BM_AfterCapture(benchmark::State& state) {
    const bool alongside = state.range(0) != 0;
    server::arena_world world{server::arena_options{10'000, 42, 30, 1}};
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    server::server_metrics metrics;
    server::interest_replicator replicator{world, history, *world.spatial(),
                                           server::interest_options{160.0F, 128, 30, 8, 128, 52, 2}, metrics};
    server::lag_compensation compensation{world.replicated_schema(), *world.spatial(),
                                          server::lag_compensation_options{}};
    std::vector<std::unique_ptr<server::client_replication>> clients;
    for (server::client_id id = 1; id <= 100; ++id) {
        std::optional<server::refusal> refused;
        clients.push_back(replicator.join(id, world.client_joined(id, "bot"), v1::ClientHello{}, refused));
    }
    proto::tick_type tick = 0;
    const auto next_tick = [&] {
        world.update(1.0 / 30.0);
        ++tick;
        history.capture(tick, std::uint64_t{tick} * 33'333);
    };
    const auto record = [&] {
        compensation.record(world.registry(), tick, static_cast<std::int64_t>(tick) * 33'333,
                            &history.newest());
    };
    for (int warm = 0; warm < 40; ++warm) {
        next_tick();
        replicator.tick(tick, std::uint64_t{tick} * 33'333);
        record();
    }
    const std::function<void()> beside = record;
    for (auto _ : state) {
        state.PauseTiming();
        next_tick();
        state.ResumeTiming();
        if (alongside) {
            replicator.tick(tick, std::uint64_t{tick} * 33'333, beside);
        } else {
            replicator.tick(tick, std::uint64_t{tick} * 33'333);
            record();
        }
    }
    state.counters["targets"] = static_cast<double>(compensation.history().newest_size());
}
BENCHMARK(BM_AfterCapture)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
