#pragma once

// Prediction of the entities the server marks as predicted for this client besides its avatar (a vehicle
// it drives, a pet that follows it: the server's predicted_by component, InputStatus.predicted), without
// any network: one predictor (predictor.hpp) per marked entity, with the game's rules for them, stepped
// with the inputs the avatar's predictor holds. The avatar's predictor is the clock: its ring of inputs is
// the one input stream, and every marked entity is kept at its newest tick.
//
//   mark(ids)                         the server's set: entities no longer in it stop being predicted, new
//                                     ones start from their next server state;
//   reconcile(id, tick, server, own)  the server's state of a marked entity (each snapshot): compared with
//                                     its prediction of `tick` (rollback and replay on a difference), or the
//                                     start of its prediction; then replayed up to `own`'s newest tick;
//   follow(own)                       after `own` predicted new ticks: every marked entity steps with the
//                                     same inputs;
//   frame()                           once per rendered frame: each visible correction decays.
//
// prediction.hpp drives one with a client; tests use it alone. Mispredictions are counted per entity
// (find(id)->stats()) and in total (totals(), which keeps what entities that left contributed).

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "ecsnet/client/predictor.hpp"
#include "ecsnet/proto/state.hpp"

namespace ecsnet::client {

template<typename State>
class marked_predictions {
public:
    marked_predictions(prediction_rules<State> rules, double tick_seconds, prediction_options options = {})
        : rules_{std::move(rules)}
        , tick_seconds_{tick_seconds}
        , options_{options} {}

    /// Whether the game registered rules for marked entities (without, nothing is predicted but the avatar).
    [[nodiscard]] bool enabled() const noexcept { return static_cast<bool>(rules_.step); }

    /// The entities marked now. Those that left the set stop being predicted (their state is the server's
    /// again); those that entered start at their next reconcile().
    void mark(std::span<const proto::net_entity> ids) {
        if (!enabled()) {
            return;
        }
        std::erase_if(entries_, [&](const entry& e) {
            const bool gone = std::find(ids.begin(), ids.end(), e.id) == ids.end();
            if (gone) {
                retire(e.predicted.stats());
            }
            return gone;
        });
        for (const auto& id : ids) {
            if (find(id) == nullptr) {
                entries_.push_back(entry{id, predictor<State>{rules_, tick_seconds_, options_}});
            }
        }
    }

    /// Stops predicting `id` until it is marked again (it left the client's view).
    void forget(proto::net_entity id) {
        if (auto* e = find_entry(id); e != nullptr && e->predicted.started()) {
            retire(e->predicted.stats());
            e->predicted = predictor<State>{rules_, tick_seconds_, options_};
        }
    }

    /// Forgets every prediction (a new connection, or the avatar's prediction restarting from scratch).
    void clear() noexcept {
        for (auto& e : entries_) {
            e.predicted.clear();
        }
    }

    /// The server's state of marked entity `id` at `tick`. Returns whether it was a misprediction.
    bool reconcile(proto::net_entity id, std::uint32_t tick, const State& server,
                   const predictor<State>& own) {
        auto* e = find_entry(id);
        if (e == nullptr) {
            return false;
        }
        const bool mispredicted = e->predicted.reconcile(tick, server);
        follow(e->predicted, own);
        return mispredicted;
    }

    /// Steps every marked entity up to `own`'s newest tick with its inputs.
    void follow(const predictor<State>& own) {
        for (auto& e : entries_) {
            follow(e.predicted, own);
        }
    }

    void frame() noexcept {
        for (auto& e : entries_) {
            e.predicted.frame();
        }
    }

    /// The prediction of a marked entity (nullptr: not marked).
    [[nodiscard]] const predictor<State>* find(proto::net_entity id) const noexcept {
        const auto it =
            std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) { return e.id == id; });
        return it == entries_.end() ? nullptr : &it->predicted;
    }
    /// The marked entities, started or not.
    [[nodiscard]] std::vector<proto::net_entity> marked() const {
        std::vector<proto::net_entity> out;
        out.reserve(entries_.size());
        for (const auto& e : entries_) {
            out.push_back(e.id);
        }
        return out;
    }
    /// Marked entities being predicted now.
    [[nodiscard]] std::size_t started() const noexcept {
        return static_cast<std::size_t>(std::count_if(entries_.begin(), entries_.end(),
                                                      [](const entry& e) { return e.predicted.started(); }));
    }
    /// The stats of every marked entity, those predicted now and those that left, added up.
    [[nodiscard]] prediction_stats totals() const {
        auto out = retired_;
        for (const auto& e : entries_) {
            add(out, e.predicted.stats());
        }
        return out;
    }

    /// Adds `more` to `sum`: counts and rates add, the largest correction is the largest, the mean is
    /// weighted by mispredictions, the last is the newest non-zero.
    static void add(prediction_stats& sum, const prediction_stats& more) noexcept {
        const auto before = sum.mispredictions;
        sum.ticks_predicted += more.ticks_predicted;
        sum.ticks_compared += more.ticks_compared;
        sum.mispredictions += more.mispredictions;
        sum.mispredictions_per_minute += more.mispredictions_per_minute;
        sum.settling_corrections += more.settling_corrections;
        sum.ticks_replayed += more.ticks_replayed;
        sum.restarts += more.restarts;
        if (more.mispredictions > 0) {
            sum.correction_last = more.correction_last;
            sum.correction_mean = (sum.correction_mean * static_cast<double>(before) +
                                   more.correction_mean * static_cast<double>(more.mispredictions)) /
                                  static_cast<double>(sum.mispredictions);
        }
        sum.correction_max = std::max(sum.correction_max, more.correction_max);
    }

private:
    struct entry {
        proto::net_entity id;
        predictor<State> predicted;
    };

    [[nodiscard]] entry* find_entry(proto::net_entity id) noexcept {
        const auto it =
            std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) { return e.id == id; });
        return it == entries_.end() ? nullptr : &*it;
    }

    // A marked entity runs at the avatar's newest tick with the avatar's inputs; one that cannot (the avatar
    // restarted, or the inputs it needs are no longer kept) starts again from its next server state.
    static void follow(predictor<State>& p, const predictor<State>& own) {
        if (!p.started()) {
            return;
        }
        if (!own.started() || p.newest_tick() > own.newest_tick()) {
            p.clear();
            return;
        }
        while (p.newest_tick() < own.newest_tick()) {
            const auto input = own.input_at(p.newest_tick() + 1);
            if (!input) {
                p.clear();
                return;
            }
            p.advance(*input);
        }
        p.caught_up();
    }

    void retire(const prediction_stats& stats) noexcept {
        // The ticks counted in the rate are gone with the entity: keep the count, not its rate.
        auto kept = stats;
        kept.mispredictions_per_minute = 0.0;
        add(retired_, kept);
    }

    prediction_rules<State> rules_;
    double tick_seconds_;
    prediction_options options_;
    std::vector<entry> entries_;
    prediction_stats retired_{};
};

} // namespace ecsnet::client
