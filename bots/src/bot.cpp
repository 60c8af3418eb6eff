#include "ecsnet/bots/bot.hpp"

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/input.hpp>
#include <ecsnet/arena/movement.hpp>

namespace ecsnet::bots {

namespace {

std::int64_t unix_us_now() noexcept {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

double seconds_between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
    return to > from ? std::chrono::duration<double>(to - from).count() : 0.0;
}

std::string name_of(std::size_t index, bool thin, const swarm_options& options) {
    return options.name_prefix + (thin ? "-thin-" : "-") + std::to_string(index);
}

// Among all the bots of the run: the full ones first, then the thin ones.
std::size_t overall(std::size_t index, bool thin, const swarm_options& options) {
    return thin ? options.clients + index : index;
}

client::client_options client_options_for(std::size_t index, bool thin, const swarm_options& options) {
    client::client_options out;
    out.name = name_of(index, thin, options);
    out.transport = options.transport;
    out.thin = thin;
    const auto position = overall(index, thin, options);
    if (position < options.tokens.size()) {
        out.connect_token = options.tokens[position];
    }
    out.prediction = options.predict && !thin;
    out.simulator = options.simulator;
    out.simulator.seed = bot_seed(options.simulator.seed, position); // each bot its own losses
    out.connect_timeout = options.connect_timeout;
    out.handshake_timeout = options.handshake_timeout;
    out.idle_timeout = options.idle_timeout;
    out.interpolation_states = 0;  // headless: no copies for interpolation
    out.single_threaded_io = true; // each io_context of the swarm has one thread (swarm.cpp)
    return out;
}

std::string describe(const client::disconnect_info& info) {
    std::string out{client::to_string(info.reason)};
    if (info.from_server) {
        out += " (from the server)";
    }
    if (!info.message.empty()) {
        out += ": " + info.message;
    }
    return out;
}

} // namespace

std::string_view to_string(bot_phase phase) noexcept {
    switch (phase) {
    case bot_phase::waiting:
        return "waiting";
    case bot_phase::connecting:
        return "connecting";
    case bot_phase::connected:
        return "connected";
    case bot_phase::failed:
        return "failed";
    case bot_phase::dropped:
        return "dropped";
    case bot_phase::closed:
        return "closed";
    }
    return "unknown";
}

bot::bot(asio::io_context& io, std::size_t index, bool thin, const swarm_options& options,
         swarm_counters& counters, event_log& log)
    : index_{overall(index, thin, options)}
    , thin_{thin}
    , name_{name_of(index, thin, options)}
    , host_{options.host}
    , port_{options.port}
    , counters_{&counters}
    , log_{&log}
    , behaviour_{options.behaviour, bot_seed(options.seed, overall(index, thin, options))}
    , client_{std::make_unique<client::client>(io, arena::replicated_schema(),
                                               client_options_for(index, thin, options))} {
    if (options.predict && !thin) {
        prediction_ = std::make_unique<client::prediction<arena::Transform>>(
            *client_, client::prediction_rules<arena::Transform>{&arena::predict_avatar, &arena::position_of,
                                                                 &arena::displace});
    }
    client_->on_connected([this] { handle_connected(); });
    client_->on_snapshot([this](const proto::applied_snapshot& applied) { handle_snapshot(applied); });
    client_->on_snapshot_refused([this](const proto::error& error) { handle_refused(error); });
    client_->on_disconnected([this](const client::disconnect_info& info) { handle_disconnected(info); });
}

bot::~bot() {
    prediction_.reset(); // unhooks from the client, which must still exist
    client_.reset();     // no callback runs once this returns
}

void bot::connect() {
    {
        std::lock_guard lock{mutex_};
        if (phase_ != bot_phase::waiting) {
            return;
        }
        set_phase(bot_phase::connecting);
        connect_started_ = steady::now();
    }
    client_->connect(host_, port_);
}

void bot::close() {
    {
        std::lock_guard lock{mutex_};
        closing_ = true;
        if (phase_ == bot_phase::waiting) {
            set_phase(bot_phase::closed); // never started: nothing to close
            return;
        }
    }
    client_->close("load test over");
}

bool bot::settled() const {
    const auto state = client_->state();
    return state == client::client_state::idle || state == client::client_state::disconnected;
}

void bot::set_phase(bot_phase phase) {
    const auto ended = [](bot_phase p) {
        return p == bot_phase::failed || p == bot_phase::dropped || p == bot_phase::closed;
    };
    if (phase_ == bot_phase::connected) {
        counters_->connected.fetch_sub(1, std::memory_order_relaxed);
    }
    if (phase == bot_phase::connected) {
        counters_->connected.fetch_add(1, std::memory_order_relaxed);
    }
    if (!ended(phase_) && ended(phase)) {
        counters_->ended.fetch_add(1, std::memory_order_relaxed);
    }
    phase_ = phase;
}

void bot::handle_connected() {
    // On the strand: the welcome was just applied.
    behaviour_.set_tick_rate(client_->tick_rate());
    std::lock_guard lock{mutex_};
    if (phase_ != bot_phase::connecting) {
        return;
    }
    set_phase(bot_phase::connected);
    connected_at_ = steady::now();
    tick_rate_ = client_->tick_rate();
}

void bot::handle_snapshot(const proto::applied_snapshot& applied) {
    // Update latency: from the server's timestamp of the tick to now, when the mirror has applied it.
    const auto tick_unix_us =
        static_cast<std::int64_t>(client_->server_epoch_unix_us() + applied.server_time_us);
    const auto latency_us = unix_us_now() - tick_unix_us;
    {
        std::lock_guard lock{mutex_};
        if (latency_us < 0) {
            ++negative_latencies_;
        }
        latency_.record(latency_us < 0 ? 0 : static_cast<std::uint64_t>(latency_us));
        ++applied_;
        if (!first_tick_) {
            first_tick_ = applied.tick;
        }
        last_tick_ = applied.tick;
    }
    counters_->snapshots_applied.fetch_add(1, std::memory_order_relaxed);

    const auto* own = client_->registry().try_get<arena::Transform>(client_->own_entity());
    const auto input = behaviour_.next(applied.tick, own);
    if (prediction_) {
        // Predicting: the newest decision goes with every tick the bot moves into (one per snapshot, more
        // after a lost one), each for its tick.
        if (input) {
            steering_ = arena::encode(*input);
        }
        prediction_->update(steering_);
    } else if (input) {
        static_cast<void>(client_->send_input(arena::encode(*input))); // refusals are counted in stats()
    }
}

void bot::handle_refused(const proto::error& error) {
    std::optional<proto::tick_type> after;
    {
        std::lock_guard lock{mutex_};
        after = last_tick_;
    }
    const auto where = after ? "after tick " + std::to_string(*after) : std::string{"before any tick"};
    if (error.code == proto::errc::stale_snapshot) {
        return; // overtaken by a newer one (UDP's unreliable channel reorders): nothing wrong
    }
    if (error.code == proto::errc::checksum_mismatch) {
        log_->log("desync", name_ + ": " + error.message + " (" + where + "); full state requested");
    } else {
        log_->log("snapshot refused", name_ + ": " + std::string{proto::to_string(error.code)} + ": " +
                                          error.message + " (" + where + ")");
    }
}

void bot::handle_disconnected(const client::disconnect_info& info) {
    bot_phase now_phase{};
    {
        std::lock_guard lock{mutex_};
        ended_at_ = steady::now();
        ended_ = info;
        if (closing_) {
            now_phase = bot_phase::closed;
        } else if (phase_ == bot_phase::connected) {
            now_phase = bot_phase::dropped;
        } else {
            now_phase = bot_phase::failed;
        }
        set_phase(now_phase);
    }
    if (now_phase == bot_phase::dropped) {
        log_->log("disconnected", name_ + ": " + describe(info));
    } else if (now_phase == bot_phase::failed) {
        log_->log("connect failure", name_ + ": " + describe(info));
    }
}

bot_reading bot::read(steady::time_point now, latency_histogram* latency) const {
    bot_reading out;
    {
        std::lock_guard lock{mutex_};
        if (latency != nullptr) {
            latency->merge(latency_);
        }
        out.phase = phase_;
        const bool welcomed = connected_at_ != steady::time_point{};
        out.welcomed = welcomed;
        if (welcomed) {
            const auto until = phase_ == bot_phase::connected ? now : std::min(now, ended_at_);
            out.connected_seconds = seconds_between(connected_at_, until);
            out.connect_seconds = seconds_between(connect_started_, connected_at_);
        }
        out.applied = applied_;
        out.first_tick = first_tick_;
        out.last_tick = last_tick_;
        out.tick_rate = tick_rate_;
        out.negative_latencies = negative_latencies_;
        out.ended = ended_;
    }
    const auto stats = client_->stats();
    out.desyncs = stats.checksum_mismatches;
    out.snapshots_refused = stats.snapshots_refused;
    out.full_states = stats.full_states_received;
    out.bytes_in = stats.bytes_received;
    out.bytes_out = stats.bytes_sent;
    out.inputs_sent = stats.inputs_sent;
    out.inputs_refused = stats.inputs_refused;
    out.packets_sent = stats.packets_sent;
    out.packets_lost = stats.packets_lost;
    out.resends = stats.resends;
    out.inputs_overflowed = stats.inputs_overflowed;
    out.ticks_compared = stats.prediction.ticks_compared;
    out.mispredictions = stats.prediction.mispredictions;
    out.thin = thin_;
    return out;
}

} // namespace ecsnet::bots
