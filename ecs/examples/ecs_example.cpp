// A tour of the ECS core: entities, components, a view, signals. Run by scripts/run until the server exists.

#include <cstdio>

#include <ecsnet/ecs.hpp>

namespace {

struct Position {
    float x, y;
};
struct Velocity {
    float dx, dy;
};
struct Frozen {}; // a tag: stores no data

} // namespace

int main() {
    ecsnet::registry world;

    int spawned = 0;
    auto on_spawn =
        world.on_construct<Position>().connect([&spawned](ecsnet::registry&, ecsnet::entity) { ++spawned; });

    for (int i = 0; i < 5; ++i) {
        const auto e = world.create();
        world.emplace<Position>(e, float(i), 0.f);
        world.emplace<Velocity>(e, 1.f, 0.5f * float(i));
        if (i % 2 == 0) {
            world.emplace<Frozen>(e);
        }
    }

    // Move everything that is not frozen.
    const float dt = 1.f / 30.f;
    for (int tick = 0; tick < 30; ++tick) {
        world.view<Position, const Velocity>(ecsnet::exclude<Frozen>)
            .each([dt](Position& p, const Velocity& v) {
                p.x += v.dx * dt;
                p.y += v.dy * dt;
            });
    }

    world.view<const Position>().each([&world](ecsnet::entity e, const Position& p) {
        std::printf("entity %u (version %u): (%.2f, %.2f)%s\n", ecsnet::to_index(e), ecsnet::to_version(e),
                    p.x, p.y, world.all_of<Frozen>(e) ? " frozen" : "");
    });
    std::printf("%d positions constructed, %zu entities alive\n", spawned, world.alive());
    on_spawn.release();
    return 0;
}
