// Systems and the scheduler: a small server tick. Prints the schedule (scheduler::describe(), the text
// docs/ecs.md shows), then runs a few ticks on 2 threads and prints what happened.

#include <cstdio>

#include <ecsnet/ecs.hpp>

namespace game {

using ecsnet::after;
using ecsnet::per_entity;
using ecsnet::reads;
using ecsnet::writes;

struct Position {
    float x, y;
};
struct Velocity {
    float dx, dy;
};
struct Input {
    float ax, ay;
};
struct Health {
    int value;
};
struct Damage {
    int amount;
};
struct Lifetime {
    int ticks;
};
struct Hazard {}; // a tag: stores no data

// Players' inputs become velocities.
struct apply_input : ecsnet::system<reads<Input>, writes<Velocity>, per_entity> {
    static constexpr const char* name = "apply_input";
    void update(context<>& ctx) {
        ctx.parallel_each([](Velocity& v, const Input& in) {
            v.dx = 0.9f * v.dx + in.ax;
            v.dy = 0.9f * v.dy + in.ay;
        });
    }
};

// Everything that moves, split across the pool's threads.
struct movement : ecsnet::system<reads<Velocity>, writes<Position>, per_entity> {
    static constexpr const char* name = "movement";
    void update(context<>& ctx) {
        const auto dt = static_cast<float>(ctx.tick().delta_seconds);
        ctx.parallel_each([dt](Position& p, const Velocity& v) {
            p.x += v.dx * dt;
            p.y += v.dy * dt;
        });
    }
};

// Hazards hurt whatever stands in the lower half of the map.
struct hazards : ecsnet::system<reads<Position>, writes<Damage>, ecsnet::exclude_t<Hazard>> {
    static constexpr const char* name = "hazards";
    void update(context<>& ctx) {
        ctx.each([](Damage& d, const Position& p) { d.amount = p.y < 0.f ? 5 : 0; });
    }
};

struct combat : ecsnet::system<reads<Damage>, writes<Health>, per_entity> {
    static constexpr const char* name = "combat";
    void update(context<>& ctx) {
        ctx.parallel_each([&ctx](ecsnet::entity e, Health& h, const Damage& d) {
            h.value -= d.amount;
            if (h.value <= 0) {
                ctx.commands().destroy(e); // applied at the end of the phase
            }
        });
    }
};

// Steers: whoever sinks too low climbs back. Reads positions like hazards does, so the two run in parallel.
struct steering : ecsnet::system<reads<Position>, writes<Input>, per_entity> {
    static constexpr const char* name = "steering";
    void update(context<>& ctx) {
        ctx.parallel_each([](Input& in, const Position& p) { in.ay = p.y < -3.f ? 2.f : -1.f; });
    }
};

// A stand-in for the replication layer's per-tick snapshot: after the health changes (a conflict on
// Health orders it after combat) and, declared, after steering (they share no component).
struct snapshot : ecsnet::system<reads<Position, Health>, after<steering>> {
    static constexpr const char* name = "snapshot";
    int entities = 0;
    void update(context<>& ctx) {
        entities = 0;
        ctx.each([this](const Position&, const Health&) { ++entities; });
    }
};

// Independent of everything above: runs in parallel with it.
struct hazard_decay : ecsnet::system<writes<Lifetime>, per_entity> {
    static constexpr const char* name = "hazard_decay";
    void update(context<>& ctx) {
        ctx.parallel_each([&ctx](ecsnet::entity e, Lifetime& life) {
            if (--life.ticks == 0) {
                ctx.commands().destroy(e);
            }
        });
    }
};

// Second phase: sees the first phase's commands applied. Keeps the population up.
struct respawn : ecsnet::system<reads<Health>> {
    static constexpr const char* name = "respawn";
    void update(context<>& ctx) {
        int alive = 0;
        ctx.each([&alive](const Health&) { ++alive; });
        for (; alive < 1000; ++alive) {
            auto& commands = ctx.commands();
            const auto e = commands.create();
            commands.emplace<Position>(e, static_cast<float>(alive % 40), 10.f);
            commands.emplace<Velocity>(e, 0.f, 0.f);
            commands.emplace<Input>(e, 0.f, -1.f);
            commands.emplace<Health>(e, 100);
            commands.emplace<Damage>(e, 0);
        }
    }
};

} // namespace game

int main() {
    ecsnet::registry world;
    for (int i = 0; i < 20; ++i) { // some hazards that expire
        const auto e = world.create();
        world.emplace<game::Position>(e, static_cast<float>(i), -1.f);
        world.emplace<game::Hazard>(e);
        world.emplace<game::Lifetime>(e, 10 + i);
    }

    ecsnet::scheduler_options options;
    options.threads = 2;
    ecsnet::scheduler tick{world, options};
    tick.add<game::apply_input>();
    tick.add<game::movement>();
    tick.add<game::hazards>();
    tick.add<game::combat>();
    tick.add<game::steering>();
    tick.add<game::snapshot>();
    tick.add<game::hazard_decay>();
    tick.next_phase();
    tick.add<game::respawn>();

    std::printf("%s\n", tick.describe().c_str());

    std::size_t commands = 0;
    for (int i = 0; i < 120; ++i) {
        tick.run_tick(1.0 / 30);
        commands += tick.last_commands().applied;
        if (i % 30 == 29) {
            std::printf("tick %llu: %zu entities alive, snapshot saw %d, %zu commands applied so far\n",
                        static_cast<unsigned long long>(tick.last_tick().index), world.alive(),
                        tick.get<game::snapshot>().entities, commands);
        }
    }
    return 0;
}
