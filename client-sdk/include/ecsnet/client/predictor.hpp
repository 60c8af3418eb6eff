#pragma once

// Client-side prediction's core, without any network: the game's own state (its avatar) simulated ahead of
// the server with the game's inputs, kept per tick in a ring buffer with the input of each tick, and
// reconciled with the server's state when it arrives.
//
//   advance(tick, input)     the next tick: the state of the tick before, stepped with `input` by the game's
//                            rule (the very function the server runs: arena/movement.hpp for the demo);
//   reconcile(tick, server)  the server's state of `tick`: compared with the prediction of that tick; if they
//                            differ, the prediction of `tick` becomes the server's and every later tick is
//                            replayed with its input (rollback and replay), and the jump of the newest state
//                            is added to a visible offset;
//   frame()                  once per rendered frame: the visible offset decays (a constant fraction a frame,
//                            so the error on screen shrinks every frame and never jumps).
//
// prediction.hpp drives one with a client (sends each tick's input, reconciles after each snapshot);
// tests and benchmarks use it alone.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ecsnet/client/prediction_stats.hpp"

namespace ecsnet::client {

using position3 = std::array<double, 3>;

/// What the game tells the predictor about its state.
template<typename State>
struct prediction_rules {
    /// One server tick of the state with one input: the same rule the server applies (same code, same
    /// float operations, so the same result from the same state).
    std::function<void(State&, std::string_view input, double dt)> step;
    /// Where the state is, metres: compared with the server's, and what the visible correction smooths.
    std::function<position3(const State&)> position;
    /// Moves a state by an offset (the visible correction). Optional: without it visible() is predicted().
    std::function<void(State&, const position3&)> displace;
};

struct prediction_options {
    /// Ticks of inputs and predicted states kept (the longest round trip predicted over, in ticks).
    std::size_t history_ticks{128};
    /// A server state farther than this (metres) from the prediction of its tick is a misprediction. 0: any
    /// difference (the arena keeps positions on the replication grid, so prediction is exact).
    double tolerance{0.0};
    /// The fraction of the visible correction left after each frame (0: none is smoothed).
    double smoothing_per_frame{0.8};
    /// Below this (metres) the visible correction is dropped.
    double smoothing_floor{1e-4};
    // The run-ahead (prediction.hpp): half the round trip plus a margin in ticks, adapted so that the
    // server reports the inputs arriving target_lead_ticks early.
    double initial_margin_ticks{2.0};
    double min_margin_ticks{0.0};
    double max_margin_ticks{16.0};
    std::int32_t target_lead_ticks{1};
};

template<typename State>
class predictor {
public:
    predictor(prediction_rules<State> rules, double tick_seconds, prediction_options options = {})
        : rules_{std::move(rules)}
        , options_{options}
        , dt_{tick_seconds}
        , ring_(std::max<std::size_t>(options.history_ticks, 2)) {}

    /// Forgets everything: the next reconcile() starts from the server's state.
    void clear() noexcept {
        started_ = false;
        offset_ = {};
    }

    /// Starts (again) from a known state of `tick`.
    void restart(std::uint32_t tick, const State& state) {
        started_ = true;
        settle_until_.reset();
        catching_up_ = true;
        newest_ = tick;
        oldest_ = tick;
        slot(tick) = entry{tick, {}, state};
        ++stats_.restarts;
    }

    [[nodiscard]] bool started() const noexcept { return started_; }
    /// The newest predicted tick (started() only).
    [[nodiscard]] std::uint32_t newest_tick() const noexcept { return newest_; }

    /// Predicts tick newest_tick() + 1 with `input`. Nothing happens before started().
    void advance(std::string_view input) {
        if (!started_) {
            return;
        }
        const auto tick = newest_ + 1;
        State state = slot(newest_).state;
        rules_.step(state, input, dt_);
        auto& e = slot(tick);
        e.tick = tick;
        e.input.assign(input.data(), input.size());
        e.state = state;
        newest_ = tick;
        if (newest_ - oldest_ >= ring_.size()) {
            oldest_ = newest_ - static_cast<std::uint32_t>(ring_.size()) + 1;
        }
        ++stats_.ticks_predicted;
    }

    /// After a restart, the ticks predicted up to now (the first catch-up to the run-ahead) were partly in
    /// the server's past already: their inputs reach it late. A difference on them is a settling correction
    /// (stats().settling_corrections), not a misprediction. Called by prediction.hpp after its first
    /// catch-up.
    void caught_up() noexcept {
        if (catching_up_) {
            catching_up_ = false;
            settle_until_ = newest_;
        }
    }

    /// The server's state of `tick`. Returns whether it was a misprediction (then rolled back and replayed).
    bool reconcile(std::uint32_t tick, const State& server) {
        if (!started_ || tick > newest_) {
            // Nothing predicted for that tick yet (the first state, or the client fell behind): start there.
            const auto before = started_ ? std::optional{position_of(slot(newest_).state)} : std::nullopt;
            restart(tick, server);
            if (before) {
                add_offset(*before, position_of(server));
            }
            return false;
        }
        if (tick < oldest_ || (compared_any_ && tick <= last_compared_)) {
            return false; // older than what is kept, or already compared
        }
        ++stats_.ticks_compared;
        if (!compared_any_) {
            first_compared_ = tick;
        }
        compared_any_ = true;
        last_compared_ = tick;
        auto& at = slot(tick);
        const auto error = distance(position_of(at.state), position_of(server));
        const bool mispredicted = error > options_.tolerance;
        at.state = server;
        if (mispredicted && (catching_up_ || (settle_until_ && tick <= *settle_until_))) {
            ++stats_.settling_corrections;
            const auto before = position_of(slot(newest_).state);
            replay_from(tick);
            add_offset(before, position_of(slot(newest_).state));
        } else if (mispredicted) {
            ++stats_.mispredictions;
            stats_.correction_last = error;
            stats_.correction_max = std::max(stats_.correction_max, error);
            correction_sum_ += error;
            stats_.correction_mean = correction_sum_ / static_cast<double>(stats_.mispredictions);
            const auto before = position_of(slot(newest_).state);
            replay_from(tick);
            add_offset(before, position_of(slot(newest_).state));
        }
        oldest_ = tick; // nothing older is needed any more
        const double minutes = static_cast<double>(last_compared_ - first_compared_ + 1) * dt_ / 60.0;
        stats_.mispredictions_per_minute = static_cast<double>(stats_.mispredictions) / minutes;
        return mispredicted;
    }

    /// Once per rendered frame: the visible correction decays.
    void frame() noexcept {
        for (auto& v : offset_) {
            v *= options_.smoothing_per_frame;
        }
        if (distance(offset_, {}) < options_.smoothing_floor) {
            offset_ = {};
        }
    }

    /// The newest predicted state (started() only).
    [[nodiscard]] const State& predicted() const noexcept { return slot(newest_).state; }
    /// The prediction of `tick`, if still kept.
    [[nodiscard]] std::optional<State> predicted_at(std::uint32_t tick) const {
        if (!started_ || tick < oldest_ || tick > newest_) {
            return std::nullopt;
        }
        return slot(tick).state;
    }
    /// The input tick `tick` was predicted with, if still kept (the ticks after the oldest kept state):
    /// what a marked entity that starts later replays (marked_predictions.hpp).
    [[nodiscard]] std::optional<std::string_view> input_at(std::uint32_t tick) const {
        if (!started_ || tick <= oldest_ || tick > newest_) {
            return std::nullopt;
        }
        return std::string_view{slot(tick).input};
    }
    /// The newest predicted state moved by the visible correction: what to draw.
    [[nodiscard]] State visible() const {
        State state = predicted();
        if (rules_.displace) {
            rules_.displace(state, offset_);
        }
        return state;
    }
    /// The visible correction (what is drawn minus the prediction), metres.
    [[nodiscard]] const position3& visible_offset() const noexcept { return offset_; }
    [[nodiscard]] const prediction_stats& stats() const noexcept { return stats_; }
    [[nodiscard]] const prediction_options& options() const noexcept { return options_; }
    [[nodiscard]] const prediction_rules<State>& rules() const noexcept { return rules_; }

private:
    struct entry {
        std::uint32_t tick{};
        std::string input;
        State state{};
    };

    static double distance(const position3& a, const position3& b) noexcept {
        return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                         (a[2] - b[2]) * (a[2] - b[2]));
    }
    [[nodiscard]] position3 position_of(const State& s) const { return rules_.position(s); }
    [[nodiscard]] entry& slot(std::uint32_t tick) noexcept { return ring_[tick % ring_.size()]; }
    [[nodiscard]] const entry& slot(std::uint32_t tick) const noexcept { return ring_[tick % ring_.size()]; }

    void replay_from(std::uint32_t tick) {
        for (auto t = tick + 1; t <= newest_ && t > tick; ++t) {
            State state = slot(t - 1).state;
            rules_.step(state, slot(t).input, dt_);
            slot(t).state = state;
            ++stats_.ticks_replayed;
        }
    }

    // What was drawn stays where it was: the jump goes into the offset, which frame() shrinks.
    void add_offset(const position3& before, const position3& after) noexcept {
        for (std::size_t i = 0; i < 3; ++i) {
            offset_[i] += before[i] - after[i];
        }
    }

    prediction_rules<State> rules_;
    prediction_options options_;
    double dt_;
    std::vector<entry> ring_;
    bool started_{false};
    std::uint32_t newest_{};
    std::uint32_t oldest_{};
    bool compared_any_{false};
    std::uint32_t first_compared_{};
    std::uint32_t last_compared_{};
    double correction_sum_{};
    bool catching_up_{false};
    std::optional<std::uint32_t> settle_until_;
    position3 offset_{};
    prediction_stats stats_{};
};

} // namespace ecsnet::client
