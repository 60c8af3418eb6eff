// The ECS core benchmark, on the workload fixed by issue 2 so figures compare across changes and with other
// ECS libraries: N = 1,000,000 entities; Position{x,y,z} and Velocity{x,y,z} on every entity, Extra{a,b,c}
// on every entity with an even creation index; dt = 1/60; update p += v * dt.
//
// Each benchmark processes all N entities per iteration and reports `per_entity` (seconds per entity). The
// floors (plain vectors, a random gather) run in the same binary and run, so ratios are comparable on a noisy
// machine: run `python3 bench/ratios.py` on the JSON output to get them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <ecsnet/ecs.hpp>

namespace {

constexpr std::size_t entity_count = 1'000'000;
constexpr float dt = 1.0F / 60.0F;

struct Position {
    float x, y, z;
};
struct Velocity {
    float x, y, z;
};
struct Extra {
    float a, b, c;
};

// Seconds per entity, which the console shows with an SI prefix ("1.48ns").
void per_entity(benchmark::State& state, std::size_t count) {
    state.counters["per_entity"] =
        benchmark::Counter(static_cast<double>(count),
                           benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The standard world: every entity has Position and Velocity, the even ones Extra.
std::vector<ecsnet::entity> populate(ecsnet::registry& registry, std::size_t count) {
    std::vector<ecsnet::entity> entities(count);
    for (std::size_t i = 0; i < count; ++i) {
        const auto e = registry.create();
        registry.emplace<Position>(e, static_cast<float>(i), 0.F, 0.F);
        registry.emplace<Velocity>(e, 1.F, 2.F, 3.F);
        if (i % 2 == 0) {
            registry.emplace<Extra>(e, 0.F, 0.F, 0.F);
        }
        entities[i] = e;
    }
    return entities;
}

// (a) create N entities and emplace both components, in a fresh registry each iteration.
void BM_Create(benchmark::State& state) {
    for (auto _ : state) {
        state.PauseTiming();
        auto registry = std::make_unique<ecsnet::registry>();
        state.ResumeTiming();
        for (std::size_t i = 0; i < entity_count; ++i) {
            const auto e = registry->create();
            registry->emplace<Position>(e, 0.F, 0.F, 0.F);
            registry->emplace<Velocity>(e, 1.F, 2.F, 3.F);
        }
        benchmark::DoNotOptimize(registry.get());
        state.PauseTiming();
        registry.reset();
        state.ResumeTiming();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_Create)->Unit(benchmark::kMillisecond);

// (a) on fresh memory: the ranges the previous registry released are unmapped first (not timed), so the
// kernel zeroes and maps every page again, as for the first registry of a process. BM_Create reuses them
// (range_recycler, huge_pages.hpp), as a program creating a registry after destroying one does.
void BM_CreateFreshMemory(benchmark::State& state) {
    for (auto _ : state) {
        state.PauseTiming();
        ecsnet::detail::range_recycler::instance().clear();
        auto registry = std::make_unique<ecsnet::registry>();
        state.ResumeTiming();
        for (std::size_t i = 0; i < entity_count; ++i) {
            const auto e = registry->create();
            registry->emplace<Position>(e, 0.F, 0.F, 0.F);
            registry->emplace<Velocity>(e, 1.F, 2.F, 3.F);
        }
        benchmark::DoNotOptimize(registry.get());
        state.PauseTiming();
        registry.reset();
        state.ResumeTiming();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_CreateFreshMemory)->Unit(benchmark::kMillisecond);

// (b) view<Position, Velocity> update.
void BM_ViewUpdate(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    for (auto _ : state) {
        registry.view<Position, const Velocity>().each([](Position& p, const Velocity& v) {
            p.x += v.x * dt;
            p.y += v.y * dt;
            p.z += v.z * dt;
        });
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_ViewUpdate)->Unit(benchmark::kMillisecond);

// (d) get<Position>(e) over a shuffled list of every entity, summing x.
void BM_RandomGet(benchmark::State& state) {
    ecsnet::registry registry;
    auto entities = populate(registry, entity_count);
    std::mt19937_64 rng{42};
    std::shuffle(entities.begin(), entities.end(), rng);
    for (auto _ : state) {
        float sum = 0.F;
        for (const auto e : entities) {
            sum += registry.get<Position>(e).x;
        }
        benchmark::DoNotOptimize(sum);
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_RandomGet)->Unit(benchmark::kMillisecond);

// (e) destroy all N one by one, in creation order.
void BM_Destroy(benchmark::State& state) {
    for (auto _ : state) {
        state.PauseTiming();
        auto registry = std::make_unique<ecsnet::registry>();
        const auto entities = populate(*registry, entity_count);
        state.ResumeTiming();
        for (const auto e : entities) {
            registry->destroy(e);
        }
        benchmark::DoNotOptimize(registry->alive());
        state.PauseTiming();
        registry.reset();
        state.ResumeTiming();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_Destroy)->Unit(benchmark::kMillisecond);

// Floor of (b): the same update over two plain vectors.
void BM_FloorUpdate(benchmark::State& state) {
    const auto count = static_cast<std::size_t>(state.range(0));
    std::vector<Position> positions(count, Position{0.F, 0.F, 0.F});
    std::vector<Velocity> velocities(count, Velocity{1.F, 2.F, 3.F});
    for (auto _ : state) {
        for (std::size_t i = 0; i < count; ++i) {
            positions[i].x += velocities[i].x * dt;
            positions[i].y += velocities[i].y * dt;
            positions[i].z += velocities[i].z * dt;
        }
        benchmark::ClobberMemory();
    }
    per_entity(state, count);
}
BENCHMARK(BM_FloorUpdate)->Arg(1'000'000)->Arg(16'000'000)->Unit(benchmark::kMillisecond);

// The floor with its two arrays in blocks of huge pages, 2 MiB-aligned as the pools' big arrays are
// (huge_vector.hpp), Velocity's start moved by range(0) bytes: whether that alignment (the same cache sets
// and 4 KiB offsets for both streams) or the huge pages themselves cost anything. 0 is the pools' layout.
void BM_FloorUpdateHugePages(benchmark::State& state) {
    const auto stagger = static_cast<std::size_t>(state.range(0));
    using block = std::vector<std::byte, ecsnet::detail::huge_page_allocator<std::byte>>;
    block position_bytes(entity_count * sizeof(Position));
    block velocity_bytes(entity_count * sizeof(Velocity) + stagger);
    auto* positions = reinterpret_cast<Position*>(position_bytes.data());
    auto* velocities = reinterpret_cast<Velocity*>(velocity_bytes.data() + stagger);
    std::fill_n(positions, entity_count, Position{0.F, 0.F, 0.F});
    std::fill_n(velocities, entity_count, Velocity{1.F, 2.F, 3.F});
    for (auto _ : state) {
        for (std::size_t i = 0; i < entity_count; ++i) {
            positions[i].x += velocities[i].x * dt;
            positions[i].y += velocities[i].y * dt;
            positions[i].z += velocities[i].z * dt;
        }
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_FloorUpdateHugePages)->Arg(0)->Arg(1'088)->Arg(2'112)->Unit(benchmark::kMillisecond);

// The floor's loop kept scalar, as the full-owning group's loop compiled before it was made countable
// again: 16 instructions per entity against 4.25. Where memory is fast this is compute-bound (the issue's
// 2.9x on AMD EPYC); where memory is the limit it costs less (1.2x on the Xeon).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
void scalar_update(Position* positions, const Velocity* velocities, std::size_t count) {
#if defined(__clang__)
#pragma clang loop vectorize(disable)
#endif
    for (std::size_t i = 0; i < count; ++i) {
        positions[i].x += velocities[i].x * dt;
        positions[i].y += velocities[i].y * dt;
        positions[i].z += velocities[i].z * dt;
    }
}

void BM_FloorUpdateScalar(benchmark::State& state) {
    std::vector<Position> positions(entity_count, Position{0.F, 0.F, 0.F});
    std::vector<Velocity> velocities(entity_count, Velocity{1.F, 2.F, 3.F});
    for (auto _ : state) {
        scalar_update(positions.data(), velocities.data(), entity_count);
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_FloorUpdateScalar)->Unit(benchmark::kMillisecond);

// Floor of (d): a random gather pos[idx[i]].x over shuffled indices, the positions in a `Positions` vector.
template<typename Positions>
void gather_floor(benchmark::State& state) {
    Positions positions(entity_count, Position{1.F, 0.F, 0.F});
    std::vector<std::uint32_t> indices(entity_count);
    std::iota(indices.begin(), indices.end(), 0U);
    std::mt19937_64 rng{42};
    std::shuffle(indices.begin(), indices.end(), rng);
    for (auto _ : state) {
        float sum = 0.F;
        for (const auto i : indices) {
            sum += positions[i].x;
        }
        benchmark::DoNotOptimize(sum);
    }
    per_entity(state, entity_count);
}

void BM_FloorGather(benchmark::State& state) {
    gather_floor<std::vector<Position>>(state);
}
BENCHMARK(BM_FloorGather)->Unit(benchmark::kMillisecond);

// The same gather with the positions on huge pages, as the pools' big arrays are (huge_pages.hpp): what
// BM_RandomGet would be compared with if the floor had the pools' memory too.
void BM_FloorGatherHugePages(benchmark::State& state) {
    gather_floor<std::vector<Position, ecsnet::detail::huge_page_allocator<Position>>>(state);
}
BENCHMARK(BM_FloorGatherHugePages)->Unit(benchmark::kMillisecond);

// What the per-entity component bitsets buy: destroying entities that have 3 components, in a world of
// P component types. BM_DestroyManyPools/P uses the registry, whose bitsets send destroy() straight to the
// 3 pools the entity is in; BM_DestroyManyPoolsProbeAll/P removes the entity from bare storages by probing
// all P of them, as a registry without bitsets must. The first pays registry bookkeeping (versions, free
// list, signals) on top; what matters is that it does not grow with P.
template<int I>
struct Kind {
    std::uint32_t value;
};

constexpr std::size_t many_pools_entities = 100'000;
constexpr std::size_t max_kinds = 64;

// Entity n gets 3 of the first `kinds` component types: n, n + 11 and n + 23 (mod kinds).
bool has_kind(std::size_t n, std::size_t kind, std::size_t kinds) {
    return kind == n % kinds || kind == (n + 11) % kinds || kind == (n + 23) % kinds;
}

template<std::size_t... I>
void emplace_three(ecsnet::registry& registry, ecsnet::entity e, std::size_t n, std::size_t kinds,
                   std::index_sequence<I...>) {
    ((I < kinds ? (registry.prepare<Kind<I>>(), 0) : 0), ...);
    ((has_kind(n, I, kinds) ? (registry.emplace<Kind<I>>(e, 1U), 0) : 0), ...);
}

void BM_DestroyManyPools(benchmark::State& state) {
    const auto kinds = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) {
        state.PauseTiming();
        auto registry = std::make_unique<ecsnet::registry>();
        std::vector<ecsnet::entity> entities(many_pools_entities);
        for (std::size_t n = 0; n < many_pools_entities; ++n) {
            entities[n] = registry->create();
            emplace_three(*registry, entities[n], n, kinds, std::make_index_sequence<max_kinds>{});
        }
        state.ResumeTiming();
        for (const auto e : entities) {
            registry->destroy(e);
        }
        state.PauseTiming();
        registry.reset();
        state.ResumeTiming();
    }
    per_entity(state, many_pools_entities);
}
BENCHMARK(BM_DestroyManyPools)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond);

template<std::size_t... I>
std::vector<std::unique_ptr<ecsnet::sparse_set<>>> make_pools(std::size_t kinds, std::index_sequence<I...>) {
    std::vector<std::unique_ptr<ecsnet::sparse_set<>>> pools;
    ((I < kinds ? (pools.push_back(std::make_unique<ecsnet::storage<Kind<I>>>()), 0) : 0), ...);
    return pools;
}

template<std::size_t... I>
void emplace_three_raw(std::vector<std::unique_ptr<ecsnet::sparse_set<>>>& pools, ecsnet::entity e,
                       std::size_t n, std::index_sequence<I...>) {
    ((has_kind(n, I, pools.size()) ? (static_cast<ecsnet::storage<Kind<I>>&>(*pools[I]).emplace(e, 1U), 0)
                                   : 0),
     ...);
}

void BM_DestroyManyPoolsProbeAll(benchmark::State& state) {
    const auto kinds = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) {
        state.PauseTiming();
        auto pools = make_pools(kinds, std::make_index_sequence<max_kinds>{});
        std::vector<ecsnet::entity> entities(many_pools_entities);
        for (std::size_t n = 0; n < many_pools_entities; ++n) {
            entities[n] = ecsnet::entity_traits::construct(static_cast<std::uint32_t>(n), 0);
            emplace_three_raw(pools, entities[n], n, std::make_index_sequence<max_kinds>{});
        }
        state.ResumeTiming();
        for (const auto e : entities) {
            for (auto& pool : pools) {
                pool->remove(e);
            }
        }
        state.PauseTiming();
        pools.clear();
        state.ResumeTiming();
    }
    per_entity(state, many_pools_entities);
}
BENCHMARK(BM_DestroyManyPoolsProbeAll)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond);

// ---- Groups and sorting (issue 3) ------------------------------------------------------------------------

// (a') (a) with a full-owning group<Position, Velocity> already present: every entity enters it as it gets
// its Velocity. Compare with BM_Create.
void BM_CreateWithGroup(benchmark::State& state) {
    for (auto _ : state) {
        state.PauseTiming();
        auto registry = std::make_unique<ecsnet::registry>();
        static_cast<void>(registry->group<Position, Velocity>());
        state.ResumeTiming();
        for (std::size_t i = 0; i < entity_count; ++i) {
            const auto e = registry->create();
            registry->emplace<Position>(e, 0.F, 0.F, 0.F);
            registry->emplace<Velocity>(e, 1.F, 2.F, 3.F);
        }
        benchmark::DoNotOptimize(registry.get());
        state.PauseTiming();
        registry.reset();
        state.ResumeTiming();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_CreateWithGroup)->Unit(benchmark::kMillisecond);

void update(Position& p, const Velocity& v) {
    p.x += v.x * dt;
    p.y += v.y * dt;
    p.z += v.z * dt;
}

// (c) full-owning group<Position, Velocity> update: two packed arrays side by side. Floor: BM_FloorUpdate.
void BM_GroupUpdate(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    const auto group = registry.group<Position, const Velocity>();
    for (auto _ : state) {
        group.each([](Position& p, const Velocity& v) { update(p, v); });
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_GroupUpdate)->Unit(benchmark::kMillisecond);

// Partial-owning group<Position>(get<Velocity>): Velocity through its sparse array.
void BM_PartialGroupUpdate(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    const auto group = registry.group<Position>(ecsnet::get<const Velocity>);
    for (auto _ : state) {
        group.each([](Position& p, const Velocity& v) { update(p, v); });
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_PartialGroupUpdate)->Unit(benchmark::kMillisecond);

// Non-owning group<>(get<Position, Velocity>): its own entity list, both components through sparse arrays.
void BM_NonOwningGroupUpdate(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    const auto group = registry.group<>(ecsnet::get<Position, const Velocity>);
    for (auto _ : state) {
        group.each([](Position& p, const Velocity& v) { update(p, v); });
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_NonOwningGroupUpdate)->Unit(benchmark::kMillisecond);

void randomise_x(ecsnet::registry& registry, std::mt19937& rng) {
    std::uniform_real_distribution<float> coordinate{0.F, 1000.F};
    registry.view<Position>().each([&](Position& p) { p.x = coordinate(rng); });
}

bool by_x(const Position& lhs, const Position& rhs) {
    return lhs.x < rhs.x;
}

// (f1) sort the Position pool by x after assigning fresh random x values (not timed). Floor: BM_FloorStdSort.
void BM_SortByX(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    std::mt19937 rng{42};
    for (auto _ : state) {
        state.PauseTiming();
        randomise_x(registry, rng);
        state.ResumeTiming();
        registry.sort<Position>(by_x);
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_SortByX)->Unit(benchmark::kMillisecond);

// (f2) sort Velocity as Position right after (f1) (not timed).
void BM_SortAs(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    std::mt19937 rng{42};
    for (auto _ : state) {
        state.PauseTiming();
        randomise_x(registry, rng);
        registry.sort<Position>(by_x);
        state.ResumeTiming();
        registry.sort_as<Velocity, Position>();
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_SortAs)->Unit(benchmark::kMillisecond);

// Floor of (f1): std::sort of a std::vector<Position> by x, after fresh random x values (not timed).
void BM_FloorStdSort(benchmark::State& state) {
    std::vector<Position> positions(entity_count, Position{0.F, 0.F, 0.F});
    std::mt19937 rng{42};
    std::uniform_real_distribution<float> coordinate{0.F, 1000.F};
    for (auto _ : state) {
        state.PauseTiming();
        for (auto& p : positions) {
            p.x = coordinate(rng);
        }
        state.ResumeTiming();
        std::sort(positions.begin(), positions.end(), by_x);
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_FloorStdSort)->Unit(benchmark::kMillisecond);

// What decided sort_method::automatic (sort.hpp): (f1) with each method, unstable (/0) and stable (/1).
// Method: 1 in_place, 2 permutation, 3 mixed.
void BM_SortByXMethod(benchmark::State& state) {
    const ecsnet::sort_options options{static_cast<ecsnet::sort_method>(state.range(0)), state.range(1) != 0};
    ecsnet::registry registry;
    populate(registry, entity_count);
    std::mt19937 rng{42};
    for (auto _ : state) {
        state.PauseTiming();
        randomise_x(registry, rng);
        state.ResumeTiming();
        registry.sort<Position>(by_x, options);
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_SortByXMethod)->ArgsProduct({{1, 2, 3}, {0, 1}})->Unit(benchmark::kMillisecond);

// The same with a comparator on entities that reads x through the registry (one random get per side).
void BM_SortByEntityMethod(benchmark::State& state) {
    const ecsnet::sort_options options{static_cast<ecsnet::sort_method>(state.range(0)), false};
    ecsnet::registry registry;
    populate(registry, entity_count);
    std::mt19937 rng{42};
    for (auto _ : state) {
        state.PauseTiming();
        randomise_x(registry, rng);
        state.ResumeTiming();
        // Extra's pool is never sorted, so its order is independent of x: sort it by its entities' x.
        registry.sort<Extra>(
            [&registry](ecsnet::entity lhs, ecsnet::entity rhs) {
                return registry.get<Position>(lhs).x < registry.get<Position>(rhs).x;
            },
            options);
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count / 2);
}
BENCHMARK(BM_SortByEntityMethod)->DenseRange(1, 3)->Unit(benchmark::kMillisecond);

// Sorting a full-owning group<Position, Velocity> by x: both arrays move together. Method: 1 in_place (each
// exchange swaps both pools), 2 permutation (one index sort, then each pool follows it).
void BM_GroupSortByX(benchmark::State& state) {
    const ecsnet::sort_options options{static_cast<ecsnet::sort_method>(state.range(0)), false};
    ecsnet::registry registry;
    populate(registry, entity_count);
    const auto group = registry.group<Position, Velocity>();
    std::mt19937 rng{42};
    for (auto _ : state) {
        state.PauseTiming();
        randomise_x(registry, rng);
        state.ResumeTiming();
        group.sort<Position>(by_x, options);
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_GroupSortByX)->DenseRange(1, 2)->Unit(benchmark::kMillisecond);

// Views over sorted pools: (b) after Position was sorted by random x (the pools disagree: every entity is
// probed), then after sort_as<Velocity, Position> (aligned again: plain blocks).
void BM_ViewUpdateShuffled(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    std::mt19937 rng{42};
    randomise_x(registry, rng);
    registry.sort<Position>(by_x);
    for (auto _ : state) {
        registry.view<Position, const Velocity>().each([](Position& p, const Velocity& v) { update(p, v); });
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_ViewUpdateShuffled)->Unit(benchmark::kMillisecond);

void BM_ViewUpdateSortedAs(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    std::mt19937 rng{42};
    randomise_x(registry, rng);
    registry.sort<Position>(by_x);
    registry.sort_as<Velocity, Position>();
    for (auto _ : state) {
        registry.view<Position, const Velocity>().each([](Position& p, const Velocity& v) { update(p, v); });
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_ViewUpdateSortedAs)->Unit(benchmark::kMillisecond);

// A view over the pools of a group: the group's members are aligned at the front of both arrays.
void BM_ViewUpdateGrouped(benchmark::State& state) {
    ecsnet::registry registry;
    populate(registry, entity_count);
    std::mt19937 rng{42};
    randomise_x(registry, rng);
    registry.sort<Position>(by_x); // scramble first: the group must realign the pools
    static_cast<void>(registry.group<Position, Velocity>());
    for (auto _ : state) {
        registry.view<Position, const Velocity>().each([](Position& p, const Velocity& v) { update(p, v); });
        benchmark::ClobberMemory();
    }
    per_entity(state, entity_count);
}
BENCHMARK(BM_ViewUpdateGrouped)->Unit(benchmark::kMillisecond);

// lscpu's "Model name", from /proc/cpuinfo: every figure says which CPU it came from (ratios.py prints it).
std::string cpu_model() {
    std::ifstream cpuinfo{"/proc/cpuinfo"};
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "unknown";
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::AddCustomContext("cpu_model", cpu_model());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
