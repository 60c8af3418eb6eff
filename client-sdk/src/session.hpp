#pragma once

// A client's session with its server, whatever the transport (connection.hpp: TCP or UDP): the handshake
// (ClientHello, the welcome checked against the schema), snapshots applied to the mirror or acked thin
// (client_replica.hpp) and their acks, Pings and the server clock, inputs, the idle and handshake
// timeouts, the disconnect reasons, the stats (client_status.hpp), the callbacks, and the three threading
// modes of client.hpp.
//
// Everything that talks to the network runs on the strand. The apply side (the replica and the callbacks)
// runs on the strand too, except in threading::own_thread, where poll() runs it from the inbox (inbox.hpp)
// that the strand fills. ("The strand" is the session's handler executor: the io_context's own when one
// thread alone runs it, client_options::single_threaded_io.) The session is shared with its pending handlers,
// which keep it alive; each connect() opens a new connection and counts a new session number, so that what an
// older one still delivers is dropped.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <ecsnet/proto/schema.hpp>

#include "client_replica.hpp"
#include "client_status.hpp"
#include "connection.hpp"
#include "ecsnet/client/client_options.hpp"
#include "inbox.hpp"

namespace ecsnet::client::detail {

class session : public connection_events, public std::enable_shared_from_this<session> {
public:
    /// `external`: on the application's io_context (mode 3).
    session(asio::io_context& io, const proto::schema& schema, client_options options, bool external);
    ~session() override;

    // ---- the client's calls (any thread) ------------------------------------------------------------

    bool connect(std::string host, std::uint16_t port);
    bool connect(std::string_view token);
    void close(std::string message);
    bool send_input(std::string_view payload, std::optional<std::uint32_t> client_tick = std::nullopt);
    [[nodiscard]] client_status& status() noexcept { return status_; }
    void simulate(const transport::sim_config& config);
    [[nodiscard]] const client_status& status() const noexcept { return status_; }

    /// own_thread mode: applies what the network thread received. Returns the snapshots applied.
    std::size_t drain_inbox();
    /// poll mode: the snapshots applied since the last call.
    [[nodiscard]] std::size_t take_applied() noexcept { return std::exchange(applied_since_poll_, 0); }
    /// poll mode: the thread calling poll(), on which calls run at once rather than being posted.
    void set_poll_thread() noexcept;
    /// The client is being destroyed: no callback from now on; the connection closes, telling the server.
    void detach();
    /// Cancels everything outstanding (on the strand, or with no thread running the io_context):
    /// afterwards no handler of the session's is left but those completing with operation_aborted.
    void shutdown();
    /// Whether nothing more will leave (the last Disconnect has left or been given up on).
    [[nodiscard]] bool quiet() const noexcept { return quiet_.load(std::memory_order_acquire); }

    template<typename Fn>
    void run_on_strand(Fn&& fn) {
        if (on_handler_thread() ||
            (!external_ && options_.mode == threading::poll &&
             poll_thread_.load(std::memory_order_relaxed) == std::this_thread::get_id())) {
            fn();
        } else {
            asio::post(executor_, std::forward<Fn>(fn));
        }
    }

    [[nodiscard]] const client_options& options() const noexcept { return options_; }
    [[nodiscard]] strand_type strand() const noexcept { return strand_; }
    /// Where the session's handlers run (the strand, unless client_options::single_threaded_io).
    [[nodiscard]] const handler_executor& executor() const noexcept { return executor_; }
    /// Whether the calling thread is running the session's handlers.
    [[nodiscard]] bool on_handler_thread() const noexcept {
        return single_threaded_io_ ? io_executor_.running_in_this_thread() : strand_.running_in_this_thread();
    }
    [[nodiscard]] client_replica& replica() noexcept { return replica_; }
    [[nodiscard]] const client_replica& replica() const noexcept { return replica_; }

    // Set before connect() (client.hpp).
    std::function<void()> on_connected_;
    std::function<void(const proto::applied_snapshot&)> on_snapshot_;
    // Called before on_snapshot_ (prediction.hpp reconciles there). Set under the callback lock: a
    // prediction removes it when destroyed, possibly while the client's thread applies snapshots.
    std::function<void(const proto::applied_snapshot&)> on_snapshot_first_;
    void set_snapshot_first(std::function<void(const proto::applied_snapshot&)> callback) {
        std::lock_guard lock{callback_mutex_};
        on_snapshot_first_ = std::move(callback);
    }
    std::function<void(const disconnect_info&)> on_disconnected_;
    std::function<void(const proto::error&)> on_refused_;

    // ---- connection_events (strand) ----------------------------------------------------------------

    void on_open() override;
    void on_message(std::string_view envelope, bool ordered) override;
    void on_malformed(std::string description) override;
    void on_closed(disconnect_info info) override;
    void on_traffic(std::uint64_t bytes_in, std::uint64_t bytes_out,
                    const transport_figures* figures) override;

private:
    /// What connect() asked for, handed to the strand.
    struct connect_request {
        std::string host;
        std::uint16_t port{};
        std::optional<std::string> token; // connect(token); otherwise options_.connect_token
    };

    template<typename Handler>
    auto guarded(Handler handler) {
        // Completions of an older session (or after the end) are dropped.
        return [self = shared_from_this(), session = session_,
                handler = std::move(handler)](auto&&... args) mutable -> void {
            if (session == self->session_ && self->active_) {
                handler(*self, std::forward<decltype(args)>(args)...);
            }
        };
    }

    bool begin(connect_request request);
    void start(const connect_request& request);
    void set_phase(client_state phase);
    void send(outgoing kind, const v1::Envelope& message);
    void on_envelope(v1::Envelope& message);
    void on_snapshot_message(std::string_view envelope, bool ordered);
    void on_welcome(const v1::ServerWelcome& welcome);
    void on_pong(const v1::Pong& pong);
    void on_input_status(const v1::InputStatus& status);
    void heartbeat();
    /// Ends the session: records why, closes the connection (telling the server when asked), and hands
    /// the news to the apply side.
    void end(disconnect_reason reason, bool from_server, std::string message, bool tell_server,
             std::optional<std::chrono::seconds> retry_after = std::nullopt);

    // Apply side (the strand, or poll() in own_thread mode).
    void apply_welcome(std::uint64_t session, const v1::ServerWelcome& welcome);
    void apply_snapshot(std::uint64_t session, std::string_view envelope);
    void send_ack(std::uint64_t session, v1::Envelope ack);
    // UDP: an ack is sent again, with backoff, while no newer one follows (docs/protocol.md, 5.1).
    void remember_ack(v1::Envelope ack);
    void arm_ack_timer();
    void repeat_ack();
    void fail_on_bad_snapshot(std::uint64_t session, std::string message);
    void notify_disconnected(const disconnect_info& info);

    const client_options options_;
    const bool external_;
    const bool queued_apply_; // own_thread mode: the apply side runs in poll()
    const proto::schema* schema_;
    strand_type strand_;
    const bool single_threaded_io_; // external io_context run by one thread: no strand needed
    asio::io_context::executor_type io_executor_;
    handler_executor executor_; // strand_, or io_executor_ when single_threaded_io_

    // ---- network side (strand) ----------------------------------------------------------------------
    std::shared_ptr<connection> connection_;         // the session's, while active
    std::shared_ptr<connection> closing_connection_; // the last one closed, still winding down
    asio::steady_timer connect_timer_;
    asio::steady_timer handshake_timer_;
    asio::steady_timer heartbeat_timer_;
    asio::steady_timer ack_timer_;
    std::optional<v1::Envelope> last_ack_; // UDP: the newest ack sent, to repeat
    steady::time_point last_ack_at_{};
    steady::duration ack_repeat_after_{};
    bool ack_timer_armed_{false};
    v1::Envelope incoming_; // reused for every message
    bool active_{false};    // a session is opening or open
    client_state phase_{client_state::idle};
    std::uint64_t session_{0};
    std::uint32_t input_sequence_{0};
    std::string hello_token_; // TCP: ClientHello.connect_token of this session
    steady::time_point last_receive_{};
    steady::time_point last_ping_{};
    std::atomic<std::uint64_t> session_atomic_{0};
    std::atomic<std::size_t> unsent_{0};
    std::atomic<bool> quiet_{true};
    std::atomic<std::thread::id> poll_thread_{};
    std::atomic<bool> stopping_{false};

    // Any thread.
    client_status status_;

    // ---- apply side ---------------------------------------------------------------------------------
    client_replica replica_;
    inbox inbox_;
    std::deque<inbound> draining_;
    bool draining_now_{false};
    std::uint64_t apply_session_{0};
    std::size_t applied_{};
    std::size_t applied_since_poll_{};

    // Callbacks never run once the client is destroyed. Recursive: on an application io_context, a
    // callback may destroy its client.
    std::recursive_mutex callback_mutex_;
    bool detached_{false};
};

} // namespace ecsnet::client::detail
