#pragma once

// A stand-in for the Agones SDK sidecar in tests: a cpp-httplib server on 127.0.0.1 (a port it picks) that
// answers the REST calls ecsnet-server makes, records each one with its arrival time, streams GameServer
// updates on GET /watch/gameserver when the test sets a state, and can fail (HTTP 500) or hang on demand.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

namespace ecsnet::testing_support {

class fake_sidecar {
public:
    using steady = std::chrono::steady_clock;
    enum class behaviour { answer, fail, hang };

    struct call {
        std::string method;
        std::string path;
        std::string body;
        steady::time_point at;
    };

    fake_sidecar() {
        const auto record = [this](const httplib::Request& request) {
            std::lock_guard lock{mutex_};
            calls_.push_back(call{request.method, request.path, request.body, steady::now()});
            changed_.notify_all();
        };
        // Every answer goes through here: 500, or a hang, or the handler's own.
        const auto serve = [this, record](auto answer) {
            return [this, record, answer](const httplib::Request& request, httplib::Response& response) {
                record(request);
                if (const auto hook = on_call_) {
                    hook(request.path);
                }
                behaviour mode{};
                std::chrono::milliseconds hang{};
                {
                    std::lock_guard lock{mutex_};
                    mode = mode_;
                    hang = hang_;
                }
                if (mode == behaviour::fail) {
                    response.status = 500;
                    response.set_content("{\"error\":\"test failure\"}", "application/json");
                    return;
                }
                if (mode == behaviour::hang) {
                    std::unique_lock lock{mutex_};
                    changed_.wait_for(lock, hang, [this] { return stopping_; });
                }
                answer(request, response);
            };
        };
        const auto empty = [](const httplib::Request&, httplib::Response& response) {
            response.set_content("{}", "application/json");
        };
        http_.Post("/ready", serve(empty));
        http_.Post("/health", serve(empty));
        http_.Post("/shutdown", serve(empty));
        http_.Get("/gameserver", serve([this](const httplib::Request&, httplib::Response& response) {
                      std::lock_guard lock{mutex_};
                      response.set_content(game_server_json(state_), "application/json");
                  }));
        http_.Post(R"(/v1beta1/lists/players:(addValue|removeValue))",
                   serve([this](const httplib::Request& request, httplib::Response& response) {
                       const auto begin = request.body.find(":\"");
                       const auto end = request.body.rfind('"');
                       if (begin == std::string::npos || end <= begin + 1) {
                           response.status = 400;
                           return;
                       }
                       const auto value = request.body.substr(begin + 2, end - begin - 2);
                       std::lock_guard lock{mutex_};
                       const bool add = request.matches[1] == "addValue";
                       const bool changed = add ? players_.insert(value).second : players_.erase(value) > 0;
                       response.status = changed ? 200 : add ? 409 : 404; // as Agones answers
                       response.set_content("{\"name\":\"players\"}", "application/json");
                   }));
        http_.Get("/watch/gameserver", serve([this](const httplib::Request&, httplib::Response& response) {
                      response.set_chunked_content_provider(
                          "application/json",
                          [this, sent = std::size_t{0}](std::size_t, httplib::DataSink& sink) mutable {
                              std::unique_lock lock{mutex_};
                              changed_.wait_for(lock, std::chrono::milliseconds{20},
                                                [&] { return stopping_ || watch_lines_.size() > sent; });
                              if (stopping_ || !sink.is_writable()) {
                                  return false;
                              }
                              for (; sent < watch_lines_.size(); ++sent) {
                                  const auto line = watch_lines_[sent] + "\n";
                                  sink.write(line.data(), line.size());
                              }
                              return true;
                          });
                  }));
        port_ = static_cast<std::uint16_t>(http_.bind_to_any_port("127.0.0.1"));
        thread_ = std::thread{[this] { http_.listen_after_bind(); }};
        for (int attempt = 0; attempt < 1000 && !http_.is_running(); ++attempt) {
            std::this_thread::sleep_for(std::chrono::milliseconds{1});
        }
    }
    fake_sidecar(const fake_sidecar&) = delete;
    fake_sidecar& operator=(const fake_sidecar&) = delete;
    ~fake_sidecar() {
        {
            std::lock_guard lock{mutex_};
            stopping_ = true;
            changed_.notify_all();
        }
        http_.stop();
        thread_.join();
    }

    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

    /// Called (on the sidecar's thread) at each call with its path, before answering. Set before use.
    void on_call(std::function<void(const std::string&)> hook) { on_call_ = std::move(hook); }

    void set_behaviour(behaviour mode, std::chrono::milliseconds hang = std::chrono::milliseconds{0}) {
        std::lock_guard lock{mutex_};
        mode_ = mode;
        hang_ = hang;
    }

    /// The GameServer's state from now on: GET /gameserver answers it, and every open watch stream gets it.
    void set_state(const std::string& state) {
        std::lock_guard lock{mutex_};
        state_ = state;
        watch_lines_.push_back("{\"result\":" + game_server_json(state) + "}");
        changed_.notify_all();
    }

    [[nodiscard]] std::vector<call> calls() {
        std::lock_guard lock{mutex_};
        return calls_;
    }
    [[nodiscard]] std::vector<call> calls_to(const std::string& path) {
        std::lock_guard lock{mutex_};
        std::vector<call> out;
        std::copy_if(calls_.begin(), calls_.end(), std::back_inserter(out),
                     [&](const call& c) { return c.path == path; });
        return out;
    }
    [[nodiscard]] std::set<std::string> players() {
        std::lock_guard lock{mutex_};
        return players_;
    }

    /// Waits (at most `timeout`) until `path` was called `count` times; returns whether it was.
    bool wait_for_calls(const std::string& path, std::size_t count, std::chrono::milliseconds timeout) {
        std::unique_lock lock{mutex_};
        return changed_.wait_for(lock, timeout, [&] {
            return static_cast<std::size_t>(std::count_if(
                       calls_.begin(), calls_.end(), [&](const call& c) { return c.path == path; })) >= count;
        });
    }

private:
    static std::string game_server_json(const std::string& state) {
        return "{\"object_meta\":{\"name\":\"ecsnet-test\",\"namespace\":\"default\",\"labels\":{\"a\":\"b\"}"
               "},"
               "\"status\":{\"state\":\"" +
               state + "\",\"address\":\"127.0.0.1\",\"ports\":[{\"name\":\"game\",\"port\":7777}]}}";
    }

    httplib::Server http_;
    std::thread thread_;
    std::uint16_t port_{};
    std::function<void(const std::string&)> on_call_;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<call> calls_;
    behaviour mode_{behaviour::answer};
    std::chrono::milliseconds hang_{};
    std::string state_{"Scheduled"};
    std::vector<std::string> watch_lines_;
    std::set<std::string> players_;
    bool stopping_{false};
};

} // namespace ecsnet::testing_support
