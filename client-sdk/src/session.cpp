#include "session.hpp"

#include <algorithm>
#include <utility>

#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/handshake.hpp>

#include "tcp_connection.hpp"
#include "token_text.hpp"
#include "udp_connection.hpp"

namespace ecsnet::client::detail {

namespace {

// The wire reason a locally decided disconnect is announced with.
int to_wire(disconnect_reason reason) noexcept {
    const auto value = static_cast<int>(reason);
    return value >= 1 && value <= last_wire_reason ? value : v1::DISCONNECT_REASON_UNSPECIFIED;
}

std::string ms(std::chrono::milliseconds d) {
    return std::to_string(d.count()) + " ms";
}

// The first byte of an Envelope holding a Snapshot (field 1) or a ViewSnapshot (field 9), length-delimited.
constexpr char snapshot_tag = 0x0A;
constexpr char view_snapshot_tag = 0x4A;

// UDP: how long an ack waits for a newer one before it is sent again, at first and at most (session.cpp,
// remember_ack).
constexpr std::chrono::milliseconds ack_repeat_first{100};
constexpr std::chrono::milliseconds ack_repeat_most{1000};
constexpr std::size_t max_predicted_entities = 64;

} // namespace

session::session(asio::io_context& io, const proto::schema& schema, client_options options, bool external)
    : options_{std::move(options)}
    , external_{external}
    , queued_apply_{!external && options_.mode == threading::own_thread}
    , schema_{&schema}
    , strand_{asio::make_strand(io)}
    , single_threaded_io_{external && options_.single_threaded_io}
    , io_executor_{io.get_executor()}
    , executor_{single_threaded_io_ ? handler_executor{io_executor_} : handler_executor{strand_}}
    , connect_timer_{executor_}
    , handshake_timer_{executor_}
    , heartbeat_timer_{executor_}
    , ack_timer_{executor_}
    , status_{options_.rate_window}
    , replica_{schema, options_}
    , inbox_{options_.max_pending_snapshots} {}

session::~session() = default;

// ---- the client's calls ---------------------------------------------------------------------------

void session::simulate(const transport::sim_config& config) {
    run_on_strand([self = shared_from_this(), config] {
        if (self->connection_) {
            self->connection_->simulate(config);
        }
    });
}

bool session::connect(std::string host, std::uint16_t port) {
    return begin({std::move(host), port, std::nullopt});
}

bool session::connect(std::string_view token) {
    return begin({{}, 0, std::string{token}});
}

bool session::begin(connect_request request) {
    if (!status_.begin_connect(options_.transport == transport_kind::tcp)) {
        return false;
    }
    // Always posted, never run inline: a connect() from a callback must not restart the session while the
    // connection is still delivering messages of the old one.
    asio::post(executor_,
               [self = shared_from_this(), request = std::move(request)] { self->start(request); });
    return true;
}

void session::close(std::string message) {
    run_on_strand([self = shared_from_this(), message = std::move(message)]() mutable {
        if (!self->active_) {
            return;
        }
        self->end(disconnect_reason::client_quit, false,
                  message.empty() ? std::string{"closed by the client"} : std::move(message),
                  self->phase_ != client_state::connecting);
    });
}

bool session::send_input(std::string_view payload, std::optional<std::uint32_t> client_tick) {
    const auto refuse = [this] {
        status_.update([](client_stats& s) { ++s.inputs_refused; });
        return false;
    };
    const auto largest = options_.transport == transport_kind::udp
                             ? std::min(options_.max_input_size, max_udp_input_size)
                             : options_.max_input_size;
    if (payload.size() > largest || status_.state() != client_state::connected ||
        unsent_.load(std::memory_order_relaxed) > options_.max_unsent_bytes) {
        return refuse();
    }
    run_on_strand([self = shared_from_this(), bytes = std::string{payload}, client_tick,
                   session = session_atomic_.load(std::memory_order_relaxed)]() mutable {
        if (!self->active_ || self->phase_ != client_state::connected || session != self->session_) {
            self->status_.update([](client_stats& s) { ++s.inputs_refused; });
            return;
        }
        v1::Envelope envelope;
        auto& input = *envelope.mutable_input();
        input.set_client_tick(client_tick ? *client_tick
                                          : self->status_.estimated_server_tick(steady::now()));
        input.set_sequence(++self->input_sequence_);
        input.set_payload(std::move(bytes));
        self->send(outgoing::input, envelope);
        self->status_.update([](client_stats& s) { ++s.inputs_sent; });
    });
    return true;
}

std::size_t session::drain_inbox() {
    if (draining_now_) {
        return 0; // poll() from a callback: the outer poll() goes on
    }
    draining_now_ = true;
    inbox_.take(draining_);
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

void session::set_poll_thread() noexcept {
    poll_thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
}

void session::detach() {
    stopping_.store(true, std::memory_order_release);
    {
        std::lock_guard lock{callback_mutex_};
        detached_ = true;
    }
    run_on_strand([self = shared_from_this()] {
        if (self->active_) {
            self->end(disconnect_reason::client_quit, false, "client destroyed",
                      self->phase_ != client_state::connecting);
        }
    });
}

void session::shutdown() {
    active_ = false;
    connect_timer_.cancel();
    handshake_timer_.cancel();
    heartbeat_timer_.cancel();
    ack_timer_.cancel();
    for (auto* c : {&connection_, &closing_connection_}) {
        if (*c) {
            (*c)->abort();
            c->reset();
        }
    }
    quiet_.store(true, std::memory_order_release);
}

// ---- network side (strand) ------------------------------------------------------------------------

void session::set_phase(client_state phase) {
    phase_ = phase;
    status_.set_state(phase);
}

void session::start(const connect_request& request) {
    if (stopping_.load(std::memory_order_acquire)) {
        return; // the client is being destroyed
    }
    if (connection_) { // never expected (connect() refuses while a session is active): drop it quietly
        connection_->abort();
        connection_.reset();
    }
    ++session_;
    session_atomic_.store(session_, std::memory_order_relaxed);
    active_ = true;
    quiet_.store(false, std::memory_order_release);
    unsent_.store(0, std::memory_order_relaxed);
    input_sequence_ = 0;
    last_ack_.reset();
    ack_timer_armed_ = false;
    set_phase(client_state::connecting);

    connect_target target;
    target.host = request.host;
    target.port = request.port;
    const std::string_view token_text =
        request.token ? std::string_view{*request.token} : options_.connect_token;
    // A token opens a UDP connection, and names the servers when connect(token) gave it.
    if (request.token || (options_.transport == transport_kind::udp && !token_text.empty())) {
        auto token = read_any_token(token_text);
        if (!token) {
            end(disconnect_reason::connect_failed, false,
                std::string{request.token ? "the connect token" : "client_options::connect_token"} +
                    " does not read (" + std::string{transport::to_string(token.error())} + ")",
                false);
            return;
        }
        target.token = std::move(*token);
        if (options_.transport == transport_kind::udp) {
            target.host.clear(); // the token's servers, whatever the host asked
        }
    }
    // Over TCP the token travels in the hello; over UDP the transport has already checked it.
    hello_token_.clear();
    if (options_.transport == transport_kind::tcp) {
        hello_token_ = hello_token_bytes(token_text);
    }

    connect_timer_.expires_after(options_.connect_timeout);
    connect_timer_.async_wait(guarded([](session& self, const asio::error_code& ec) {
        if (!ec && self.phase_ == client_state::connecting) {
            self.end(disconnect_reason::connect_failed, false,
                     "no connection within " + ms(self.options_.connect_timeout) +
                         (self.connection_ ? self.connection_->pending_detail() : std::string{}),
                     false);
        }
    }));
    if (options_.transport == transport_kind::udp) {
        connection_ = std::make_shared<udp_connection>(executor_, options_, weak_from_this());
    } else {
        connection_ = std::make_shared<tcp_connection>(executor_, options_, weak_from_this());
    }
    // May report its failure at once (on_closed), ending the session before it returns.
    const auto opening = connection_;
    opening->open(target);
}

void session::on_open() {
    if (!active_ || phase_ != client_state::connecting) {
        return;
    }
    connect_timer_.cancel();
    set_phase(client_state::handshaking);
    last_receive_ = steady::now();
    auto hello = proto::make_client_hello(schema_->layout(), hello_token_, options_.name);
    hello.mutable_client_hello()->set_max_receive_kbps(options_.max_receive_kbps);
    hello.mutable_client_hello()->set_wants_input_status(options_.prediction);
    send(outgoing::hello, hello);
    handshake_timer_.expires_after(options_.handshake_timeout);
    handshake_timer_.async_wait(guarded([](session& self, const asio::error_code& ec) {
        if (!ec && self.phase_ == client_state::handshaking) {
            self.end(disconnect_reason::handshake_timeout, false,
                     "no ServerWelcome within " + ms(self.options_.handshake_timeout), true);
        }
    }));
}

void session::on_traffic(std::uint64_t bytes_in, std::uint64_t bytes_out, const transport_figures* figures) {
    const auto now = steady::now();
    status_.add_traffic(bytes_in, bytes_out, now);
    if (figures != nullptr) {
        status_.set_transport_figures(*figures);
    } else if (bytes_in > 0) {
        last_receive_ = now; // TCP: part of a frame is news from the server too (a big one takes a while)
    }
    unsent_.store(connection_ ? connection_->unsent_bytes() : 0, std::memory_order_relaxed);
}

void session::on_message(std::string_view envelope, bool ordered) {
    if (!active_) {
        return;
    }
    last_receive_ = steady::now();
    if (!envelope.empty() && (envelope.front() == snapshot_tag || envelope.front() == view_snapshot_tag)) {
        on_snapshot_message(envelope, ordered);
        return;
    }
    if (auto decoded = proto::decode_envelope(envelope, incoming_); !decoded) {
        end(disconnect_reason::protocol_error, false,
            "malformed message from the server: " + std::string{decoded.message()}, true);
        return;
    }
    on_envelope(incoming_);
}

void session::on_malformed(std::string description) {
    if (active_) {
        end(disconnect_reason::protocol_error, false, std::move(description), true);
    }
}

void session::on_closed(disconnect_info info) {
    if (!active_) {
        return;
    }
    connection_.reset(); // closed already: nothing to tell it
    end(info.reason, info.from_server, std::move(info.message), false, info.retry_after);
}

void session::on_envelope(v1::Envelope& message) {
    switch (message.message_case()) {
    case v1::Envelope::kServerWelcome:
        on_welcome(*message.mutable_server_welcome());
        return;
    case v1::Envelope::kSnapshot:
    case v1::Envelope::kViewSnapshot:
        // Not in the canonical form snapshots are serialized in (they start with their tag).
        end(disconnect_reason::protocol_error, false, "snapshot envelope not in canonical form", true);
        return;
    case v1::Envelope::kDisconnect: {
        const auto& d = message.disconnect();
        end(from_wire(d.reason()), true, d.message().substr(0, 1024), false,
            d.retry_after_seconds() == 0 ? std::nullopt
                                         : std::optional{std::chrono::seconds{d.retry_after_seconds()}});
        return;
    }
    case v1::Envelope::kPong:
        on_pong(message.pong());
        return;
    case v1::Envelope::kInputStatus:
        if (!options_.prediction) {
            end(disconnect_reason::protocol_error, false, "InputStatus the client did not ask for", true);
            return;
        }
        on_input_status(message.input_status());
        return;
    case v1::Envelope::kPing: {
        v1::Envelope pong;
        pong.mutable_pong()->set_ping_sent_us(message.ping().sent_us());
        pong.mutable_pong()->set_responder_time_us(static_cast<std::uint64_t>(local_us(steady::now())));
        send(outgoing::ping, pong);
        return;
    }
    default:
        end(disconnect_reason::protocol_error, false,
            "unexpected " + std::string{proto::message_name(message)} + " from the server", true);
        return;
    }
}

// A message holding a Snapshot: handed as bytes to the replica (mirror::apply_envelope checks that they are
// the canonical serialization, as the server's encoder writes them).
void session::on_snapshot_message(std::string_view envelope, bool ordered) {
    if (phase_ != client_state::connected) {
        if (ordered) {
            end(disconnect_reason::protocol_error, false, "snapshot before the ServerWelcome", true);
        }
        // Unordered (UDP unreliable): it may have overtaken a welcome still being resent. Dropped.
        return;
    }
    status_.update([](client_stats& s) { ++s.snapshots_received; });
    if (queued_apply_) {
        if (inbox_.push_snapshot(session_, envelope)) {
            status_.update([](client_stats& s) { ++s.snapshots_dropped; });
        }
    } else {
        apply_snapshot(session_, envelope);
    }
}

void session::on_welcome(const v1::ServerWelcome& welcome) {
    if (phase_ != client_state::handshaking) {
        end(disconnect_reason::protocol_error, false, "ServerWelcome after the handshake", true);
        return;
    }
    if (auto accepted = proto::check_server_welcome(welcome, schema_->layout()); !accepted) {
        end(from_wire(proto::reason_for(accepted.error_value())), false, std::string{accepted.message()},
            true);
        return;
    }
    if (welcome.tick_rate() == 0) {
        end(disconnect_reason::protocol_error, false, "ServerWelcome with a tick rate of 0", true);
        return;
    }
    handshake_timer_.cancel();
    status_.set_tick_rate(welcome.tick_rate());
    status_.update([](client_stats& s) { s.predicted_entities.clear(); }); // net ids of this connection only
    set_phase(client_state::connected);
    last_ping_ = steady::time_point{};
    heartbeat(); // the first Ping leaves now: the clock is set within one round trip
    if (queued_apply_) {
        inbox_.push_welcome(session_, welcome);
    } else {
        apply_welcome(session_, welcome);
    }
}

void session::on_pong(const v1::Pong& pong) {
    const auto now = local_us(steady::now());
    const auto sent = static_cast<std::int64_t>(std::min<std::uint64_t>(pong.ping_sent_us(), INT64_MAX));
    const auto rtt = now - sent;
    // The server echoes our own clock: anything else is a lie to ignore, not a reason to fail.
    if (sent <= 0 || rtt < 0 || rtt > std::int64_t{3600} * 1000000) {
        return;
    }
    const auto server =
        static_cast<std::int64_t>(std::min<std::uint64_t>(pong.responder_time_us(), INT64_MAX));
    status_.on_pong(sent, now, server);
}

// Over UDP statuses may arrive out of order: the newest tick wins.
void session::on_input_status(const v1::InputStatus& status) {
    status_.update([&status](client_stats& s) {
        if (s.input_status_tick && status.tick() <= *s.input_status_tick) {
            return;
        }
        s.input_status_tick = status.tick();
        s.input_lead_ticks =
            status.has_lead_ticks() ? std::optional<std::int32_t>{status.lead_ticks()} : std::nullopt;
        s.input_applied_sequence = status.applied_sequence();
        s.inputs_ran_dry = status.ran_dry();
        if (status.has_predicted()) {
            s.predicted_entities.clear();
            for (const auto& id : status.predicted().entities()) {
                if (s.predicted_entities.size() >= max_predicted_entities) {
                    break; // a sane bound: a client predicts a few entities, not thousands
                }
                s.predicted_entities.push_back(proto::net_entity{id.index(), id.generation()});
            }
        }
    });
}

// Pings, and the client's side of the idle timeout.
void session::heartbeat() {
    const auto now = steady::now();
    if (now - last_receive_ > options_.idle_timeout) {
        end(disconnect_reason::timeout, false,
            "nothing received from the server for " + ms(options_.idle_timeout), true);
        return;
    }
    if (now - last_ping_ >= options_.ping_interval) {
        last_ping_ = now;
        v1::Envelope ping;
        ping.mutable_ping()->set_sent_us(static_cast<std::uint64_t>(local_us(now)));
        send(outgoing::ping, ping);
        status_.update([](client_stats& s) { ++s.pings_sent; });
    }
    const auto period = std::max<steady::duration>(
        std::chrono::milliseconds{10},
        std::min<steady::duration>(options_.ping_interval, options_.idle_timeout / 4));
    heartbeat_timer_.expires_after(period);
    heartbeat_timer_.async_wait(guarded([](session& self, const asio::error_code& ec) {
        if (!ec) {
            self.heartbeat();
        }
    }));
}

void session::send(outgoing kind, const v1::Envelope& message) {
    if (connection_) {
        connection_->send(kind, message);
        unsent_.store(connection_ ? connection_->unsent_bytes() : 0, std::memory_order_relaxed);
    }
}

void session::end(disconnect_reason reason, bool from_server, std::string message, bool tell_server,
                  std::optional<std::chrono::seconds> retry_after) {
    if (!active_) {
        return;
    }
    active_ = false;
    connect_timer_.cancel();
    handshake_timer_.cancel();
    heartbeat_timer_.cancel();
    ack_timer_.cancel();
    disconnect_info info{reason, from_server, std::move(message), retry_after};
    status_.end(info);
    phase_ = client_state::disconnected;
    unsent_.store(0, std::memory_order_relaxed);
    if (connection_) {
        if (closing_connection_) {
            closing_connection_->abort(); // the one before: its time is up
        }
        closing_connection_ = std::move(connection_);
        closing_connection_->close(to_wire(reason), info.message, tell_server,
                                   [weak = weak_from_this(), session = session_] {
                                       const auto self = weak.lock();
                                       if (self && session == self->session_) {
                                           self->quiet_.store(true, std::memory_order_release);
                                       }
                                   });
    } else {
        quiet_.store(true, std::memory_order_release);
    }
    if (queued_apply_) {
        inbox_.push_disconnected(session_, std::move(info));
    } else {
        notify_disconnected(info);
    }
}

// ---- apply side -----------------------------------------------------------------------------------

void session::apply_welcome(std::uint64_t session, const v1::ServerWelcome& welcome) {
    apply_session_ = session;
    replica_.welcome(welcome);
    std::lock_guard lock{callback_mutex_};
    if (!detached_ && on_connected_) {
        on_connected_();
    }
}

void session::apply_snapshot(std::uint64_t session, std::string_view envelope) {
    if (session != apply_session_) {
        return; // queued before a reconnect
    }
    auto outcome = replica_.apply(envelope);
    switch (outcome.what) {
    case snapshot_outcome::kind::malformed:
        fail_on_bad_snapshot(session, std::move(outcome.error.message));
        return;
    case snapshot_outcome::kind::ignored:
        return;
    case snapshot_outcome::kind::applied:
        ++applied_;
        ++applied_since_poll_;
        status_.on_applied(outcome.applied.tick, outcome.applied.server_time_us, outcome.applied.full_state,
                           replica_.epoch_unix_us(), steady::now());
        break;
    case snapshot_outcome::kind::refused: {
        const auto code = outcome.error.code;
        status_.update([code](client_stats& s) {
            ++s.snapshots_refused;
            s.checksum_mismatches += code == proto::errc::checksum_mismatch ? 1 : 0;
            s.unknown_baselines += code == proto::errc::unknown_baseline ? 1 : 0;
        });
        break;
    }
    }
    send_ack(session, std::move(outcome.ack));
    std::lock_guard lock{callback_mutex_};
    if (detached_) {
        return;
    }
    if (outcome.what == snapshot_outcome::kind::applied) {
        if (on_snapshot_first_) {
            on_snapshot_first_(outcome.applied);
        }
        if (on_snapshot_) {
            on_snapshot_(outcome.applied);
        }
    } else if (on_refused_) {
        on_refused_(outcome.error);
    }
}

void session::send_ack(std::uint64_t session, v1::Envelope ack) {
    run_on_strand([self = shared_from_this(), ack = std::move(ack), session]() mutable {
        if (self->active_ && session == self->session_ && self->phase_ == client_state::connected) {
            self->send(outgoing::ack, ack);
            if (self->options_.transport == transport_kind::udp) {
                self->remember_ack(std::move(ack));
            }
        }
    });
}

// An ack travels unreliably over UDP, and the server may be waiting for exactly the one that was lost (the
// ack of a full state: it sends nothing more until then). While snapshots keep coming, newer acks make
// this timer find nothing to do; when they stop, the newest ack goes again after 100 ms, then 200, 400...
// up to once a second. A repeat the server no longer needs is ignored there (stale acks, protocol.md 5.1).
void session::remember_ack(v1::Envelope ack) {
    last_ack_ = std::move(ack);
    last_ack_at_ = steady::now();
    ack_repeat_after_ = ack_repeat_first;
    if (!ack_timer_armed_) {
        arm_ack_timer();
    }
}

void session::arm_ack_timer() {
    ack_timer_armed_ = true;
    ack_timer_.expires_at(last_ack_at_ + ack_repeat_after_);
    ack_timer_.async_wait(guarded([](session& self, const asio::error_code& ec) {
        self.ack_timer_armed_ = false;
        if (!ec) {
            self.repeat_ack();
        }
    }));
}

void session::repeat_ack() {
    if (!last_ack_ || phase_ != client_state::connected) {
        return;
    }
    const auto now = steady::now();
    if (now - last_ack_at_ >= ack_repeat_after_) {
        send(outgoing::ack, *last_ack_);
        status_.update([](client_stats& s) { ++s.acks_repeated; });
        last_ack_at_ = now;
        ack_repeat_after_ = std::min<steady::duration>(ack_repeat_after_ * 2, ack_repeat_most);
    }
    arm_ack_timer();
}

void session::fail_on_bad_snapshot(std::uint64_t session, std::string message) {
    // Not a snapshot at all: the server is broken, not the delta.
    run_on_strand([self = shared_from_this(), session, message = std::move(message)] {
        if (session == self->session_) {
            self->end(disconnect_reason::protocol_error, false, "bad snapshot from the server: " + message,
                      true);
        }
    });
}

void session::notify_disconnected(const disconnect_info& info) {
    std::lock_guard lock{callback_mutex_};
    if (!detached_ && on_disconnected_) {
        on_disconnected_(info);
    }
}

} // namespace ecsnet::client::detail
