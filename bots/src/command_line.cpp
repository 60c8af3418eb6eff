#include "ecsnet/bots/command_line.hpp"

#include <chrono>
#include <map>

#include <CLI/CLI.hpp>

#include "ecsnet/bots/token_file.hpp"

namespace ecsnet::bots {

command_line parse_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
    command_line result;
    swarm_options options;
    std::string behaviour_name{to_string(options.behaviour)};
    std::string transport_name{"udp"};
    double idle_timeout = 10.0;
    double stall_timeout = 5.0;
    double connect_timeout = 5.0;
    double sim_latency_ms = 0.0;
    double sim_jitter_ms = 0.0;

    CLI::App app{"ecsnet-bots: load-tests an ecsnet server with a swarm of bot clients (one process, a few "
                 "threads, every bot a real SDK client with its own mirror). Exits 0 when the run passed, 1 "
                 "when it failed (desync, connect failure, dropped bot, stalled server, threshold missed), 2 "
                 "on bad arguments."};
    app.add_option("--host", options.host, "server address")->capture_default_str();
    app.add_option("--port", options.port, "server game port (UDP and TCP alike)")->capture_default_str();
    app.add_option("--transport", transport_name,
                   "udp (connect tokens, encryption, the transport's channels) or tcp")
        ->check(CLI::IsMember({"udp", "tcp"}))
        ->capture_default_str();
    app.add_option("--clients", options.clients,
                   "full bots to run (each mirrors the world and checks every snapshot)")
        ->check(CLI::Range(std::size_t{0}, std::size_t{20'000}))
        ->capture_default_str();
    app.add_option(
           "--thin", options.thin,
           "thin bots to run besides: each acks snapshot headers without mirroring (the server's work "
           "for a fraction of the bots' CPU)")
        ->check(CLI::Range(std::size_t{0}, std::size_t{20'000}))
        ->capture_default_str();
    app.add_option(
        "--token-file", result.token_file,
        "connect tokens, one base64 token per line, bot i using line i (full bots first, then thin "
        "ones); without it, development tokens (a server started with --insecure-dev)");
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
    app.add_option("--report", result.report_path, "write the JSON report to this file");
    app.add_option("--report-html", result.report_html_path,
                   "write a self-contained HTML page to this file: the summary, the latency histogram, the "
                   "run second by second and a row per bot");
    app.add_option("--threads", options.threads,
                   "threads, each running an io_context of its own with its share of the bots")
        ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
        ->capture_default_str();
    app.add_option("--name-prefix", options.name_prefix,
                   "bots are named <prefix>-<index>, <prefix>-thin-<index>")
        ->capture_default_str();
    app.add_flag("--quiet", options.quiet, "no progress lines (the final summary is still printed)");
    app.add_flag("--predict", options.predict,
                 "full bots predict their avatar ahead of the server (client-side prediction) and report "
                 "their mispredictions");
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
    // The network simulator on each bot's UDP socket, both ways.
    app.add_option("--sim-loss", options.simulator.loss,
                   "simulated loss: fraction of datagrams dropped, each way")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    app.add_option("--sim-latency-ms", sim_latency_ms,
                   "simulated one-way latency added to every datagram, ms")
        ->check(CLI::Range(0.0, 10'000.0))
        ->capture_default_str();
    app.add_option("--sim-jitter-ms", sim_jitter_ms,
                   "simulated jitter: each datagram's latency varies by up to this many ms either way")
        ->check(CLI::Range(0.0, 10'000.0))
        ->capture_default_str();
    app.add_option("--sim-duplicate", options.simulator.duplicate,
                   "simulated fraction of datagrams delivered twice")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    app.add_option("--sim-reorder", options.simulator.reorder,
                   "simulated fraction of datagrams held back (arriving after later ones)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const auto code = app.exit(error, out, err);
        result.exit_code = code == 0 ? 0 : 2;
        return result;
    }
    const auto refuse = [&](const std::string& why) {
        err << "ecsnet-bots: " << why << "\nRun with --help for more information.\n";
        result.exit_code = 2;
        return result;
    };
    if (options.clients + options.thin == 0) {
        return refuse("no bot to run: --clients and --thin are both 0");
    }
    options.transport = transport_name == "tcp" ? client::transport_kind::tcp : client::transport_kind::udp;
    options.behaviour = parse_behaviour(behaviour_name).value_or(behaviour_kind::wander);
    const auto to_ms = [](double s) {
        return std::chrono::milliseconds{static_cast<std::int64_t>(s * 1000.0)};
    };
    options.connect_timeout = to_ms(connect_timeout);
    options.handshake_timeout = to_ms(connect_timeout);
    options.idle_timeout = to_ms(idle_timeout);
    options.stall_timeout = to_ms(stall_timeout);
    options.simulator.latency = std::chrono::microseconds{static_cast<std::int64_t>(sim_latency_ms * 1000.0)};
    options.simulator.jitter = std::chrono::microseconds{static_cast<std::int64_t>(sim_jitter_ms * 1000.0)};
    options.simulator.seed = options.seed;
    if (options.simulator.enabled() && options.transport != client::transport_kind::udp) {
        return refuse("the --sim-* flags simulate a network under the UDP transport: use --transport udp");
    }
    if (!result.token_file.empty()) {
        auto file = read_token_file(result.token_file);
        if (!file.error.empty()) {
            return refuse("--token-file: " + file.error);
        }
        const auto bots = options.clients + options.thin;
        if (file.tokens.size() < bots) {
            return refuse("--token-file: " + std::to_string(file.tokens.size()) + " tokens in " +
                          result.token_file + " for " + std::to_string(bots) +
                          " bots (one a bot, full bots first, then thin ones)");
        }
        file.tokens.resize(bots);
        options.tokens = std::move(file.tokens);
    }
    result.options = std::move(options);
    return result;
}

} // namespace ecsnet::bots
