// Systems and the scheduler (issue 4): determinism across thread counts and registration orders, ordering
// and mutual exclusion checked with instrumentation, start-up errors, access checks, failures, commands.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace scheduler_test {

namespace {

using ecsnet::after;
using ecsnet::per_entity;
using ecsnet::reads;
using ecsnet::writes;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

template<typename Condition>
bool eventually(Condition condition, std::chrono::seconds limit = std::chrono::seconds{20}) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::yield();
    }
    return true;
}

// prefix + number, built without `"literal" + std::string` (gcc 12 warns falsely about it: -Wrestrict).
std::string numbered(std::string prefix, std::size_t number) {
    prefix += std::to_string(number);
    return prefix;
}

ecsnet::scheduler_options options(std::size_t threads,
                                  ecsnet::access_check check = ecsnet::access_check::none) {
    ecsnet::scheduler_options result;
    result.threads = threads;
    result.check = check;
    return result;
}

// ---- determinism: 8 systems over a large world ---------------------------------------------------------

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
struct Armor {
    std::int32_t value;
};
struct Heat {
    float value;
};
struct Score {
    std::uint64_t value;
};
struct Lifetime {
    std::int32_t ticks;
};

constexpr float dt = 1.f / 30.f;
constexpr std::size_t reaper_chunk = 1024;

// The systems' work, shared by the scheduled systems and the by-hand reference.
struct kernels {
    static void forces(std::uint64_t tick, ecsnet::entity e, Force& f, const Position& p) {
        f.x = -0.25f * p.x + 0.01f * static_cast<float>((ecsnet::to_index(e) * 7 + tick) % 13);
        f.y = -0.25f * p.y + 0.02f;
    }
    static void integrate(Velocity& v, const Force& f, const Mass& m) {
        v.x = v.x * 0.98f + f.x * m.inverse * dt;
        v.y = v.y * 0.98f + f.y * m.inverse * dt;
    }
    static void move(Position& p, const Velocity& v) {
        p.x += v.x * dt;
        p.y += v.y * dt;
    }
    static void score(Score& s, const Position& p) {
        s.value += static_cast<std::uint64_t>(std::fabs(p.x) * 100.f) % 17;
    }
    static void burn(std::uint64_t tick, ecsnet::entity e, Heat& h) {
        h.value = h.value * 0.9f + static_cast<float>((ecsnet::to_index(e) + tick) % 5);
    }
    static void damage(Health& h, const Heat& heat, const Armor& a) {
        h.value -= std::max(0, static_cast<std::int32_t>(heat.value) - a.value / 2) / 2;
    }
    static void regen(std::uint64_t tick, Health& h, const Armor& a) {
        if (tick % 3 == 0) {
            h.value += a.value % 3;
        }
    }
    // Records deaths and births: runs in parallel chunks, so its commands come from several threads.
    template<typename Commands>
    static void reap(std::uint64_t tick, Commands& commands, ecsnet::entity e, Lifetime& life,
                     const Health& h) {
        life.ticks += 1;
        if (h.value <= 0) {
            commands.destroy(e);
            const auto born = commands.create();
            const auto seed = static_cast<float>((ecsnet::to_index(e) + tick) % 100);
            commands.template emplace<Position>(born, seed, static_cast<float>(tick % 7));
            commands.template emplace<Velocity>(born, 0.f, 0.f);
            commands.template emplace<Force>(born, 0.f, 0.f);
            commands.template emplace<Mass>(born, 1.f);
            commands.template emplace<Health>(born, 100);
            commands.template emplace<Armor>(born, static_cast<std::int32_t>(10 + tick % 10));
            commands.template emplace<Heat>(born, 0.f);
            commands.template emplace<Lifetime>(born, 0);
            return;
        }
        if (life.ticks % 50 == 0) {
            commands.template replace<Armor>(e, static_cast<std::int32_t>(8 + life.ticks % 11));
        }
        // Churn in the Score pool, spread over every chunk: the order in which chunks' commands apply
        // decides the order of the pool.
        if (life.ticks % 10 == 0) {
            commands.template emplace_or_replace<Score>(e, static_cast<std::uint64_t>(life.ticks));
        } else if (life.ticks % 10 == 5) {
            commands.template remove<Score>(e);
        }
    }
};

struct forces_system : ecsnet::system<reads<Position>, writes<Force>, per_entity> {
    static constexpr std::string_view name = "forces";
    void update(context<>& ctx) {
        const auto tick = ctx.tick().index;
        ctx.parallel_each(
            [tick](ecsnet::entity e, Force& f, const Position& p) { kernels::forces(tick, e, f, p); }, 2048);
    }
};
struct integrate_system : ecsnet::system<reads<Force, Mass>, writes<Velocity>, per_entity> {
    static constexpr std::string_view name = "integrate";
    void update(context<>& ctx) { ctx.parallel_each(&kernels::integrate); }
};
struct move_system : ecsnet::system<reads<Velocity>, writes<Position>, per_entity> {
    static constexpr std::string_view name = "move";
    void update(context<>& ctx) { ctx.parallel_each(&kernels::move, 3000); }
};
struct score_system : ecsnet::system<reads<Position>, writes<Score>> {
    static constexpr std::string_view name = "score";
    void update(context<>& ctx) { ctx.each(&kernels::score); }
};
struct burn_system : ecsnet::system<writes<Heat>> {
    static constexpr std::string_view name = "burn";
    void update(context<>& ctx) {
        const auto tick = ctx.tick().index;
        ctx.each([tick](ecsnet::entity e, Heat& h) { kernels::burn(tick, e, h); });
    }
};
struct damage_system : ecsnet::system<reads<Heat, Armor>, writes<Health>> {
    static constexpr std::string_view name = "damage";
    void update(context<>& ctx) { ctx.each(&kernels::damage); }
};
struct regen_system : ecsnet::system<reads<Armor>, writes<Health>> {
    static constexpr std::string_view name = "regen";
    void update(context<>& ctx) {
        const auto tick = ctx.tick().index;
        ctx.each([tick](Health& h, const Armor& a) { kernels::regen(tick, h, a); });
    }
};
struct reaper_system : ecsnet::system<reads<Health>, writes<Lifetime>, per_entity> {
    static constexpr std::string_view name = "reaper";
    void update(context<>& ctx) {
        const auto tick = ctx.tick().index;
        ctx.parallel_each([tick, &ctx](ecsnet::entity e, Lifetime& life,
                                       const Health& h) { kernels::reap(tick, ctx.commands(), e, life, h); },
                          reaper_chunk);
    }
};

// The systems in the order of the description, with what they read and write, for the tests'
// own model of which pairs conflict.
constexpr std::size_t system_count = 8;
enum component_bit : unsigned { P = 1, V = 2, F = 4, M = 8, H = 16, A = 32, T = 64, S = 128, L = 256 };
constexpr std::array<std::pair<unsigned, unsigned>, system_count> declared_access{{
    {P, F},     // forces
    {F | M, V}, // integrate
    {V, P},     // move
    {P, S},     // score
    {0, T},     // burn
    {T | A, H}, // damage
    {A, H},     // regen
    {H, L},     // reaper
}};

bool conflict(std::size_t a, std::size_t b) {
    const auto [ra, wa] = declared_access[a];
    const auto [rb, wb] = declared_access[b];
    return (wa & (rb | wb)) != 0 || (wb & ra) != 0;
}

void add_system(ecsnet::scheduler& s, std::size_t which) {
    switch (which) {
    case 0:
        s.add<forces_system>();
        break;
    case 1:
        s.add<integrate_system>();
        break;
    case 2:
        s.add<move_system>();
        break;
    case 3:
        s.add<score_system>();
        break;
    case 4:
        s.add<burn_system>();
        break;
    case 5:
        s.add<damage_system>();
        break;
    case 6:
        s.add<regen_system>();
        break;
    default:
        s.add<reaper_system>();
        break;
    }
}

// The world: 100,000 entities, 100 ticks (scaled down under the sanitizers, which are 20x slower).
struct world_config {
    std::size_t entities;
    int ticks;
};
constexpr world_config full_world = sanitized ? world_config{8000, 25} : world_config{100000, 100};
constexpr world_config small_world{5000, 30};

void populate(ecsnet::registry& world, const world_config& config) {
    for (std::size_t i = 0; i < config.entities; ++i) {
        const auto e = world.create();
        const auto f = static_cast<float>(i % 1000);
        world.emplace<Position>(e, f, f * 0.5f);
        world.emplace<Velocity>(e, 1.f, -1.f);
        world.emplace<Force>(e, 0.f, 0.f);
        world.emplace<Mass>(e, 1.f / static_cast<float>(1 + i % 5));
        if (i % 3 != 0) { // the health half of the world is smaller: its views lead with other pools
            world.emplace<Heat>(e, 0.f);
            world.emplace<Armor>(e, static_cast<std::int32_t>(4 + i % 20));
            world.emplace<Health>(e, static_cast<std::int32_t>(60 + i % 90));
            world.emplace<Lifetime>(e, static_cast<std::int32_t>(i % 50));
        }
        if (i % 2 == 0) {
            world.emplace<Score>(e, 0U);
        }
    }
}

// The bytes of every pool: packed entities and packed components, type by type.
struct world_bytes {
    std::size_t alive{};
    std::vector<std::vector<unsigned char>> pools;
    bool operator==(const world_bytes&) const = default;
};

template<typename... Type>
world_bytes bytes_of(ecsnet::registry& world) {
    world_bytes out;
    out.alive = world.alive();
    const auto append = [&out](const auto& pool, const void* components, std::size_t component_size) {
        std::vector<unsigned char> bytes(pool.size() * (sizeof(ecsnet::entity) + component_size));
        std::memcpy(bytes.data(), pool.data(), pool.size() * sizeof(ecsnet::entity));
        std::memcpy(bytes.data() + pool.size() * sizeof(ecsnet::entity), components,
                    pool.size() * component_size);
        out.pools.push_back(std::move(bytes));
    };
    (append(world.storage<Type>(), world.storage<Type>().raw(), sizeof(Type)), ...);
    return out;
}

world_bytes bytes_of_world(ecsnet::registry& world) {
    return bytes_of<Position, Velocity, Force, Mass, Health, Armor, Heat, Score, Lifetime>(world);
}

// The same work without the scheduler: views one after another on this thread, the reaper's chunks in
// order into one buffer, applied at the end of the tick.
world_bytes run_by_hand(const world_config& config) {
    ecsnet::registry world;
    populate(world, config);
    ecsnet::basic_command_buffer<ecsnet::registry> commands;
    for (std::uint64_t tick = 1; tick <= static_cast<std::uint64_t>(config.ticks); ++tick) {
        world.view<Force, const Position>().each(
            [tick](ecsnet::entity e, Force& f, const Position& p) { kernels::forces(tick, e, f, p); });
        world.view<Velocity, const Force, const Mass>().each(&kernels::integrate);
        world.view<Position, const Velocity>().each(&kernels::move);
        world.view<Score, const Position>().each(&kernels::score);
        world.view<Heat>().each([tick](ecsnet::entity e, Heat& h) { kernels::burn(tick, e, h); });
        world.view<Health, const Heat, const Armor>().each(&kernels::damage);
        world.view<Health, const Armor>().each(
            [tick](Health& h, const Armor& a) { kernels::regen(tick, h, a); });
        const ecsnet::view_chunks<ecsnet::registry, ecsnet::type_list<Lifetime, const Health>,
                                  ecsnet::type_list<>>
            chunks{world, reaper_chunk};
        for (std::size_t chunk = 0; chunk < chunks.chunk_count(); ++chunk) {
            auto reap = [tick, &commands](ecsnet::entity e, Lifetime& life, const Health& h) {
                kernels::reap(tick, commands, e, life, h);
            };
            chunks.each_in(chunk, reap);
        }
        commands.apply(world);
    }
    return bytes_of_world(world);
}

world_bytes run_scheduled(const world_config& config, std::size_t threads,
                          const std::vector<std::size_t>& order,
                          ecsnet::access_check check = ecsnet::access_check::none) {
    ecsnet::registry world;
    populate(world, config);
    ecsnet::scheduler s{world, options(threads, check)};
    for (const auto which : order) {
        add_system(s, which);
    }
    for (int tick = 0; tick < config.ticks; ++tick) {
        s.run_tick(dt);
    }
    return bytes_of_world(world);
}

// A random registration order that keeps every conflicting pair in its original relative order.
std::vector<std::size_t> shuffled_order(std::mt19937& rng) {
    std::vector<std::size_t> order;
    std::vector<bool> placed(system_count, false);
    while (order.size() < system_count) {
        std::vector<std::size_t> ready;
        for (std::size_t s = 0; s < system_count; ++s) {
            bool free = !placed[s];
            for (std::size_t earlier = 0; earlier < s && free; ++earlier) {
                free = placed[earlier] || !conflict(earlier, s);
            }
            if (free) {
                ready.push_back(s);
            }
        }
        const auto pick = ready[std::uniform_int_distribution<std::size_t>{0, ready.size() - 1}(rng)];
        placed[pick] = true;
        order.push_back(pick);
    }
    return order;
}

const std::vector<std::size_t> base_order{0, 1, 2, 3, 4, 5, 6, 7};

void expect_same_world(const world_bytes& result, const world_bytes& reference, const std::string& label) {
    ASSERT_EQ(result.alive, reference.alive) << label;
    ASSERT_EQ(result.pools.size(), reference.pools.size()) << label;
    for (std::size_t pool = 0; pool < result.pools.size(); ++pool) {
        ASSERT_TRUE(result.pools[pool] == reference.pools[pool]) << label << ": pool " << pool << " differs";
    }
}

TEST(SchedulerDeterminismTest, BitIdenticalAcrossThreadCountsAndRegistrationOrders) {
    const auto reference = run_by_hand(full_world);
    ASSERT_GT(reference.alive, 0U);

    std::mt19937 rng{4};
    // The base order, the health systems first, and a random order; all keep conflicting pairs in order.
    const std::vector<std::vector<std::size_t>> orders{
        base_order, {4, 5, 6, 7, 0, 1, 2, 3}, shuffled_order(rng)};
    for (std::size_t o = 1; o < orders.size(); ++o) {
        ASSERT_NE(orders[o], orders[0]) << "order " << o << " is the base order";
    }
    for (const auto& order : orders) {
        for (const std::size_t threads : {1U, 2U, 4U}) {
            auto label = numbered("threads ", threads);
            label += ", order";
            for (const auto s : order) {
                label += numbered(" ", s);
            }
            expect_same_world(run_scheduled(full_world, threads, order), reference, label);
        }
    }
}

TEST(SchedulerDeterminismTest, AccessChecksNeitherTriggerNorChangeTheResult) {
    const auto reference = run_by_hand(small_world);
    std::mt19937 rng{5};
    expect_same_world(run_scheduled(small_world, 2, base_order, ecsnet::access_check::declared), reference,
                      "declared");
    expect_same_world(run_scheduled(small_world, 4, shuffled_order(rng), ecsnet::access_check::declared),
                      reference, "declared, shuffled");
    expect_same_world(run_scheduled(small_world, 2, shuffled_order(rng), ecsnet::access_check::strict),
                      reference, "strict, shuffled");
}

TEST(SchedulerDeterminismTest, TheWorldActuallyChangesAndCommandsFlow) {
    // Guards the determinism test against comparing worlds where nothing happens.
    ecsnet::registry world;
    populate(world, full_world);
    const auto before = bytes_of_world(world);
    ecsnet::scheduler s{world, options(2)};
    for (std::size_t which = 0; which < system_count; ++which) {
        add_system(s, which);
    }
    std::size_t dropped = 0;
    std::size_t applied = 0;
    for (int tick = 0; tick < full_world.ticks; ++tick) {
        s.run_tick(dt);
        applied += s.last_commands().applied;
        dropped += s.last_commands().dropped;
    }
    EXPECT_GT(applied, full_world.entities / 10) << "deaths and births happened";
    EXPECT_EQ(dropped, 0U);
    const auto after = bytes_of_world(world);
    for (std::size_t pool = 0; pool < after.pools.size(); ++pool) {
        if (pool == 3) {
            continue; // Mass never changes
        }
        EXPECT_NE(after.pools[pool], before.pools[pool]) << "pool " << pool;
    }
}

// ---- ordering and mutual exclusion ---------------------------------------------------------------------

struct Stamp {
    std::uint64_t tick;
};
struct Seen {
    std::uint64_t tick;
};
struct Unrelated {
    int value;
};

struct stamp_writer : ecsnet::system<writes<Stamp>> {
    static constexpr std::string_view name = "stamp_writer";
    std::atomic<std::uint64_t>* finished{};
    void update(context<>& ctx) {
        const auto tick = ctx.tick().index;
        ctx.each([tick](Stamp& s) { s.tick = tick; });
        finished->store(tick);
    }
};
// Registered before the writer and conflicting with it: registration order alone would run it first.
struct stamp_reader : ecsnet::system<reads<Stamp>, writes<Seen>, after<stamp_writer>, per_entity> {
    static constexpr std::string_view name = "stamp_reader";
    std::atomic<int>* stale{};
    void update(context<>& ctx) {
        const auto tick = ctx.tick().index;
        ctx.parallel_each(
            [tick, this](Seen& seen, const Stamp& s) {
                if (s.tick != tick) {
                    stale->fetch_add(1);
                }
                seen.tick = s.tick;
            },
            64);
    }
};
// Shares no component with the writer: only after<> orders them.
struct unrelated_follower : ecsnet::system<writes<Unrelated>, after<stamp_writer>> {
    static constexpr std::string_view name = "unrelated_follower";
    std::atomic<std::uint64_t>* writer_finished{};
    std::atomic<int>* early{};
    void update(context<>& ctx) {
        if (writer_finished->load() != ctx.tick().index) {
            early->fetch_add(1);
        }
    }
};

TEST(SchedulerOrderTest, AfterIsHonouredAndSeesTheWrites) {
    for (const std::size_t threads : {1U, 2U, 4U}) {
        ecsnet::registry world;
        for (int i = 0; i < 1000; ++i) {
            const auto e = world.create();
            world.emplace<Stamp>(e, 0U);
            world.emplace<Seen>(e, 0U);
        }
        std::atomic<int> stale{0};
        std::atomic<int> early{0};
        std::atomic<std::uint64_t> writer_finished{0};
        ecsnet::scheduler s{world, options(threads)};
        s.add<stamp_reader>();
        s.add<unrelated_follower>();
        s.add<stamp_writer>();
        s.get<stamp_reader>().stale = &stale;
        s.get<unrelated_follower>().early = &early;
        s.get<unrelated_follower>().writer_finished = &writer_finished;
        s.get<stamp_writer>().finished = &writer_finished;
        for (int tick = 1; tick <= 200; ++tick) {
            s.run_tick();
        }
        EXPECT_EQ(stale.load(), 0) << threads << " threads";
        EXPECT_EQ(early.load(), 0) << threads << " threads";
        world.view<const Seen>().each([](const Seen& seen) { ASSERT_EQ(seen.tick, 200U); });
        EXPECT_TRUE(s.graph().precedes(2, 0)) << "writer (registered third) precedes reader (first)";
    }
}

// Six components and twelve signatures to draw random systems from.
template<int N>
struct C {
    int value;
};
using sig0 = ecsnet::system<reads<C<0>>, writes<C<1>>>;
using sig1 = ecsnet::system<reads<C<1>>, writes<C<2>>>;
using sig2 = ecsnet::system<reads<C<2>, C<3>>, writes<C<4>>>;
using sig3 = ecsnet::system<writes<C<0>>>;
using sig4 = ecsnet::system<reads<C<0>, C<1>, C<2>>>;
using sig5 = ecsnet::system<reads<C<4>>, writes<C<5>>>;
using sig6 = ecsnet::system<writes<C<3>, C<5>>>;
using sig7 = ecsnet::system<reads<C<5>>>;
using sig8 = ecsnet::system<>;
using sig9 = ecsnet::system<reads<C<3>>, writes<C<2>>>;
using sig10 = ecsnet::system<reads<C<1>, C<4>>>;
using sig11 = ecsnet::system<writes<C<4>>, reads<C<0>>>;
constexpr std::array<std::pair<unsigned, unsigned>, 12> signature_masks{{
    {1, 2},
    {2, 4},
    {4 | 8, 16},
    {0, 1},
    {1 | 2 | 4, 0},
    {16, 32},
    {0, 8 | 32},
    {32, 0},
    {0, 0},
    {8, 4},
    {2 | 16, 0},
    {1, 16},
}};

ecsnet::scheduler::system_ref add_variant(ecsnet::scheduler& s, std::size_t variant, std::string name,
                                          std::function<void()> body) {
    auto run = [body = std::move(body)](auto&) { body(); };
    switch (variant) {
    case 0:
        return s.add(std::move(name), sig0{}, run);
    case 1:
        return s.add(std::move(name), sig1{}, run);
    case 2:
        return s.add(std::move(name), sig2{}, run);
    case 3:
        return s.add(std::move(name), sig3{}, run);
    case 4:
        return s.add(std::move(name), sig4{}, run);
    case 5:
        return s.add(std::move(name), sig5{}, run);
    case 6:
        return s.add(std::move(name), sig6{}, run);
    case 7:
        return s.add(std::move(name), sig7{}, run);
    case 8:
        return s.add(std::move(name), sig8{}, run);
    case 9:
        return s.add(std::move(name), sig9{}, run);
    case 10:
        return s.add(std::move(name), sig10{}, run);
    default:
        return s.add(std::move(name), sig11{}, run);
    }
}

// The reference model of the scheduling rules: which pairs must be ordered, or whether building fails.
struct order_model {
    std::size_t n;
    std::vector<std::vector<bool>> must_precede; // transitive
    bool fails = false;

    static std::vector<std::vector<bool>> closure(std::vector<std::vector<bool>> reach) {
        const auto n = reach.size();
        for (std::size_t k = 0; k < n; ++k) {
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j) {
                    if (reach[i][k] && reach[k][j]) {
                        reach[i][j] = true;
                    }
                }
            }
        }
        return reach;
    }
    static bool cyclic(const std::vector<std::vector<bool>>& reach) {
        for (std::size_t i = 0; i < reach.size(); ++i) {
            if (reach[i][i]) {
                return true;
            }
        }
        return false;
    }

    order_model(const std::vector<std::size_t>& variants,
                const std::vector<std::pair<std::size_t, std::size_t>>& afters)
        : n{variants.size()} {
        std::vector<std::vector<bool>> edges(n, std::vector<bool>(n, false));
        for (const auto& [before, later] : afters) {
            edges[before][later] = true;
        }
        const auto declared = closure(edges);
        if (cyclic(declared)) {
            fails = true;
            return;
        }
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = i + 1; j < n; ++j) {
                const auto [ri, wi] = signature_masks[variants[i]];
                const auto [rj, wj] = signature_masks[variants[j]];
                const bool conflicting = (wi & (rj | wj)) != 0 || (wj & ri) != 0;
                if (conflicting && !declared[i][j] && !declared[j][i]) {
                    edges[i][j] = true;
                }
            }
        }
        must_precede = closure(edges);
        fails = cyclic(must_precede);
    }
};

TEST(SchedulerOrderTest, RandomGraphsKeepOrderAndNeverOverlapConflictingSystems) {
    std::mt19937 rng{99};
    int built = 0;
    int refused = 0;
    int overlaps_seen = 0;
    const int graphs = sanitized ? 25 : 60;
    for (int graph = 0; graph < graphs; ++graph) {
        const auto n = std::uniform_int_distribution<std::size_t>{2, 12}(rng);
        std::vector<std::size_t> variants(n);
        for (auto& v : variants) {
            v = std::uniform_int_distribution<std::size_t>{0, 11}(rng);
        }
        std::vector<std::pair<std::size_t, std::size_t>> afters;
        for (std::size_t later = 0; later < n; ++later) {
            for (std::size_t before = 0; before < n; ++before) {
                // Mostly forward edges (consistent with registration), sometimes backward ones.
                const auto odds = before < later ? 8U : 40U;
                if (before != later && rng() % odds == 0) {
                    afters.emplace_back(before, later);
                }
            }
        }
        const order_model model{variants, afters};

        // Instrumentation: a global clock ticked at every start and end.
        struct interval {
            std::uint64_t start, end;
            int runs;
        };
        std::atomic<std::uint64_t> clock{0};
        std::vector<interval> log(n);
        std::vector<int> spins(n);
        for (auto& s : spins) {
            s = std::uniform_int_distribution<int>{0, sanitized ? 200 : 3000}(rng);
        }

        ecsnet::registry world;
        const auto threads = std::size_t{1} + static_cast<std::size_t>(graph % 4);
        ecsnet::scheduler s{world, options(threads)};
        std::vector<ecsnet::scheduler::system_ref> refs;
        for (std::size_t i = 0; i < n; ++i) {
            refs.push_back(add_variant(s, variants[i], numbered("s", i), [&log, &clock, &spins, i] {
                log[i].start = clock.fetch_add(1);
                volatile int sink = 0;
                for (int k = 0; k < spins[i]; ++k) {
                    sink = sink + k;
                }
                log[i].end = clock.fetch_add(1);
                ++log[i].runs;
            }));
        }
        for (const auto& [before, later] : afters) {
            if (rng() % 2 == 0) {
                refs[later].after(numbered("s", before));
            } else {
                refs[before].before(numbered("s", later));
            }
        }
        if (model.fails) {
            EXPECT_THROW(s.build(), ecsnet::schedule_error) << "graph " << graph;
            ++refused;
            continue;
        }
        ASSERT_NO_THROW(s.build()) << "graph " << graph;
        ++built;
        for (int tick = 0; tick < 5; ++tick) {
            for (auto& entry : log) {
                entry = interval{0, 0, 0};
            }
            s.run_tick();
            for (std::size_t i = 0; i < n; ++i) {
                ASSERT_EQ(log[i].runs, 1) << "graph " << graph << " system " << i;
                for (std::size_t j = 0; j < n; ++j) {
                    if (i == j) {
                        continue;
                    }
                    const bool overlap = log[i].start < log[j].end && log[j].start < log[i].end;
                    if (model.must_precede[i][j]) {
                        ASSERT_LT(log[i].end, log[j].start)
                            << "graph " << graph << ": s" << i << " before s" << j;
                    } else if (!model.must_precede[j][i] && overlap) {
                        ++overlaps_seen;
                    }
                    const auto [ri, wi] = signature_masks[variants[i]];
                    const auto [rj, wj] = signature_masks[variants[j]];
                    if ((wi & (rj | wj)) != 0 || (wj & ri) != 0) {
                        ASSERT_FALSE(overlap) << "graph " << graph << ": conflicting s" << i << " and s" << j;
                    }
                }
            }
        }
    }
    EXPECT_GT(built, graphs / 2);
    EXPECT_GT(refused, 0) << "the generator also produced contradictory graphs";
    // Not asserted on a loaded 2-core machine, but reported: how often independent systems did overlap.
    RecordProperty("independent_overlaps", overlaps_seen);
}

TEST(SchedulerOrderTest, IndependentSystemsRunConcurrently) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(2)};
    std::atomic<int> started{0};
    std::atomic<int> met{0};
    const auto body = [&](auto&) {
        started.fetch_add(1);
        if (eventually([&] { return started.load() >= 2; })) {
            met.fetch_add(1);
        }
    };
    s.add("left", ecsnet::system<writes<C<0>>>{}, body);
    s.add("right", ecsnet::system<writes<C<1>>>{}, body);
    s.run_tick();
    EXPECT_EQ(met.load(), 2) << "each system saw the other one start while it was running";
}

// ---- start-up errors -----------------------------------------------------------------------------------

template<typename Func>
std::string build_error(Func setup) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(1)};
    setup(s);
    try {
        s.build();
    } catch (const ecsnet::schedule_error& error) {
        // run_tick() refuses in the same way.
        try {
            s.run_tick();
        } catch (const ecsnet::schedule_error& again) {
            EXPECT_STREQ(again.what(), error.what());
            return error.what();
        }
        ADD_FAILURE() << "run_tick() ran a schedule that build() refused";
        return error.what();
    }
    return {};
}

const auto nothing = [](auto&) {};

TEST(SchedulerErrorTest, CycleInAfterDependenciesNamesItsSystems) {
    const auto message = build_error([](ecsnet::scheduler& s) {
        s.add("input", ecsnet::system<>{}, nothing);
        s.add("alpha", ecsnet::system<>{}, nothing).after("gamma");
        s.add("beta", ecsnet::system<>{}, nothing).after("alpha");
        s.add("gamma", ecsnet::system<>{}, nothing).after("beta");
    });
    EXPECT_NE(message.find("cycle"), std::string::npos) << message;
    EXPECT_NE(message.find("'alpha'"), std::string::npos) << message;
    EXPECT_NE(message.find("'beta'"), std::string::npos) << message;
    EXPECT_NE(message.find("'gamma'"), std::string::npos) << message;
    EXPECT_EQ(message.find("input"), std::string::npos) << "only the cycle's systems: " << message;
}

struct first_sys;
struct second_sys : ecsnet::system<after<first_sys>> {
    void update(context<>&) {}
};
struct first_sys : ecsnet::system<after<second_sys>> {
    void update(context<>&) {}
};

TEST(SchedulerErrorTest, CycleBetweenSystemClassesUsesTheirTypeNames) {
    const auto message = build_error([](ecsnet::scheduler& s) {
        s.add<first_sys>();
        s.add<second_sys>();
    });
    EXPECT_NE(message.find("first_sys"), std::string::npos) << message;
    EXPECT_NE(message.find("second_sys"), std::string::npos) << message;
}

TEST(SchedulerErrorTest, SelfUnknownDuplicateAndLaterPhaseDependencies) {
    EXPECT_NE(build_error([](ecsnet::scheduler& s) {
                  s.add("loop", ecsnet::system<>{}, nothing).after("loop");
              }).find("'loop' is declared to run after itself"),
              std::string::npos);
    EXPECT_NE(build_error([](ecsnet::scheduler& s) {
                  s.add("x", ecsnet::system<>{}, nothing).after("ghost");
              }).find("'x' runs after 'ghost', which is not registered"),
              std::string::npos);
    EXPECT_NE(build_error([](ecsnet::scheduler& s) {
                  s.add("x", ecsnet::system<>{}, nothing).before("ghost");
              }).find("'x' runs before 'ghost', which is not registered"),
              std::string::npos);
    EXPECT_NE(build_error([](ecsnet::scheduler& s) {
                  s.add("twin", ecsnet::system<>{}, nothing);
                  s.add("twin", ecsnet::system<>{}, nothing);
              }).find("two systems are named 'twin'"),
              std::string::npos);
    EXPECT_NE(build_error([](ecsnet::scheduler& s) {
                  s.add("early", ecsnet::system<>{}, nothing).after("late");
                  s.next_phase();
                  s.add("late", ecsnet::system<>{}, nothing);
              }).find("'early' (phase 1) runs after 'late' (phase 2)"),
              std::string::npos);
    // The other direction is fine: a later phase runs after an earlier one anyway.
    EXPECT_EQ(build_error([](ecsnet::scheduler& s) {
                  s.add("early", ecsnet::system<>{}, nothing);
                  s.next_phase();
                  s.add("late", ecsnet::system<>{}, nothing).after("early");
              }),
              "");
}

TEST(SchedulerErrorTest, RegistrationOrderContradictingAfterIsReported) {
    // c conflicts with b and b with a, registered c, b, a: registration order says c, b, a; but c runs
    // after a.
    const auto message = build_error([](ecsnet::scheduler& s) {
        s.add("c", ecsnet::system<writes<C<0>>>{}, nothing).after("a");
        s.add("b", ecsnet::system<reads<C<0>>, writes<C<1>>>{}, nothing);
        s.add("a", ecsnet::system<reads<C<1>>>{}, nothing);
    });
    EXPECT_NE(message.find("registration order contradicts"), std::string::npos) << message;
    EXPECT_NE(message.find("'c' -> 'b' [registered first, conflict on"), std::string::npos) << message;
    EXPECT_NE(message.find("'a' -> 'c' [after<>]"), std::string::npos) << message;
}

// The context refuses undeclared types at compile time, and hands out read-only types as const.
using probe_context =
    ecsnet::system_context<ecsnet::registry, ecsnet::system<reads<Position>, writes<Velocity>>>;
static_assert(std::is_same_v<decltype(std::declval<probe_context&>().get<Position>(ecsnet::entity{})),
                             const Position&>);
static_assert(
    std::is_same_v<decltype(std::declval<probe_context&>().get<Velocity>(ecsnet::entity{})), Velocity&>);
static_assert(std::is_same_v<decltype(std::declval<probe_context&>().get<const Velocity>(ecsnet::entity{})),
                             const Velocity&>);
static_assert(std::is_same_v<decltype(std::declval<probe_context&>().try_get<Position>(ecsnet::entity{})),
                             const Position*>);
template<typename Context, typename Type>
concept can_get = requires(Context& ctx, ecsnet::entity e) {
    ctx.template get<Type>(e);
};
template<typename Context, typename Type>
concept can_try_get = requires(Context& ctx, ecsnet::entity e) {
    ctx.template try_get<Type>(e);
};
template<typename Context, typename... Type>
concept can_view = requires(Context& ctx) {
    ctx.template view<Type...>();
};
template<typename Context, typename Type, typename Excluded>
concept can_view_without = requires(Context& ctx) {
    ctx.template view<Type>(ecsnet::exclude<Excluded>);
};
static_assert(can_view<probe_context, Position, Velocity> && can_get<probe_context, Position>);
static_assert(!can_get<probe_context, Health>, "undeclared: refused");
static_assert(!can_try_get<probe_context, Health>, "undeclared: refused");
static_assert(!can_view<probe_context, Health>, "undeclared: refused");
static_assert(!can_view<probe_context, Position, Health>, "undeclared: refused");
static_assert(can_view_without<probe_context, Velocity, Position>);
static_assert(!can_view_without<probe_context, Velocity, Health>, "a pool nobody prepared: refused");
static_assert(!probe_context::declared<Health> && probe_context::declared<const Position>);
static_assert(requires(probe_context & ctx) { ctx.each([](Velocity&, const Position&) {}); });
// What the signature's view yields: writes mutable, reads const.
static_assert(std::is_invocable_v<decltype([](probe_context& ctx) {
                                      ctx.view().each([](Velocity& v, const Position& p) { v.x += p.x; });
                                  }),
                                  probe_context&>);
static_assert(ecsnet::system<reads<Position>, per_entity>::is_per_entity);
static_assert(!ecsnet::system<reads<Position>>::is_per_entity);
static_assert(std::is_same_v<ecsnet::system<writes<Force>, reads<Position, Mass>>::access_list,
                             ecsnet::type_list<Force, Position, Mass>>);

TEST(SchedulerErrorTest, DeclaredCheckCatchesAWriteToAReadOnlyType) {
    ecsnet::registry world;
    const auto e = world.create();
    world.emplace<Position>(e, 1.f, 1.f);
    world.emplace<Velocity>(e, 0.f, 0.f);
    ecsnet::scheduler s{world, options(2, ecsnet::access_check::declared)};
    s.add("sneaky", ecsnet::system<reads<Position>, writes<Velocity>>{}, [](auto& ctx) {
        ctx.view().each([](Velocity& v, const Position& p) {
            v.x = p.x;
            const_cast<Position&>(p).x += 1.f; // a write the signature does not allow
        });
    });
    try {
        s.run_tick();
        FAIL() << "the write went unnoticed";
    } catch (const ecsnet::access_violation& error) {
        EXPECT_EQ(error.system(), "sneaky");
        EXPECT_EQ(error.component(), ecsnet::type_name<Position>());
        EXPECT_NE(std::string{error.what()}.find("declared read-only"), std::string::npos) << error.what();
    }
}

TEST(SchedulerErrorTest, StrictCheckCatchesAWriteToAnUndeclaredType) {
    ecsnet::registry world;
    const auto e = world.create();
    world.emplace<Position>(e, 1.f, 1.f);
    world.emplace<Health>(e, 10);
    const auto setup = [&world](ecsnet::scheduler& s) {
        s.add("honest", ecsnet::system<writes<Health>>{},
              [](auto& ctx) { ctx.each([](Health& h) { h.value += 0; }); });
        s.add("sneaky", ecsnet::system<writes<Position>>{}, [&world](auto& ctx) {
            ctx.each([&world](ecsnet::entity entity, Position&) { world.get<Health>(entity).value -= 1; });
        });
    };
    {
        // Health is declared by another system, not by "sneaky": only the strict check can tell. (One
        // thread: the two systems do not conflict on paper, so they could otherwise race.)
        ecsnet::scheduler s{world, options(1, ecsnet::access_check::declared)};
        setup(s);
        EXPECT_NO_THROW(s.run_tick());
    }
    ecsnet::scheduler s{world, options(2, ecsnet::access_check::strict)};
    setup(s);
    try {
        s.run_tick();
        FAIL() << "the write went unnoticed";
    } catch (const ecsnet::access_violation& error) {
        EXPECT_EQ(error.system(), "sneaky");
        EXPECT_EQ(error.component(), ecsnet::type_name<Health>());
        EXPECT_NE(std::string{error.what()}.find("which it did not declare"), std::string::npos)
            << error.what();
    }
}

TEST(SchedulerErrorTest, StructuralChangesOutsideCommandBuffersAreCaught) {
    ecsnet::registry world;
    const auto e = world.create();
    world.emplace<Position>(e, 1.f, 1.f);
    {
        ecsnet::scheduler s{world, options(1, ecsnet::access_check::declared)};
        s.add("emplacer", ecsnet::system<reads<Position>, writes<Velocity>>{}, [&world, e](auto&) {
            world.emplace<Velocity>(e, 0.f, 0.f); // should have been ctx.commands().emplace
        });
        try {
            s.run_tick();
            FAIL() << "the structural change went unnoticed";
        } catch (const ecsnet::access_violation& error) {
            EXPECT_EQ(error.system(), "emplacer");
            EXPECT_NE(std::string{error.what()}.find("changed which entities have"), std::string::npos)
                << error.what();
        }
    }
    {
        ecsnet::scheduler s{world, options(1, ecsnet::access_check::strict)};
        s.add("creator", ecsnet::system<>{}, [&world](auto&) { static_cast<void>(world.create()); });
        try {
            s.run_tick();
            FAIL() << "the creation went unnoticed";
        } catch (const ecsnet::access_violation& error) {
            EXPECT_EQ(error.system(), "creator");
            EXPECT_NE(std::string{error.what()}.find("created or destroyed entities"), std::string::npos)
                << error.what();
        }
    }
}

// ---- failures ------------------------------------------------------------------------------------------

TEST(SchedulerFailureTest, ASystemsExceptionReachesTheCallerWithItsName) {
    for (const std::size_t threads : {1U, 2U, 4U}) {
        ecsnet::registry world;
        ecsnet::scheduler s{world, options(threads)};
        bool fail = true;
        std::atomic<int> dependent_runs{0};
        s.add("spawner", ecsnet::system<writes<C<0>>>{},
              [](auto& ctx) { static_cast<void>(ctx.commands().create()); });
        s.add("faulty", ecsnet::system<reads<C<0>>>{}, [&fail](auto&) {
             if (fail) {
                 throw std::out_of_range("boom");
             }
         }).after("spawner");
        s.add("dependent", ecsnet::system<>{}, [&dependent_runs](auto&) {
             dependent_runs.fetch_add(1);
         }).after("faulty");
        try {
            s.run_tick();
            FAIL() << "the exception was swallowed";
        } catch (const ecsnet::system_failure& error) {
            EXPECT_EQ(error.system(), "faulty");
            EXPECT_NE(std::string{error.what()}.find("system 'faulty' threw: boom"), std::string::npos)
                << error.what();
            try {
                std::rethrow_if_nested(error);
                FAIL() << "the original exception is not nested";
            } catch (const std::out_of_range& original) {
                EXPECT_STREQ(original.what(), "boom");
            }
        }
        EXPECT_EQ(dependent_runs.load(), 0) << "systems after a failure do not start";
        EXPECT_EQ(world.alive(), 0U) << "the failed phase's commands were discarded";

        fail = false;
        ASSERT_NO_THROW(s.run_tick()) << "the scheduler recovers";
        EXPECT_EQ(dependent_runs.load(), 1);
        EXPECT_EQ(world.alive(), 1U);
    }
}

TEST(SchedulerFailureTest, AnExceptionInAParallelChunkNamesTheSystem) {
    ecsnet::registry world;
    for (int i = 0; i < 5000; ++i) {
        world.emplace<C<0>>(world.create(), i);
    }
    ecsnet::scheduler s{world, options(4)};
    s.add("chunky", ecsnet::system<writes<C<0>>, per_entity>{}, [](auto& ctx) {
        ctx.parallel_each(
            [](C<0>& c) {
                if (c.value == 4321) {
                    throw std::runtime_error("bad entity");
                }
            },
            100);
    });
    try {
        s.run_tick();
        FAIL();
    } catch (const ecsnet::system_failure& error) {
        EXPECT_EQ(error.system(), "chunky");
        EXPECT_NE(std::string{error.what()}.find("bad entity"), std::string::npos);
    }
}

TEST(SchedulerFailureTest, AFailingCommandNamesTheSystemThatRecordedIt) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(2)};
    s.add("quiet", ecsnet::system<>{}, [](auto& ctx) { ctx.commands().enqueue([](ecsnet::registry&) {}); });
    s.add("loud", ecsnet::system<>{}, [](auto& ctx) {
        ctx.commands().enqueue([](ecsnet::registry&) { throw std::runtime_error("listener refused"); });
    });
    try {
        s.run_tick();
        FAIL();
    } catch (const ecsnet::system_failure& error) {
        EXPECT_EQ(error.system(), "loud");
        EXPECT_NE(std::string{error.what()}.find("listener refused"), std::string::npos) << error.what();
    }
    ASSERT_NO_THROW(s.build());
}

TEST(SchedulerFailureTest, RunTickFromASystemIsRefused) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(2)};
    s.add("recursive", ecsnet::system<>{}, [&s](auto&) { s.run_tick(); });
    try {
        s.run_tick();
        FAIL();
    } catch (const ecsnet::system_failure& error) {
        EXPECT_NE(std::string{error.what()}.find("while a tick is running"), std::string::npos)
            << error.what();
    }
}

// ---- commands, phases, lifecycle, description -----------------------------------------------------------

TEST(SchedulerCommandTest, CommandOrderDoesNotDependOnRegistrationOrThreads) {
    std::vector<std::vector<int>> results;
    for (const bool swapped : {false, true}) {
        for (const std::size_t threads : {1U, 2U, 4U}) {
            ecsnet::registry world;
            ecsnet::scheduler s{world, options(threads)};
            const auto beta = [](auto& ctx) {
                for (int i = 0; i < 3; ++i) {
                    ctx.commands().template emplace<C<5>>(ctx.commands().create(), 200 + i);
                }
            };
            const auto alpha = [](auto& ctx) {
                for (int i = 0; i < 3; ++i) {
                    ctx.commands().template emplace<C<5>>(ctx.commands().create(), 100 + i);
                }
            };
            if (swapped) {
                s.add("beta", ecsnet::system<writes<C<1>>>{}, beta);
                s.add("alpha", ecsnet::system<writes<C<2>>>{}, alpha);
            } else {
                s.add("alpha", ecsnet::system<writes<C<2>>>{}, alpha);
                s.add("beta", ecsnet::system<writes<C<1>>>{}, beta);
            }
            s.run_tick();
            std::vector<int> by_index;
            world.each([&](ecsnet::entity e) { by_index.push_back(world.get<C<5>>(e).value); });
            results.push_back(by_index);
        }
    }
    const std::vector<int> expected{100, 101, 102, 200, 201, 202}; // canonical order: alpha, then beta
    for (const auto& result : results) {
        EXPECT_EQ(result, expected);
    }
}

TEST(SchedulerCommandTest, ChunkCommandsApplyInChunkOrderWhicheverThreadRanThem) {
    // Each even chunk waits until the next chunk has started: the two threads must alternate, so each
    // thread's buffer holds every other chunk's commands. They must still apply in chunk order.
    constexpr std::size_t chunks = 16;
    ecsnet::registry world;
    for (std::size_t i = 0; i < chunks; ++i) {
        world.emplace<C<0>>(world.create(), static_cast<int>(i));
    }
    ecsnet::scheduler s{world, options(2)};
    std::array<std::atomic<bool>, chunks + 1> started{};
    std::array<std::size_t, chunks> worker_of{};
    s.add("recorder", ecsnet::system<writes<C<0>>, per_entity>{}, [&](auto& ctx) {
        ctx.parallel_each(
            [&](ecsnet::entity e, C<0>& c) {
                const auto chunk = static_cast<std::size_t>(c.value);
                worker_of[chunk] = ctx.worker();
                started[chunk] = true;
                ctx.commands().template emplace<C<1>>(e, c.value);
                if (chunk % 2 == 0 && chunk + 1 < chunks) {
                    EXPECT_TRUE(eventually([&] { return started[chunk + 1].load(); }));
                }
            },
            1);
    });
    s.run_tick();
    bool alternated = false;
    for (std::size_t chunk = 1; chunk < chunks; ++chunk) {
        alternated = alternated || worker_of[chunk] != worker_of[chunk - 1];
    }
    ASSERT_TRUE(alternated);
    const auto& pool = world.storage<C<1>>();
    ASSERT_EQ(pool.size(), chunks);
    for (std::size_t at = 0; at < chunks; ++at) {
        EXPECT_EQ(pool.raw()[at].value, static_cast<int>(at))
            << "commands applied in the order threads ran them";
    }
}

TEST(SchedulerCommandTest, ALaterPhaseSeesTheCommandsOfAnEarlierOne) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(2)};
    std::vector<std::size_t> counted;
    s.add("spawner", ecsnet::system<>{}, [](auto& ctx) {
        ctx.commands().template emplace<C<0>>(ctx.commands().create(), static_cast<int>(ctx.tick().index));
    });
    s.add("counter_same_phase", ecsnet::system<reads<C<0>>>{}, [&counted](auto& ctx) {
        std::size_t n = 0;
        ctx.each([&n](const C<0>&) { ++n; });
        counted.push_back(n);
    });
    s.next_phase();
    s.add("counter_next_phase", ecsnet::system<reads<C<0>>>{}, [&counted](auto& ctx) {
        std::size_t n = 0;
        ctx.each([&n](const C<0>&) { ++n; });
        counted.push_back(n);
    });
    s.run_tick();
    s.run_tick();
    EXPECT_EQ(counted, (std::vector<std::size_t>{0, 1, 1, 2}));
    EXPECT_EQ(s.last_tick().index, 2U);
}

TEST(SchedulerCommandTest, DeferredReplaceFiresOnUpdateOnTheTickThread) {
    ecsnet::registry world;
    const auto e = world.create();
    world.emplace<C<3>>(e, 1);
    std::vector<std::thread::id> listeners;
    auto connection = world.on_update<C<3>>().connect(
        [&listeners](ecsnet::registry&, ecsnet::entity) { listeners.push_back(std::this_thread::get_id()); });
    ecsnet::scheduler s{world, options(4)};
    for (int i = 0; i < 4; ++i) {
        s.add(numbered("patcher", static_cast<std::size_t>(i)), ecsnet::system<reads<C<3>>>{},
              [e](auto& ctx) { ctx.commands().template patch<C<3>>(e, [](C<3>& c) { c.value *= 2; }); });
    }
    s.run_tick();
    EXPECT_EQ(world.get<C<3>>(e).value, 16);
    ASSERT_EQ(listeners.size(), 4U);
    for (const auto id : listeners) {
        EXPECT_EQ(id, std::this_thread::get_id());
    }
    connection.release();
}

TEST(SchedulerLifecycleTest, StartsAndStopsCleanlyAndPassesTheTick) {
    for (int round = 0; round < 10; ++round) {
        ecsnet::registry world;
        ecsnet::scheduler s{world, options(4)};
        std::vector<double> deltas;
        std::vector<std::uint64_t> indices;
        s.add("clock", ecsnet::system<>{}, [&](auto& ctx) {
            deltas.push_back(ctx.tick().delta_seconds);
            indices.push_back(ctx.tick().index);
            EXPECT_EQ(ctx.name(), "clock");
            EXPECT_LT(ctx.worker(), 4U);
        });
        for (int tick = 0; tick < 3; ++tick) {
            s.run_tick(0.5 * tick);
        }
        EXPECT_EQ(deltas, (std::vector<double>{0.0, 0.5, 1.0}));
        EXPECT_EQ(indices, (std::vector<std::uint64_t>{1, 2, 3}));
        EXPECT_EQ(s.threads(), 4U);
    } // each scheduler joins its threads here
}

TEST(SchedulerLifecycleTest, SystemsAddedAfterATickJoinTheNextOne) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(2)};
    int first = 0;
    int second = 0;
    s.add("first", ecsnet::system<writes<C<0>>>{}, [&](auto&) { ++first; });
    s.run_tick();
    s.add("second", ecsnet::system<reads<C<0>>>{}, [&](auto&) {
        EXPECT_EQ(first, second + 2);
        ++second;
    });
    s.run_tick();
    s.run_tick();
    EXPECT_EQ(first, 3);
    EXPECT_EQ(second, 2);
    EXPECT_EQ(s.size(), 2U);
}

TEST(SchedulerDescribeTest, PrintsPhasesChainsLevelsAndReasons) {
    ecsnet::registry world;
    ecsnet::scheduler s{world, options(1)};
    s.add("input", ecsnet::system<writes<Velocity>>{}, nothing);
    s.add("physics", ecsnet::system<reads<Velocity>, writes<Position>>{}, nothing);
    s.add("network", ecsnet::system<reads<Position>>{}, nothing).after("input");
    s.add("audio", ecsnet::system<reads<Heat>>{}, nothing);
    s.next_phase();
    s.add("cleanup", ecsnet::system<writes<Health>>{}, nothing);
    const auto text = s.describe();
    const auto vel = std::string{ecsnet::type_name<Velocity>()};
    const auto pos = std::string{ecsnet::type_name<Position>()};
    EXPECT_NE(text.find("5 systems, 2 phases"), std::string::npos) << text;
    EXPECT_NE(text.find("phase 1: 4 systems, 2 chains, longest path 3"), std::string::npos) << text;
    EXPECT_NE(text.find("phase 2: 1 system, 1 chain, longest path 1"), std::string::npos) << text;
    EXPECT_NE(text.find("L1  physics"), std::string::npos) << text;
    EXPECT_NE(text.find("<- input (" + vel + ")"), std::string::npos) << text;
    EXPECT_NE(text.find("<- physics (" + pos + ")"), std::string::npos) << text;
    EXPECT_EQ(text.find("<- input (after)"), std::string::npos)
        << "network after input is implied: reduced away\n"
        << text;
    const auto& graph = s.graph();
    EXPECT_EQ(graph.edges().size(), 2U);
    EXPECT_EQ(graph.phases()[0].chains.size(), 2U);
    EXPECT_EQ(graph.phases()[0].roots.size(), 2U);
}

// ---- owning_group: a system iterating the full-owning group of its types -----------------------------

struct GroupedPosition {
    float x;
};
struct GroupedVelocity {
    float dx;
};
struct GroupedFrozen {};

// Moves every unfrozen entity with the same function, over a group or over a view; returns the positions.
template<bool Grouped>
std::vector<float> run_grouped_world(std::size_t threads) {
    ecsnet::registry registry;
    std::vector<ecsnet::entity> entities;
    for (std::size_t i = 0; i < 5000; ++i) {
        const auto e = registry.create();
        if (i % 3 != 0) {
            registry.emplace<GroupedVelocity>(e, static_cast<float>(i % 7));
        }
        registry.emplace<GroupedPosition>(e, static_cast<float>(i));
        if (i % 11 == 0) {
            registry.emplace<GroupedFrozen>(e);
        }
        entities.push_back(e);
    }
    ecsnet::scheduler tick{registry, options(threads, ecsnet::access_check::declared)};
    const auto move = [](auto& ctx) {
        ctx.parallel_each([](GroupedPosition& p, const GroupedVelocity& v) { p.x += v.dx; }, 256);
    };
    if constexpr (Grouped) {
        tick.add("move",
                 ecsnet::system<writes<GroupedPosition>, reads<GroupedVelocity>,
                                ecsnet::exclude_t<GroupedFrozen>, per_entity, ecsnet::owning_group>{},
                 move);
    } else {
        tick.add("move",
                 ecsnet::system<writes<GroupedPosition>, reads<GroupedVelocity>,
                                ecsnet::exclude_t<GroupedFrozen>, per_entity>{},
                 move);
    }
    tick.add("spawn", ecsnet::system<reads<GroupedPosition>>{}, [](auto& ctx) {
        // Structural changes each tick: the group must stay exact through the command buffer.
        const auto e = ctx.commands().create();
        ctx.commands().template emplace<GroupedPosition>(e, 0.0F);
        ctx.commands().template emplace<GroupedVelocity>(e, 1.0F);
    });
    for (int t = 0; t < 20; ++t) {
        tick.run_tick(0.1);
    }
    if constexpr (Grouped) {
        EXPECT_TRUE(registry.owned<GroupedPosition>());
        EXPECT_TRUE(registry.owned<GroupedVelocity>());
    }
    std::vector<float> positions;
    registry.each([&](ecsnet::entity e) {
        if (const auto* p = registry.try_get<GroupedPosition>(e)) {
            positions.push_back(p->x);
        }
    });
    return positions;
}

TEST(SchedulerGroupTest, AnOwningGroupSystemComputesWhatTheViewSystemDoes) {
    const auto reference = run_grouped_world<false>(1);
    EXPECT_EQ(run_grouped_world<true>(1), reference);
    EXPECT_EQ(run_grouped_world<true>(2), reference);
}

TEST(SchedulerGroupTest, ConflictingOwnershipIsRefusedAtBuild) {
    ecsnet::registry registry;
    ecsnet::scheduler tick{registry, options(1)};
    tick.add("a", ecsnet::system<writes<GroupedPosition, GroupedVelocity>, ecsnet::owning_group>{},
             [](auto&) {});
    tick.add("b", ecsnet::system<writes<GroupedPosition, GroupedFrozen>, ecsnet::owning_group>{},
             [](auto&) {});
    EXPECT_THROW(tick.build(), ecsnet::group_error);
}

} // namespace

} // namespace scheduler_test
