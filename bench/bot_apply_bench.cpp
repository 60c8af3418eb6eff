// What a full bot spends per applied snapshot (issue 15), without sockets: the demo arena of 10,000 NPCs
// and N clients joined through interest_replicator (radius 160 m, about 200 entities each, relevancy every
// 4 ticks), as bench/server_replication_callgrind.cpp runs it, each avatar walking in a direction that
// turns every 2 seconds (views gain and lose entities as a wandering bot's do). The server side is recorded
// first (not timed): each client's envelope bytes, tick by tick. Then N view mirrors, each with its own
// registry as a bot's client_replica has, apply them round-robin: one tick for every client, then the next.
// With N = 1 the mirror stays in the cache (hot); with N = 500 the mirrors do not fit in it and every
// snapshot starts on cold memory, as in ecsnet-bots.
//
//   BM_BotApply/<clients>/<ticks>/<late>
//       view_mirror::apply_envelope of every recorded snapshot, timed ticks after warm-up ticks applied
//       untimed: us_per_snapshot. late = 0: each ack reaches the server before its next tick (bots on the
//       server's box: each view is based on the one before); late = 1: acks 1 to 3 ticks late, as in
//       server_replication_callgrind (views based on older ones, in interleaved chains)
//   BM_BotParse/<clients>/<ticks>/<late>
//       the floor: the same bytes only parsed into an Envelope (protobuf)
//
// Time is this thread's CPU time (the machine is shared): compare the two in the same run. For
// instruction counts, run one size under callgrind, counting only the timed ticks' functions (apply_round
// and parse_round: named, never inlined; the warm-up and the recording are not counted), one command line:
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/bot.cg --toggle-collect='*apply_round*'
//       --toggle-collect='*parse_round*' build/bench/bot_apply_bench --benchmark_filter='/50/60/0'
//   callgrind_annotate --inclusive=yes /tmp/bot.cg | grep -E "apply_round|parse_round"
// and divide by the snapshots of the timed ticks (60 x 50 = 3,000).

#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecsnet/arena/input.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/view_mirror.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/server_metrics.hpp"

#include "thread_cpu_clock.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

constexpr int warmup_ticks = 30;

// Every client's envelopes, by tick: bytes[t][c].
struct recording {
    std::vector<std::vector<std::string>> bytes;
    double mean_bytes{};
};

recording record(std::size_t clients, int ticks, bool late) {
    arena_world world{arena_options{10'000, 42, 30, 1}};
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    server_metrics metrics;
    interest_replicator replicator{world, history, *world.spatial(),
                                   interest_options{160.0F, 128, 30, 4, 128, 52, 1}, metrics};
    struct client {
        client_id id{};
        entity avatar{null_entity};
        std::unique_ptr<client_replication> replication;
        std::deque<proto::tick_type> in_flight;
        std::size_t lag{};
    };
    std::vector<client> joined;
    for (std::size_t i = 0; i < clients; ++i) {
        const auto id = static_cast<client_id>(i + 1);
        const auto avatar = world.client_joined(id, "bot" + std::to_string(id));
        std::optional<refusal> refused;
        client c;
        c.id = id;
        c.avatar = avatar;
        c.replication = replicator.join(id, avatar, v1::ClientHello{}, refused);
        c.lag = late ? 1 + i % 3 : 0;
        joined.push_back(std::move(c));
    }
    recording out;
    double total = 0;
    proto::tick_type now = 0;
    for (int t = 0; t < warmup_ticks + ticks; ++t) {
        for (std::size_t i = 0; i < clients; ++i) {
            const auto heading = 2.399 * static_cast<double>(i + 1) * static_cast<double>(1 + t / 60);
            const auto input = arena::encode(arena::move_input{0, static_cast<float>(std::cos(heading)),
                                                               static_cast<float>(std::sin(heading)), 4.0F});
            client_input move;
            move.client_tick = now + 1;
            move.payload = input;
            static_cast<void>(world.apply_input(joined[i].id, joined[i].avatar, move));
        }
        world.update(1.0 / 30.0);
        ++now;
        const auto time_us = std::uint64_t{now} * 1'000'000 / 30;
        history.capture(now, time_us);
        replicator.tick(now, time_us);
        auto& tick_bytes = out.bytes.emplace_back(clients);
        for (std::size_t i = 0; i < clients; ++i) {
            auto& c = joined[i];
            if (auto snapshot = replicator.snapshot(*c.replication)) {
                tick_bytes[i] = std::string{snapshot->envelope()};
                replicator.sent(*c.replication, snapshot->envelope().size() + 52);
                c.in_flight.push_back(snapshot->tick);
                if (t >= warmup_ticks) {
                    total += static_cast<double>(tick_bytes[i].size());
                }
            }
            while (c.in_flight.size() > c.lag) {
                v1::Ack ack;
                ack.set_tick(c.in_flight.front());
                c.in_flight.pop_front();
                replicator.on_ack(*c.replication, ack);
            }
        }
    }
    out.mean_bytes = total / static_cast<double>(clients) / ticks;
    return out;
}

// One tick of every client's snapshot, applied by its own mirror. Returns the snapshots refused.
[[gnu::noinline]] std::size_t apply_round(std::vector<std::unique_ptr<proto::view_mirror>>& mirrors,
                                          const std::vector<std::string>& tick_bytes) {
    std::size_t refused = 0;
    for (std::size_t i = 0; i < mirrors.size(); ++i) {
        if (!tick_bytes[i].empty() && !mirrors[i]->apply_envelope(tick_bytes[i])) {
            ++refused;
        }
    }
    return refused;
}

// The warm-up ticks, untimed (a function of its own, so that callgrind counts apply_round alone).
[[gnu::noinline]] std::size_t warm_up(std::vector<std::unique_ptr<proto::view_mirror>>& mirrors,
                                      const recording& recorded) {
    std::size_t refused = 0;
    for (int t = 0; t < warmup_ticks; ++t) {
        for (std::size_t i = 0; i < mirrors.size(); ++i) {
            const auto& bytes = recorded.bytes[static_cast<std::size_t>(t)][i];
            if (!bytes.empty() && !mirrors[i]->apply_envelope(bytes)) {
                ++refused;
            }
        }
    }
    return refused;
}

// The floor: the same bytes parsed into an Envelope and nothing more.
[[gnu::noinline]] std::size_t parse_round(v1::Envelope& envelope,
                                          const std::vector<std::string>& tick_bytes) {
    std::size_t failed = 0;
    for (const auto& bytes : tick_bytes) {
        if (!bytes.empty() && !proto::decode_envelope(bytes, envelope)) {
            ++failed;
        }
    }
    return failed;
}

std::size_t snapshots_in(const std::vector<std::string>& tick_bytes) {
    std::size_t n = 0;
    for (const auto& b : tick_bytes) {
        n += b.empty() ? 0 : 1;
    }
    return n;
}

// Recorded once per size, for both benchmarks.
const recording& recorded_for(std::size_t clients, int ticks, bool late) {
    static std::map<std::tuple<std::size_t, int, bool>, recording> recordings;
    auto [it, fresh] = recordings.try_emplace({clients, ticks, late});
    if (fresh) {
        it->second = record(clients, ticks, late);
    }
    return it->second;
}

void BM_BotApply(benchmark::State& state) {
    const auto clients = static_cast<std::size_t>(state.range(0));
    const auto ticks = static_cast<int>(state.range(1));
    const auto& recorded = recorded_for(clients, ticks, state.range(2) != 0);
    std::size_t refused = 0;
    std::size_t applied = 0;
    double seconds = 0;
    for (auto _ : state) {
        std::vector<std::unique_ptr<proto::view_mirror>> mirrors;
        for (std::size_t i = 0; i < clients; ++i) {
            mirrors.push_back(std::make_unique<proto::view_mirror>(arena::replicated_schema()));
        }
        refused += warm_up(mirrors, recorded);
        const double start = ecsnet::bench::thread_cpu_seconds();
        for (int t = warmup_ticks; t < warmup_ticks + ticks; ++t) {
            const auto& tick_bytes = recorded.bytes[static_cast<std::size_t>(t)];
            refused += apply_round(mirrors, tick_bytes);
            applied += snapshots_in(tick_bytes);
        }
        const double spent = ecsnet::bench::thread_cpu_seconds() - start;
        seconds += spent;
        state.SetIterationTime(spent);
        for (const auto& m : mirrors) {
            if (!m->verify()) {
                state.SkipWithError("a mirror differs from its view");
            }
        }
    }
    state.counters["us_per_snapshot"] = seconds * 1e6 / static_cast<double>(applied);
    state.counters["refused"] = static_cast<double>(refused);
    state.counters["bytes_per_snapshot"] = recorded.mean_bytes;
}

void BM_BotParse(benchmark::State& state) {
    const auto clients = static_cast<std::size_t>(state.range(0));
    const auto ticks = static_cast<int>(state.range(1));
    const auto& recorded = recorded_for(clients, ticks, state.range(2) != 0);
    v1::Envelope envelope;
    std::size_t failed = 0;
    std::size_t parsed = 0;
    double seconds = 0;
    for (auto _ : state) {
        const double start = ecsnet::bench::thread_cpu_seconds();
        for (int t = warmup_ticks; t < warmup_ticks + ticks; ++t) {
            const auto& tick_bytes = recorded.bytes[static_cast<std::size_t>(t)];
            failed += parse_round(envelope, tick_bytes);
            parsed += snapshots_in(tick_bytes);
        }
        const double spent = ecsnet::bench::thread_cpu_seconds() - start;
        seconds += spent;
        state.SetIterationTime(spent);
    }
    state.counters["us_per_snapshot"] = seconds * 1e6 / static_cast<double>(parsed);
    state.counters["failed"] = static_cast<double>(failed);
}

// {clients, timed ticks, late acks}: hot (one mirror), then cold (500 mirrors); 50 for callgrind. The time
// shown is the timed ticks' thread CPU time. The parse floor runs the same cases.
void bot_cases(benchmark::internal::Benchmark* b) {
    for (const std::int64_t late : {0, 1}) {
        b->Args({1, 3000, late})->Args({50, 60, late})->Args({500, 60, late});
    }
    b->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_BotApply)->Apply(bot_cases);
BENCHMARK(BM_BotParse)->Apply(bot_cases);

} // namespace

BENCHMARK_MAIN();
