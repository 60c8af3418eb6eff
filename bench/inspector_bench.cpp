// What the live inspector costs the tick (issue 18): the frame copy the tick thread takes while someone
// looks (inspector::feed::copy_newest from the history's newest tick, into a reused frame), against the
// tick's own work in the same run (the arena's systems and the history's capture), on the arena of N NPCs.
// `ratio` = copy / tick: the extra a tick carries at most 4 times a second. Off the tick, for the record:
// rendering one stream event (render_ms, on an admin thread, once per frame for every viewer) and its size.
// Thread CPU time.
//   build/bench/inspector_bench

#include <ctime>

#include <benchmark/benchmark.h>

#include "ecsnet/proto/history.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/inspector/api.hpp"
#include "ecsnet/server/inspector/inspector_feed.hpp"

#include "thread_cpu_clock.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

using ecsnet::bench::thread_cpu_seconds;

void BM_InspectorFrameCopyAgainstTick(benchmark::State& state) {
    const auto npcs = static_cast<std::size_t>(state.range(0));
    arena_world world{arena_options{npcs, 42, 30, 1}};
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    proto::tick_type tick = 0;
    const auto step = [&] {
        world.update(1.0 / 30.0);
        ++tick;
        history.capture(tick, std::uint64_t{tick} * 33'333);
    };
    for (int i = 0; i < 5; ++i) {
        step();
    }
    inspector::feed feed;
    double tick_total = 0;
    double copy_total = 0;
    double render_total = 0;
    std::size_t bytes = 0;
    for (auto _ : state) {
        const double a = thread_cpu_seconds();
        step();
        const double b = thread_cpu_seconds();
        auto frame = feed.take_spare();
        inspector::feed::copy_newest(history, *frame);
        feed.publish(std::move(frame), std::chrono::steady_clock::now());
        const double c = thread_cpu_seconds();
        const auto event = inspector::stream_event(*feed.latest(), history.layout(), 5000);
        const double d = thread_cpu_seconds();
        benchmark::DoNotOptimize(event.data());
        bytes = event.size();
        tick_total += b - a;
        copy_total += c - b;
        render_total += d - c;
        state.SetIterationTime(c - b);
    }
    const auto iterations = static_cast<double>(state.iterations());
    state.counters["copy_ms"] = copy_total * 1e3 / iterations;
    state.counters["tick_ms"] = tick_total * 1e3 / iterations;
    state.counters["ratio"] = copy_total / tick_total;
    state.counters["render_ms"] = render_total * 1e3 / iterations;
    state.counters["event_KB"] = static_cast<double>(bytes) / 1024.0;
}

BENCHMARK(BM_InspectorFrameCopyAgainstTick)->Arg(10'000)->Arg(100'000)->Iterations(30)->UseManualTime();

} // namespace

BENCHMARK_MAIN();
