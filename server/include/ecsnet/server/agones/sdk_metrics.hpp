#pragma once

// What the Agones SDK client exports on /metrics (docs/agones.md), registered only when --agones is on.

#include <string>
#include <vector>

#include "../metrics.hpp"

namespace ecsnet::server::agones {

/// The calls to the sidecar, as the `call` label values.
[[nodiscard]] const std::vector<std::string>& call_labels();
/// How a call ended, as the `result` label values: ok (2xx), rejected (4xx: not retried), error (5xx or no
/// connection: retried), timeout (no answer within --agones-timeout-ms: retried).
[[nodiscard]] const std::vector<std::string>& result_labels();

struct sdk_metrics {
    counter_grid& requests;
    gauge& state;
    counter& allocations;
    counter& health_withheld;
    counter& queue_overflows;
    counter& abandoned;

    explicit sdk_metrics(metrics_registry& registry);
};

} // namespace ecsnet::server::agones
