// The tick (game_server.hpp): inputs, systems, capture, and each client's snapshot; the per-tick feeds of
// the inspector and the transport's metrics.

#include "ecsnet/server/game_server.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/lag_compensation.hpp"
#include "ecsnet/server/predicted_by.hpp"

namespace ecsnet::server {

using clock = std::chrono::steady_clock;

namespace {

// The time each part of a tick took, as the parts end.
class tick_parts {
public:
    void add(tick_part part, std::chrono::nanoseconds took) noexcept {
        took_[static_cast<std::size_t>(part)] = took;
        ended_ = std::max(ended_, static_cast<std::size_t>(part) + 1);
    }
    /// "inputs 0.41 ms, systems 0.70 ms, ...", up to the last part that ended.
    [[nodiscard]] std::string describe() const {
        std::string out;
        for (std::size_t part = 0; part < ended_; ++part) {
            fmt::format_to(std::back_inserter(out), "{}{} {:.2f} ms", part == 0 ? "" : ", ",
                           tick_part_names[part],
                           std::chrono::duration<double, std::milli>(took_[part]).count());
        }
        return out;
    }

private:
    std::array<std::chrono::nanoseconds, tick_part_count> took_{};
    std::size_t ended_{};
};

// The tick visits every link three times (inputs, the snapshots to prepare, the sends), each finding its
// state cold (a thousand links were visited since): each visit asks for a link's state this many links
// ahead of it (connection_manager::for_each_ahead).
constexpr std::size_t link_lookahead = 2;

} // namespace

void game_server::schedule_tick(clock::time_point at) {
    tick_timer_.expires_at(at);
    tick_timer_.async_wait([this](const asio::error_code& ec) {
        if (!ec && !shutting_down_) {
            tick();
        }
    });
}

void game_server::tick() {
    const auto started = clock::now();
    // Each part's time goes to its counter as the part ends (ecsnet_tick_phase_seconds_total), and into
    // the line an overrun logs, which says where the time went.
    auto part_started = started;
    tick_parts parts;
    const auto part_ended = [this, &part_started, &parts](tick_part part,
                                                          clock::time_point now = clock::now()) {
        const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(now - part_started);
        metrics_.tick_part_ns[static_cast<std::size_t>(part)]->add(static_cast<std::uint64_t>(took.count()));
        parts.add(part, took);
        part_started = now;
    };

    // 1. The inputs for this tick (input_buffer.hpp), each client's to its own avatar only. Shots among
    // them are checked against the clock of this tick (lag_compensation.hpp). What the UDP socket holds is
    // read first: between two of its reads the server lets datagrams gather (--receive-interval-us), and
    // those that came meanwhile belong to this tick.
    if (udp_) {
        udp_->server().receive_waiting();
    }
    const auto this_tick = tick_ + 1; // the tick this step produces
    if (lag_compensation_) {
        lag_compensation_->set_now(static_cast<std::int64_t>(server_time_us(started)));
    }
    const auto ask_inputs = [](const client_link& c) { c.state().inputs.prefetch(); };
    connections_.for_each_ahead(link_lookahead, ask_inputs, [this, started, this_tick](client_link& c) {
        auto& s = c.state();
        if (s.state != session::phase::playing) {
            return;
        }
        const bool dry = s.inputs.take(this_tick, [&](const client_input& taken) {
            if (!taken.repeated) {
                metrics_.inputs.add();
            }
            auto input = taken;
            input.predicting = s.wants_input_status;
            if (auto refused = world_->apply_input(s.id, s.avatar, input)) {
                metrics_.refused_inputs.add();
                if (peer_log_.allow("refused inputs", started)) {
                    spdlog::warn("{}: input {} refused: {}", c.describe(), input.sequence, *refused);
                }
            }
        });
        if (dry) {
            metrics_.inputs_dry.add();
        }
    });
    part_ended(tick_part::inputs);

    // 2. Systems.
    world_->update(1.0 / static_cast<double>(options_.tick_rate));
    part_ended(tick_part::systems);

    // 3. Capture the replicated state.
    ++tick_;
    const auto captured_at = server_time_us(started);
    history_.capture(tick_, captured_at);
    // Lag compensation's record, with the snapshot's time (what clients interpolate is what shots rewind
    // to), runs beside the replicator's own updates.
    std::function<void()> record_hits;
    if (lag_compensation_) {
        record_hits = [this, captured_at] {
            lag_compensation_->record(world_->registry(), tick_, static_cast<std::int64_t>(captured_at),
                                      &history_.newest());
        };
    }
    replicator_->tick(tick_, captured_at, record_hits);
    if (lag_compensation_) {
        metrics_.hit_history_bytes.set(static_cast<double>(lag_compensation_->history().memory_bytes()));
    }
    if (tick_observer_) {
        tick_observer_(tick_, history_);
    }
    if (checkpoints_) {
        collect_checkpoint_outcome();
        if (options_.save_every.count() > 0 && started >= next_checkpoint_) {
            take_checkpoint(started);
        }
    }
    part_ended(tick_part::capture);
    const auto snapshots_started = part_started; // prepare and send: the part the snapshot stride scales

    // 4. Every playing client wants this tick; sent now where the socket is idle. A client that predicts
    // gets its InputStatus first (unreliable over UDP, in the same datagram as the snapshot when it fits).
    // The replicator may write ahead, on its workers, the snapshots the loop below sends: those of UDP links
    // next_snapshot() would serve now (a datagram link sends at once; a TCP link writes its snapshot when
    // its socket is idle, maybe later in the tick or not at all, so it is left to write it when it can).
    to_prepare_.clear();
    const auto ask_nothing_more = [](const client_link&) {}; // the session is all it reads
    connections_.for_each_ahead(link_lookahead, ask_nothing_more, [this](client_link& c) {
        auto& s = c.state();
        if (s.state == session::phase::playing && s.replication && c.transport() == "udp" &&
            gate(s) == snapshot_gate::open) {
            to_prepare_.push_back(s.replication.get());
        }
    });
    replicator_->prepare(to_prepare_);
    part_ended(tick_part::prepare);
    const auto predicted = predicted_entities();
    const auto ask_transport = [](const client_link& c) { c.prefetch_send(); };
    connections_.for_each_ahead(link_lookahead, ask_transport, [this, &predicted](client_link& c) {
        auto& s = c.state();
        if (s.state != session::phase::playing) {
            return;
        }
        if (s.wants_input_status) {
            auto& st = *input_status_.mutable_input_status();
            st.Clear();
            st.set_tick(tick_);
            st.set_applied_sequence(s.inputs.applied_sequence());
            st.set_applied_client_tick(s.inputs.applied_client_tick());
            if (const auto lead = s.inputs.lead()) {
                st.set_lead_ticks(*lead);
            }
            st.set_ran_dry(static_cast<std::uint32_t>(s.inputs.ran_dry()));
            add_predicted(s, predicted, st);
            c.send(input_status_);
        }
        c.want_snapshot();
    });
    part_ended(tick_part::send);
    snapshot_load_.add(part_started - snapshots_started);

    if (udp_) {
        export_transport_metrics(tick_ % options_.tick_rate == 0); // clients' RTT and loss once a second
    }
    const auto ended = clock::now();
    feed_inspector(started, ended);
    peer_log_.flush(ended);
    checkpoint_log_.flush(ended);
    metrics_.ticks.add();
    part_ended(tick_part::other, ended);
    metrics_.tick_duration.observe(std::chrono::duration<double>(ended - started).count());
    tick_load_.add(ended - started);
    metrics_.entities.set(static_cast<double>(world_->registry().alive()));
    last_tick_end_ns_ = ended.time_since_epoch().count();

    const auto next = pacer_.tick_ended(ended);
    if (next.overrun) {
        metrics_.tick_overruns.add();
        const auto overruns = metrics_.tick_overruns.value();
        if (overruns <= 10 || overruns % 100 == 0) { // a struggling server must not drown in its own logs
            spdlog::warn("tick {} overran: {:.2f} ms for a {:.2f} ms period ({}), {} slot(s) skipped ({} "
                         "overruns so far)",
                         tick_, std::chrono::duration<double, std::milli>(ended - started).count(),
                         std::chrono::duration<double, std::milli>(pacer_.period()).count(), parts.describe(),
                         next.skipped_slots, overruns);
        }
    }
    if (const auto before = snapshot_stride_.stride();
        snapshot_stride_.tick_ended(next.overrun, tick_load_.fraction_of(pacer_.period()),
                                    snapshot_load_.fraction_of(pacer_.period()))) {
        const auto stride = snapshot_stride_.stride();
        metrics_.snapshot_stride.set(static_cast<double>(stride));
        if (peer_log_.allow("snapshot stride", ended)) {
            spdlog::warn(
                "{}: the last second's ticks took {:.0f}% of the period; each client now gets a snapshot "
                "every {} tick(s){}",
                stride > before ? "overloaded" : "catching up", 100.0 * snapshot_stride_.last_load(), stride,
                stride > before && snapshot_stride_.hold_windows() > 1
                    ? fmt::format(" for {} s at least (the rate was raised too early before)",
                                  snapshot_stride_.hold_windows())
                    : std::string{});
        }
    }
    schedule_tick(next.next_start);
}

std::unordered_map<client_id, std::vector<proto::net_entity>> game_server::predicted_entities() {
    std::unordered_map<client_id, std::vector<proto::net_entity>> out;
    const auto* markers = world_->registry().try_storage<predicted_by>();
    if (markers == nullptr || markers->empty()) {
        return out;
    }
    const auto* entities = markers->data();
    const auto* marks = markers->raw();
    for (std::size_t i = 0; i < markers->size(); ++i) {
        out[marks[i].client].push_back(history_.to_net(entities[i]));
    }
    for (auto& [client, list] : out) {
        std::sort(list.begin(), list.end(), [](const proto::net_entity& a, const proto::net_entity& b) {
            return a.index != b.index ? a.index < b.index : a.generation < b.generation;
        });
    }
    return out;
}

void game_server::add_predicted(session& s,
                                const std::unordered_map<client_id, std::vector<proto::net_entity>>& all,
                                v1::InputStatus& status) const {
    static const std::vector<proto::net_entity> none;
    const auto found = all.find(s.id);
    const auto& now = found != all.end() ? found->second : none;
    if (now != s.predicted) {
        s.predicted = now;
        s.predicted_changed_at = tick_;
    }
    // Sent for a few ticks after a change (a lost status is covered by the next ones) and once a second.
    constexpr proto::tick_type resend_ticks = 8;
    const bool recent = tick_ - s.predicted_changed_at < resend_ticks;
    const bool never = s.predicted.empty() && s.predicted_changed_at == 0; // a game that marks nothing
    if (never || (!recent && tick_ % std::max<std::uint32_t>(options_.tick_rate, 1) != 0)) {
        return;
    }
    auto& out = *status.mutable_predicted();
    for (const auto& e : s.predicted) {
        auto& id = *out.add_entities();
        id.set_index(e.index);
        id.set_generation(e.generation);
    }
}

void game_server::feed_inspector(clock::time_point started, clock::time_point ended) {
    // The frame: only while someone looks, a few times a second (inspector_feed.hpp). Its cost is part of
    // this tick's duration (measured in bench/inspector_tick_p99).
    if (inspector_.wants_frame(ended)) {
        const auto copy_started = clock::now();
        auto next = inspector_.take_spare();
        inspector::feed::copy_newest(history_, *next);
        next->clients.clear();
        connections_.for_each([this, &next](client_link& c) {
            const auto& s = c.state();
            const auto m = c.measures();
            inspector::client_summary summary;
            summary.id = s.id;
            summary.name = s.name;
            summary.remote = c.remote();
            summary.transport = std::string{c.transport()};
            summary.playing = s.state == session::phase::playing;
            if (s.avatar != null_entity) {
                summary.avatar = entity_traits::to_index(s.avatar);
            }
            summary.rtt_ms = m.rtt_ms;
            summary.loss = m.loss;
            summary.bytes_sent = m.bytes_sent;
            summary.bytes_received = m.bytes_received;
            if (s.acked) {
                summary.ticks_behind = tick_ - *s.acked;
            }
            summary.full_state_requests = s.full_state_requests;
            summary.inputs_received = s.inputs_received;
            summary.unsent_bytes = m.unsent_bytes;
            next->clients.push_back(std::move(summary));
        });
        next->relevancy_radius = dynamic_cast<interest_replicator*>(replicator_.get()) != nullptr
                                     ? options_.relevancy_radius
                                     : 0.0F;
        next->tick_rate = options_.tick_rate;
        next->copy_ms = std::chrono::duration<double, std::milli>(clock::now() - copy_started).count();
        inspector_.publish(std::move(next), ended);
        metrics_.inspector_frames.add();
    }

    // Server-only components of the entities open in an inspector's panel (a few, on request).
    if (inspector_.server_only_wanted()) {
        for (const auto index : inspector_.take_server_only_requests()) {
            inspector::server_only_view view;
            view.tick = tick_;
            view.index = index;
            const auto e = world_->registry().current(index);
            if (e != null_entity) {
                view.version = entity_traits::to_version(e);
                view.components = world_->inspect(e);
            }
            inspector_.answer_server_only(std::move(view));
        }
    }

    // The time series: one sample a second, always (a few numbers).
    auto& second = inspector_second_;
    const double tick_ms = std::chrono::duration<double, std::milli>(ended - started).count();
    if (second.ticks == 0 && second.start == clock::time_point{}) {
        second.start = started;
        second.bytes_out = metrics_.sent_bytes.value();
        second.bytes_in = metrics_.received_bytes.value();
    }
    second.sum_ms += tick_ms;
    second.max_ms = std::max(second.max_ms, tick_ms);
    ++second.ticks;
    const double elapsed = std::chrono::duration<double>(ended - second.start).count();
    if (elapsed >= 1.0) {
        const auto out = metrics_.sent_bytes.value();
        const auto in = metrics_.received_bytes.value();
        inspector::series_sample sample;
        sample.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        sample.tick_ms_mean = second.sum_ms / second.ticks;
        sample.tick_ms_max = second.max_ms;
        sample.ticks = second.ticks;
        sample.clients = static_cast<std::uint32_t>(admitted_);
        sample.bytes_out_per_s = static_cast<double>(out - second.bytes_out) / elapsed;
        sample.bytes_in_per_s = static_cast<double>(in - second.bytes_in) / elapsed;
        sample.entities = history_.empty() ? 0 : history_.newest().entities.size();
        inspector_.add_sample(sample);
        second = {};
        second.start = ended;
        second.bytes_out = out;
        second.bytes_in = in;
    }
}

void game_server::export_transport_metrics(bool per_client) {
    // The UDP transport counts its datagrams' bytes; the traffic metrics, which TCP connections add to as
    // they write and read, get what it counted since the last tick.
    const auto& counters = udp_->server().counters();
    const auto sent = counters.bytes_sent.load(std::memory_order_relaxed);
    const auto received = counters.bytes_received.load(std::memory_order_relaxed);
    metrics_.sent_bytes.add(sent - udp_bytes_seen_.sent);
    metrics_.received_bytes.add(received - udp_bytes_seen_.received);
    udp_bytes_seen_ = {sent, received};

    const auto& dropped = counters.dropped;
    dropped.for_each([this](transport::drop_reason reason, std::uint64_t count) {
        const auto at = static_cast<std::size_t>(reason);
        if (at >= dropped_seen_.size()) {
            dropped_seen_.resize(at + 1, 0);
        }
        if (count > dropped_seen_[at]) {
            metrics_.packets_dropped.with(transport::to_string(reason)).add(count - dropped_seen_[at]);
            dropped_seen_[at] = count;
        }
    });
    if (!per_client) {
        return;
    }
    std::uint64_t resends = 0;
    connections_.for_each([&](client_link& c) {
        const auto m = c.measures();
        resends += m.resends;
        if (m.rtt_ms && c.state().state == session::phase::playing) {
            metrics_.client_rtt.observe(*m.rtt_ms / 1000.0);
            metrics_.client_loss.observe(m.loss.value_or(0.0));
        }
    });
    metrics_.resends.set(static_cast<double>(resends));
}

} // namespace ecsnet::server
