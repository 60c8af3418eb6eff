// What a checkpoint costs the tick (issue 16): capture_checkpoint, the copy taken on the tick thread, against
// the tick's own work in the same run (the arena's systems and the history's capture), on the arena of N
// NPCs. `ratio` = copy / tick: the extra a tick carries once per --save-every period. Thread CPU time.
//   build/bench/checkpoint_bench

#include <ctime>

#include <benchmark/benchmark.h>

#include "ecsnet/proto/history.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/checkpoint.hpp"
#include "ecsnet/server/saveable_components.hpp"

#include "thread_cpu_clock.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

using ecsnet::bench::thread_cpu_seconds;

void BM_CheckpointCopyAgainstTick(benchmark::State& state) {
    const auto npcs = static_cast<std::size_t>(state.range(0));
    arena_world world{arena_options{npcs, 42, 30, 1}};
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    saveable_components saveable;
    world.declare_saveable(saveable);
    proto::tick_type tick = 0;
    const auto step = [&] {
        world.update(1.0 / 30.0);
        ++tick;
        history.capture(tick, std::uint64_t{tick} * 33'333);
    };
    for (int i = 0; i < 5; ++i) {
        step();
    }
    double tick_total = 0;
    double copy_total = 0;
    checkpoint_image spare; // as checkpoint_writer::take_spare hands back the previous image
    for (auto _ : state) {
        const double a = thread_cpu_seconds();
        step();
        const double b = thread_cpu_seconds();
        auto image = capture_checkpoint(world, saveable, history, tick, std::move(spare), true);
        const double c = thread_cpu_seconds();
        benchmark::DoNotOptimize(image);
        spare = std::move(image);
        tick_total += b - a;
        copy_total += c - b;
        state.SetIterationTime(c - b);
    }
    const auto iterations = static_cast<double>(state.iterations());
    state.counters["copy_ms"] = copy_total * 1e3 / iterations;
    state.counters["tick_ms"] = tick_total * 1e3 / iterations;
    state.counters["ratio"] = copy_total / tick_total;
}

BENCHMARK(BM_CheckpointCopyAgainstTick)->Arg(10'000)->Arg(100'000)->Iterations(20)->UseManualTime();

} // namespace

BENCHMARK_MAIN();
