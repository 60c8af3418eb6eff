#pragma once

// ecsnet-server's core: accepts clients, runs their sessions (handshake, acks, inputs, pings, timeouts),
// ticks the world at a fixed rate, captures the replicated state into the snapshot history, and hands each
// client its snapshot when its socket can take it.
//
// Threads: one io_context thread runs the network and the tick (a timer): no locks between them, and a
// socket never blocks a tick because every socket operation is asynchronous. The world's systems may run
// on the scheduler's workers inside the tick. The admin endpoint has its own thread and reads atomics.
//
// Tick: apply the inputs received since the last tick (each client's, to its own avatar only), update the
// world, capture tick N into the history, then mark every playing client as wanting a snapshot (sent at
// once if its socket is idle, else when the current write completes, encoded against its newest ack).
// Ticks run on a fixed grid (tick_pacer): an overrun is counted and logged, never caught up in a burst.
//
// Checkpoints (--save, --restore; checkpoint.hpp): open() restores the world before the game port opens;
// every --save-every the tick copies the world (capture_checkpoint) and a writer thread encodes and writes it
// (checkpoint_writer.hpp), one write at a time (a checkpoint due while one is being written is skipped and
// counted).
//
// Drain: stop() or SIGINT/SIGTERM stops accepting and ticking, sends every client Disconnect(SHUTDOWN) with
// the retry hint (--retry-after-seconds), waits for them to close (`shutdown_grace` at most), writes the
// final checkpoint when --save is set (waiting for it), calls the drain hook (on_drain), and returns from
// run(); all within --drain-seconds. exit_code() is then 0, or 1 when the final checkpoint failed.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>

#include <ecsnet/proto/history.hpp>

#include "admin_server.hpp"
#include "agones/sdk_client.hpp"
#include "checkpoint_writer.hpp"
#include "client_link.hpp"
#include "connection_manager.hpp"
#include "game_world.hpp"
#include "inspector/inspector_feed.hpp"
#include "lag_compensation.hpp"
#include "log_limiter.hpp"
#include "options.hpp"
#include "replicator.hpp"
#include "server_metrics.hpp"
#include "snapshot_stride.hpp"
#include "tcp_connection.hpp"
#include "tick_load.hpp"
#include "tick_pacer.hpp"
#include "token_checker.hpp"
#include "udp_listener.hpp"

namespace ecsnet::server {

/// What the server knows of one connection (a copy, for diagnostics and tests).
struct client_info {
    client_id id{};
    std::string name;
    std::string remote;
    std::string transport; // "tcp" or "udp"
    bool playing{};
    entity avatar{null_entity};
    std::optional<proto::tick_type> acked;
    std::optional<proto::tick_type> sent;
    std::size_t unsent_bytes{};
    std::uint64_t bytes_sent{};
    std::uint64_t bytes_received{};
    std::optional<double> rtt_ms; // UDP: the transport's estimate
    std::optional<double> loss;   // UDP: fraction of packets lost
    std::uint64_t resends{};      // UDP: reliable messages and fragments sent again
    std::uint64_t inputs_received{};
};

class game_server final : private connection_handler {
public:
    using clock_type = std::chrono::steady_clock;
    using tick_observer = std::function<void(proto::tick_type, const proto::snapshot_history&)>;

    game_server(server_options options, std::unique_ptr<game_world> world);
    game_server(const game_server&) = delete;
    game_server& operator=(const game_server&) = delete;
    ~game_server() override;

    /// Binds the game port (TCP, UDP or both, on the same number) and the admin port. Throws
    /// std::system_error if a port cannot be bound, std::runtime_error for a missing or bad key.
    void open();
    /// Ticks and serves on the calling thread until stop() or, if `handle_signals`, SIGINT/SIGTERM; returns
    /// after the graceful shutdown.
    void run(bool handle_signals = true);
    /// Starts the graceful shutdown; callable from any thread.
    void stop();

    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// The UDP side, when the server listens on UDP (its counters; tests).
    [[nodiscard]] udp_listener* udp() noexcept { return udp_.get(); }
    [[nodiscard]] std::uint16_t admin_port() const noexcept { return admin_port_; }
    /// What the live inspector reads (docs/inspector.md).
    [[nodiscard]] inspector::feed& inspector() noexcept { return inspector_; }
    [[nodiscard]] server_metrics& metrics() noexcept { return metrics_; }
    /// True while the tick loop runs and ticked recently (what /healthz reports).
    [[nodiscard]] bool healthy() const noexcept;

    /// The open connections. Call on the server thread (e.g. through call()).
    [[nodiscard]] std::vector<client_info> clients();
    /// The world. Use it on the server thread only (e.g. through call()).
    [[nodiscard]] game_world& world() noexcept { return *world_; }
    [[nodiscard]] const proto::snapshot_history& history() const noexcept { return history_; }
    /// Lag compensation, when the world has a spatial layout (else null). On the server thread only.
    [[nodiscard]] lag_compensation* lag_compensator() noexcept { return lag_compensation_.get(); }
    /// How snapshots are made (whole world, or interest-managed views).
    [[nodiscard]] replicator& replication() noexcept { return *replicator_; }

    /// The Agones SDK client, when --agones is on (else null). The drain calls its shutdown().
    [[nodiscard]] agones::sdk_client* agones() noexcept { return agones_.get(); }

    /// Called on the server thread after each capture. Set before run().
    void on_tick(tick_observer observer) { tick_observer_ = std::move(observer); }

    /// Called once on the server thread when a drain ends (clients told, final checkpoint written or
    /// failed), just before run() returns: where an orchestrator is told the server is going (the Agones
    /// SDK's shutdown call). Set before run().
    void on_drain(std::function<void()> hook) { drain_hook_ = std::move(hook); }
    /// What the process should exit with once run() returned: 0, or 1 when the final checkpoint failed.
    [[nodiscard]] int exit_code() const noexcept { return exit_code_; }
    /// The tick the world is at (after a restore: the checkpoint's).
    [[nodiscard]] proto::tick_type current_tick() const noexcept { return tick_; }

    /// Runs fn on the server thread and returns its result (for tests and tools; run() must be running).
    template<typename Fn>
    auto call(Fn fn) -> std::invoke_result_t<Fn&> {
        using result_type = std::invoke_result_t<Fn&>;
        std::packaged_task<result_type()> task{std::move(fn)};
        auto future = task.get_future();
        asio::post(io_, [&task] { task(); });
        return future.get();
    }

private:
    void accept();
    void open_udp(std::uint16_t port);
    void export_transport_metrics(bool per_client);
    void schedule_tick(std::chrono::steady_clock::time_point at);
    void tick();
    void begin_shutdown();
    /// Agones: the sidecar says the GameServer is Allocated (from its watch thread).
    void on_allocated(std::string game_server_json);
    void finish_drain();
    void restore_checkpoint();
    void take_checkpoint(clock_type::time_point now);
    void collect_checkpoint_outcome();
    /// The inspector's frame (a copy of the newest tick, while someone looks) and its one-second samples.
    void feed_inspector(clock_type::time_point started, clock_type::time_point ended);
    // predicted_by.hpp: the marked entities of each client (one pass over the markers a tick), and the
    // InputStatus.predicted of one client when its set changed recently or once a second.
    [[nodiscard]] std::unordered_map<client_id, std::vector<proto::net_entity>> predicted_entities();
    void add_predicted(session& s, const std::unordered_map<client_id, std::vector<proto::net_entity>>& all,
                       v1::InputStatus& status) const;
    [[nodiscard]] std::uint64_t server_time_us(std::chrono::steady_clock::time_point at) const noexcept;

    // connection_handler
    void on_message(client_link& from, v1::Envelope& message) override;
    void on_opened(std::shared_ptr<client_link> link) override;
    std::optional<outgoing_snapshot> next_snapshot(client_link& to) override;
    void on_left(client_link& left) override;
    void on_closed(client_link& closed) override;

    void handle_hello(client_link& from, const v1::ClientHello& hello);
    /// Flow control: the newest tick sent is `max_unacked_ticks` past the newest acked.
    [[nodiscard]] bool window_full(const session& s) const noexcept;
    /// Whether next_snapshot() would write this client's snapshot now, and if not, why.
    // skipped: not this client's turn while the snapshot stride is above 1.
    enum class snapshot_gate : std::uint8_t { open, nothing_new, held, skipped };
    [[nodiscard]] snapshot_gate gate(const session& s) const noexcept;
    void handle_ack(client_link& from, const v1::Ack& ack);
    void handle_input(client_link& from, v1::Input& input);

    server_options options_;
    connection_limits limits_;
    std::unique_ptr<game_world> world_;
    server_metrics metrics_;

    asio::io_context io_;
    asio::ip::tcp::acceptor acceptor_;
    std::unique_ptr<udp_listener> udp_;
    std::unique_ptr<token_checker> tokens_;   // TCP's connect tokens (none in development mode)
    std::vector<std::uint64_t> dropped_seen_; // per drop reason: what the metrics already counted
    struct {
        std::uint64_t sent{0};
        std::uint64_t received{0};
    } udp_bytes_seen_; // the UDP transport's byte counts already added to the traffic metrics
    asio::steady_timer tick_timer_;
    asio::steady_timer shutdown_timer_;
    asio::signal_set signals_;
    connection_manager connections_;
    std::size_t admitted_{};
    client_id next_client_id_{1};

    proto::snapshot_history history_;
    std::unique_ptr<replicator> replicator_;
    std::vector<client_replication*> to_prepare_; // the tick's snapshots the replicator may write ahead
    // Each predicting client's InputStatus, written into one reused message: a fresh Envelope allocated
    // and freed its InputStatus for every client and tick.
    v1::Envelope input_status_;
    std::unique_ptr<lag_compensation> lag_compensation_;
    tick_pacer pacer_;
    tick_load tick_load_;
    tick_load snapshot_load_; // the ticks' prepare and send parts alone
    snapshot_stride snapshot_stride_;
    proto::tick_type tick_{0};
    tick_observer tick_observer_;

    std::chrono::steady_clock::time_point epoch_;
    std::uint64_t epoch_unix_us_{};
    std::atomic<bool> ticking_{false};
    std::atomic<std::int64_t> last_tick_end_ns_{0};
    bool shutting_down_{false};
    bool drained_{false};
    clock_type::time_point drain_deadline_{};
    std::function<void()> drain_hook_;
    int exit_code_{0};

    saveable_components saveable_;
    std::unique_ptr<checkpoint_writer> checkpoints_; // with --save
    clock_type::time_point next_checkpoint_{};
    log_limiter checkpoint_log_; // failures: the first of a period, then a summary

    log_limiter peer_log_;      // lines any peer can cause
    inspector::feed inspector_; // before admin_, which reads it
    struct {
        clock_type::time_point start{};
        double sum_ms{};
        double max_ms{};
        std::uint32_t ticks{};
        std::uint64_t bytes_out{};
        std::uint64_t bytes_in{};
    } inspector_second_; // the current second of the inspector's time series
    admin_server admin_;
    std::unique_ptr<agones::sdk_client> agones_; // after io_: stopped (its threads joined) before io_ goes
    std::uint16_t port_{};
    std::uint16_t admin_port_{};
};

} // namespace ecsnet::server
