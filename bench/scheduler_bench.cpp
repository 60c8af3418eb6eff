// The scheduler (issue 4): a tick of 8 systems over 1,000,000 entities, scheduled on 1 and 2 threads,
// against the same systems called one after another by hand in the same binary; and the scheduler's own
// cost per tick with 8 empty systems.
//
// The 8 systems form two chains of 4 that conflict inside each chain and not across (BM_TickScheduled
// prints the DAG, scheduler::describe(), once to stderr), so 2 threads can at best halve a tick; every
// system is memory-bound, as a game server's usually are.
//
// Every timing benchmark reports `x_floor`: its time per tick divided by a floor measured in the same run
// (for the full ticks, a by-hand tick run right before each measured tick; for the empty tick, 8 plain
// virtual calls), because only that ratio is comparable from one run to the next on a shared machine.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include <ecsnet/ecs.hpp>

namespace {

using ecsnet::per_entity;
using ecsnet::reads;
using ecsnet::writes;

struct Position {
    float x, y;
};
struct Velocity {
    float x, y;
};
struct Force {
    float x, y;
};
struct Mass {
    float inverse;
};
struct Health {
    std::int32_t value;
};
struct Heat {
    float value;
};
struct Armor {
    std::int32_t value;
};
struct Score {
    std::uint32_t value;
};

constexpr std::size_t entity_count = 1'000'000;
constexpr float dt = 1.f / 30.f;

// The work, shared by the systems and the by-hand tick: closures, so that every caller inlines them.
// Each does a little arithmetic per entity (`ease`: two dependent divisions, the cost of a steering or
// drag term): with one multiply-add per entity a tick only measures DRAM bandwidth, ~190 bytes per entity,
// which a second thread cannot multiply (a by-hand two-thread tick was no faster than one). Values stay
// bounded tick after tick.
inline float ease(float x) {
    x = x * 0.999f + 0.001f / (1.f + x * x);
    return x * 0.999f + 0.001f / (1.f + x * x);
}
constexpr auto forces = [](Force& f, const Position& p) {
    f.x = -0.25f * ease(p.x);
    f.y = -0.25f * ease(p.y) - 9.81f;
};
constexpr auto integrate = [](Velocity& v, const Force& f, const Mass& m) {
    v.x = ease(v.x * 0.98f + f.x * m.inverse * dt);
    v.y = v.y * 0.98f + f.y * m.inverse * dt;
};
constexpr auto move = [](Position& p, const Velocity& v) {
    p.x = ease(p.x + v.x * dt);
    p.y += v.y * dt;
};
constexpr auto score = [](Score& s, const Position& p) { s.value += ease(p.x) > 0.f ? 1U : 0U; };
constexpr auto burn = [](Heat& h) { h.value = ease(h.value * 0.9f + 1.f); };
constexpr auto damage = [](Health& h, const Heat& heat, const Armor& a) {
    h.value -= static_cast<std::int32_t>(ease(heat.value)) > a.value ? 1 : 0;
};
constexpr auto regen = [](Health& h, const Armor& a) {
    h.value = std::min(h.value + (static_cast<std::int32_t>(ease(static_cast<float>(a.value))) & 1), 1000);
};
constexpr auto decay = [](Armor& a) {
    a.value = (static_cast<std::int32_t>(ease(static_cast<float>(a.value))) * 7 + 3) & 31;
};

ecsnet::registry& shared_world() {
    static const std::unique_ptr<ecsnet::registry> world = [] {
        auto made = std::make_unique<ecsnet::registry>();
        for (std::size_t i = 0; i < entity_count; ++i) {
            const auto e = made->create();
            const auto f = static_cast<float>(i % 1000);
            made->emplace<Position>(e, f, -f);
            made->emplace<Velocity>(e, 1.f, 0.f);
            made->emplace<Force>(e, 0.f, 0.f);
            made->emplace<Mass>(e, 1.f / static_cast<float>(1 + i % 7));
            made->emplace<Health>(e, 500);
            made->emplace<Heat>(e, 0.f);
            made->emplace<Armor>(e, static_cast<std::int32_t>(i % 32));
            made->emplace<Score>(e, 0U);
        }
        return made;
    }();
    return *world;
}

void physics_by_hand(ecsnet::registry& world) {
    world.view<Force, const Position>().each(forces);
    world.view<Velocity, const Force, const Mass>().each(integrate);
    world.view<Position, const Velocity>().each(move);
    world.view<Score, const Position>().each(score);
}
void health_by_hand(ecsnet::registry& world) {
    world.view<Heat>().each(burn);
    world.view<Health, const Heat, const Armor>().each(damage);
    world.view<Health, const Armor>().each(regen);
    world.view<Armor>().each(decay);
}
void tick_by_hand(ecsnet::registry& world) {
    physics_by_hand(world);
    health_by_hand(world);
}

// The same systems for the scheduler: `each` on the calling thread, or `parallel_each` where the signature
// allows it (BM_TickScheduledParallelEach).
template<bool Split>
void add_systems(ecsnet::scheduler& s) {
    const auto run = [](auto& ctx, auto kernel) {
        if constexpr (Split) {
            ctx.parallel_each(kernel, 16384);
        } else {
            ctx.each(kernel);
        }
    };
    s.add("forces", ecsnet::system<reads<Position>, writes<Force>, per_entity>{},
          [run](auto& ctx) { run(ctx, forces); });
    s.add("integrate", ecsnet::system<reads<Force, Mass>, writes<Velocity>, per_entity>{},
          [run](auto& ctx) { run(ctx, integrate); });
    s.add("move", ecsnet::system<reads<Velocity>, writes<Position>, per_entity>{},
          [run](auto& ctx) { run(ctx, move); });
    s.add("score", ecsnet::system<reads<Position>, writes<Score>, per_entity>{},
          [run](auto& ctx) { run(ctx, score); });
    s.add("burn", ecsnet::system<writes<Heat>, per_entity>{}, [run](auto& ctx) { run(ctx, burn); });
    s.add("damage", ecsnet::system<reads<Heat, Armor>, writes<Health>, per_entity>{},
          [run](auto& ctx) { run(ctx, damage); });
    s.add("regen", ecsnet::system<reads<Armor>, writes<Health>, per_entity>{},
          [run](auto& ctx) { run(ctx, regen); });
    s.add("decay", ecsnet::system<writes<Armor>, per_entity>{}, [run](auto& ctx) { run(ctx, decay); });
}

ecsnet::scheduler_options options(std::size_t threads) {
    ecsnet::scheduler_options result;
    result.threads = threads;
    result.check = ecsnet::access_check::none; // what a release server runs
    return result;
}

double seconds_of(auto&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Paired measurement: every iteration runs one by-hand tick (the floor, not reported as the benchmark's
// time) and then one measured tick, back to back, so that both see the same load on a shared machine;
// x_floor is the ratio of their sums.
template<typename Tick>
void measure_against_hand(benchmark::State& state, ecsnet::registry& world, Tick&& tick) {
    tick(); // warm: the pool's threads, the buffers, the caches
    double floor = 0;
    double measured = 0;
    for (auto _ : state) {
        floor += seconds_of([&world] { tick_by_hand(world); });
        const auto seconds = seconds_of(tick);
        measured += seconds;
        state.SetIterationTime(seconds);
    }
    state.counters["ms_per_tick"] = measured / static_cast<double>(state.iterations()) * 1e3;
    state.counters["x_floor"] = measured / floor;
}

template<bool Split>
void tick_scheduled(benchmark::State& state) {
    auto& world = shared_world();
    ecsnet::scheduler s{world, options(static_cast<std::size_t>(state.range(0)))};
    add_systems<Split>(s);
    static bool described = false;
    if (!described) {
        described = true;
        std::fprintf(stderr, "%s", s.describe().c_str());
    }
    s.build();
    measure_against_hand(state, world, [&s] { s.run_tick(dt); });
}

void BM_TickScheduled(benchmark::State& state) {
    tick_scheduled<false>(state);
}
void BM_TickScheduledParallelEach(benchmark::State& state) {
    tick_scheduled<true>(state);
}

// The floor against itself: how far apart two identical ticks measure (x_floor should be about 1).
void BM_TickByHand(benchmark::State& state) {
    auto& world = shared_world();
    measure_against_hand(state, world, [&world] { tick_by_hand(world); });
}

// The best two threads can do by hand: each chain on its own thread, joined. What BM_TickScheduled/2
// can be compared with when the machine's second core is busy with something else.
void BM_TickByHandTwoThreads(benchmark::State& state) {
    auto& world = shared_world();
    measure_against_hand(state, world, [&world] {
        std::thread other{[&world] { health_by_hand(world); }};
        physics_by_hand(world);
        other.join();
    });
}

// ---- the scheduler's own cost: 8 systems with the same signatures and nothing to do ----------------------

template<typename Signature>
void add_empty(ecsnet::scheduler& s, const char* name) {
    s.add(name, Signature{}, [](auto& ctx) { benchmark::DoNotOptimize(&ctx); });
}

struct empty_system_base {
    virtual ~empty_system_base() = default;
    virtual void update() = 0;
};
struct empty_system final : empty_system_base {
    void update() override { benchmark::DoNotOptimize(this); }
};

// 8 virtual calls in a loop: what a scheduler that does nothing but call systems would cost.
double empty_floor_seconds() {
    std::vector<std::unique_ptr<empty_system_base>> systems;
    for (int i = 0; i < 8; ++i) {
        systems.push_back(std::make_unique<empty_system>());
    }
    constexpr int rounds = 100000;
    const auto start = std::chrono::steady_clock::now();
    for (int round = 0; round < rounds; ++round) {
        for (auto& s : systems) {
            s->update();
        }
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / rounds;
}

void empty_tick(benchmark::State& state, std::size_t threads) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(threads)};
    add_empty<ecsnet::system<reads<Position>, writes<Force>>>(s, "forces");
    add_empty<ecsnet::system<reads<Force, Mass>, writes<Velocity>>>(s, "integrate");
    add_empty<ecsnet::system<reads<Velocity>, writes<Position>>>(s, "move");
    add_empty<ecsnet::system<reads<Position>, writes<Score>>>(s, "score");
    add_empty<ecsnet::system<writes<Heat>>>(s, "burn");
    add_empty<ecsnet::system<reads<Heat, Armor>, writes<Health>>>(s, "damage");
    add_empty<ecsnet::system<reads<Armor>, writes<Health>>>(s, "regen");
    add_empty<ecsnet::system<writes<Armor>>>(s, "decay");
    s.build();
    s.run_tick();
    const auto floor = empty_floor_seconds();
    double seconds = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        s.run_tick();
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const auto per_tick = seconds / static_cast<double>(state.iterations());
    state.counters["us_per_tick"] = per_tick * 1e6;
    state.counters["x_floor"] = per_tick / floor;
}

// A server ticks at 30 Hz: between ticks the pool's threads go to sleep, and the next tick pays to wake
// them. This one lets them fall asleep (2 ms, not timed) before every timed tick.
void BM_EmptyTickAfterIdle(benchmark::State& state) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(static_cast<std::size_t>(state.range(0)))};
    for (int i = 0; i < 8; ++i) {
        add_empty<ecsnet::system<>>(s, i == 0   ? "a"
                                       : i == 1 ? "b"
                                       : i == 2 ? "c"
                                       : i == 3 ? "d"
                                       : i == 4 ? "e"
                                       : i == 5 ? "f"
                                       : i == 6 ? "g"
                                                : "h");
    }
    s.build();
    double seconds = 0;
    for (auto _ : state) {
        state.PauseTiming();
        std::this_thread::sleep_for(std::chrono::milliseconds{2});
        state.ResumeTiming();
        const auto start = std::chrono::steady_clock::now();
        s.run_tick();
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    state.counters["us_per_tick"] = seconds / static_cast<double>(state.iterations()) * 1e6;
}

/// The figure: 8 empty systems on the 2 threads of this machine (target: under 10 us per tick).
void BM_EmptyTick(benchmark::State& state) {
    empty_tick(state, 2);
}
void BM_EmptyTickThreads(benchmark::State& state) {
    empty_tick(state, static_cast<std::size_t>(state.range(0)));
}

BENCHMARK(BM_TickScheduled)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_TickByHand)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_TickByHandTwoThreads)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_TickScheduledParallelEach)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_EmptyTick)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_EmptyTickThreads)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_EmptyTickAfterIdle)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime()->Iterations(2000);

} // namespace

BENCHMARK_MAIN();
