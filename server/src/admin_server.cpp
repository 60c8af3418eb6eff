#include "ecsnet/server/admin_server.hpp"

#include <chrono>
#include <stdexcept>

#include <httplib.h>

#include "ecsnet/server/metrics.hpp"

namespace ecsnet::server {

admin_server::admin_server(const metrics_registry& metrics, health_check healthy)
    : metrics_{metrics}
    , healthy_{std::move(healthy)}
    , http_{std::make_unique<httplib::Server>()} {
    http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
        response.set_content(metrics_.render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    http_->Get("/healthz", [this](const httplib::Request&, httplib::Response& response) {
        const bool ok = healthy_();
        response.status = ok ? 200 : 503;
        response.set_content(ok ? "ok\n" : "tick loop not running\n", "text/plain");
    });
}

admin_server::~admin_server() {
    stop();
}

std::uint16_t admin_server::start(const std::string& address, std::uint16_t port) {
    int bound = port;
    if (port == 0) {
        bound = http_->bind_to_any_port(address);
    } else if (!http_->bind_to_port(address, port)) {
        bound = -1;
    }
    if (bound <= 0) {
        throw std::runtime_error("admin endpoint cannot listen on " + address + ":" + std::to_string(port));
    }
    thread_ = std::thread{[this] { http_->listen_after_bind(); }};
    // cpp-httplib 0.11 has no wait_until_ready(): the socket is already bound and listening, so requests
    // queue up; wait (bounded) only so that is_running() is true when start() returns.
    for (int attempt = 0; attempt < 1000 && !http_->is_running(); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
    return static_cast<std::uint16_t>(bound);
}

void admin_server::stop() {
    if (thread_.joinable()) {
        http_->stop();
        thread_.join();
    }
}

} // namespace ecsnet::server
