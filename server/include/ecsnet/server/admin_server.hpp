#pragma once

// The admin endpoint: a small HTTP server (cpp-httplib) on its own threads, answering
//   GET /metrics     the Prometheus text format of the server's metrics
//   GET /healthz     200 "ok" while the tick loop runs, 503 otherwise (Docker HEALTHCHECK, Agones, k8s
//   probes) GET /inspector   the live inspector's page, and /api/... its JSON API and event stream
//   (serve_inspector;
//                    docs/inspector.md)
// It never touches the game world: it reads atomics and the frames the tick thread publishes
// (inspector/inspector_feed.hpp). Who may read what: admin_access.hpp. Read-only: GET and HEAD only.
//
// Threads: a pool of max_streams + 16 workers, so that the event streams (each holds a worker while open)
// never starve /healthz and /metrics; streams beyond max_streams are refused with 503 at once.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <ecsnet/proto/schema.hpp>

#include "inspector/inspector_feed.hpp"

namespace httplib {
class Server;
}

namespace ecsnet::server {

class counter;
class metrics_registry;

class admin_server {
public:
    using health_check = std::function<bool()>;

    admin_server(const metrics_registry& metrics, health_check healthy);
    admin_server(const admin_server&) = delete;
    admin_server& operator=(const admin_server&) = delete;
    ~admin_server();

    /// Adds /inspector and /api/ (before start()). `token`: --admin-token (empty: loopback peers only);
    /// `refused` counts the requests refused (ecsnet_admin_refused_requests_total). The feed, the layout and
    /// the counter must outlive the admin server.
    void serve_inspector(inspector::feed& feed, const proto::schema_layout& layout, std::string token,
                         counter& refused);

    /// Binds address:port (port 0: any free port), starts serving, and returns the bound port. Throws
    /// std::runtime_error if the address cannot be bound.
    std::uint16_t start(const std::string& address, std::uint16_t port);
    void stop();

private:
    void add_inspector_routes();

    const metrics_registry& metrics_;
    health_check healthy_;
    inspector::feed* feed_{nullptr};
    const proto::schema_layout* layout_{nullptr};
    std::string token_;
    counter* refused_{nullptr};
    int listen_socket_{-1};
    std::unique_ptr<httplib::Server> http_;
    std::thread thread_;
};

} // namespace ecsnet::server
