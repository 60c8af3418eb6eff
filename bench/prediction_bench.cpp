// Client-side prediction (issue 17): what a rollback and replay costs, and the input delay a player feels.
//
//   BM_AvatarStep           floor: one tick of the avatar (arena::predict_avatar: decode the move input,
//                           set the velocity, move, stay on the grid), as the server's move system and the
//                           predictor each run it
//   BM_RollbackReplay10     predictor::reconcile of a mispredicted tick 10 ticks behind the newest: the
//                           comparison, the rollback to the server's state and 10 ticks replayed (plus the
//                           one advance() per iteration that keeps the prediction 10 ticks ahead)
//   BM_AvatarTick           predictor::advance: one predicted tick of the avatar (step, input and state kept)
//   BM_AvatarAndCompanionTick  the same plus marked_predictions::follow: the companion the server marks
//                           predicted for the client steps with the same input (what a marked entity adds)
//
// Before the benchmarks, main() measures the input delay felt, in a socket-free harness like
// tests/client/prediction_test.cpp (the server's arena world and input buffer, 50 ms each way, 30 Hz): how
// many ticks pass between the tick a player changes its input and the first tick at which what it sees
// moves, with prediction (the predicted avatar) and without (the server's state, as snapshots bring it).

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>

#include <benchmark/benchmark.h>

#include "ecsnet/arena/input.hpp"
#include "ecsnet/arena/movement.hpp"
#include "ecsnet/client/marked_predictions.hpp"
#include "ecsnet/client/predictor.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/input_buffer.hpp"

namespace {

using ecsnet::arena::Transform;

ecsnet::client::prediction_rules<Transform> rules() {
    return {&ecsnet::arena::predict_avatar, &ecsnet::arena::position_of, &ecsnet::arena::displace};
}

const std::string walk = ecsnet::arena::encode({0, 0.6F, 0.8F, 6.0F});

void BM_AvatarStep(benchmark::State& state) {
    Transform t{10.0F, 20.0F, 0.0F, 0.0F};
    for (auto _ : state) {
        ecsnet::arena::predict_avatar(t, walk, 1.0 / 30.0);
        benchmark::DoNotOptimize(t);
        if (t.x > 1000.0F) {
            t = {10.0F, 20.0F, 0.0F, 0.0F};
        }
    }
}
BENCHMARK(BM_AvatarStep);

void BM_RollbackReplay10(benchmark::State& state) {
    ecsnet::client::predictor<Transform> p{rules(), 1.0 / 30.0};
    p.restart(0, Transform{10.0F, 20.0F, 0.0F, 0.0F});
    for (int i = 0; i < 10; ++i) {
        p.advance(walk);
    }
    p.caught_up();
    for (auto _ : state) {
        p.advance(walk);
        const auto tick = p.newest_tick() - 10;
        auto server = *p.predicted_at(tick);
        server.x = ecsnet::arena::on_position_grid(server.x + 0.5F); // pushed: a misprediction
        if (server.x > 1000.0F) {
            server.x = 10.0F;
        }
        benchmark::DoNotOptimize(p.reconcile(tick, server));
    }
    state.counters["replayed_per_iteration"] = benchmark::Counter(
        static_cast<double>(p.stats().ticks_replayed) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_RollbackReplay10);

void BM_AvatarTick(benchmark::State& state) {
    ecsnet::client::predictor<Transform> own{rules(), 1.0 / 30.0};
    own.restart(0, Transform{10.0F, 20.0F, 0.0F, 0.0F});
    for (auto _ : state) {
        own.advance(walk);
        benchmark::DoNotOptimize(own.predicted());
    }
}
BENCHMARK(BM_AvatarTick);

void BM_AvatarAndCompanionTick(benchmark::State& state) {
    ecsnet::client::predictor<Transform> own{rules(), 1.0 / 30.0};
    ecsnet::client::marked_predictions<Transform> marked{
        {&ecsnet::arena::predict_companion, &ecsnet::arena::position_of, &ecsnet::arena::displace},
        1.0 / 30.0};
    own.restart(0, Transform{10.0F, 20.0F, 0.0F, 0.0F});
    const ecsnet::proto::net_entity drone{2, 0};
    marked.mark(std::span{&drone, 1});
    marked.reconcile(drone, 0, Transform{11.0F, 20.0F, 0.0F, 0.0F}, own);
    for (auto _ : state) {
        own.advance(walk);
        marked.follow(own);
        benchmark::DoNotOptimize(marked.find(drone)->predicted());
    }
    state.counters["companion_ticks_per_iteration"] = benchmark::Counter(
        static_cast<double>(marked.totals().ticks_predicted) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_AvatarAndCompanionTick);

// Ticks from the input's change to the first tick at which what the player sees moves.
std::uint32_t felt_delay(bool predict) {
    constexpr std::uint32_t rate = 30;
    constexpr double one_way_ms = 50.0;
    constexpr std::uint32_t lead = 4;
    constexpr std::uint32_t press = 60; // the client's tick at which the player starts walking
    ecsnet::server::arena_world world{{.npcs = 0, .seed = 7, .tick_rate = rate, .workers = 1}};
    const auto avatar = world.client_joined(1, "player");
    ecsnet::server::input_buffer buffer;
    ecsnet::client::predictor<Transform> p{rules(), 1.0 / rate};
    struct in_flight {
        double arrives;
        std::uint32_t tick;
        std::string payload;
        Transform state;
    };
    std::deque<in_flight> up;
    std::deque<in_flight> down;
    std::uint32_t sequence = 0;
    std::optional<Transform> start;
    for (std::uint32_t tick = 0; tick < 300; ++tick) {
        const double now = tick * 1000.0 / rate;
        while (!up.empty() && up.front().arrives <= now) {
            buffer.offer({up.front().tick, ++sequence, {}}, up.front().payload, tick + 1, rate);
            up.pop_front();
        }
        buffer.take(tick + 1, [&](const ecsnet::server::client_input& in) {
            static_cast<void>(world.apply_input(1, avatar, in));
        });
        world.update(1.0 / rate);
        down.push_back({now + one_way_ms, tick + 1, {}, world.registry().get<Transform>(avatar)});
        std::optional<Transform> seen;
        while (!down.empty() && down.front().arrives <= now) {
            if (predict) {
                p.reconcile(down.front().tick, down.front().state);
            }
            seen = down.front().state;
            down.pop_front();
        }
        // The client's tick: `tick` as it sees the server clock; the player presses at `press`.
        if (predict) {
            while (p.started() && p.newest_tick() < tick + lead) {
                const auto t = p.newest_tick() + 1;
                const auto payload = t >= press + lead ? walk : ecsnet::arena::encode({});
                up.push_back({now + one_way_ms, t, payload, {}});
                p.advance(payload);
            }
            seen = p.started() ? std::optional{p.predicted()} : std::nullopt;
        } else {
            up.push_back({now + one_way_ms, tick + 1, tick >= press ? walk : ecsnet::arena::encode({}), {}});
        }
        if (tick + 1 == press && seen) { // what it saw just before pressing
            start = seen;
        }
        if (tick >= press && start && seen && (seen->x != start->x || seen->y != start->y)) {
            return tick - press;
        }
    }
    return 9999;
}

} // namespace

int main(int argc, char** argv) {
    std::printf("input delay felt at 100 ms RTT, 30 Hz: prediction on %u ticks, off %u ticks\n",
                felt_delay(true), felt_delay(false));
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
