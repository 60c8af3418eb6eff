#pragma once

// How ecsnet-server talks to the Agones SDK sidecar (docs/agones.md): the sidecar's local REST API on
// localhost:$AGONES_SDK_HTTP_PORT, and the periods and bounds of every call made to it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ecsnet::server::agones {

/// The port the sidecar's REST API listens on when AGONES_SDK_HTTP_PORT does not say.
inline constexpr std::uint16_t default_sdk_http_port = 9358;

struct sdk_options {
    bool enabled{false}; // --agones, or AGONES_SDK_HTTP_PORT present in the environment
    std::string host{"localhost"};
    std::uint16_t port{default_sdk_http_port};
    // POST /health this often while the tick advances: well inside the GameServer's health check
    // (periodSeconds 5, failureThreshold 3 by default), so one lost ping never marks the server Unhealthy.
    std::chrono::milliseconds health_period{2000};
    // The tick counter unchanged this long: the tick has stalled, and health pings stop so that Agones
    // replaces the server.
    std::chrono::milliseconds tick_stall{2000};
    // Every call gives up after this long (connect, send and receive each).
    std::chrono::milliseconds request_timeout{1000};
    // Retries: capped exponential backoff with jitter, from `retry_initial` up to `retry_max`.
    std::chrono::milliseconds retry_initial{100};
    std::chrono::milliseconds retry_max{5000};
    // A player add/remove is given up after this many attempts (Ready and Shutdown are retried until they
    // succeed or the client stops).
    std::size_t player_attempts{5};
    // The watch stream is reopened when it is silent this long (a sidecar that went away without closing).
    std::chrono::milliseconds watch_idle_timeout{60'000};
    // Events the tick thread may have queued at once (player adds and removes); more are counted and dropped.
    std::size_t queue_capacity{4096};
    // How long the end of run() waits for Shutdown (and the events before it) to reach the sidecar.
    std::chrono::milliseconds shutdown_wait{2000};
    // The SDK List that holds the connected players' ids (GameServer.spec.lists).
    std::string players_list{"players"};
};

} // namespace ecsnet::server::agones
