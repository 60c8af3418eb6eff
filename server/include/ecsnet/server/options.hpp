#pragma once

// The server's settings: command-line flags (CLI11) and an optional --config FILE holding the same keys
// (TOML/INI "key = value" lines; a flag given on the command line wins over the file).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ecsnet/transport/sim_config.hpp>

#include "agones/sdk_options.hpp"
#include "logging.hpp"

namespace ecsnet::server {

/// Which transports the server listens on: the same port number for each with `both`.
enum class transport_kind : std::uint8_t { tcp, udp, both };

/// The ecsnet game protocol's id in connect tokens (transport/connect_token.hpp): tokens for another
/// protocol are refused. A studio may pick its own (--protocol-id) to keep its games' tokens apart.
inline constexpr std::uint64_t default_protocol_id = 0x4543534E45540001ULL; // "ECSNET", 1

struct server_options {
    std::string bind_address{"0.0.0.0"};
    std::uint16_t port{7777}; // 0: any free port (tests); TCP and UDP alike
    transport_kind transport{transport_kind::both};
    // Connect tokens (docs/protocol.md, section 10): the private key shared with the studio's backend, as
    // 64 hex digits, read from a file; or the published development key (--insecure-dev: anyone may join).
    std::string key_file;
    bool insecure_dev{false};
    std::uint64_t protocol_id{default_protocol_id};
    // The address(es) clients reach the server at, as tokens name it ("203.0.113.5:7777"); by default the
    // bind address and the port when the bind address is not a wildcard.
    std::vector<std::string> public_addresses;
    // The network simulator on the UDP transport (tests and bad-network rehearsals; off by default).
    transport::sim_config simulator;
    // UDP datagrams handed to the kernel on a thread of their own, off the tick's (batch_sender.hpp).
    bool send_thread{true};
    // UDP: microseconds between two reads of the socket, so that the datagrams arriving meanwhile wake the
    // server once (transport::udp_server_options::receive_interval); 0: read each as it arrives.
    std::uint32_t receive_interval_us{1000};
    std::uint16_t admin_port{7778}; // 0: any free port; HTTP /metrics, /healthz, /inspector and /api/
    // The admin endpoint's address: loopback unless told otherwise. /metrics and /healthz answer anyone who
    // can reach it; /inspector and /api/ answer other peers only with this bearer token (docs/inspector.md).
    std::string admin_address{"127.0.0.1"};
    std::string admin_token;     // empty: /inspector and /api/ answer loopback peers only
    std::uint32_t tick_rate{30}; // ticks per second (an integer: the protocol carries it as one)
    std::size_t max_clients{1024};
    // New clients are refused (SERVER_FULL, "overloaded", with the retry hint) while the last second's
    // ticks took on average more than this fraction of the tick period (tick_load.hpp), or while the snapshot
    // stride is above 1 (snapshot_stride.hpp). 0: never.
    double max_tick_load{0.9};
    // While the server is overloaded, each client gets a snapshot every N ticks, N at most this
    // (snapshot_stride.hpp). 1: every tick whatever the load.
    std::uint32_t max_snapshot_stride{3};
    std::size_t npcs{10'000};
    bool companions{false}; // the demo arena: a predicted companion per avatar (arena_options::companions)
    std::uint64_t seed{42};
    std::size_t workers{2}; // scheduler threads
    std::string log_level{"info"};
    log_format log_format_value{log_format::text};
    // Lines any peer can cause (joins, refusals, disconnects, refused inputs): the first `log_burst` of each
    // kind per `log_period` are written, then one summary per period (log_limiter.hpp).
    std::size_t log_burst{20};
    std::chrono::milliseconds log_period{10'000};

    std::chrono::milliseconds handshake_timeout{5000};
    std::chrono::milliseconds idle_timeout{10'000};
    std::size_t max_unsent_bytes{std::size_t{1} << 20};
    std::size_t max_frame_size{std::size_t{1} << 20};
    std::chrono::milliseconds shutdown_grace{1000};      // how long SHUTDOWN messages may take to flush
    std::chrono::milliseconds write_stall_timeout{3000}; // a write without progress this long: SLOW_CONSUMER
    int socket_send_buffer{512 * 1024};                  // SO_SNDBUF of client sockets
    // Flow control: once the newest snapshot sent to a client is this many ticks past the newest tick it
    // acked (or, before its first ack, past the first snapshot sent), nothing more is sent until it acks
    // something newer (or repeats its ack: it received nothing since, and one more snapshot goes). A client
    // that falls behind then receives fewer, fresher snapshots, deltas against a baseline still in the
    // history, instead of a backlog queued in socket buffers (latency) that ends in full states (bandwidth).
    std::uint32_t max_unacked_ticks{15};

    // Interest management (when the world has a spatial layout): each client receives the entities within
    // this many metres of its avatar (0: every client receives the whole world), under this budget.
    float relevancy_radius{160.0F};
    std::uint32_t client_budget_kbps{128};
    // Ticks between recomputations of a client's relevant set. At 30 Hz a set is at most 267 ms old: an
    // entity at the arena's top speed moves about 2 m in that time, against the 16 m between the enter and
    // the leave radius; an avatar that jumps farther than half that margin (a teleport) is recomputed before
    // its turn. Every client's set costs an eighth of a recomputation per tick (bench/RESULTS.md, twentieth
    // pass: 10% fewer instructions per client than every 4 ticks, 8% less CPU at 1,000 clients).
    std::uint32_t relevancy_period{8};

    // Lag compensation (lag_compensation.hpp): how far back a shot may be evaluated (and how much history
    // of the hit-testable entities is kept), and the least time between two shots of a client.
    std::chrono::milliseconds lag_compensation{500};
    std::chrono::milliseconds min_fire_interval{100};

    // Agones (docs/agones.md): the SDK sidecar's REST API, with --agones or when AGONES_SDK_HTTP_PORT is set.
    agones::sdk_options agones;
    // Checkpoints (docs/operations.md): the world is saved to `save_path` every `save_every` (and once more
    // when the server drains), and read from `restore_path` before the game port opens.
    std::string save_path;
    std::chrono::milliseconds save_every{0}; // 0: only the final checkpoint of a drain
    std::string restore_path;
    // Tests only: the checkpoint writer sleeps this long halfway through writing a file, so that a test can
    // kill the server mid-write.
    std::chrono::milliseconds checkpoint_test_pause{0};

    // Graceful drain on SIGTERM: no new clients, SHUTDOWN with a retry hint to the connected ones, the
    // final checkpoint, then exit; all within this long.
    std::chrono::milliseconds drain_time{10'000};
    // The retry hint sent with SHUTDOWN: when a client may try to reconnect (a restart takes about this).
    std::uint32_t retry_after_seconds{5};
};

/// What parse_options decided: run with these options, or exit now with `exit_code` (after --help, or on a
/// bad flag, with the message already printed).
struct parsed_options {
    std::optional<server_options> options;
    int exit_code{0};
};

[[nodiscard]] parsed_options parse_options(int argc, const char* const* argv);

} // namespace ecsnet::server
