#include "ecsnet/server/server_metrics.hpp"

#include <ecsnet/proto/envelope.hpp>

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

server_metrics::server_metrics()
    : registry{}
    , tick_duration{registry.add_histogram(
          "ecsnet_tick_duration_seconds",
          "Time spent in one tick: inputs, systems, capture, handing out snapshots.",
          histogram::exponential_bounds(0.00025, 2.0, 12))}
    , tick_overruns{registry.add_counter("ecsnet_tick_overruns_total",
                                         "Ticks that ran past the start of the next.")}
    , ticks{registry.add_counter("ecsnet_ticks_total", "Ticks run.")}
    , connected_clients{registry.add_gauge("ecsnet_connected_clients",
                                           "Clients connected (handshaking or playing).")}
    , entities{registry.add_gauge("ecsnet_entities", "Live entities in the world.")}
    , sent_bytes{registry.add_counter("ecsnet_network_sent_bytes_total", "Bytes written to client sockets.")}
    , received_bytes{registry.add_counter("ecsnet_network_received_bytes_total",
                                          "Bytes read from client sockets.")}
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
          "Snapshots not sent because the client had too many ticks unacknowledged (flow control).")} {}

} // namespace ecsnet::server
