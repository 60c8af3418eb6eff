#pragma once

// What client-side prediction measured (client_stats::prediction; prediction.hpp).

#include <cstdint>

namespace ecsnet::client {

// With entities marked predicted besides the avatar (marked_predictions.hpp), the counts are totals over
// all of them (the avatar's alone: prediction::core().stats(); one marked entity's: prediction::core_of()).
struct prediction_stats {
    /// A prediction is attached and client_options::prediction is on.
    bool enabled{};
    /// Entities predicted now: the avatar (once started) plus the marked ones in view.
    std::uint32_t entities{};
    /// Ticks the client simulated ahead of the server (each with the input it sent for that tick).
    std::uint64_t ticks_predicted{};
    /// Server states compared with the prediction of their tick (one per snapshot applied while predicting).
    std::uint64_t ticks_compared{};
    /// Of those, the ones that differed (by more than prediction_options::tolerance): each rolled the
    /// prediction back to the server's state and replayed the inputs sent since.
    std::uint64_t mispredictions{};
    /// mispredictions over the game time compared, per minute (summed over the entities).
    double mispredictions_per_minute{};
    /// Differences on the ticks a restart caught up with (predicted when the server had already run them or
    /// was about to: their inputs arrived late), corrected the same way but not counted as mispredictions.
    std::uint64_t settling_corrections{};
    /// Ticks simulated again by those replays.
    std::uint64_t ticks_replayed{};
    /// Restarts from the server's state without a comparison: the first state, a new avatar, or a server
    /// state newer than anything predicted (the client fell behind).
    std::uint64_t restarts{};
    /// Distance between the server's state and the prediction of the same tick, at mispredictions, metres.
    double correction_last{};
    double correction_max{};
    double correction_mean{};
    /// The newest predicted tick minus the newest server tick applied (how far ahead the client runs).
    std::int64_t ticks_ahead{};
    /// The margin (ticks) added to half the round trip, adapted from InputStatus.lead_ticks.
    double margin_ticks{};
};

} // namespace ecsnet::client
