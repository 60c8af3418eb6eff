#include "ecsnet/server/agones/sdk_client.hpp"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "ecsnet/server/agones/backoff.hpp"
#include "ecsnet/server/agones/game_server_state.hpp"
#include "ecsnet/server/agones/tick_watchdog.hpp"

namespace ecsnet::server::agones {

namespace {

using clock = std::chrono::steady_clock;

// The longest GameServer JSON line kept while assembling a watch line: a sidecar sending more is broken.
constexpr std::size_t max_watch_line = std::size_t{1} << 20;

// A JSON string literal of an id (ids are the server's client numbers; escaped anyway).
std::string json_string(std::string_view text) {
    std::string out{"\""};
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
        }
        if (static_cast<unsigned char>(c) >= 0x20) {
            out.push_back(c);
        }
    }
    out.push_back('"');
    return out;
}

void configure(httplib::Client& http, std::chrono::milliseconds timeout, std::chrono::milliseconds read) {
    http.set_connection_timeout(timeout);
    http.set_read_timeout(read);
    http.set_write_timeout(timeout);
    http.set_keep_alive(false);
}

} // namespace

sdk_client::sdk_client(sdk_options options, metrics_registry& registry, tick_counter ticks,
                       allocated_handler on_allocated)
    : options_{std::move(options)}
    , metrics_{registry}
    , ticks_{std::move(ticks)}
    , on_allocated_{std::move(on_allocated)}
    , log_{5, std::chrono::seconds{60}, [](std::string_view line) { spdlog::warn("Agones: {}", line); }} {}

sdk_client::~sdk_client() {
    stop();
}

void sdk_client::start() {
    if (calls_thread_.joinable()) {
        return;
    }
    spdlog::info(
        "Agones SDK: talking to the sidecar at http://{}:{} (health every {} ms while the tick runs)",
        options_.host, options_.port, options_.health_period.count());
    calls_thread_ = std::thread{[this] { run_calls(); }};
    health_thread_ = std::thread{[this] { run_health(); }};
    watch_thread_ = std::thread{[this] { run_watch(); }};
}

void sdk_client::ready() {
    std::lock_guard lock{mutex_};
    if (ready_queued_ || stopping_) {
        return;
    }
    ready_queued_ = true;
    queue_.push_back(event{call::ready, {}});
    wake_.notify_all();
}

void sdk_client::player_connected(std::string_view player_id) {
    enqueue_player_change(call::list_add, player_id);
}

void sdk_client::player_disconnected(std::string_view player_id) {
    enqueue_player_change(call::list_remove, player_id);
}

void sdk_client::enqueue_player_change(call what, std::string_view player_id) {
    std::lock_guard lock{mutex_};
    if (stopping_) {
        return; // the client has stopped: nothing more reaches the sidecar
    }
    if (queue_.size() >= options_.queue_capacity) {
        metrics_.queue_overflows.add();
        return;
    }
    queue_.push_back(event{what, std::string{player_id}});
    wake_.notify_all();
}

void sdk_client::shutdown() {
    shutdown_requested_ = true;
    std::lock_guard lock{mutex_};
    if (shutdown_queued_ || stopping_) {
        return;
    }
    shutdown_queued_ = true;
    queue_.push_back(event{call::shutdown, {}});
    wake_.notify_all();
}

void sdk_client::stop(std::chrono::milliseconds wait) {
    {
        std::lock_guard lock{mutex_};
        if (!stopping_) {
            stopping_ = true;
            drain_until_ = clock::now() + wait;
        }
        wake_.notify_all();
    }
    if (calls_thread_.joinable()) {
        calls_thread_.join(); // returns once the queue is empty or the wait is over
    }
    // The watch thread may be blocked reading its stream: close it under its feet, again until it leaves
    // (a stream opened just after one close is closed by the next).
    const auto give_up = clock::now() + options_.watch_idle_timeout + options_.request_timeout;
    while (watch_thread_.joinable() && clock::now() < give_up) {
        {
            std::lock_guard lock{watch_mutex_};
            if (watch_http_ != nullptr) {
                watch_http_->stop();
            }
        }
        std::unique_lock lock{mutex_};
        if (wake_.wait_for(lock, std::chrono::milliseconds{10}, [this] { return watch_done_; })) {
            break;
        }
    }
    if (watch_thread_.joinable()) {
        watch_thread_.join();
    }
    if (health_thread_.joinable()) {
        health_thread_.join();
    }
}

bool sdk_client::sleep_until(clock::time_point until) {
    std::unique_lock lock{mutex_};
    return wake_.wait_until(lock, until, [this] { return stopping_; });
}

void sdk_client::count(call what, result outcome) {
    metrics_.requests
        .with(call_labels()[static_cast<std::size_t>(what)],
              result_labels()[static_cast<std::size_t>(outcome)])
        .add();
}

void sdk_client::warn(std::string_view kind, const std::string& line) {
    std::lock_guard lock{log_mutex_};
    if (log_.allow(kind, clock::now())) {
        spdlog::warn("Agones: {}", line);
    }
    log_.flush(clock::now());
}

sdk_client::response sdk_client::send(call what, const std::string& path, std::string body) {
    httplib::Client http{options_.host, options_.port};
    configure(http, options_.request_timeout, options_.request_timeout);
    const auto started = clock::now();
    const auto answer = what == call::gameserver ? http.Get(path) : http.Post(path, body, "application/json");
    response out;
    if (answer) {
        out.status = answer->status;
        out.body = answer->body;
        out.outcome = answer->status >= 200 && answer->status < 300   ? result::ok
                      : answer->status >= 400 && answer->status < 500 ? result::rejected
                                                                      : result::error;
    } else {
        const auto error = answer.error();
        const bool slow = clock::now() - started >= options_.request_timeout * 9 / 10;
        out.outcome = error == httplib::Error::ConnectionTimeout ||
                              ((error == httplib::Error::Read || error == httplib::Error::Write) && slow)
                          ? result::timeout
                          : result::error;
        out.error = httplib::to_string(error);
    }
    count(what, out.outcome);
    return out;
}

void sdk_client::run_calls() {
    backoff delays{options_.retry_initial, options_.retry_max};
    for (;;) {
        event next;
        {
            std::unique_lock lock{mutex_};
            wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty() || (drain_until_ && clock::now() >= *drain_until_)) {
                return;
            }
            next = queue_.front();
        }
        const auto name = call_labels()[static_cast<std::size_t>(next.what)];
        std::string path;
        std::string body = "{}";
        switch (next.what) {
        case call::ready:
            path = "/ready";
            break;
        case call::shutdown:
            path = "/shutdown";
            break;
        case call::list_add:
            path = "/v1beta1/lists/" + options_.players_list + ":addValue";
            body = "{\"value\":" + json_string(next.player_id) + "}";
            break;
        case call::list_remove:
            path = "/v1beta1/lists/" + options_.players_list + ":removeValue";
            body = "{\"value\":" + json_string(next.player_id) + "}";
            break;
        default:
            break;
        }
        for (std::uint32_t failures = 0;;) {
            const auto answer = send(next.what, path, body);
            if (answer.outcome == result::ok) {
                if (next.what == call::ready) {
                    ready_ok_ = true;
                    spdlog::info("Agones: Ready accepted by the sidecar");
                } else if (next.what == call::shutdown) {
                    spdlog::info("Agones: Shutdown accepted by the sidecar");
                }
                break;
            }
            if (answer.outcome == result::rejected) {
                // 4xx: the sidecar will answer the same again (an id already in the List, a List the
                // GameServer does not declare, a List at capacity): not retried.
                warn(name + " rejections", fmt::format("{} {} refused: HTTP {} {}", name, path, answer.status,
                                                       answer.body.substr(0, 200)));
                break;
            }
            ++failures;
            bool draining = false;
            {
                std::lock_guard lock{mutex_};
                draining = stopping_;
            }
            const bool players = next.what == call::list_add || next.what == call::list_remove;
            if (draining) {
                // The server is ending: one attempt each, so a missing sidecar does not hold the exit.
                if (players) {
                    metrics_.abandoned.add();
                }
                warn(name + " failures", fmt::format("{} failed at exit; not retried", name));
                break;
            }
            if (players && failures >= options_.player_attempts) {
                metrics_.abandoned.add();
                warn(name + " abandoned", fmt::format("{} of player {} given up after {} attempts", name,
                                                      next.player_id, failures));
                break;
            }
            const auto why = answer.status != 0 ? "HTTP " + std::to_string(answer.status) : answer.error;
            warn(name + " failures", fmt::format("{} failed ({}); retrying", name, why));
            // Backoff; stop() ends it at once for one last attempt (above: not retried while draining).
            std::unique_lock lock{mutex_};
            wake_.wait_until(lock, clock::now() + delays.delay(failures), [this] { return stopping_; });
            if (stopping_ && clock::now() >= *drain_until_) {
                return;
            }
        }
        std::lock_guard lock{mutex_};
        queue_.pop_front();
    }
}

void sdk_client::run_health() {
    tick_watchdog watchdog{options_.tick_stall};
    bool withholding = false;
    for (;;) {
        if (shutdown_requested_) {
            return; // the server is going away: Agones must not wait for it
        }
        const auto started = clock::now();
        if (watchdog.advancing(ticks_(), started)) {
            if (withholding) {
                spdlog::info("Agones: the tick advances again, health pings resume");
                withholding = false;
            }
            send(call::health, "/health", "{}"); // not retried: the next period is the retry
        } else {
            metrics_.health_withheld.add();
            if (!withholding) {
                withholding = true;
                spdlog::error("Agones: the tick has not advanced for {} ms or more: health pings withheld so "
                              "that Agones replaces this server",
                              options_.tick_stall.count());
            }
        }
        {
            // Summaries of the failures left out of the log come on time even when the failures stop.
            std::lock_guard lock{log_mutex_};
            log_.flush(clock::now());
        }
        if (sleep_until(started + options_.health_period)) {
            return;
        }
    }
}

void sdk_client::on_game_server(std::string_view json) {
    const auto state = game_server_state(json);
    if (!state) {
        return;
    }
    metrics_.state.set(state_code(*state));
    if (*state == "Allocated" && !allocated_) {
        allocated_ = true;
        metrics_.allocations.add();
        spdlog::info("Agones: this GameServer is Allocated");
        if (on_allocated_) {
            on_allocated_(std::string{json});
        }
    } else if (*state != "Allocated") {
        allocated_ = false;
    }
}

bool sdk_client::watch_once() {
    httplib::Client http{options_.host, options_.port};
    configure(http, options_.request_timeout, options_.watch_idle_timeout);
    {
        std::lock_guard lock{watch_mutex_};
        watch_http_ = &http;
    }
    bool delivered = false;
    std::string line;
    auto last_data = clock::now();
    int refused_status = 0; // a status other than 200 ends the stream before its body
    const auto answer = http.Get(
        "/watch/gameserver",
        [&](const httplib::Response& head) {
            refused_status = head.status == 200 ? 0 : head.status;
            return refused_status == 0;
        },
        [&](const char* data, std::size_t length) {
            last_data = clock::now();
            for (std::size_t i = 0; i < length; ++i) {
                if (data[i] != '\n') {
                    if (line.size() < max_watch_line) {
                        line.push_back(data[i]);
                    }
                    continue;
                }
                delivered = true;
                on_game_server(line);
                line.clear();
            }
            std::lock_guard lock{mutex_};
            return !stopping_;
        });
    {
        std::lock_guard lock{watch_mutex_};
        watch_http_ = nullptr;
    }
    bool stopping = false;
    {
        std::lock_guard lock{mutex_};
        stopping = stopping_;
    }
    if (stopping) {
        return delivered;
    }
    if (answer || refused_status != 0) {
        const int status = answer ? answer->status : refused_status;
        count(call::watch, status == 200                   ? result::ok
                           : status >= 400 && status < 500 ? result::rejected
                                                           : result::error);
        if (status != 200) {
            warn("watch failures", "the GameServer watch stream was refused: HTTP " + std::to_string(status));
        }
    } else {
        const auto error = answer.error();
        const bool idle = clock::now() - last_data >= options_.watch_idle_timeout * 9 / 10;
        count(call::watch, error == httplib::Error::Read && idle ? result::timeout : result::error);
        warn("watch failures", "the GameServer watch stream ended: " + httplib::to_string(error));
    }
    return delivered;
}

void sdk_client::run_watch() {
    backoff delays{options_.retry_initial, options_.retry_max};
    for (std::uint32_t failures = 0;;) {
        {
            std::lock_guard lock{mutex_};
            if (stopping_) {
                break;
            }
        }
        // The current state first (an allocation made while no stream was open), then the stream.
        const auto current = send(call::gameserver, "/gameserver", {});
        if (current.outcome == result::ok) {
            on_game_server(current.body);
        }
        const bool delivered = watch_once();
        failures = current.outcome == result::ok || delivered ? 1 : failures + 1;
        if (sleep_until(clock::now() + delays.delay(failures))) {
            break;
        }
    }
    std::lock_guard lock{mutex_};
    watch_done_ = true;
    wake_.notify_all();
}

} // namespace ecsnet::server::agones
