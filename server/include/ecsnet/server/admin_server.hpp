#pragma once

// The admin endpoint: a small HTTP server (cpp-httplib) on its own thread, answering
//   GET /metrics  the Prometheus text format of the server's metrics
//   GET /healthz  200 "ok" while the tick loop runs, 503 otherwise (Docker HEALTHCHECK, Agones, k8s probes)
// It never touches the game world: it only reads atomics.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace ecsnet::server {

class metrics_registry;

class admin_server {
public:
    using health_check = std::function<bool()>;

    admin_server(const metrics_registry& metrics, health_check healthy);
    admin_server(const admin_server&) = delete;
    admin_server& operator=(const admin_server&) = delete;
    ~admin_server();

    /// Binds address:port (port 0: any free port), starts serving, and returns the bound port. Throws
    /// std::runtime_error if the address cannot be bound.
    std::uint16_t start(const std::string& address, std::uint16_t port);
    void stop();

private:
    const metrics_registry& metrics_;
    health_check healthy_;
    std::unique_ptr<httplib::Server> http_;
    std::thread thread_;
};

} // namespace ecsnet::server
