// What the server spends per client and tick on interest-managed replication (issue 15), without sockets:
// the demo arena of 10,000 NPCs, N clients joined through interest_replicator (radius 160 m, about 200
// entities each, budget 128 kbps, relevancy every 8 ticks), and per tick what game_server::tick does for
// them: the world's systems, the capture, the replicator's tick (grid, relevant sets), then each client's
// snapshot and its ack, L to L + 2 ticks late (--lag L, default 1; a client 200 ms away acks 6 or more
// ticks late at 30 Hz); with --burst B, client i acks every (i mod B) + 1 ticks, all it has at once (a client
// whose thread runs late: its views in flight pile up, then go together). Two workloads, each a function of
// its own, after a warm-up of their own (warm_up_ticks: the joins and every client's set filling, which
// steady ticks do not do):
//   fixed_ticks(T)       T ticks with no client: the world, the capture, the grid (the baseline)
//   replicated_ticks(T)  the same T ticks with N clients
// (replicated - fixed) / (N T) is the per-client cost. Run plainly it prints thread CPU time; under
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/rep.cg build/bench/server_replication_callgrind
//   callgrind_annotate --inclusive=yes /tmp/rep.cg | grep -E "fixed_ticks|replicated_ticks"
// it gives instruction counts, repeatable on a loaded machine (bench/RESULTS.md, "Capacity with interest
// management"); add --toggle-collect='*replicated_ticks*' for where the measured ticks' instructions go.
// Flags: --clients N (default 500), --ticks T (default 60), --period P (relevancy period: the server's
// default), --lag L, --burst B (default 1), --warmup W (default 30), --workers W (default 1: the
// replicator's workers and encoders; above 1 the tick's snapshots are written ahead on them,
// interest_replicator::prepare, as game_server::tick does for UDP links). It prints the wall time per
// tick, the process's CPU (every thread), the encoders' cache hit rate and lookups per client per tick,
// and the minor page faults per tick.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "count_flags.hpp"
#include "server_model.hpp"
#include "thread_cpu_clock.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

using ecsnet::bench::process_cpu_seconds;
using ecsnet::bench::server_model;
using ecsnet::bench::thread_cpu_seconds;

// Minor page faults of the process so far: on a paravirtualized VM each costs microseconds of kernel time,
// and memory first touched in a tick (a heap that grows) shows here.
long minor_faults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// Two functions, each named in callgrind's output (their bodies differ, so the linker does not fold them).
[[gnu::noinline]] void fixed_ticks(server_model& m, int ticks) {
    if (!m.clients.empty()) {
        std::abort();
    }
    for (int t = 0; t < ticks; ++t) {
        m.tick();
    }
}

[[gnu::noinline]] void replicated_ticks(server_model& m, int ticks) {
    for (int t = 0; t < ticks; ++t) {
        m.tick();
    }
}

// The warm-ups, apart: the measured functions' inclusive counts hold the measured ticks only.
[[gnu::noinline]] void warm_up_ticks(server_model& m, int ticks) {
    for (int t = ticks; t > 0; --t) {
        m.tick();
    }
}

} // namespace

int main(int argc, char** argv) {
    long clients_flag = 500;
    long ticks_flag = 60;
    long period_flag = ecsnet::server::interest_options{}.relevancy_period;
    long workers_flag = 1;
    long lag_flag = 1;
    long burst_flag = 1;
    long warmup_flag = 30;
    if (!ecsnet::bench::read_count_flags(argc, argv,
                                         {{"--clients", 1, &clients_flag},
                                          {"--ticks", 1, &ticks_flag},
                                          {"--period", 0, &period_flag},
                                          {"--workers", 1, &workers_flag},
                                          {"--lag", 0, &lag_flag},
                                          {"--burst", 1, &burst_flag},
                                          {"--warmup", 0, &warmup_flag}})) {
        std::fprintf(stderr,
                     "usage: %s [--clients N] [--ticks T] [--period P] [--workers W] [--lag L] [--burst B] "
                     "[--warmup W]\n",
                     argv[0]);
        return 2;
    }
    const auto clients = static_cast<std::size_t>(clients_flag);
    const auto ticks = static_cast<int>(ticks_flag);
    const auto period = static_cast<std::uint32_t>(period_flag);
    const auto workers = static_cast<std::size_t>(workers_flag);
    const auto lag = static_cast<std::size_t>(lag_flag);
    const auto burst = static_cast<std::size_t>(burst_flag);
    using wall_clock = std::chrono::steady_clock;
    const auto wall_since = [](wall_clock::time_point t) {
        return std::chrono::duration<double>(wall_clock::now() - t).count();
    };
    server_model without{period, workers, lag, burst};
    warm_up_ticks(without, 10);
    const double a = thread_cpu_seconds();
    const double a_cpu = process_cpu_seconds();
    const long a_faults = minor_faults();
    const auto a_wall = wall_clock::now();
    fixed_ticks(without, ticks);
    const double fixed_wall = wall_since(a_wall);
    const double fixed_cpu = process_cpu_seconds() - a_cpu;
    const long fixed_faults = minor_faults() - a_faults;
    const double fixed = thread_cpu_seconds() - a;

    server_model with{period, workers, lag, burst};
    with.join(clients);
    // Every client's set full (it fills over about 30 ticks), acks flowing.
    warm_up_ticks(with, static_cast<int>(warmup_flag));
    with.bytes = 0;
    const auto stats_before = with.replicator.encoder_stats();
    const double b = thread_cpu_seconds();
    const double b_cpu = process_cpu_seconds();
    const long b_faults = minor_faults();
    const auto b_wall = wall_clock::now();
    replicated_ticks(with, ticks);
    const double replicated_wall = wall_since(b_wall);
    const double replicated_cpu = process_cpu_seconds() - b_cpu;
    const long replicated_faults = minor_faults() - b_faults;
    const double replicated = thread_cpu_seconds() - b;
    const auto stats_after = with.replicator.encoder_stats();

    const double per_client_tick_us = (replicated - fixed) * 1e6 / static_cast<double>(clients) / ticks;
    const double per_client_tick_cpu_us =
        (replicated_cpu - fixed_cpu) * 1e6 / static_cast<double>(clients) / ticks;
    const auto lookups = static_cast<double>(stats_after.lookups - stats_before.lookups);
    const auto hits = static_cast<double>(stats_after.hits - stats_before.hits);
    const auto on_line = static_cast<double>(stats_after.on_line - stats_before.on_line);
    std::printf("clients %zu, ticks %d, relevancy period %u, workers %zu, ack lag %zu, bursts of up to %zu: "
                "fixed %.3f ms/tick, "
                "with clients %.3f ms/tick (tick thread CPU), per client per tick %.2f us, %.0f bytes per "
                "snapshot\n",
                clients, ticks, period, workers, lag, burst, fixed * 1e3 / ticks, replicated * 1e3 / ticks,
                per_client_tick_us, static_cast<double>(with.bytes) / static_cast<double>(clients) / ticks);
    std::printf(
        "  wall: fixed %.3f ms/tick, with clients %.3f ms/tick; process CPU per client per tick %.2f us; "
        "encoders %zu, cache hit rate %.1f%% of %.1f lookups per client per tick (%.1f%% on a line); minor "
        "page faults per "
        "tick: fixed %.1f, with clients %.1f\n",
        fixed_wall * 1e3 / ticks, replicated_wall * 1e3 / ticks, per_client_tick_cpu_us,
        with.replicator.encoder_count(), lookups > 0 ? 100.0 * hits / lookups : 0.0,
        lookups / static_cast<double>(clients) / ticks, lookups > 0 ? 100.0 * on_line / lookups : 0.0,
        static_cast<double>(fixed_faults) / ticks, static_cast<double>(replicated_faults) / ticks);
    return 0;
}
