// ecsnet-bots: load-tests an ecsnet server with a swarm of bot clients in one process (docs/bots.md).
//
//   build/bots/ecsnet-bots --host 127.0.0.1 --port 7777 --clients 250 --thin 500 --ramp 10 --duration 30
//                          --behaviour wander --sim-loss 0.02 --report run.json --report-html run.html
//
// Exit status: 0 when the run passed; 1 when it failed (a desync, a connect failure, a bot dropped, the
// server stalled, an interruption, or a --max-latency-p99-ms / --min-ticks-ratio threshold missed: the
// summary says which); 2 for bad arguments or a report (JSON or HTML) that cannot be written.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include <sys/resource.h>

#include "ecsnet/bots/command_line.hpp"
#include "ecsnet/bots/html_report.hpp"
#include "ecsnet/bots/swarm.hpp"

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_signal(int) {
    interrupted.store(true);
}

// One socket per bot (UDP or TCP): raise the soft limit on open files (often 1024) up to the hard limit if
// needed. If even that is too low, the bots beyond it fail to connect ("Too many open files") and the summary
// says so.
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

// Writes `text` to `path`, or says why it cannot (a missing directory, no permission, a full disk).
bool write_report(const std::string& path, const std::string& text, const char* what) {
    std::ofstream file{path, std::ios::trunc};
    if (file) {
        file << text;
        file.close();
    }
    if (!file) {
        std::cerr << "ecsnet-bots: cannot write the " << what << " to " << path << ": "
                  << std::strerror(errno) << '\n';
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    using namespace ecsnet::bots;
    const auto command = parse_command_line(argc, argv, std::cout, std::cerr);
    if (!command.options) {
        return command.exit_code;
    }
    const auto& options = *command.options;

    allow_sockets(options.clients + options.thin);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGPIPE, SIG_IGN);

    if (!options.quiet) {
        std::cout << "ecsnet-bots: " << options.clients << " bots";
        if (options.thin > 0) {
            std::cout << " + " << options.thin << " thin";
        }
        std::cout << " (" << to_string(options.behaviour) << ") -> " << options.host << ":" << options.port
                  << " over " << (options.transport == ecsnet::client::transport_kind::udp ? "UDP" : "TCP")
                  << (options.tokens.empty() ? "" : " with tokens") << ", ramp " << options.ramp_seconds
                  << " s, then " << options.duration_seconds << " s measured, " << options.threads
                  << " threads";
        if (options.simulator.enabled()) {
            std::cout << "; simulated loss " << options.simulator.loss << ", latency "
                      << static_cast<double>(options.simulator.latency.count()) / 1000.0 << " ms, jitter "
                      << static_cast<double>(options.simulator.jitter.count()) / 1000.0 << " ms, duplicates "
                      << options.simulator.duplicate << ", reordering " << options.simulator.reorder;
        }
        std::cout << '\n' << std::flush;
    }
    const auto report = run_swarm(options, std::cout, std::cerr, &interrupted);
    print_summary(std::cout, report);

    // Both reports are attempted even if the first cannot be written.
    bool written = true;
    if (!command.report_path.empty()) {
        written &= write_report(command.report_path, to_json(report), "report");
    }
    if (!command.report_html_path.empty()) {
        written &= write_report(command.report_html_path, to_html(report), "HTML report");
    }
    if (!written) {
        return 2;
    }
    return report.passed() ? 0 : 1;
}
