#pragma once

// The Agones SDK contract, over the sidecar's local REST API (docs/agones.md; Agones' "REST Game Server
// Client API"): POST /ready, POST /health while the tick advances, GET /gameserver and the
// GET /watch/gameserver stream to learn when the server is Allocated, the `players` List
// (POST /v1beta1/lists/players:addValue and :removeValue), and POST /shutdown.
//
// Threads: the client has three of its own (queued calls, health pings, the watch stream), each with its
// own cpp-httplib client. The tick thread only queues (ready, player_connected, player_disconnected: a
// short lock, a bounded queue whose overflow is counted), so a sidecar that is missing, slow or failing
// never blocks the tick: every call has a timeout, failures are retried with capped exponential backoff and
// jitter, every attempt is counted in /metrics, and log lines are limited per kind.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "../log_limiter.hpp"
#include "../metrics.hpp"
#include "sdk_metrics.hpp"
#include "sdk_options.hpp"

namespace httplib {
class Client;
}

namespace ecsnet::server::agones {

class sdk_client {
public:
    /// Reads the tick counter (any thread; ecsnet_ticks_total): health pings stop when it stops.
    using tick_counter = std::function<std::uint64_t()>;
    /// Called once each time the GameServer becomes Allocated, on the watch thread, with the GameServer's
    /// JSON as the sidecar sent it. game_server hands it to the tick thread (game_world::allocated).
    using allocated_handler = std::function<void(std::string game_server_json)>;

    sdk_client(sdk_options options, metrics_registry& registry, tick_counter ticks,
               allocated_handler on_allocated);
    sdk_client(const sdk_client&) = delete;
    sdk_client& operator=(const sdk_client&) = delete;
    ~sdk_client();

    /// Starts the threads: health pings and the watch stream begin now.
    void start();

    // ---- from the tick thread: never blocks on the sidecar --------------------------------------------
    /// POST /ready, once: the world is loaded and the game port listens.
    void ready();
    /// Adds a connected player's id to the players List.
    void player_connected(std::string_view player_id);
    /// Removes a player's id from the players List.
    void player_disconnected(std::string_view player_id);

    /// POST /shutdown after what is queued; health pings stop. Any thread, idempotent. The server calls it
    /// when it ends by itself; the drain on SIGTERM calls it too.
    void shutdown();
    /// Waits at most `wait` for what is queued (Shutdown included) to reach the sidecar, then stops the
    /// threads. Idempotent; the destructor calls it with no wait.
    void stop(std::chrono::milliseconds wait = std::chrono::milliseconds{0});

    /// The sidecar accepted Ready (tests, diagnostics).
    [[nodiscard]] bool ready_acknowledged() const noexcept { return ready_ok_.load(); }
    [[nodiscard]] const sdk_metrics& metrics() const noexcept { return metrics_; }

private:
    enum class call : std::uint8_t { ready, health, shutdown, gameserver, watch, list_add, list_remove };
    enum class result : std::uint8_t { ok, rejected, error, timeout };
    struct event {
        call what;
        std::string player_id; // list_add, list_remove
    };
    void enqueue_player_change(call what, std::string_view player_id);
    struct response {
        result outcome{result::error};
        int status{0};
        std::string body;
        std::string error; // why, when there is no status
    };

    void run_calls();
    void run_health();
    void run_watch();
    /// Opens the watch stream and reads it until it ends; true if it delivered anything.
    bool watch_once();
    void on_game_server(std::string_view json);

    response send(call what, const std::string& path, std::string body);
    void count(call what, result outcome);
    /// Waits until `until` or until stop (true: stopping, give up).
    bool sleep_until(std::chrono::steady_clock::time_point until);
    void warn(std::string_view kind, const std::string& line);

    sdk_options options_;
    sdk_metrics metrics_;
    tick_counter ticks_;
    allocated_handler on_allocated_;

    std::mutex mutex_; // the queue and the stop state
    std::condition_variable wake_;
    std::deque<event> queue_;
    bool ready_queued_{false};
    bool shutdown_queued_{false};
    bool stopping_{false};
    std::optional<std::chrono::steady_clock::time_point> drain_until_; // stop(): finish the queue by then

    std::atomic<bool> ready_ok_{false};
    std::atomic<bool> shutdown_requested_{false};
    bool allocated_{false};  // watch thread only
    bool watch_done_{false}; // under mutex_
    std::mutex watch_mutex_; // the watch thread's open stream, which stop() interrupts
    httplib::Client* watch_http_{nullptr};

    std::mutex log_mutex_;
    log_limiter log_;

    std::thread calls_thread_;
    std::thread health_thread_;
    std::thread watch_thread_;
};

} // namespace ecsnet::server::agones
