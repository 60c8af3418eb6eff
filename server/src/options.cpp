#include "ecsnet/server/options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace ecsnet::server {

parsed_options parse_options(int argc, const char* const* argv) {
    server_options options;
    CLI::App app{"ecsnet-server: the authoritative ecsnet game server, with its embedded demo world (arena)"};
    app.set_config("--config", "", "read these settings from a TOML/INI file (key = value); flags win");

    std::string log_format_text = "text";
    std::int64_t handshake_ms = options.handshake_timeout.count();
    std::int64_t idle_ms = options.idle_timeout.count();
    std::int64_t stall_ms = options.write_stall_timeout.count();
    std::int64_t log_period_ms = options.log_period.count();
    std::string transport = "both";
    double sim_loss = 0.0;
    double sim_latency_ms = 0.0;
    double sim_jitter_ms = 0.0;
    double sim_duplicate = 0.0;
    double sim_reorder = 0.0;

    app.add_option("--bind", options.bind_address, "address to listen on")->capture_default_str();
    app.add_option("--port", options.port, "port for game clients, TCP and UDP alike (0: any free port)")
        ->capture_default_str();
    app.add_option("--transport", transport, "udp, tcp or both (both: on the same port number)")
        ->check(CLI::IsMember({"udp", "tcp", "both"}))
        ->capture_default_str();
    app.add_option("--send-thread", options.send_thread,
                   "UDP: the datagrams each tick sends are handed to the kernel (sendmmsg) on a thread of "
                   "their own, so the tick does not wait for it; false: on the tick's thread")
        ->capture_default_str();
    app.add_option(
           "--receive-interval-us", options.receive_interval_us,
           "UDP: read the socket this often, so that the datagrams arriving meanwhile are read in one "
           "wake-up (and as each tick starts, so no input waits a tick longer); a datagram's RTT "
           "may grow by up to this much; 0: read each as it arrives")
        ->check(CLI::Range(0, 100'000))
        ->capture_default_str();
    app.add_option("--key-file", options.key_file,
                   "file holding the private key shared with the backend that issues connect tokens (64 hex "
                   "digits; ecsnet-token keygen)");
    app.add_flag("--insecure-dev", options.insecure_dev,
                 "accept tokens made with the published development key: anyone may join (local development "
                 "only; logs a warning)");
    app.add_option("--protocol-id", options.protocol_id, "the game's protocol id in connect tokens")
        ->capture_default_str();
    app.add_option(
        "--public-address", options.public_addresses,
        "address:port clients reach this server at, as tokens name it (repeatable; default: the bind "
        "address, or every interface's when binding to all)");
    app.add_option("--sim-loss", sim_loss, "network simulator (UDP): fraction of datagrams lost, each way")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--sim-latency-ms", sim_latency_ms, "network simulator (UDP): one-way latency added")
        ->check(CLI::Range(0.0, 10'000.0));
    app.add_option("--sim-jitter-ms", sim_jitter_ms, "network simulator (UDP): random extra latency, up to")
        ->check(CLI::Range(0.0, 10'000.0));
    app.add_option("--sim-duplicate", sim_duplicate,
                   "network simulator (UDP): fraction of datagrams duplicated")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--sim-reorder", sim_reorder, "network simulator (UDP): fraction of datagrams held back")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--admin-port", options.admin_port,
                   "HTTP port for /metrics, /healthz, /inspector and /api/ (0: any free port)")
        ->capture_default_str();
    app.add_option("--admin-address", options.admin_address,
                   "address the admin port listens on (0.0.0.0: every interface; /inspector and /api/ then "
                   "need --admin-token from other hosts)")
        ->capture_default_str();
    app.add_option("--admin-token", options.admin_token,
                   "bearer token other hosts must present for /inspector and /api/ (16 to 256 characters "
                   "among A-Z a-z 0-9 - . _ ~; default: none, loopback only)")
        ->check([](const std::string& token) {
            const bool url_safe = std::all_of(token.begin(), token.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_' ||
                       c == '~';
            });
            if (token.empty() || (token.size() >= 16 && token.size() <= 256 && url_safe)) {
                return std::string{};
            }
            return std::string{
                "an admin token has 16 to 256 characters among A-Z a-z 0-9 - . _ ~ (it may travel "
                "in a URL)"};
        })
        ->envname("ECSNET_ADMIN_TOKEN"); // kept off the command line, which other users can read
    app.add_option("--tick-rate", options.tick_rate, "simulation ticks per second")
        ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{240}))
        ->capture_default_str();
    app.add_option("--max-clients", options.max_clients, "clients beyond this are refused with SERVER_FULL")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))
        ->capture_default_str();
    app.add_option("--max-tick-load", options.max_tick_load,
                   "new clients are refused with SERVER_FULL (overloaded, retry later) while the last "
                   "second's ticks took on average more than this fraction of the tick period, or while "
                   "clients get fewer snapshots than one a tick (--max-snapshot-stride); 0: never")
        ->check(CLI::Range(0.0, 10.0))
        ->capture_default_str();
    app.add_option("--max-snapshot-stride", options.max_snapshot_stride,
                   "while the ticks overrun or take more than 90% of the period, each client gets a "
                   "snapshot every N ticks, N growing up to this and back to 1 once the server has caught "
                   "up; 1: a snapshot every tick whatever the load")
        ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{30}))
        ->capture_default_str();
    app.add_option("--npcs", options.npcs, "wandering NPCs in the demo arena")
        ->check(CLI::Range(std::size_t{0}, std::size_t{500'000}))
        ->capture_default_str();
    app.add_flag("--companions", options.companions,
                 "the demo arena: each avatar gets a companion drone its client predicts");
    app.add_option("--seed", options.seed, "random seed of the demo world")->capture_default_str();
    app.add_option("--workers", options.workers, "scheduler worker threads")
        ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
        ->capture_default_str();
    app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error, critical or off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
        ->capture_default_str();
    app.add_option("--log-format", log_format_text, "text or json (one JSON object per line)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    app.add_option(
           "--log-burst", options.log_burst,
           "lines of one kind a peer can cause (joins, refusals, disconnects) written per log period; "
           "the rest are counted in /metrics and summarized once a period")
        ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
        ->capture_default_str();
    app.add_option("--log-period-ms", log_period_ms, "the period of --log-burst")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{3'600'000}))
        ->capture_default_str();
    app.add_option("--handshake-timeout-ms", handshake_ms, "time a client has to complete its handshake")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{600'000}))
        ->capture_default_str();
    app.add_option("--idle-timeout-ms", idle_ms, "a client silent this long is disconnected with TIMEOUT")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{3'600'000}))
        ->capture_default_str();
    app.add_option("--write-stall-timeout-ms", stall_ms,
                   "a client whose socket accepts nothing for this long is disconnected with SLOW_CONSUMER")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{600'000}))
        ->capture_default_str();
    app.add_option("--max-unsent-bytes", options.max_unsent_bytes,
                   "a client with more bytes waiting to be sent is disconnected with SLOW_CONSUMER")
        ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
        ->capture_default_str();
    app.add_option("--max-unacked-ticks", options.max_unacked_ticks,
                   "snapshots stop until the client acks, once this many ticks are unacknowledged")
        ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{30}))
        ->capture_default_str();
    app.add_option("--max-frame-size", options.max_frame_size, "largest frame accepted from a client")
        ->check(CLI::Range(std::size_t{64}, std::size_t{64} << 20))
        ->capture_default_str();

    app.add_option(
           "--relevancy-radius", options.relevancy_radius,
           "clients receive the entities within this many metres of their avatar (0: the whole world)")
        ->check(CLI::Range(0.0F, 100'000.0F))
        ->capture_default_str();
    app.add_option("--client-budget-kbps", options.client_budget_kbps,
                   "kilobits per second each client may receive, measured on the wire (interest management)")
        ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{1'000'000}))
        ->capture_default_str();
    app.add_option("--relevancy-period", options.relevancy_period,
                   "ticks between two recomputations of a client's relevant set (sooner for a client whose "
                   "avatar jumped, a teleport)")
        ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{30}))
        ->capture_default_str();
    std::int64_t lag_compensation_ms = options.lag_compensation.count();
    std::int64_t min_fire_interval_ms = options.min_fire_interval.count();
    app.add_option("--lag-compensation-ms", lag_compensation_ms,
                   "shots are evaluated against the world as the shooter saw it, at most this far back")
        ->check(CLI::Range(std::int64_t{250}, std::int64_t{1000}))
        ->capture_default_str();
    app.add_option("--min-fire-interval-ms", min_fire_interval_ms,
                   "least time between two shots of a client (faster ones are refused and counted)")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{10'000}))
        ->capture_default_str();

    std::int64_t agones_health_ms = options.agones.health_period.count();
    std::int64_t agones_stall_ms = options.agones.tick_stall.count();
    std::int64_t agones_timeout_ms = options.agones.request_timeout.count();
    app.add_flag("--agones", options.agones.enabled,
                 "run under Agones: Ready, health pings, the players List, Shutdown (on by itself when "
                 "AGONES_SDK_HTTP_PORT is set)");
    auto* agones_port =
        app.add_option("--agones-sdk-port", options.agones.port,
                       "the Agones SDK sidecar's REST port (default: AGONES_SDK_HTTP_PORT, else "
                       "9358)");
    app.add_option("--agones-health-period-ms", agones_health_ms,
                   "health pings to Agones this often while the tick advances (inside the GameServer's "
                   "health.periodSeconds)")
        ->check(CLI::Range(std::int64_t{100}, std::int64_t{60'000}))
        ->capture_default_str();
    app.add_option("--agones-tick-stall-ms", agones_stall_ms,
                   "health pings stop once the tick has not advanced for this long")
        ->check(CLI::Range(std::int64_t{100}, std::int64_t{600'000}))
        ->capture_default_str();
    app.add_option("--agones-timeout-ms", agones_timeout_ms,
                   "each call to the Agones sidecar gives up after this")
        ->check(CLI::Range(std::int64_t{10}, std::int64_t{60'000}))
        ->capture_default_str();
    double save_every_s = 0.0;
    double drain_s = static_cast<double>(options.drain_time.count()) / 1000.0;
    std::int64_t checkpoint_pause_ms = 0;
    app.add_option("--save", options.save_path,
                   "checkpoint the world to this file (atomically: a temporary file, fsync, rename) every "
                   "--save-every seconds and when draining")
        ->group("Checkpoints and drain");
    app.add_option("--save-every", save_every_s,
                   "seconds between two checkpoints (0: only the final checkpoint when draining)")
        ->check(CLI::Range(0.0, 86'400.0))
        ->group("Checkpoints and drain")
        ->capture_default_str();
    app.add_option("--restore", options.restore_path,
                   "start from this checkpoint (refused whole, with the reason, if corrupt, truncated or "
                   "from another schema)")
        ->group("Checkpoints and drain");
    app.add_option("--drain-seconds", drain_s,
                   "on SIGTERM: stop accepting, tell clients SHUTDOWN with a retry hint, write the final "
                   "checkpoint, and exit within this many seconds")
        ->check(CLI::Range(0.1, 3'600.0))
        ->group("Checkpoints and drain")
        ->capture_default_str();
    app.add_option(
           "--retry-after-seconds", options.retry_after_seconds,
           "the retry hint sent with SHUTDOWN and with overload refusals: when clients may try to reconnect")
        ->check(CLI::Range(std::uint32_t{0}, std::uint32_t{65'535}))
        ->group("Checkpoints and drain")
        ->capture_default_str();
    // For tests only (hidden): makes every checkpoint write pause halfway, so a test can kill the server
    // while a checkpoint is being written.
    app.add_option("--checkpoint-test-pause-ms", checkpoint_pause_ms)
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{600'000}))
        ->group("");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return parsed_options{std::nullopt, app.exit(error)};
    }
    options.log_format_value = parse_log_format(log_format_text);
    options.handshake_timeout = std::chrono::milliseconds{handshake_ms};
    options.idle_timeout = std::chrono::milliseconds{idle_ms};
    options.write_stall_timeout = std::chrono::milliseconds{stall_ms};
    options.log_period = std::chrono::milliseconds{log_period_ms};
    options.save_every = std::chrono::milliseconds{static_cast<std::int64_t>(save_every_s * 1000.0)};
    options.drain_time = std::chrono::milliseconds{static_cast<std::int64_t>(drain_s * 1000.0)};
    options.checkpoint_test_pause = std::chrono::milliseconds{checkpoint_pause_ms};
    options.transport = transport == "udp"   ? transport_kind::udp
                        : transport == "tcp" ? transport_kind::tcp
                                             : transport_kind::both;
    const auto us = [](double ms) {
        return std::chrono::microseconds{static_cast<std::int64_t>(ms * 1000.0)};
    };
    options.simulator.loss = sim_loss;
    options.simulator.latency = us(sim_latency_ms);
    options.simulator.jitter = us(sim_jitter_ms);
    options.simulator.duplicate = sim_duplicate;
    options.simulator.reorder = sim_reorder;

    options.lag_compensation = std::chrono::milliseconds{lag_compensation_ms};
    options.min_fire_interval = std::chrono::milliseconds{min_fire_interval_ms};
    options.agones.health_period = std::chrono::milliseconds{agones_health_ms};
    options.agones.tick_stall = std::chrono::milliseconds{agones_stall_ms};
    options.agones.request_timeout = std::chrono::milliseconds{agones_timeout_ms};
    // Agones sets AGONES_SDK_HTTP_PORT in the game server's container: its presence means "under Agones".
    if (const char* env_port = std::getenv("AGONES_SDK_HTTP_PORT");
        env_port != nullptr && *env_port != '\0') {
        options.agones.enabled = true;
        if (agones_port->count() == 0) {
            try {
                const auto port = std::stoul(env_port);
                if (port == 0 || port > 65535) {
                    throw std::out_of_range{"port"};
                }
                options.agones.port = static_cast<std::uint16_t>(port);
            } catch (const std::exception&) {
                std::fprintf(stderr, "AGONES_SDK_HTTP_PORT='%s' is not a port number\n", env_port);
                return parsed_options{std::nullopt, 2};
            }
        }
    }
    return parsed_options{options, 0};
}

} // namespace ecsnet::server
