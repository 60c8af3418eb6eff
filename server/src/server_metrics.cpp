#include "ecsnet/server/server_metrics.hpp"

#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/transport/drop_reason.hpp>

namespace ecsnet::server {

const std::vector<std::string>& disconnect_reason_labels() {
    static const std::vector<std::string> labels = [] {
        std::vector<std::string> names;
        const auto* descriptor = v1::DisconnectReason_descriptor();
        for (int i = 0; i < descriptor->value_count(); ++i) {
            if (descriptor->value(i)->number() != 0) {
                names.push_back(descriptor->value(i)->name());
            }
        }
        return names;
    }();
    return labels;
}

const std::vector<std::string>& drop_reason_labels() {
    static const std::vector<std::string> labels = [] {
        std::vector<std::string> names;
        for (std::size_t r = 0; r < transport::drop_reason_count; ++r) {
            names.emplace_back(transport::to_string(static_cast<transport::drop_reason>(r)));
        }
        return names;
    }();
    return labels;
}

server_metrics::server_metrics()
    : registry{}
    , tick_duration{registry.add_histogram(
          "ecsnet_tick_duration_seconds",
          "Time spent in one tick: inputs, systems, capture, handing out snapshots.",
          // Fine where the goals are (10 ms, 25 ms, the 33.3 ms period at 30 Hz): doubling buckets made a
          // p99 of 21 ms read as "between 16 and 32".
          {0.00025, 0.0005, 0.001, 0.002, 0.003,  0.004, 0.005, 0.006,  0.008, 0.010, 0.0125, 0.015, 0.0175,
           0.020,   0.0225, 0.025, 0.030, 0.0333, 0.040, 0.050, 0.0667, 0.100, 0.250, 0.500,  1.0})}
    , tick_phases{registry.add_counter_family(
          "ecsnet_tick_phase_seconds_total",
          "Time the ticks spent in each of their parts: inputs (taken and applied), systems, capture "
          "(history, relevancy and priorities, lag compensation, checkpoints), prepare (snapshots written "
          "on the workers), send (snapshots and input status handed to the links), other (the transport's "
          "metrics). Their sum is ecsnet_tick_duration_seconds_sum.",
          // The last part, "other", is the family's own bucket for values not declared.
          "phase", std::vector<std::string>(tick_part_names.begin(), tick_part_names.end() - 1), 1e-9)}
    , tick_part_ns{[this] {
        std::array<counter*, tick_part_count> counters{};
        for (std::size_t part = 0; part < tick_part_count; ++part) {
            counters[part] = &tick_phases.with(tick_part_names[part]);
        }
        return counters;
    }()}
    , tick_overruns{registry.add_counter("ecsnet_tick_overruns_total",
                                         "Ticks that ran past the start of the next.")}
    , snapshot_stride{registry.add_gauge(
          "ecsnet_snapshot_stride",
          "Ticks between two snapshots to each client: 1, or more while the server is overloaded "
          "(--max-snapshot-stride).")}
    , overload_refusals{registry.add_counter(
          "ecsnet_overload_refusals_total",
          "Clients refused with SERVER_FULL because the server's ticks were over --max-tick-load.")}
    , ticks{registry.add_counter("ecsnet_ticks_total", "Ticks run.")}
    , connected_clients{registry.add_gauge("ecsnet_connected_clients",
                                           "Clients connected (handshaking or playing).")}
    , entities{registry.add_gauge("ecsnet_entities", "Live entities in the world.")}
    , sent_bytes{registry.add_counter(
          "ecsnet_network_sent_bytes_total",
          "Bytes written to client sockets (TCP stream bytes, UDP datagram payloads).")}
    , received_bytes{registry.add_counter(
          "ecsnet_network_received_bytes_total",
          "Bytes read from client sockets (TCP stream bytes, UDP datagram payloads).")}
    , snapshot_size{registry.add_histogram("ecsnet_snapshot_size_bytes", "Size of each snapshot frame sent.",
                                           histogram::exponential_bounds(16, 2.0, 16))}
    , disconnects{registry.add_counter_family("ecsnet_disconnects_total", "Client disconnects, by reason.",
                                              "reason", disconnect_reason_labels())}
    , refused_inputs{registry.add_counter(
          "ecsnet_refused_inputs_total", "Inputs the world refused (malformed, or aimed at another entity).")}
    , snapshots_encoded{registry.add_counter("ecsnet_snapshots_encoded_total",
                                             "Distinct snapshots encoded (cache misses).")}
    , snapshots_held{registry.add_counter(
          "ecsnet_snapshots_held_total",
          "Snapshots not sent because the client had too many ticks unacknowledged (flow control).")}
    , stale_acks{registry.add_counter(
          "ecsnet_stale_acks_total",
          "Acks ignored because they were older than the full state in flight (repeats, duplicates).")}
    , relevant_entities{registry.add_histogram(
          "ecsnet_relevant_entities", "Entities relevant to a client, at each recomputation of its set.",
          histogram::exponential_bounds(4, 2.0, 14))}
    , relevancy_jumps{registry.add_counter(
          "ecsnet_relevancy_jumps_total",
          "Relevant sets recomputed before their turn because the client's avatar jumped (a teleport, a "
          "respawn) farther than half the margin between the enter and the leave radius.")}
    , snapshot_budget_use{registry.add_histogram(
          "ecsnet_snapshot_budget_use",
          "Bytes a client's snapshot took on the wire, as a fraction of its budget per tick.",
          {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 4.0})}
    , deferred_entities{registry.add_counter(
          "ecsnet_deferred_entities_total",
          "Entity updates and entries a client's bandwidth budget held back to a later tick.")}
    , view_cache_lookups{registry.add_counter(
          "ecsnet_encode_cache_lookups_total",
          "Entity codes asked of the shared view encoder (each entity update for each client).")}
    , view_cache_hits{registry.add_counter(
          "ecsnet_encode_cache_hits_total",
          "Entity codes answered without coding: coded already this tick for another client (serialize "
          "once), or an entity moving on the line the client extrapolates (nothing to send).")}
    , view_bytes_coded{registry.add_counter("ecsnet_encode_coded_bytes_total",
                                            "Bytes of entity codes the shared view encoder coded.")}
    , view_bytes_copied{registry.add_counter("ecsnet_encode_copied_bytes_total",
                                             "Bytes of entity codes copied into clients' snapshots.")}
    , snapshots_prepared{registry.add_counter(
          "ecsnet_snapshots_prepared_total",
          "Interest-managed snapshots written ahead on the workers (--workers > 1) and sent.")}
    , encoder_moves{registry.add_counter(
          "ecsnet_view_encoder_moves_total",
          "Clients moved to another worker's view encoder, to stay with the clients near them.")}
    , snapshots_discarded{registry.add_counter(
          "ecsnet_snapshots_discarded_total",
          "Snapshots written ahead on the workers that their link did not send (it was closing).")}
    , inputs{registry.add_counter("ecsnet_inputs_total",
                                  "Client inputs applied by the world (each input once, in sequence order).")}
    , inputs_dry{registry.add_counter("ecsnet_input_buffer_dry_total",
                                      "Ticks at which a client's input buffer had nothing for the tick (its "
                                      "newest input was repeated).")}
    , inputs_late{registry.add_counter("ecsnet_inputs_late_total",
                                       "Inputs received after their tick (applied at the next one).")}
    , inputs_future{registry.add_counter("ecsnet_inputs_future_total",
                                         "Inputs refused for naming a tick too far ahead of the server.")}
    , inputs_flood{registry.add_counter("ecsnet_inputs_flood_total",
                                        "Inputs refused for exceeding the inputs one tick may have.")}
    , packets_dropped{registry.add_counter_family("ecsnet_packets_dropped_total",
                                                  "Datagrams the UDP transport refused, by reason.", "reason",
                                                  drop_reason_labels())}
    , client_rtt{registry.add_histogram("ecsnet_client_rtt_seconds",
                                        "Round-trip time of each UDP client, sampled once a second.",
                                        histogram::exponential_bounds(0.001, 2.0, 12))}
    , client_loss{registry.add_histogram("ecsnet_client_loss_ratio",
                                         "Packet loss of each UDP client, sampled once a second.",
                                         {0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0})}
    , resends{registry.add_gauge(
          "ecsnet_connected_clients_resends",
          "Reliable messages and fragments sent again to the UDP clients connected now.")}
    , checkpoints_written{registry.add_counter("ecsnet_checkpoints_written_total",
                                               "Checkpoints written to disk and renamed into place.")}
    , checkpoints_failed{registry.add_counter(
          "ecsnet_checkpoints_failed_total",
          "Checkpoints that could not be written (the previous one stays in place).")}
    , checkpoints_skipped{registry.add_counter(
          "ecsnet_checkpoints_skipped_total",
          "Checkpoints not taken because the previous one was still being written.")}
    , checkpoint_last_duration{registry.add_gauge(
          "ecsnet_checkpoint_last_duration_seconds",
          "Time the last checkpoint took to encode and write, off the tick thread.")}
    , checkpoint_last_size{registry.add_gauge("ecsnet_checkpoint_last_size_bytes",
                                              "Size of the last checkpoint written.")}
    , shots{registry.add_counter("ecsnet_shots_total",
                                 "Shots evaluated by lag compensation (refused ones not included).")}
    , shot_hits{registry.add_counter("ecsnet_shot_hits_total", "Shots that hit a hit-testable entity.")}
    , fire_rewind_clamped{registry.add_counter_family("ecsnet_fire_rewind_clamped_total",
                                                      "Shots whose render time was clamped: after the "
                                                      "server's clock, or older than --lag-compensation-ms.",
                                                      "reason", {"future", "too_old"})}
    , fire_refused{registry.add_counter_family(
          "ecsnet_fire_refused_total",
          "Shots refused: sooner than --min-fire-interval-ms after the last, or with an invalid aim.",
          "reason", {"cooldown", "invalid"})}
    , hit_history_bytes{registry.add_gauge("ecsnet_hit_history_bytes",
                                           "Memory held by the lag-compensation history.")}
    , admin_refused{registry.add_counter(
          "ecsnet_admin_refused_requests_total",
          "Admin endpoint requests refused: access, bad input, too many event streams, not read-only.")}
    , inspector_frames{registry.add_counter(
          "ecsnet_inspector_frames_total",
          "Frames the tick thread copied from the history for the inspector (only while someone looks).")} {
    snapshot_stride.set(1.0);
}

} // namespace ecsnet::server
