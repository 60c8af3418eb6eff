// Instruction counts of the full-owning group update against its floor, for valgrind --tool=callgrind
// (repeatable on a loaded machine, unlike timings). The workload of bench/ecs_bench.cpp: 1,000,000 entities
// with Position and Velocity, p += v * dt. `group_loop_callgrind group` runs 10 passes of
// group<Position, const Velocity>::each, `group_loop_callgrind floor` 10 passes of the plain two-vector
// loop; compare the inclusive counts of group_pass and floor_pass (bench/RESULTS.md, "Groups and sorting").

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include <ecsnet/ecs.hpp>

namespace {

constexpr std::size_t entity_count = 1'000'000;
constexpr int passes = 10;
constexpr float dt = 1.0F / 60.0F;

struct Position {
    float x, y, z;
};
struct Velocity {
    float x, y, z;
};

template<typename Group>
[[gnu::noinline]] void group_pass(const Group& group) {
    group.each([](Position& p, const Velocity& v) {
        p.x += v.x * dt;
        p.y += v.y * dt;
        p.z += v.z * dt;
    });
}

[[gnu::noinline]] void floor_pass(std::vector<Position>& positions, const std::vector<Velocity>& velocities) {
    for (std::size_t i = 0; i < positions.size(); ++i) {
        positions[i].x += velocities[i].x * dt;
        positions[i].y += velocities[i].y * dt;
        positions[i].z += velocities[i].z * dt;
    }
}

} // namespace

int main(int argc, char** argv) {
    const bool group = argc > 1 && std::strcmp(argv[1], "group") == 0;
    if (group) {
        ecsnet::registry registry;
        for (std::size_t i = 0; i < entity_count; ++i) {
            const auto e = registry.create();
            registry.emplace<Position>(e, 0.F, 0.F, 0.F);
            registry.emplace<Velocity>(e, 1.F, 2.F, 3.F);
        }
        const auto moving = registry.group<Position, const Velocity>();
        for (int pass = 0; pass < passes; ++pass) {
            group_pass(moving);
        }
        std::printf("%f\n", static_cast<double>(registry.get<Position>(moving[0]).x));
    } else {
        std::vector<Position> positions(entity_count, Position{0.F, 0.F, 0.F});
        const std::vector<Velocity> velocities(entity_count, Velocity{1.F, 2.F, 3.F});
        for (int pass = 0; pass < passes; ++pass) {
            floor_pass(positions, velocities);
        }
        std::printf("%f\n", static_cast<double>(positions[0].x));
    }
}
