// Client SDK benchmark on the standard scene (arena/include/ecsnet/arena/scene.hpp: 10,000 entities, 30 Hz,
// 20% moving): what interpolation costs a client on top of mirroring the world.
//
// Ten seconds of the scene (300 ticks) are captured and encoded once, as the server would send them to a
// client acking every tick (baseline: the previous tick, second baseline: the one before). Then:
//   BM_MirrorApply                  floor: mirror::apply_envelope of one snapshot (decode, check, rebuild,
//                                   update the registry), per snapshot
//   BM_MirrorApplyAndKeep           the same plus state_buffer::push (the copy interpolation keeps), per
//                                   snapshot: the cost of client_options::interpolation_states > 0
//   BM_ReadTransforms               floor: reading every mirrored Transform through the registry, per entity
//   BM_SampleTransforms             sample<Transform> of every mirrored entity between two snapshots, per
//                                   entity (window found once per pass, as a game does once per frame)
// Each is compared with its floor measured in the same binary and run (bench/RESULTS.md, "Client SDK").

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/arena/scene.hpp"
#include "ecsnet/client/interpolation.hpp"
#include "ecsnet/proto/encoder.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/mirror.hpp"

namespace {

using namespace ecsnet;
using arena::Transform;

constexpr std::uint32_t tick_rate = 30;
constexpr proto::tick_type ticks = 300;

// The encoded snapshots: [0] a full state of tick 1, then the deltas of ticks 2..ticks.
const std::vector<std::string>& snapshots() {
    static const std::vector<std::string> frames = [] {
        registry world;
        arena::scene scene{world, arena::scene_options{}};
        scene.populate();
        proto::snapshot_history history{arena::replicated_schema(), world,
                                        proto::history_options{32, tick_rate}};
        proto::snapshot_encoder encoder{history};
        std::vector<std::string> out;
        for (proto::tick_type tick = 1; tick <= ticks; ++tick) {
            scene.step();
            history.capture(tick, std::uint64_t{tick} * 1000000 / tick_rate);
            proto::baselines wanted;
            if (tick > 1) {
                wanted.baseline = tick - 1;
            }
            if (tick > 2) {
                wanted.second = tick - 2;
            }
            v1::Envelope envelope;
            static_cast<void>(encoder.encode(wanted, *envelope.mutable_snapshot()));
            out.push_back(proto::encode_envelope(envelope));
        }
        return out;
    }();
    return frames;
}

// A mirror fed the snapshots in order, starting over after the last one.
struct fed_mirror {
    proto::mirror mirror{arena::replicated_schema(), proto::mirror_options{32, tick_rate}};
    std::size_t next{0};

    void restart() {
        mirror.clear();
        next = 0;
        apply_next();
    }
    void apply_next() {
        const auto& frames = snapshots();
        if (!mirror.apply_envelope(frames[next])) {
            std::abort(); // the benchmark's own snapshots always apply
        }
        next = (next + 1) % frames.size();
    }
};

void run_apply(benchmark::State& state, bool keep) {
    fed_mirror fed;
    client::state_buffer kept{keep ? 10U : 0U};
    fed.restart();
    for (auto _ : state) {
        if (fed.next == 0) {
            state.PauseTiming();
            fed.restart();
            state.ResumeTiming();
        }
        fed.apply_next();
        if (keep) {
            kept.push(*fed.mirror.newest_state());
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["interpolation_bytes"] = static_cast<double>(kept.memory_bytes());
}

void BM_MirrorApply(benchmark::State& state) {
    run_apply(state, false);
}
void BM_MirrorApplyAndKeep(benchmark::State& state) {
    run_apply(state, true);
}

// A mirror halfway through the ten seconds, with the interpolation buffer filled.
struct sampled_world {
    fed_mirror fed;
    client::state_buffer kept{10};
    std::vector<entity> locals;

    sampled_world() {
        fed.restart();
        kept.push(*fed.mirror.newest_state());
        for (proto::tick_type n = 1; n < ticks / 2; ++n) {
            fed.apply_next();
            kept.push(*fed.mirror.newest_state());
        }
        fed.mirror.registry().view<const proto::net_id>().each(
            [this](entity e, const proto::net_id&) { locals.push_back(e); });
    }
};

sampled_world& world() {
    static sampled_world instance;
    return instance;
}

void BM_ReadTransforms(benchmark::State& state) {
    auto& w = world();
    const auto& reg = std::as_const(w.fed.mirror).registry();
    for (auto _ : state) {
        float sum = 0.0F;
        for (const auto e : w.locals) {
            sum += reg.get<Transform>(e).x;
        }
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(w.locals.size()));
}

void BM_SampleTransforms(benchmark::State& state) {
    auto& w = world();
    const auto& newest = w.kept.newest();
    // A quarter of the way from the second newest state to the newest.
    const auto render = static_cast<std::int64_t>(w.kept[w.kept.size() - 2].server_time_us) +
                        (static_cast<std::int64_t>(newest.server_time_us) -
                         static_cast<std::int64_t>(w.kept[w.kept.size() - 2].server_time_us)) /
                            4;
    for (auto _ : state) {
        const auto window = client::find_window(w.kept, render);
        float sum = 0.0F;
        for (const auto e : w.locals) {
            sum += client::sample<Transform>(w.fed.mirror, window, e)->x;
        }
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(w.locals.size()));
}

BENCHMARK(BM_MirrorApply)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MirrorApplyAndKeep)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReadTransforms)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleTransforms)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
