#pragma once

// The metrics ecsnet-server exports on /metrics.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "metrics.hpp"

namespace ecsnet::server {

/// The disconnect reasons, as the ecsnet_disconnects_total{reason} label values.
[[nodiscard]] const std::vector<std::string>& disconnect_reason_labels();
/// Why the UDP transport refuses datagrams, as the ecsnet_packets_dropped_total{reason} label values.
[[nodiscard]] const std::vector<std::string>& drop_reason_labels();

/// The parts of game_server::tick in the order they run: the ecsnet_tick_phase_seconds_total{phase} values,
/// and the parts an overrun's log line names.
enum class tick_part : std::uint8_t { inputs, systems, capture, prepare, send, other };
inline constexpr std::size_t tick_part_count = 6;
inline constexpr std::array<std::string_view, tick_part_count> tick_part_names{
    "inputs", "systems", "capture", "prepare", "send", "other"};

struct server_metrics {
    metrics_registry registry;
    histogram& tick_duration;
    // Where the ticks' time goes, in nanoseconds: one counter per tick_part, the same counters as
    // tick_phases.with(name) (found once here, not by name every tick).
    counter_family& tick_phases;
    std::array<counter*, tick_part_count> tick_part_ns;
    counter& tick_overruns;
    gauge& snapshot_stride;
    counter& overload_refusals;
    counter& ticks;
    gauge& connected_clients;
    gauge& entities;
    counter& sent_bytes;
    counter& received_bytes;
    histogram& snapshot_size;
    counter_family& disconnects;
    counter& refused_inputs;
    counter& snapshots_encoded;
    counter& snapshots_held;
    counter& stale_acks;
    // Interest management.
    histogram& relevant_entities;
    counter& relevancy_jumps;
    histogram& snapshot_budget_use;
    counter& deferred_entities;
    counter& view_cache_lookups;
    counter& view_cache_hits;
    counter& view_bytes_coded;
    counter& view_bytes_copied;
    counter& snapshots_prepared;
    counter& encoder_moves;
    counter& snapshots_discarded;
    // Transports.
    counter& inputs;
    // The input buffer (input_buffer.hpp).
    counter& inputs_dry;
    counter& inputs_late;
    counter& inputs_future;
    counter& inputs_flood;
    counter_family& packets_dropped;
    histogram& client_rtt;
    histogram& client_loss;
    gauge& resends;
    // Checkpoints (--save).
    counter& checkpoints_written;
    counter& checkpoints_failed;
    counter& checkpoints_skipped;
    gauge& checkpoint_last_duration;
    gauge& checkpoint_last_size;
    // Lag compensation (lag_compensation.hpp).
    counter& shots;
    counter& shot_hits;
    counter_family& fire_rewind_clamped;
    counter_family& fire_refused;
    gauge& hit_history_bytes;
    // The admin endpoint and the inspector (docs/inspector.md).
    counter& admin_refused;
    counter& inspector_frames;

    server_metrics();
};

} // namespace ecsnet::server
