// The sessions (game_server.hpp, as the links' connection_handler): admission, the handshake, inputs,
// acks and flow control, the snapshot each link asks for, and the end of a session.

#include "ecsnet/server/game_server.hpp"

#include <spdlog/spdlog.h>

#include <ecsnet/proto/handshake.hpp>

namespace ecsnet::server {

using clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t max_input_payload = 1024;

} // namespace

void game_server::on_opened(std::shared_ptr<client_link> link) {
    auto& c = *link;
    connections_.add(std::move(link));
    if (shutting_down_) {
        c.disconnect(v1::SHUTDOWN, "server shutting down");
        return;
    }
    // Overloaded: the ticks are over the limit, or they fit only because each client gets fewer snapshots
    // (snapshot_stride.hpp): a newcomer would be served at the expense of those already playing.
    if (const auto load = tick_load_.fraction_of(pacer_.period());
        options_.max_tick_load > 0.0 && (load > options_.max_tick_load || snapshot_stride_.stride() > 1)) {
        metrics_.overload_refusals.add();
        const auto why =
            snapshot_stride_.stride() > 1
                ? fmt::format("each client gets a snapshot every {} ticks", snapshot_stride_.stride())
                : fmt::format("its ticks take {:.0f}% of the tick period", 100.0 * load);
        if (peer_log_.allow("overload refusals", clock::now())) {
            spdlog::warn("{} refused: server overloaded ({}; tick limit {:.0f}%)", c.describe(), why,
                         100.0 * options_.max_tick_load);
        }
        c.state().retry_after_seconds = options_.retry_after_seconds;
        c.disconnect(v1::SERVER_FULL,
                     fmt::format("server overloaded: {}; retry in {} s", why, options_.retry_after_seconds));
        return;
    }
    if (admitted_ >= options_.max_clients) {
        if (peer_log_.allow("SERVER_FULL refusals", clock::now())) {
            spdlog::warn("{} refused: server full ({} clients)", c.describe(), admitted_);
        }
        c.disconnect(v1::SERVER_FULL, "server full: " + std::to_string(options_.max_clients) + " clients");
        return;
    }
    c.state().admitted = true;
    ++admitted_;
    metrics_.connected_clients.set(static_cast<double>(admitted_));
}

void game_server::on_message(client_link& from, v1::Envelope& message) {
    auto& s = from.state();
    switch (message.message_case()) {
    case v1::Envelope::kClientHello:
        if (s.state != session::phase::handshaking) {
            from.disconnect(v1::PROTOCOL_ERROR, "ClientHello after the handshake");
            return;
        }
        handle_hello(from, message.client_hello());
        return;
    case v1::Envelope::kPing: {
        v1::Envelope pong;
        pong.mutable_pong()->set_ping_sent_us(message.ping().sent_us());
        pong.mutable_pong()->set_responder_time_us(server_time_us(clock::now()));
        from.send(pong);
        return;
    }
    case v1::Envelope::kDisconnect:
        s.closed_by_peer = true;
        s.close_reason = v1::CLIENT_QUIT;
        s.close_message = "client quit: " + message.disconnect().message().substr(0, 200);
        from.abort();
        return;
    case v1::Envelope::kAck:
    case v1::Envelope::kInput:
        if (s.state != session::phase::playing) {
            from.disconnect(v1::PROTOCOL_ERROR,
                            std::string{proto::message_name(message)} + " before the handshake completed");
            return;
        }
        if (message.message_case() == v1::Envelope::kAck) {
            handle_ack(from, message.ack());
        } else {
            handle_input(from, *message.mutable_input());
        }
        return;
    default:
        from.disconnect(v1::PROTOCOL_ERROR,
                        "unexpected " + std::string{proto::message_name(message)} + " from a client");
        return;
    }
}

void game_server::handle_hello(client_link& from, const v1::ClientHello& hello) {
    auto& s = from.state();
    // UDP clients proved their token to the transport; TCP ones prove it here (unless in development mode).
    if (tokens_ && from.transport() == "tcp") {
        const auto now_unix =
            static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
        if (auto refused = tokens_->check(hello.connect_token(), now_unix)) {
            if (peer_log_.allow("handshake refusals", clock::now())) {
                spdlog::warn("{} refused at handshake: {}", from.describe(), *refused);
            }
            from.disconnect(v1::AUTHENTICATION_FAILED, *refused);
            return;
        }
    }
    if (auto accepted = proto::check_client_hello(hello, history_.layout()); !accepted) {
        if (peer_log_.allow("handshake refusals", clock::now())) {
            spdlog::warn("{} refused at handshake: {}", from.describe(), accepted.message());
        }
        from.disconnect(proto::reason_for(accepted.error_value()), std::string{accepted.message()});
        return;
    }
    s.id = next_client_id_++;
    s.name = std::string{proto::client_name(hello)};
    s.avatar = world_->client_joined(s.id, s.name);
    std::optional<refusal> refused;
    s.replication = replicator_->join(s.id, s.avatar, hello, refused);
    if (refused) {
        if (peer_log_.allow("handshake refusals", clock::now())) {
            spdlog::warn("{} refused at handshake: {}", from.describe(), refused->message);
        }
        world_->client_left(s.id, s.avatar);
        s.avatar = null_entity;
        s.id = 0;
        from.disconnect(refused->reason, refused->message);
        return;
    }
    s.state = session::phase::playing;
    s.wants_input_status = hello.wants_input_status();
    from.handshake_done();
    if (agones_) {
        agones_->player_connected(std::to_string(s.id));
    }

    proto::welcome_info info;
    info.client_id = s.id;
    info.tick_rate = options_.tick_rate;
    info.current_tick = tick_;
    if (s.avatar != null_entity) {
        info.own_entity = history_.to_net(s.avatar);
    }
    info.server_epoch_unix_us = epoch_unix_us_;
    info.history_ticks = static_cast<std::uint32_t>(history_.depth());
    auto welcome = proto::make_server_welcome(history_.layout(), info);
    replicator_->welcome(*s.replication, *welcome.mutable_server_welcome());
    from.send(welcome);
    if (peer_log_.allow("joins", clock::now())) {
        spdlog::info("{} joined", from.describe());
    }
    from.want_snapshot(); // the newest tick, as a full state
}

void game_server::handle_ack(client_link& from, const v1::Ack& ack) {
    auto& s = from.state();
    if (!ack.full_state_requested() && (!s.sent || ack.tick() > *s.sent)) {
        from.disconnect(v1::PROTOCOL_ERROR,
                        "ack of tick " + std::to_string(ack.tick()) + ", which was never sent");
        return;
    }
    if (s.full_state_in_flight && ack.tick() < *s.full_state_in_flight) {
        // Sent before the full state arrived (a repeat, a duplicate, a reordered datagram; a request names
        // the tick it refused): the full state answers it already.
        metrics_.stale_acks.add();
        return;
    }
    if (ack.full_state_requested()) {
        ++s.full_state_requests;
    }
    replicator_->on_ack(*s.replication, ack);
    if (!ack.full_state_requested() && (!s.acked || ack.tick() > *s.acked)) {
        s.acked = ack.tick();
    }
    s.full_state_in_flight.reset();
    if (ack.full_state_requested()) {
        s.sent.reset(); // resend the newest tick, in full
        s.ack_anchor.reset();
        from.want_snapshot();
        return;
    }
    if (!s.ack_anchor || ack.tick() > *s.ack_anchor) {
        s.ack_anchor = ack.tick();
        from.want_snapshot(); // a client held back by flow control may take the newest tick now
    } else if (window_full(s)) {
        s.nudged = true;
        from.want_snapshot();
    }
}

game_server::snapshot_gate game_server::gate(const session& s) const noexcept {
    if (history_.empty() || (s.sent && *s.sent >= history_.newest_tick())) {
        return snapshot_gate::nothing_new;
    }
    if (!snapshot_stride_.sends_at(history_.newest_tick(), s.id)) {
        return snapshot_gate::skipped; // overloaded: this client's turn is a later tick
    }
    if (s.full_state_in_flight) {
        return snapshot_gate::held; // one at a time: the client's ack (or full-state request) sends the next
    }
    if (window_full(s) && !s.nudged) {
        return snapshot_gate::held; // resumed by its next ack (handle_ack)
    }
    return snapshot_gate::open;
}

bool game_server::window_full(const session& s) const noexcept {
    // Measured from the acked tick, not from what was sent since: the views in flight stay bounded however
    // late the acks arrive (a window that restarted at each ack's arrival let them outgrow what a
    // client_view keeps, over TCP at 20% loss).
    return s.sent && s.ack_anchor && *s.sent - *s.ack_anchor >= options_.max_unacked_ticks;
}

void game_server::handle_input(client_link& from, v1::Input& input) {
    auto& s = from.state();
    if (input.payload().size() > max_input_payload) {
        from.disconnect(v1::PROTOCOL_ERROR, "input payload of " + std::to_string(input.payload().size()) +
                                                " bytes exceeds " + std::to_string(max_input_payload));
        return;
    }
    if (input.sequence() <= s.last_input_sequence) {
        return; // a duplicate or a late one: inputs are applied in sequence order only
    }
    s.last_input_sequence = input.sequence();
    ++s.inputs_received;
    const client_input kept{input.client_tick(), input.sequence(), {}};
    switch (s.inputs.offer(kept, std::move(*input.mutable_payload()), tick_ + 1, options_.tick_rate)) {
    case input_buffer::verdict::kept:
        return;
    case input_buffer::verdict::late:
        metrics_.inputs_late.add(); // applied at the next tick
        return;
    case input_buffer::verdict::future:
        metrics_.inputs_future.add();
        if (peer_log_.allow("future inputs", clock::now())) {
            spdlog::warn("{}: input {} refused: for tick {}, more than {} ticks ahead of {}", from.describe(),
                         input.sequence(), input.client_tick(), input_buffer::max_lead, tick_ + 1);
        }
        return;
    case input_buffer::verdict::flood:
        metrics_.inputs_flood.add();
        if (peer_log_.allow("input floods", clock::now())) {
            spdlog::warn("{}: input {} refused: more than {} inputs for one tick", from.describe(),
                         input.sequence(), input_buffer::max_per_tick);
        }
        return;
    }
}

std::optional<outgoing_snapshot> game_server::next_snapshot(client_link& to) {
    auto& s = to.state();
    switch (gate(s)) {
    case snapshot_gate::nothing_new:
    case snapshot_gate::skipped:
        return std::nullopt;
    case snapshot_gate::held:
        metrics_.snapshots_held.add();
        return std::nullopt;
    case snapshot_gate::open:
        break;
    }
    if (window_full(s)) {
        s.nudged = false; // the nudge is spent on this one
    }
    auto snapshot = replicator_->snapshot(*s.replication);
    if (!snapshot) {
        return std::nullopt;
    }
    s.sent = snapshot->tick;
    if (!s.ack_anchor) {
        s.ack_anchor = snapshot->tick;
    }
    if (snapshot->full_state) {
        s.full_state_in_flight = snapshot->tick;
    }
    replicator_->sent(*s.replication, to.wire_bytes(*snapshot));
    metrics_.snapshot_size.observe(static_cast<double>(snapshot->frame->size()));
    return snapshot;
}

void game_server::on_left(client_link& left) {
    auto& s = left.state();
    if (s.admitted) {
        s.admitted = false;
        --admitted_;
        metrics_.connected_clients.set(static_cast<double>(admitted_));
    }
    if (s.id != 0) {
        if (s.replication) {
            replicator_->leave(*s.replication);
        }
        world_->client_left(s.id, s.avatar);
        s.avatar = null_entity;
        if (lag_compensation_) {
            lag_compensation_->forget(s.id);
        }
        if (agones_) { // s.id is set once the handshake completed: the id is in the players List
            agones_->player_disconnected(std::to_string(s.id));
        }
    }
    const auto reason = v1::DisconnectReason_Name(s.close_reason);
    metrics_.disconnects.with(reason).add();
    {
        const auto m = left.measures();
        inspector_.add_disconnect(inspector::disconnect_record{s.id, s.name, left.remote(), reason,
                                                               s.close_message.substr(0, 200), 0,
                                                               m.bytes_sent, m.bytes_received});
    }
    if (peer_log_.allow(reason + " disconnects", clock::now())) {
        const auto m = left.measures();
        spdlog::info("{} disconnected: {} ({}); {} bytes in, {} bytes out", left.describe(), reason,
                     s.close_message, m.bytes_received, m.bytes_sent);
    }
}

void game_server::on_closed(client_link& closed) {
    connections_.remove(closed);
    if (shutting_down_ && connections_.empty()) {
        shutdown_timer_.cancel();
        finish_drain();
    }
}

} // namespace ecsnet::server
