#include "ecsnet/server/admin_server.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>

#include <httplib.h>

#include "ecsnet/server/admin_access.hpp"
#include "ecsnet/server/inspector/api.hpp"
#include "ecsnet/server/inspector/assets.hpp"
#include "ecsnet/server/metrics.hpp"

namespace ecsnet::server {

namespace {

constexpr std::size_t extra_workers = 16;
constexpr int listen_backlog = 512;
// Longer targets are refused (414) before routing: no API takes more than a page, a size and a short query.
constexpr std::size_t max_target_length = 512;

void reply_json(httplib::Response& response, const inspector::api_reply& reply) {
    response.status = reply.status;
    response.set_content(reply.body, "application/json");
}

void refuse(httplib::Response& response, int status, std::string_view message) {
    response.status = status;
    response.set_content(inspector::error_body(message), "application/json");
}

} // namespace

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
    // One request per connection: cpp-httplib 0.11 keeps a connection open after any response, a refusal
    // too (it ignores a "Connection: close" the handler sets), and an open connection holds one of the few
    // workers for the keep-alive timeout. A client that keeps thousands of refused streams open would starve
    // /healthz; closed after each answer, a refusal costs a worker a few microseconds. (A page reconnects per
    // request on the loopback or the pod's network: negligible at a few requests a second.)
    http_->set_keep_alive_max_count(1);
    http_->set_keep_alive_timeout(1);
    http_->set_read_timeout(std::chrono::seconds{2});
    http_->set_payload_max_length(4096);
    // cpp-httplib 0.11 (a compiled library) listens with a backlog of 5: a burst of connections (a dozen
    // browser tabs, a scraper and a probe) would see SYNs dropped and retried a second later. The socket
    // options hook sees the socket before bind; start() listens on it again with a longer backlog.
    http_->set_socket_options([this](int socket) {
        int yes = 1;
        ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        listen_socket_ = socket;
    });
}

admin_server::~admin_server() {
    stop();
}

void admin_server::serve_inspector(inspector::feed& feed, const proto::schema_layout& layout,
                                   std::string token, counter& refused) {
    refused_ = &refused;
    feed_ = &feed;
    layout_ = &layout;
    token_ = std::move(token);
    add_inspector_routes();
}

void admin_server::add_inspector_routes() {
    const auto workers = feed_->options().max_streams + extra_workers;
    http_->new_task_queue = [workers] { return new httplib::ThreadPool(workers); };

    // Every request passes here first: read-only, bounded, and the access rules (admin_access.hpp).
    http_->set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
        using result = httplib::Server::HandlerResponse;
        response.set_header("Cache-Control", "no-store");
        response.set_header("X-Content-Type-Options", "nosniff");
        if (request.method != "GET" && request.method != "HEAD") {
            refused_->add();
            refuse(response, 405, "the admin endpoint is read-only: GET only");
            return result::Handled;
        }
        if (request.target.size() > max_target_length) {
            refused_->add();
            refuse(response, 414, "request target longer than " + std::to_string(max_target_length));
            return result::Handled;
        }
        const auto decision = decide_admin_access(
            request.path, request.remote_addr, request.get_header_value("Host"),
            request.get_header_value("Authorization"), request.get_param_value("access_token"), token_);
        if (!decision.allowed()) {
            refused_->add();
            if (decision.status == 401) {
                response.set_header("WWW-Authenticate", "Bearer");
            }
            refuse(response, decision.status, decision.reason);
            return result::Handled;
        }
        return result::Unhandled;
    });
    // Unknown paths (traversal attempts included: nothing is served from files) are 404.
    http_->set_error_handler([](const httplib::Request&, httplib::Response& response) {
        if (response.body.empty()) {
            response.set_content(inspector::error_body("not found"), "application/json");
        }
    });

    http_->Get("/inspector", [](const httplib::Request& request, httplib::Response& response) {
        // Relative asset URLs resolve under /inspector/. The token is passed on only when it is made of
        // URL-safe characters (it is reflected into a header).
        const auto token = request.get_param_value("access_token");
        const bool safe = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' ||
                   c == '~';
        });
        response.set_redirect(safe ? "/inspector/?access_token=" + token : std::string{"/inspector/"});
    });
    http_->Get(R"(/inspector/([a-z.]*))", [](const httplib::Request& request, httplib::Response& response) {
        const std::string wanted = request.matches[1].str().empty() ? "index.html" : request.matches[1].str();
        for (const auto& file : inspector::page_assets()) {
            if (file.name == wanted) {
                response.set_header("Content-Security-Policy",
                                    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
                response.set_content(std::string{file.bytes}, std::string{file.content_type});
                return;
            }
        }
        refuse(response, 404, "no such file");
    });

    http_->Get("/api/world", [this](const httplib::Request&, httplib::Response& response) {
        const auto frame = feed_->current(std::chrono::milliseconds{1000});
        reply_json(response, inspector::world_reply(frame.get(), *layout_));
    });
    http_->Get("/api/entities", [this](const httplib::Request& request, httplib::Response& response) {
        const auto frame = feed_->current(std::chrono::milliseconds{1000});
        if (!frame) {
            return refuse(response, 503, "no frame yet: the server has not ticked");
        }
        const auto page = request.get_param_value("page");
        const auto per_page = request.get_param_value("per_page");
        const auto query = request.get_param_value("q");
        const auto reply = inspector::entities_reply(*frame, *layout_, page, per_page, query);
        refused_->add(reply.status != 200 ? 1 : 0);
        reply_json(response, reply);
    });
    http_->Get(
        R"(/api/entity/([^/]*))", [this](const httplib::Request& request, httplib::Response& response) {
            const auto frame = feed_->current(std::chrono::milliseconds{1000});
            if (!frame) {
                return refuse(response, 503, "no frame yet: the server has not ticked");
            }
            const auto wanted = request.matches[1].str();
            // The server-only components come from the tick thread (a bounded request, answered between two
            // ticks); the replicated ones from the frame. `?server=0` skips the former.
            std::optional<inspector::server_only_view> server;
            if (request.get_param_value("server") != "0") {
                if (const auto index = inspector::parse_count(wanted, proto::max_net_index);
                    index && frame->find(static_cast<std::uint32_t>(*index))) {
                    server = feed_->server_only(static_cast<std::uint32_t>(*index), frame->tick,
                                                std::chrono::milliseconds{250});
                }
            }
            const auto reply = inspector::entity_reply(*frame, *layout_, wanted, server ? &*server : nullptr);
            refused_->add(reply.status >= 400 ? 1 : 0);
            reply_json(response, reply);
        });
    http_->Get("/api/clients", [this](const httplib::Request&, httplib::Response& response) {
        const auto frame = feed_->current(std::chrono::milliseconds{1000});
        const auto disconnects = feed_->disconnects();
        reply_json(response, inspector::clients_reply(frame.get(), *layout_, disconnects));
    });
    http_->Get("/api/series", [this](const httplib::Request&, httplib::Response& response) {
        const auto samples = feed_->series();
        reply_json(response, inspector::series_reply(samples));
    });
    http_->Get("/api/stream", [this](const httplib::Request& request, httplib::Response& response) {
        auto slot = feed_->open_stream();
        if (!slot) {
            refused_->add();
            return refuse(response, 503,
                          std::to_string(feed_->options().max_streams) + " event streams are open already");
        }
        std::size_t points = 5000;
        if (request.has_param("points")) {
            const auto parsed =
                inspector::parse_count(request.get_param_value("points"), inspector::map_points_max);
            if (!parsed || *parsed == 0) {
                refused_->add();
                return refuse(response, 400,
                              "points is a number from 1 to " + std::to_string(inspector::map_points_max));
            }
            points = *parsed;
        }
        struct stream_state {
            inspector::feed::stream_slot slot;
            proto::tick_type last{};
        };
        auto state = std::make_shared<stream_state>(stream_state{std::move(slot), {}});
        response.set_chunked_content_provider(
            "text/event-stream",
            [this, state, points](std::size_t, httplib::DataSink& sink) {
                const auto frame = feed_->wait_newer(state->last, std::chrono::milliseconds{1000});
                if (feed_->stopped()) {
                    sink.done();
                    return true;
                }
                if (!frame) {
                    return sink.write(": idle\n\n", 8); // a comment: notices a reader that went away
                }
                state->last = frame->tick;
                std::string message;
                if (points == 5000) { // the page's default: rendered once per frame for every viewer
                    const std::lock_guard lock{frame->event_mutex};
                    if (!frame->event_ready) {
                        frame->event = inspector::stream_event(*frame, *layout_, points);
                        frame->event_ready = true;
                    }
                    message = "data: " + frame->event + "\n\n";
                } else {
                    message = "data: " + inspector::stream_event(*frame, *layout_, points) + "\n\n";
                }
                return sink.write(message.data(), message.size());
            },
            [state](bool) {});
    });
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
    if (listen_socket_ >= 0) {
        static_cast<void>(::listen(listen_socket_, listen_backlog)); // Linux: updates the backlog
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
    if (feed_ != nullptr) {
        feed_->stop(); // the event streams end, freeing their workers
    }
    if (thread_.joinable()) {
        http_->stop();
        thread_.join();
    }
}

} // namespace ecsnet::server
