#include "ecsnet/server/agones/sdk_metrics.hpp"

namespace ecsnet::server::agones {

const std::vector<std::string>& call_labels() {
    static const std::vector<std::string> labels{"ready", "health",   "shutdown",   "gameserver",
                                                 "watch", "list_add", "list_remove"};
    return labels;
}

const std::vector<std::string>& result_labels() {
    static const std::vector<std::string> labels{"ok", "rejected", "error", "timeout"};
    return labels;
}

sdk_metrics::sdk_metrics(metrics_registry& registry)
    : requests{registry.add_counter_grid(
          "ecsnet_agones_requests_total",
          "Calls to the Agones SDK sidecar, by call and result (each attempt).", "call", call_labels(),
          "result", result_labels())}
    , state{registry.add_gauge(
          "ecsnet_agones_state",
          "The GameServer's state as the sidecar last reported it: 0 none seen, 1 Scheduled, "
          "2 RequestReady, 3 Ready, 4 Allocated, 5 Reserved, 6 Shutdown, 7 Unhealthy, "
          "8 other.")}
    , allocations{registry.add_counter("ecsnet_agones_allocations_total",
                                       "Times the GameServer became Allocated.")}
    , health_withheld{registry.add_counter(
          "ecsnet_agones_health_withheld_total",
          "Health pings not sent because the tick had stalled (Agones then marks the server Unhealthy).")}
    , queue_overflows{registry.add_counter(
          "ecsnet_agones_queue_overflows_total",
          "Player list updates dropped because the queue to the sidecar was full.")}
    , abandoned{registry.add_counter("ecsnet_agones_abandoned_total",
                                     "Player list updates given up after their last retry.")} {}

} // namespace ecsnet::server::agones
