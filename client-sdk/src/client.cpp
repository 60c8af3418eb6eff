#include "ecsnet/client/client.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/framing.hpp>
#include <ecsnet/proto/handshake.hpp>

#include "ecsnet/client/rate_meter.hpp"
#include "ecsnet/client/server_clock.hpp"

namespace ecsnet::client {

namespace {

using steady = std::chrono::steady_clock;

std::int64_t local_us(steady::time_point at) noexcept {
    return std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
}

std::uint64_t unix_us_now() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

// The wire reason a locally decided disconnect is announced with.
v1::DisconnectReason to_wire(disconnect_reason reason) noexcept {
    const auto value = static_cast<int>(reason);
    if (value >= 1 && value <= last_wire_reason) {
        return static_cast<v1::DisconnectReason>(value);
    }
    return v1::DISCONNECT_REASON_UNSPECIFIED;
}

std::string ms(std::chrono::milliseconds d) {
    return std::to_string(d.count()) + " ms";
}

// The first byte of an Envelope holding a Snapshot (field 1) or a ViewSnapshot (field 9), length-delimited.
constexpr char snapshot_tag = 0x0A;
constexpr char view_snapshot_tag = 0x4A;

} // namespace

// Everything a connection needs, shared with its pending handlers (which keep it alive): the network side
// runs on `strand_`; the apply side (mirror, interpolation buffer, callbacks) runs on the strand too, except
// in own_thread mode, where it runs in poll() and the network side hands it events through `inbox_`.
class client::core : public std::enable_shared_from_this<core> {
public:
    core(asio::io_context& io, const proto::schema& schema, client_options options, bool external)
        : options_{std::move(options)}
        , external_{external}
        , queued_apply_{!external && options_.mode == threading::own_thread}
        , schema_{&schema}
        , strand_{asio::make_strand(io)}
        , world_mirror_{schema, registry_,
                        proto::mirror_options{std::max<std::size_t>(options_.mirror_depth, 2)}}
        , view_mirror_{schema, registry_,
                       proto::view_mirror_options{std::max<std::size_t>(options_.mirror_depth, 2)}}
        , interpolation_{options_.interpolation_states}
        , resolver_{strand_}
        , socket_{strand_}
        , connect_timer_{strand_}
        , handshake_timer_{strand_}
        , heartbeat_timer_{strand_}
        , close_timer_{strand_}
        , decoder_{options_.max_frame_size}
        , read_buffer_(64 * 1024)
        , bytes_in_{options_.rate_window}
        , bytes_out_{options_.rate_window}
        , snapshots_{options_.rate_window} {}

    // ---- called by client (any thread) --------------------------------------------------------------

    bool connect(std::string host, std::uint16_t port) {
        {
            std::lock_guard lock{status_mutex_};
            if (state_ == client_state::connecting || state_ == client_state::handshaking ||
                state_ == client_state::connected) {
                return false;
            }
            state_ = client_state::connecting;
            disconnect_ = {};
            stats_ = {};
            clock_.reset();
            const auto now = steady::now();
            bytes_in_.reset(now);
            bytes_out_.reset(now);
            snapshots_.reset(now);
        }
        // Always posted, never run inline: a connect() from a callback must not restart the session while
        // the frame decoder is still delivering frames of the old one.
        asio::post(strand_,
                   [self = shared_from_this(), host = std::move(host), port] { self->start(host, port); });
        return true;
    }

    void close(std::string message) {
        run_on_strand([self = shared_from_this(), message = std::move(message)]() mutable {
            if (!self->active_) {
                return;
            }
            self->end(reason_type::client_quit, false,
                      message.empty() ? std::string{"closed by the client"} : std::move(message),
                      self->phase_ != client_state::connecting);
        });
    }

    bool send_input(std::string_view payload) {
        const auto refuse = [this] {
            std::lock_guard lock{status_mutex_};
            ++stats_.inputs_refused;
            return false;
        };
        if (payload.size() > options_.max_input_size || state() != client_state::connected ||
            unsent_.load(std::memory_order_relaxed) > options_.max_unsent_bytes) {
            return refuse();
        }
        run_on_strand(
            [self = shared_from_this(), bytes = std::string{payload}, session = session_seen()]() mutable {
                if (!self->active_ || self->phase_ != client_state::connected || session != self->session_) {
                    std::lock_guard lock{self->status_mutex_};
                    ++self->stats_.inputs_refused;
                    return;
                }
                v1::Envelope envelope;
                auto& input = *envelope.mutable_input();
                input.set_client_tick(self->estimated_server_tick());
                input.set_sequence(++self->input_sequence_);
                input.set_payload(std::move(bytes));
                self->send(envelope);
                std::lock_guard lock{self->status_mutex_};
                ++self->stats_.inputs_sent;
            });
        return true;
    }

    [[nodiscard]] client_state state() const {
        std::lock_guard lock{status_mutex_};
        return state_;
    }

    [[nodiscard]] disconnect_info last_disconnect() const {
        std::lock_guard lock{status_mutex_};
        return disconnect_;
    }

    [[nodiscard]] client_stats stats() const {
        std::lock_guard lock{status_mutex_};
        auto out = stats_;
        const auto now = steady::now();
        out.bytes_in_per_second = bytes_in_.per_second(now);
        out.bytes_out_per_second = bytes_out_.per_second(now);
        out.snapshots_per_second = snapshots_.per_second(now);
        out.server_clock_offset_us = clock_.offset_us();
        return out;
    }

    [[nodiscard]] std::int64_t server_time_us() const {
        std::lock_guard lock{status_mutex_};
        return clock_.server_time_us(local_us(steady::now()));
    }

    /// own_thread mode: applies what the network thread received. Returns the snapshots applied.
    std::size_t drain_inbox() {
        if (draining_now_) {
            return 0; // poll() from a callback: the outer poll() goes on
        }
        draining_now_ = true;
        {
            std::lock_guard lock{inbox_mutex_};
            draining_.swap(inbox_);
            pending_snapshots_ = 0;
        }
        const auto before = applied_;
        for (auto& event : draining_) {
            switch (event.what) {
            case inbound::kind::welcome:
                apply_welcome(event.session, event.welcome);
                break;
            case inbound::kind::snapshot:
                apply_snapshot(event.session, event.snapshot);
                break;
            case inbound::kind::disconnected:
                notify_disconnected(event.disconnect);
                break;
            }
        }
        draining_.clear();
        draining_now_ = false;
        return applied_ - before;
    }

    [[nodiscard]] std::size_t take_applied() noexcept { return std::exchange(applied_since_poll_, 0); }

    void set_poll_thread() noexcept {
        poll_thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    }

    /// Stops every callback; closes the connection (notifying the server when it is open).
    void detach() {
        stopping_.store(true, std::memory_order_release);
        {
            std::lock_guard lock{callback_mutex_};
            detached_ = true;
        }
        run_on_strand([self = shared_from_this()] {
            if (self->active_) {
                self->end(reason_type::client_quit, false, "client destroyed",
                          self->phase_ != client_state::connecting);
            }
        });
    }

    /// Cancels everything outstanding, on the strand: afterwards no handler holds the core any more.
    void shutdown() {
        active_ = false;
        asio::error_code ignored;
        resolver_.cancel();
        connect_timer_.cancel();
        handshake_timer_.cancel();
        heartbeat_timer_.cancel();
        close_timer_.cancel();
        socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
        socket_closed_ = true;
    }

    /// Whether the socket is closed (the Disconnect, if any, has left or been given up on).
    [[nodiscard]] bool quiet() const noexcept { return quiet_.load(std::memory_order_acquire); }

    template<typename Fn>
    void run_on_strand(Fn&& fn) {
        if (strand_.running_in_this_thread() ||
            (!external_ && options_.mode == threading::poll &&
             poll_thread_.load(std::memory_order_relaxed) == std::this_thread::get_id())) {
            fn();
        } else {
            asio::post(strand_, std::forward<Fn>(fn));
        }
    }

    // Set before connect() (see client.hpp).
    std::function<void()> on_connected_;
    std::function<void(const proto::applied_snapshot&)> on_snapshot_;
    std::function<void(const disconnect_info&)> on_disconnected_;
    std::function<void(const proto::error&)> on_refused_;

    const client_options options_;
    const bool external_;
    const bool queued_apply_;
    const proto::schema* schema_;
    executor_type strand_;

    // ---- apply side (mirror, interpolation buffer; see client.hpp "Thread safety")
    // ------------------------------
    ecsnet::registry registry_;
    // Whole-world snapshots or interest-managed views, as the server's welcome says; one registry for both.
    proto::mirror world_mirror_;
    proto::view_mirror view_mirror_;
    proto::replica* mirror_{&world_mirror_};
    state_buffer interpolation_;
    std::optional<proto::net_entity> own_net_;
    std::uint32_t client_id_{};
    std::uint32_t tick_rate_{30};
    std::uint64_t epoch_unix_us_{};
    bool interest_managed_{false};

private:
    // What the network thread hands to poll() in own_thread mode.
    struct inbound {
        enum class kind : std::uint8_t { welcome, snapshot, disconnected };
        kind what{};
        std::uint64_t session{};
        v1::ServerWelcome welcome;
        std::string snapshot; // the Envelope's bytes
        disconnect_info disconnect;
    };

    template<typename Handler>
    auto guarded(Handler handler) {
        // Completions of an older session (or after shutdown) are dropped.
        return [self = shared_from_this(), session = session_,
                handler = std::move(handler)](auto&&... args) mutable -> void {
            if (session == self->session_ && self->active_) {
                handler(*self, std::forward<decltype(args)>(args)...);
            }
        };
    }

    [[nodiscard]] std::uint64_t session_seen() const noexcept {
        return session_atomic_.load(std::memory_order_relaxed);
    }

    void set_state(client_state s) {
        phase_ = s;
        std::lock_guard lock{status_mutex_};
        state_ = s;
    }

    // ---- network side (strand) -------------------------------------------------------------------

    void start(const std::string& host, std::uint16_t port) {
        if (stopping_.load(std::memory_order_acquire)) {
            return; // the client is being destroyed
        }
        if (active_) { // connect() raced with the end of the previous session's bookkeeping: end it now
            finish_close();
        }
        ++session_;
        session_atomic_.store(session_, std::memory_order_relaxed);
        active_ = true;
        quiet_.store(false, std::memory_order_release);
        socket_closed_ = false;
        closing_ = false;
        write_in_flight_ = false;
        pending_.clear();
        writing_.clear();
        unsent_.store(0, std::memory_order_relaxed);
        decoder_.reset();
        input_sequence_ = 0;
        asio::error_code ignored;
        socket_.close(ignored);
        set_state(client_state::connecting);

        connect_timer_.expires_after(options_.connect_timeout);
        connect_timer_.async_wait(guarded([](core& self, const asio::error_code& ec) {
            if (!ec && self.phase_ == client_state::connecting) {
                self.end(reason_type::connect_failed, false,
                         "no connection within " + ms(self.options_.connect_timeout), false);
            }
        }));
        resolver_.async_resolve(host, std::to_string(port),
                                guarded([host, port](core& self, const asio::error_code& ec,
                                                     const asio::ip::tcp::resolver::results_type& endpoints) {
                                    if (ec) {
                                        self.end(reason_type::connect_failed, false,
                                                 "cannot resolve '" + host + "': " + ec.message(), false);
                                        return;
                                    }
                                    asio::async_connect(
                                        self.socket_, endpoints,
                                        self.guarded([host, port](core& me, const asio::error_code& error,
                                                                  const asio::ip::tcp::endpoint&) {
                                            if (error) {
                                                me.end(reason_type::connect_failed, false,
                                                       "cannot connect to " + host + ":" +
                                                           std::to_string(port) + ": " + error.message(),
                                                       false);
                                                return;
                                            }
                                            me.on_connected();
                                        }));
                                }));
    }

    void on_connected() {
        connect_timer_.cancel();
        asio::error_code ignored;
        socket_.set_option(asio::ip::tcp::no_delay{true}, ignored);
        set_state(client_state::handshaking);
        last_receive_ = steady::now();
        auto hello = proto::make_client_hello(schema_->layout(), options_.connect_token, options_.name);
        hello.mutable_client_hello()->set_max_receive_kbps(options_.max_receive_kbps);
        send(hello);
        handshake_timer_.expires_after(options_.handshake_timeout);
        handshake_timer_.async_wait(guarded([](core& self, const asio::error_code& ec) {
            if (!ec && self.phase_ == client_state::handshaking) {
                self.end(reason_type::handshake_timeout, false,
                         "no ServerWelcome within " + ms(self.options_.handshake_timeout), true);
            }
        }));
        read();
    }

    void read() {
        socket_.async_read_some(asio::buffer(read_buffer_),
                                guarded([](core& self, const asio::error_code& ec, std::size_t count) {
                                    self.on_read(ec, count);
                                }));
    }

    void on_read(const asio::error_code& ec, std::size_t count) {
        if (ec) {
            end(reason_type::connection_lost, false,
                ec == asio::error::eof ? std::string{"the server closed the connection"}
                                       : "connection lost: " + ec.message(),
                false);
            return;
        }
        const auto now = steady::now();
        last_receive_ = now;
        {
            std::lock_guard lock{status_mutex_};
            stats_.bytes_received += count;
            bytes_in_.add(static_cast<double>(count), now);
        }
        const auto session = session_;
        const auto status = decoder_.feed(
            std::string_view{read_buffer_.data(), count}, [this, session](std::string_view payload) {
                if (!payload.empty() &&
                    (payload.front() == snapshot_tag || payload.front() == view_snapshot_tag)) {
                    on_snapshot_frame(payload);
                    return active_ && session == session_;
                }
                if (auto decoded = proto::decode_envelope(payload, incoming_); !decoded) {
                    end(reason_type::protocol_error, false,
                        "malformed message from the server: " + std::string{decoded.message()}, true);
                    return false;
                }
                on_message(incoming_);
                return active_ && session == session_;
            });
        if (!status && active_ && session == session_) {
            end(reason_type::protocol_error, false,
                "bad frame from the server: " + std::string{status.message()}, true);
        }
        if (active_ && session == session_) {
            read();
        }
    }

    void on_message(v1::Envelope& message) {
        switch (message.message_case()) {
        case v1::Envelope::kServerWelcome:
            on_welcome(*message.mutable_server_welcome());
            return;
        case v1::Envelope::kSnapshot:
        case v1::Envelope::kViewSnapshot:
            // Not in the canonical form snapshots are serialized in (they start with their tag).
            end(reason_type::protocol_error, false, "snapshot envelope not in canonical form", true);
            return;
        case v1::Envelope::kDisconnect: {
            const auto& d = message.disconnect();
            end(from_wire(d.reason()), true, d.message().substr(0, 1024), false);
            return;
        }
        case v1::Envelope::kPong:
            on_pong(message.pong());
            return;
        case v1::Envelope::kPing: {
            v1::Envelope pong;
            pong.mutable_pong()->set_ping_sent_us(message.ping().sent_us());
            pong.mutable_pong()->set_responder_time_us(static_cast<std::uint64_t>(local_us(steady::now())));
            send(pong);
            return;
        }
        default:
            end(reason_type::protocol_error, false,
                "unexpected " + std::string{proto::message_name(message)} + " from the server", true);
            return;
        }
    }

    // A frame holding a Snapshot: handed as bytes to the mirror (mirror::apply_envelope checks that they
    // are the canonical serialization, as the server's encoder writes them).
    void on_snapshot_frame(std::string_view payload) {
        if (phase_ != client_state::connected) {
            end(reason_type::protocol_error, false, "snapshot before the ServerWelcome", true);
            return;
        }
        {
            std::lock_guard lock{status_mutex_};
            ++stats_.snapshots_received;
        }
        if (queued_apply_) {
            push_snapshot(payload);
        } else {
            apply_snapshot(session_, payload);
        }
    }

    void on_welcome(const v1::ServerWelcome& welcome) {
        if (phase_ != client_state::handshaking) {
            end(reason_type::protocol_error, false, "ServerWelcome after the handshake", true);
            return;
        }
        if (auto accepted = proto::check_server_welcome(welcome, schema_->layout()); !accepted) {
            end(from_wire(proto::reason_for(accepted.error_value())), false, std::string{accepted.message()},
                true);
            return;
        }
        if (welcome.tick_rate() == 0) {
            end(reason_type::protocol_error, false, "ServerWelcome with a tick rate of 0", true);
            return;
        }
        handshake_timer_.cancel();
        {
            std::lock_guard lock{status_mutex_};
            network_tick_rate_ = welcome.tick_rate();
        }
        set_state(client_state::connected);
        last_ping_ = steady::time_point{};
        heartbeat(); // the first Ping leaves now: an RTT is known within one round trip
        if (queued_apply_) {
            std::lock_guard lock{inbox_mutex_};
            inbound event;
            event.what = inbound::kind::welcome;
            event.session = session_;
            event.welcome = welcome;
            inbox_.push_back(std::move(event));
        } else {
            apply_welcome(session_, welcome);
        }
    }

    void on_pong(const v1::Pong& pong) {
        const auto now = local_us(steady::now());
        const auto sent = static_cast<std::int64_t>(std::min<std::uint64_t>(pong.ping_sent_us(), INT64_MAX));
        const auto rtt = now - sent;
        // The server echoes our own clock: anything else is a lie to ignore, not a reason to fail.
        if (sent <= 0 || rtt < 0 || rtt > std::int64_t{3600} * 1000000) {
            return;
        }
        const auto server =
            static_cast<std::int64_t>(std::min<std::uint64_t>(pong.responder_time_us(), INT64_MAX));
        std::lock_guard lock{status_mutex_};
        ++stats_.pongs_received;
        stats_.rtt = std::chrono::microseconds{rtt};
        stats_.rtt_smoothed = stats_.pongs_received == 1
                                  ? stats_.rtt
                                  : std::chrono::microseconds{(7 * stats_.rtt_smoothed.count() + rtt) / 8};
        clock_.on_pong(sent, now, server);
    }

    // Pings, and the client's side of the idle timeout.
    void heartbeat() {
        const auto now = steady::now();
        if (now - last_receive_ > options_.idle_timeout) {
            end(reason_type::timeout, false,
                "nothing received from the server for " + ms(options_.idle_timeout), true);
            return;
        }
        if (now - last_ping_ >= options_.ping_interval) {
            last_ping_ = now;
            v1::Envelope ping;
            ping.mutable_ping()->set_sent_us(static_cast<std::uint64_t>(local_us(now)));
            send(ping);
            std::lock_guard lock{status_mutex_};
            ++stats_.pings_sent;
        }
        const auto period = std::max<steady::duration>(
            std::chrono::milliseconds{10},
            std::min<steady::duration>(options_.ping_interval, options_.idle_timeout / 4));
        heartbeat_timer_.expires_after(period);
        heartbeat_timer_.async_wait(guarded([](core& self, const asio::error_code& ec) {
            if (!ec) {
                self.heartbeat();
            }
        }));
    }

    [[nodiscard]] std::uint32_t estimated_server_tick() const {
        std::lock_guard lock{status_mutex_};
        if (!clock_.synchronised()) {
            return stats_.newest_tick ? *stats_.newest_tick + 1 : 0;
        }
        const auto server_now = std::max<std::int64_t>(0, clock_.server_time_us(local_us(steady::now())));
        return static_cast<std::uint32_t>(server_now * network_tick_rate_ / 1000000 + 1);
    }

    void send(const v1::Envelope& message) {
        if (socket_closed_ || closing_) {
            return;
        }
        if (!proto::append_envelope_frame(pending_, message)) {
            return; // larger than a frame may be: nothing we build is
        }
        flush();
    }

    void flush() {
        unsent_.store(pending_.size() + (write_in_flight_ ? writing_.size() : 0), std::memory_order_relaxed);
        if (write_in_flight_ || pending_.empty() || socket_closed_) {
            return;
        }
        writing_.swap(pending_);
        pending_.clear();
        write_in_flight_ = true;
        // Not guarded: a closing session still wants its Disconnect written.
        asio::async_write(
            socket_, asio::buffer(writing_),
            [self = shared_from_this(), session = session_](const asio::error_code& ec, std::size_t n) {
                if (session != self->session_) {
                    return;
                }
                self->on_written(ec, n);
            });
    }

    void on_written(const asio::error_code& ec, std::size_t count) {
        write_in_flight_ = false;
        {
            const auto now = steady::now();
            std::lock_guard lock{status_mutex_};
            stats_.bytes_sent += count;
            bytes_out_.add(static_cast<double>(count), now);
        }
        if (ec) {
            if (active_) {
                end(reason_type::connection_lost, false, "connection lost: " + ec.message(), false);
            } else {
                finish_close();
            }
            return;
        }
        writing_.clear();
        if (closing_ && pending_.empty()) {
            finish_close();
            return;
        }
        flush();
    }

    // Ends the session: records why, tells the server if asked (then closes once the Disconnect is written,
    // or after close_grace), and hands the news to the apply side.
    void end(reason_type reason, bool from_server, std::string message, bool tell_server) {
        if (!active_) {
            return;
        }
        active_ = false;
        connect_timer_.cancel();
        handshake_timer_.cancel();
        heartbeat_timer_.cancel();
        resolver_.cancel();
        disconnect_info info{reason, from_server, std::move(message)};
        {
            std::lock_guard lock{status_mutex_};
            state_ = client_state::disconnected;
            disconnect_ = info;
        }
        phase_ = client_state::disconnected;
        if (tell_server && !socket_closed_) {
            pending_.clear(); // inputs and acks not yet written are moot; the reason goes first
            static_cast<void>(proto::append_envelope_frame(
                pending_, proto::make_disconnect(to_wire(reason), info.message.substr(0, 1024))));
            closing_ = true;
            close_timer_.expires_after(options_.close_grace);
            close_timer_.async_wait(
                [self = shared_from_this(), session = session_](const asio::error_code& ec) {
                    if (!ec && session == self->session_) {
                        self->finish_close();
                    }
                });
            flush();
        } else {
            finish_close();
        }
        if (queued_apply_) {
            std::lock_guard lock{inbox_mutex_};
            inbound event;
            event.what = inbound::kind::disconnected;
            event.session = session_;
            event.disconnect = std::move(info);
            inbox_.push_back(std::move(event));
        } else {
            notify_disconnected(info);
        }
    }

    void finish_close() {
        close_timer_.cancel();
        asio::error_code ignored;
        socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
        socket_closed_ = true;
        closing_ = false;
        pending_.clear();
        unsent_.store(0, std::memory_order_relaxed);
        quiet_.store(true, std::memory_order_release);
    }

    void push_snapshot(std::string_view snapshot) {
        std::lock_guard lock{inbox_mutex_};
        if (pending_snapshots_ >= std::max<std::size_t>(options_.max_pending_snapshots, 1)) {
            // poll() is late: the oldest snapshot goes. Later ones are deltas against acked baselines, which
            // the mirror keeps, so they still apply.
            const auto oldest = std::find_if(inbox_.begin(), inbox_.end(), [](const inbound& e) {
                return e.what == inbound::kind::snapshot;
            });
            if (oldest != inbox_.end()) {
                inbox_.erase(oldest);
                --pending_snapshots_;
                std::lock_guard status{status_mutex_};
                ++stats_.snapshots_dropped;
            }
        }
        inbound event;
        event.what = inbound::kind::snapshot;
        event.session = session_;
        event.snapshot.assign(snapshot);
        inbox_.push_back(std::move(event));
        ++pending_snapshots_;
    }

    // ---- apply side -------------------------------------------------------------------------------

    void apply_welcome(std::uint64_t session, const v1::ServerWelcome& welcome) {
        apply_session_ = session;
        thin_newest_.reset();
        world_mirror_.clear();
        view_mirror_.clear();
        mirror_ = welcome.interest_managed() ? static_cast<proto::replica*>(&view_mirror_) : &world_mirror_;
        mirror_->welcome(welcome);
        interest_managed_ = welcome.interest_managed();
        interpolation_.clear();
        client_id_ = welcome.client_id();
        tick_rate_ = welcome.tick_rate();
        epoch_unix_us_ = welcome.server_epoch_unix_us();
        own_net_.reset();
        if (welcome.has_own_entity()) {
            own_net_ = proto::net_entity{welcome.own_entity().index(), welcome.own_entity().generation()};
        }
        std::lock_guard lock{callback_mutex_};
        if (!detached_ && on_connected_) {
            on_connected_();
        }
    }

    void apply_snapshot(std::uint64_t session, std::string_view envelope) {
        if (session != apply_session_) {
            return; // queued before a reconnect
        }
        if (options_.thin) {
            ack_thin(session, envelope);
            return;
        }
        auto applied = mirror_->apply_envelope(envelope);
        if (!applied && (applied.code() == proto::errc::malformed_message ||
                         applied.code() == proto::errc::empty_envelope ||
                         applied.code() == proto::errc::unexpected_message)) {
            fail_on_bad_snapshot(session, std::string{applied.message()});
            return;
        }
        if (applied) {
            const auto& report = applied.value();
            if (const auto* newest = interpolation_.capacity() > 0 ? mirror_->newest_state() : nullptr) {
                interpolation_.push(*newest);
            }
            count_applied(report.tick, report.server_time_us, report.full_state);
        } else {
            std::lock_guard lock{status_mutex_};
            ++stats_.snapshots_refused;
            stats_.checksum_mismatches += applied.code() == proto::errc::checksum_mismatch ? 1 : 0;
            stats_.unknown_baselines += applied.code() == proto::errc::unknown_baseline ? 1 : 0;
        }
        // The Ack: the newest applied tick, or a full-state request when the mirror needs one.
        v1::Envelope ack;
        *ack.mutable_ack() = mirror_->make_ack();
        send_ack(session, std::move(ack));
        if (applied) {
            std::lock_guard lock{callback_mutex_};
            if (!detached_ && on_snapshot_) {
                on_snapshot_(applied.value());
            }
        } else {
            std::lock_guard lock{callback_mutex_};
            if (!detached_ && on_refused_) {
                on_refused_(applied.error_value());
            }
        }
    }

    // A thin client (client_options::thin) reads a snapshot's header only and acks its tick, as if it had
    // applied it: the server's work for it is a full client's, the client's is almost none.
    void ack_thin(std::uint64_t session, std::string_view envelope) {
        const auto header = proto::peek_snapshot_header(envelope, thin_envelope_);
        if (!header) {
            fail_on_bad_snapshot(session, std::string{header.message()});
            return;
        }
        if (thin_newest_ && header->tick <= *thin_newest_) {
            return; // a stale one: acks only move forward
        }
        thin_newest_ = header->tick;
        const auto server_time_us = static_cast<std::uint64_t>(
            static_cast<std::int64_t>(std::uint64_t{header->tick} * 1000000ULL / std::max(tick_rate_, 1U)) +
            header->time_offset_us);
        count_applied(header->tick, server_time_us, header->full_state);
        v1::Envelope ack;
        ack.mutable_ack()->set_tick(header->tick);
        send_ack(session, std::move(ack));
    }

    void count_applied(proto::tick_type tick, std::uint64_t server_time_us, bool full_state) {
        const auto local_now = steady::now();
        const auto server_time = static_cast<std::int64_t>(server_time_us);
        ++applied_;
        ++applied_since_poll_;
        std::lock_guard lock{status_mutex_};
        ++stats_.snapshots_applied;
        stats_.full_states_received += full_state ? 1 : 0;
        stats_.newest_tick = tick;
        stats_.newest_tick_server_time_us = server_time;
        stats_.newest_tick_server_unix_us = epoch_unix_us_ + server_time_us;
        stats_.newest_tick_applied_unix_us = unix_us_now();
        snapshots_.add(1.0, local_now);
        clock_.on_snapshot(server_time, local_us(local_now));
    }

    void send_ack(std::uint64_t session, v1::Envelope ack) {
        run_on_strand([self = shared_from_this(), ack = std::move(ack), session] {
            if (self->active_ && session == self->session_ && self->phase_ == client_state::connected) {
                self->send(ack);
            }
        });
    }

    void fail_on_bad_snapshot(std::uint64_t session, std::string message) {
        // Not a snapshot at all: the server is broken, not the delta.
        run_on_strand([self = shared_from_this(), session, message = std::move(message)] {
            if (session == self->session_) {
                self->end(reason_type::protocol_error, false, "bad snapshot from the server: " + message,
                          true);
            }
        });
    }

    void notify_disconnected(const disconnect_info& info) {
        std::lock_guard lock{callback_mutex_};
        if (!detached_ && on_disconnected_) {
            on_disconnected_(info);
        }
    }

    // Network side, on the strand.
    asio::ip::tcp::resolver resolver_;
    asio::ip::tcp::socket socket_;
    asio::steady_timer connect_timer_;
    asio::steady_timer handshake_timer_;
    asio::steady_timer heartbeat_timer_;
    asio::steady_timer close_timer_;
    proto::frame_decoder decoder_;
    std::vector<char> read_buffer_;
    v1::Envelope incoming_; // reused for every frame
    std::string pending_;   // frames waiting for the write in flight
    std::string writing_;   // the write in flight
    bool write_in_flight_{false};
    bool closing_{false}; // a Disconnect is queued: close once it is written
    bool socket_closed_{true};
    bool active_{false}; // a session is opening or open
    client_state phase_{client_state::idle};
    std::uint64_t session_{0};
    std::uint32_t input_sequence_{0};
    steady::time_point last_receive_{};
    steady::time_point last_ping_{};
    std::atomic<std::uint64_t> session_atomic_{0};
    std::atomic<std::size_t> unsent_{0};
    std::atomic<bool> quiet_{true};
    std::atomic<std::thread::id> poll_thread_{};
    std::atomic<bool> stopping_{false};

    // Shared between the strand, the apply side and callers of stats().
    mutable std::mutex status_mutex_;
    client_state state_{client_state::idle};
    disconnect_info disconnect_;
    client_stats stats_;
    rate_meter bytes_in_;
    rate_meter bytes_out_;
    rate_meter snapshots_;
    server_clock clock_;
    std::uint32_t network_tick_rate_{30};

    // own_thread mode: network -> poll().
    std::mutex inbox_mutex_;
    std::deque<inbound> inbox_;
    std::deque<inbound> draining_;
    std::size_t pending_snapshots_{};
    bool draining_now_{false};

    // Apply side.
    std::uint64_t apply_session_{0};
    std::optional<proto::tick_type> thin_newest_;
    v1::Envelope thin_envelope_;
    std::size_t applied_{};
    std::size_t applied_since_poll_{};

    // Callbacks never run once the client is destroyed. Recursive: on an application io_context, a callback
    // may destroy its client.
    std::recursive_mutex callback_mutex_;
    bool detached_{false};
};

// ---- client -----------------------------------------------------------------------------------------

client::client(const proto::schema& schema, client_options options)
    : own_io_{std::make_unique<asio::io_context>(1)} {
    work_.emplace(own_io_->get_executor());
    core_ = std::make_shared<core>(*own_io_, schema, std::move(options), false);
    if (core_->options_.mode == threading::own_thread) {
        thread_ = std::thread{[io = own_io_.get()] { io->run(); }};
    }
}

client::client(asio::io_context& io, const proto::schema& schema, client_options options)
    : core_{std::make_shared<core>(io, schema, std::move(options), true)} {}

client::~client() {
    core_->detach();
    if (!own_io_) {
        return; // the application's io_context runs the rest; the core lives until its handlers are done
    }
    const auto deadline = steady::now() + core_->options_.close_grace + std::chrono::milliseconds{100};
    if (thread_.joinable()) {
        while (!core_->quiet() && steady::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds{1});
        }
        asio::post(core_->strand_, [c = core_] { c->shutdown(); });
        work_.reset();
        thread_.join();
    } else {
        core_->set_poll_thread();
        while (!core_->quiet() && steady::now() < deadline) {
            own_io_->run_one_for(std::chrono::milliseconds{5});
        }
        core_->shutdown();
        work_.reset();
        own_io_->restart();
        own_io_->run(); // every handler completes (cancelled); nothing holds the core afterwards
    }
    core_.reset();
}

bool client::connect(std::string host, std::uint16_t port) {
    return core_->connect(std::move(host), port);
}

void client::close(std::string message) {
    core_->close(std::move(message));
}

client_state client::state() const {
    return core_->state();
}

client::reason_type client::disconnect_reason() const {
    return core_->last_disconnect().reason;
}

std::string client::disconnect_message() const {
    return core_->last_disconnect().message;
}

disconnect_info client::last_disconnect() const {
    return core_->last_disconnect();
}

client_stats client::stats() const {
    return core_->stats();
}

bool client::send_input(std::string_view payload) {
    return core_->send_input(payload);
}

std::size_t client::poll() {
    if (!own_io_) {
        return 0;
    }
    if (thread_.joinable()) {
        return core_->drain_inbox();
    }
    core_->set_poll_thread();
    own_io_->poll();
    return core_->take_applied();
}

ecsnet::registry& client::registry() noexcept {
    return core_->registry_;
}
const ecsnet::registry& client::registry() const noexcept {
    return core_->registry_;
}
proto::replica& client::mirror() noexcept {
    return *core_->mirror_;
}
const proto::replica& client::mirror() const noexcept {
    return *core_->mirror_;
}
bool client::interest_managed() const noexcept {
    return core_->interest_managed_;
}

entity client::own_entity() const noexcept {
    return core_->own_net_ ? core_->mirror_->find(*core_->own_net_) : null_entity;
}

std::optional<proto::net_entity> client::own_net_entity() const noexcept {
    return core_->own_net_;
}
std::uint32_t client::client_id() const noexcept {
    return core_->client_id_;
}
std::uint32_t client::tick_rate() const noexcept {
    return core_->tick_rate_;
}
std::uint64_t client::server_epoch_unix_us() const noexcept {
    return core_->epoch_unix_us_;
}
const state_buffer& client::interpolation_buffer() const noexcept {
    return core_->interpolation_;
}

std::int64_t client::server_time_us() const {
    return core_->server_time_us();
}

std::int64_t client::render_time_us() const {
    return server_time_us() - static_cast<std::int64_t>(core_->options_.interpolation_delay.count());
}

interpolation_window client::window(std::int64_t render_time_us) const {
    return find_window(core_->interpolation_, render_time_us);
}

void client::on_connected(std::function<void()> callback) {
    core_->on_connected_ = std::move(callback);
}

void client::on_snapshot(std::function<void(const proto::applied_snapshot&)> callback) {
    core_->on_snapshot_ = std::move(callback);
}

void client::on_disconnected(std::function<void(const disconnect_info&)> callback) {
    core_->on_disconnected_ = std::move(callback);
}

void client::on_snapshot_refused(std::function<void(const proto::error&)> callback) {
    core_->on_refused_ = std::move(callback);
}

client::executor_type client::get_executor() const noexcept {
    return core_->strand_;
}

const client_options& client::options() const noexcept {
    return core_->options_;
}

} // namespace ecsnet::client
