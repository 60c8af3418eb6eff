#pragma once

// Client-side prediction of the client's own avatar (issue 17), driven by a client: the game's state of its
// avatar runs ahead of the server, with the very rule the server runs (for the demo, arena/movement.hpp),
// so that an input shows on screen at once instead of a round trip later.
//
//   ecsnet::client::client net{schema, {.prediction = true}};
//   ecsnet::client::prediction<Transform> predicted{net, ecsnet::arena::avatar_prediction_rules()};
//   net.connect(...);
//   while (running) {
//       net.poll();                                  // snapshots: reconciled as they are applied
//       predicted.update(encode(move_from_keys()));  // each new tick: the input sent for it, and predicted
//       if (auto me = predicted.visible()) { draw(*me); }   // the avatar, now
//   }
//
// Each frame, update() works out the tick the client should be at: the server clock's next tick, plus half
// the round trip, plus a margin (client::lead_tick), so that an input sent now reaches the server before its
// tick. For each new tick it sends the input with that tick (client::send_input(payload, tick)) and predicts
// it (predictor.hpp: inputs and states in a ring buffer). After each snapshot, the server's state of the own
// avatar is compared with the prediction of that tick; on a difference the prediction rolls back to it and
// replays the inputs since, and the jump is smoothed over the next frames (visible()).
//
// The margin adapts to the server's InputStatus.lead_ticks (the smallest slack of the client's inputs over
// the last second): raised at once to what was missing when inputs arrive late, lowered by half a tick a
// second while they arrive more than a tick earlier than target_lead_ticks (Overwatch's rule).
//
// Entities the server marks as predicted for this client besides its avatar (the server's predicted_by
// component: a vehicle it drives, a pet that follows it) are predicted with the same inputs when the game
// registers their rules (marked_predictions.hpp):
//
//   predicted.predict_marked({&ecsnet::arena::predict_companion, &ecsnet::arena::position_of,
//                             &ecsnet::arena::displace});
//   if (auto drone = predicted.visible(entity)) { draw(*drone); }   // marked: predicted; else the server's
//
// Each marked entity has its own ring of states, reconciliation and smoothing; one that leaves the set or
// the view stops being predicted (visible(e) is then the mirror's state), one that enters starts from its
// next server state. client_stats::prediction counts over all of them; core_of(e) has one entity's stats.
//
// With client_options::prediction off, update() sends the input once per server tick, for the tick the client
// sees (no lead), and visible() is the server's state: a game can switch prediction off without another code
// path. Threading: like the mirror (modes 1 and 2: the thread that calls poll(); mode 3: the client's
// strand). Create it before connect(), destroy it before the client; it takes client::on_snapshot_first.

#include <cstdint>
#include <optional>
#include <string_view>

#include "ecsnet/client/client.hpp"
#include "ecsnet/client/marked_predictions.hpp"
#include "ecsnet/client/predictor.hpp"

namespace ecsnet::client {

template<typename State>
class prediction {
public:
    prediction(client& net, prediction_rules<State> rules, prediction_options options = {})
        : net_{&net}
        , predictor_{std::move(rules), 1.0 / 30.0, options}
        , marked_{{}, 1.0 / 30.0, options}
        , margin_{options.initial_margin_ticks} {
        net.on_snapshot_first([this](const proto::applied_snapshot& applied) { on_snapshot(applied); });
    }
    /// Unhooks from the client (which must still exist: destroy the prediction first, as declaring it after
    /// the client does).
    ~prediction() { net_->on_snapshot_first({}); }
    prediction(const prediction&) = delete;
    prediction& operator=(const prediction&) = delete;

    [[nodiscard]] bool enabled() const noexcept { return net_->options().prediction; }

    /// The rules of the entities the server marks as predicted for this client (besides the avatar, which
    /// keeps its own). Without them only the avatar is predicted. Call before connect().
    void predict_marked(prediction_rules<State> rules) {
        marked_rules_ = std::move(rules);
        marked_ = marked_predictions<State>{marked_rules_, 1.0 / 30.0, predictor_.options()};
    }

    /// Once per frame, after poll(): sends `input` for, and predicts, each tick the client moved into since
    /// the last call (at most max_ticks_per_update; beyond, the client restarts from the server's state).
    /// Returns the ticks predicted (with prediction off: the inputs sent).
    std::size_t update(std::string_view input) {
        predictor_.frame();
        marked_.frame();
        if (net_->state() != client_state::connected) {
            return 0;
        }
        if (!enabled()) {
            const auto tick = net_->lead_tick(-1.0); // the server clock's next tick
            if (sent_tick_ && tick <= *sent_tick_) {
                return 0;
            }
            sent_tick_ = tick;
            return net_->send_input(input) ? 1 : 0;
        }
        adapt_margin();
        if (!predictor_.started()) {
            return 0; // the first snapshot of the avatar starts it
        }
        const auto target = net_->lead_tick(margin_);
        if (target <= predictor_.newest_tick()) {
            return 0;
        }
        if (target - predictor_.newest_tick() > max_ticks_per_update) {
            predictor_.clear(); // far behind (a hitch, a clock jump): start again from the next snapshot
            marked_.clear();
            return 0;
        }
        std::size_t predicted = 0;
        while (predictor_.newest_tick() < target) {
            const auto tick = predictor_.newest_tick() + 1;
            net_->send_input(input, tick);
            predictor_.advance(input);
            ++predicted;
        }
        predictor_.caught_up();
        marked_.follow(predictor_); // the marked entities step with the same inputs
        report();
        return predicted;
    }

    /// The newest predicted state of the avatar (prediction off: the server's newest).
    [[nodiscard]] std::optional<State> predicted() const {
        if (!enabled()) {
            return server_state();
        }
        return predictor_.started() ? std::optional<State>{predictor_.predicted()} : std::nullopt;
    }
    /// What to draw: the prediction with the correction being smoothed (prediction off: the server's newest).
    [[nodiscard]] std::optional<State> visible() const {
        if (!enabled()) {
            return server_state();
        }
        return predictor_.started() ? std::optional<State>{predictor_.visible()} : std::nullopt;
    }
    /// Entity `e` of the mirror as it should be drawn: the own avatar's visible(), a marked entity's
    /// prediction with its correction being smoothed, any other entity's (or with prediction off) the
    /// mirror's newest state.
    [[nodiscard]] std::optional<State> visible(entity e) const {
        if (enabled() && e != null_entity && e == net_->own_entity()) {
            return visible();
        }
        if (const auto* p = core_of(e); p != nullptr && p->started()) {
            return p->visible();
        }
        return mirrored(e);
    }
    /// The same without the correction: the newest prediction (or the mirror's state).
    [[nodiscard]] std::optional<State> predicted(entity e) const {
        if (enabled() && e != null_entity && e == net_->own_entity()) {
            return predicted();
        }
        if (const auto* p = core_of(e); p != nullptr && p->started()) {
            return p->predicted();
        }
        return mirrored(e);
    }
    /// The prediction of a marked entity of the mirror (nullptr: not marked, or prediction off).
    [[nodiscard]] const predictor<State>* core_of(entity e) const {
        if (!enabled() || e == null_entity) {
            return nullptr;
        }
        for (const auto& id : marked_.marked()) {
            if (net_->mirror().find(id) == e) {
                return marked_.find(id);
            }
        }
        return nullptr;
    }
    [[nodiscard]] const marked_predictions<State>& marked() const noexcept { return marked_; }
    [[nodiscard]] const predictor<State>& core() const noexcept { return predictor_; }
    [[nodiscard]] double margin_ticks() const noexcept { return margin_; }

    static constexpr std::uint32_t max_ticks_per_update = 64;

private:
    [[nodiscard]] std::optional<State> server_state() const { return mirrored(net_->own_entity()); }

    [[nodiscard]] std::optional<State> mirrored(entity e) const {
        if (e == null_entity || !net_->registry().valid(e) || !net_->registry().template all_of<State>(e)) {
            return std::nullopt;
        }
        return net_->registry().template get<State>(e);
    }

    void on_snapshot(const proto::applied_snapshot& applied) {
        newest_server_tick_ = applied.tick;
        if (!enabled()) {
            return;
        }
        const auto own = net_->own_entity();
        if (own != own_) {
            own_ = own; // a new connection, or a new avatar: nothing predicted applies to it
            const double tick_seconds = 1.0 / static_cast<double>(net_->tick_rate());
            predictor_ = predictor<State>{rules_copy(), tick_seconds, predictor_.options()};
            marked_ = marked_predictions<State>{marked_rules_, tick_seconds, predictor_.options()};
        }
        if (auto server = server_state()) {
            predictor_.reconcile(applied.tick, *server);
            reconcile_marked(applied.tick);
            report();
        }
    }

    // After the avatar: the marked entities in view are compared (or started) at the same tick; those out
    // of view stop.
    void reconcile_marked(std::uint32_t tick) {
        if (!marked_.enabled()) {
            return;
        }
        marked_.mark(net_->stats().predicted_entities);
        for (const auto& id : marked_.marked()) {
            const auto local = net_->mirror().find(id);
            if (auto server = mirrored(local)) {
                marked_.reconcile(id, tick, *server, predictor_);
            } else {
                marked_.forget(id);
            }
        }
    }

    // Once a second of statuses: raise the margin at once by what was missing, lower it slowly.
    void adapt_margin() {
        const auto s = net_->stats();
        if (!s.input_status_tick || !s.input_lead_ticks) {
            return;
        }
        const auto rate = std::max<std::uint32_t>(net_->tick_rate(), 1);
        if (adapted_at_ && *s.input_status_tick < *adapted_at_ + rate) {
            return;
        }
        adapted_at_ = *s.input_status_tick;
        const auto& o = predictor_.options();
        const auto lead = *s.input_lead_ticks;
        if (lead < o.target_lead_ticks) {
            margin_ += static_cast<double>(o.target_lead_ticks - lead);
        } else if (lead > o.target_lead_ticks + 1) {
            margin_ -= 0.5;
        }
        margin_ = std::clamp(margin_, o.min_margin_ticks, o.max_margin_ticks);
    }

    void report() {
        auto stats = predictor_.stats();
        marked_predictions<State>::add(stats, marked_.totals());
        stats.entities = static_cast<std::uint32_t>((predictor_.started() ? 1 : 0) + marked_.started());
        stats.enabled = true;
        stats.ticks_ahead = newest_server_tick_ ? static_cast<std::int64_t>(predictor_.newest_tick()) -
                                                      static_cast<std::int64_t>(*newest_server_tick_)
                                                : 0;
        stats.margin_ticks = margin_;
        net_->report_prediction(stats);
    }

    [[nodiscard]] prediction_rules<State> rules_copy() const { return predictor_.rules(); }

    client* net_;
    predictor<State> predictor_;
    prediction_rules<State> marked_rules_;
    marked_predictions<State> marked_;
    double margin_;
    entity own_{null_entity};
    std::optional<std::uint32_t> sent_tick_;
    std::optional<std::uint32_t> adapted_at_;
    std::optional<std::uint32_t> newest_server_tick_;
};

} // namespace ecsnet::client
