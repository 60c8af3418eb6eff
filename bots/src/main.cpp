// ecsnet-bots: load-tests an ecsnet server with a swarm of bot clients in one process (docs/bots.md).
//
//   build/bots/ecsnet-bots --host 127.0.0.1 --port 7777 --clients 250 --ramp 10 --duration 30
//                          --behaviour wander --report run.json
//
// Exit status: 0 when the run passed; 1 when it failed (a desync, a connect failure, a bot dropped, the
// server stalled, an interruption, or a --max-latency-p99-ms / --min-ticks-ratio threshold missed: the
// summary says which); 2 for bad arguments or a report that cannot be written.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>

#include <sys/resource.h>

#include <CLI/CLI.hpp>

#include "ecsnet/bots/swarm.hpp"

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_signal(int) {
    interrupted.store(true);
}

// One socket per bot: raise the soft limit on open files (often 1024) up to the hard limit if needed. If even
// that is too low, the bots beyond it fail to connect ("Too many open files") and the summary says so.
void allow_sockets(std::size_t bots) {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return;
    }
    const auto wanted = static_cast<rlim_t>(bots + 64);
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
        limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
        static_cast<void>(setrlimit(RLIMIT_NOFILE, &limit));
        if (limit.rlim_cur < wanted) {
            std::cerr << "ecsnet-bots: at most " << limit.rlim_cur << " open files allowed (ulimit -Hn): "
                      << "some of the " << bots << " bots will fail to connect\n";
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    using namespace ecsnet::bots;
    swarm_options options;
    std::string behaviour_name{to_string(options.behaviour)};
    std::string report_path;
    double idle_timeout = 10.0;
    double stall_timeout = 5.0;
    double connect_timeout = 5.0;

    CLI::App app{"ecsnet-bots: load-tests an ecsnet server with a swarm of bot clients (one process, a few "
                 "threads, every bot a real SDK client with its own mirror). Exits 0 when the run passed, 1 "
                 "when it failed (desync, connect failure, dropped bot, stalled server, threshold missed), 2 "
                 "on bad arguments."};
    app.add_option("--host", options.host, "server address")->capture_default_str();
    app.add_option("--port", options.port, "server game port")->capture_default_str();
    app.add_option("--clients", options.clients, "bots to run")
        ->check(CLI::Range(std::size_t{1}, std::size_t{20'000}))
        ->capture_default_str();
    app.add_option("--ramp", options.ramp_seconds, "seconds over which the connects are spread evenly")
        ->check(CLI::Range(0.0, 3600.0))
        ->capture_default_str();
    app.add_option("--duration", options.duration_seconds,
                   "seconds measured, counted from the END of the ramp (the run lasts ramp + duration)")
        ->check(CLI::Range(0.0, 7.0 * 24 * 3600))
        ->capture_default_str();
    app.add_option("--behaviour,--behavior", behaviour_name,
                   "idle (no input), wander (an input every tick: a heading, turning now and then), circle")
        ->check(CLI::IsMember({"idle", "wander", "circle"}))
        ->capture_default_str();
    app.add_option("--seed", options.seed, "seed of the behaviours (the same seed replays the same inputs)")
        ->capture_default_str();
    app.add_option("--report", report_path, "write the JSON report to this file");
    app.add_option("--threads", options.threads, "threads running the bots' io_context")
        ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
        ->capture_default_str();
    app.add_option("--name-prefix", options.name_prefix, "bots are named <prefix>-<index>")
        ->capture_default_str();
    app.add_flag("--quiet", options.quiet, "no progress lines (the final summary is still printed)");
    app.add_option("--connect-timeout", connect_timeout,
                   "seconds a bot has to connect, and then to be welcomed")
        ->check(CLI::Range(0.1, 600.0))
        ->capture_default_str();
    app.add_option("--idle-timeout", idle_timeout,
                   "a bot hearing nothing from the server this long disconnects")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    app.add_option("--stall-timeout", stall_timeout,
                   "no connected bot applied a snapshot for this many seconds: the run ends (server stalled)")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    app.add_option("--max-latency-p99-ms", options.max_latency_p99_ms,
                   "fail the run if the update latency p99 is above this (0: not checked)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--min-ticks-ratio", options.min_ticks_applied_ratio,
                   "fail the run if any bot applied less than this fraction of the ticks (0: not checked)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const auto code = app.exit(error);
        return code == 0 ? 0 : 2;
    }
    options.behaviour = parse_behaviour(behaviour_name).value_or(behaviour_kind::wander);
    const auto to_ms = [](double s) {
        return std::chrono::milliseconds{static_cast<std::int64_t>(s * 1000.0)};
    };
    options.connect_timeout = to_ms(connect_timeout);
    options.handshake_timeout = to_ms(connect_timeout);
    options.idle_timeout = to_ms(idle_timeout);
    options.stall_timeout = to_ms(stall_timeout);

    allow_sockets(options.clients);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGPIPE, SIG_IGN);

    if (!options.quiet) {
        std::cout << "ecsnet-bots: " << options.clients << " bots (" << behaviour_name << ") -> "
                  << options.host << ":" << options.port << ", ramp " << options.ramp_seconds << " s, then "
                  << options.duration_seconds << " s measured, " << options.threads << " threads\n"
                  << std::flush;
    }
    const auto report = run_swarm(options, std::cout, std::cerr, &interrupted);
    print_summary(std::cout, report);

    if (!report_path.empty()) {
        std::ofstream file{report_path, std::ios::trunc};
        file << to_json(report);
        file.close();
        if (!file) {
            std::cerr << "ecsnet-bots: cannot write the report to " << report_path << '\n';
            return 2;
        }
    }
    return report.passed() ? 0 : 1;
}
