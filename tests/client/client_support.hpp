#pragma once

// Helpers of the client SDK tests: an in-process ecsnet server on 127.0.0.1 (ephemeral ports) recording
// its state checksum per tick, bounded waits, and fake servers speaking raw bytes.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <asio/error_code.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/client/client.hpp"
#include "ecsnet/proto/checksum.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/game_server.hpp"

namespace ecsnet::client::testing {

using namespace std::chrono_literals;

/// A running server on its own thread; stop() (or the destructor) shuts it down and joins.
class test_server {
public:
    /// relevancy_radius 0: every client sees the whole world; above 0, interest-managed views. key_file
    /// empty: --insecure-dev (clients make their own tokens); else the studio's key (--key-file). workers:
    /// the scheduler's threads, and those recomputing relevant sets. companions: arena_options::companions.
    explicit test_server(std::size_t npcs = 300, std::uint32_t tick_rate = 30, float relevancy_radius = 0.0F,
                         const std::string& key_file = {}, std::size_t workers = 1, bool companions = false) {
        spdlog::set_level(spdlog::level::warn);
        server::server_options options;
        options.bind_address = "127.0.0.1";
        options.port = 0;
        options.admin_port = 0;
        options.tick_rate = tick_rate;
        options.npcs = npcs;
        options.workers = workers;
        options.relevancy_radius = relevancy_radius;
        // A test machine may be loaded enough to slow ticks down: clients must not be refused as overload,
        // nor sent fewer snapshots (sessions_test checks those rules on their own).
        options.max_tick_load = 0.0;
        options.max_snapshot_stride = 1;
        // TCP and UDP on one port; clients may make their own (development) tokens.
        options.transport = server::transport_kind::both;
        options.insecure_dev = key_file.empty();
        options.key_file = key_file;
        server::arena_options arena;
        arena.npcs = npcs;
        arena.tick_rate = tick_rate;
        arena.workers = workers;
        arena.companions = companions;
        server_ =
            std::make_unique<server::game_server>(options, std::make_unique<server::arena_world>(arena));
        server_->on_tick([this](proto::tick_type tick, const proto::snapshot_history& history) {
            std::lock_guard lock{mutex_};
            checksums_[tick] = history.newest().checksum;
        });
        server_->open();
        thread_ = std::thread{[this] { server_->run(false); }};
    }
    test_server(const test_server&) = delete;
    test_server& operator=(const test_server&) = delete;
    ~test_server() { stop(); }

    void stop() {
        if (thread_.joinable()) {
            server_->stop();
            thread_.join();
        }
    }

    [[nodiscard]] std::uint16_t port() const { return server_->port(); }
    [[nodiscard]] server::game_server& server() { return *server_; }

    /// The server's state checksum of `tick`, if it ran that tick.
    [[nodiscard]] std::optional<std::uint64_t> checksum(proto::tick_type tick) const {
        std::lock_guard lock{mutex_};
        const auto it = checksums_.find(tick);
        return it == checksums_.end() ? std::nullopt : std::optional{it->second};
    }
    [[nodiscard]] proto::tick_type newest_tick() const {
        std::lock_guard lock{mutex_};
        return checksums_.empty() ? 0 : checksums_.rbegin()->first;
    }

    /// The server entity of the avatar of the client named `name` (null_entity if none).
    [[nodiscard]] entity avatar_of(const std::string& name) {
        return server_->call([this, name] {
            for (const auto& c : server_->clients()) {
                if (c.name == name) {
                    return c.avatar;
                }
            }
            return null_entity;
        });
    }
    /// The server's Transform of entity `e` right now.
    [[nodiscard]] std::optional<arena::Transform> transform_of(entity e) {
        return server_->call([this, e]() -> std::optional<arena::Transform> {
            auto& reg = server_->world().registry();
            if (!reg.valid(e) || !reg.all_of<arena::Transform>(e)) {
                return std::nullopt;
            }
            return reg.get<arena::Transform>(e);
        });
    }

private:
    std::unique_ptr<server::game_server> server_;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::map<proto::tick_type, std::uint64_t> checksums_;
};

/// Client options over `transport`. The tests of what only TCP does (one write in flight, frames, the fake
/// servers speaking raw TCP bytes) run on TCP; the end-to-end ones on both.
inline client_options over(transport_kind transport, std::string name = "test-client") {
    client_options options;
    options.name = std::move(name);
    options.transport = transport;
    return options;
}

/// For parameterized tests: "tcp", "udp".
inline std::string transport_name(const ::testing::TestParamInfo<transport_kind>& info) {
    return info.param == transport_kind::tcp ? "tcp" : "udp";
}

/// Polls `c` (poll or own_thread mode) until `done()` or `timeout`; returns done().
inline bool poll_until(client& c, const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        c.poll();
        std::this_thread::sleep_for(1ms);
    }
    c.poll();
    return done();
}

/// Polls `c` for `duration`.
inline void poll_for(client& c, std::chrono::milliseconds duration) {
    const auto deadline = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < deadline) {
        c.poll();
        std::this_thread::sleep_for(1ms);
    }
}

/// Waits (without polling: for threads that do the work) until done() or timeout.
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
    }
    return done();
}

/// How many file descriptors this process has open (sockets included).
inline std::size_t open_descriptors() {
    std::error_code ec;
    const std::filesystem::directory_iterator fds{"/proc/self/fd", ec};
    return ec ? 0
              : static_cast<std::size_t>(
                    std::distance(std::filesystem::begin(fds), std::filesystem::end(fds)));
}

/// What a client applied: tick and the mirror's state checksum after it, and whether verify() held.
struct applied_record {
    proto::tick_type tick{};
    std::uint64_t checksum{};
    bool verified{};
    bool full_state{};
};

/// Records every applied snapshot of `c` (call before connect()).
inline void record_applied(client& c, std::vector<applied_record>& out) {
    c.on_snapshot([&c, &out](const proto::applied_snapshot& applied) {
        const auto* state = c.mirror().newest_state();
        out.push_back(
            {applied.tick, state != nullptr ? state->checksum : 0, c.mirror().verify(), applied.full_state});
    });
}

/// Every applied tick's checksum equals the server's checksum of that tick; returns how many were compared.
inline std::size_t expect_checksums_match(const test_server& server,
                                          const std::vector<applied_record>& applied) {
    std::size_t compared = 0;
    for (const auto& record : applied) {
        const auto expected = server.checksum(record.tick);
        EXPECT_TRUE(expected.has_value()) << "tick " << record.tick << " was never run by the server";
        if (expected) {
            EXPECT_EQ(record.checksum, *expected) << "tick " << record.tick;
            ++compared;
        }
        EXPECT_TRUE(record.verified) << "mirror.verify() failed at tick " << record.tick;
    }
    return compared;
}

/// The mirror's registry holds exactly its newest state: every mirrored entity's components re-quantize to
/// the state's columns, and the registry mirrors as many entities as the state holds.
inline void expect_registry_matches_newest_state(const proto::replica& m) {
    const auto* state = m.newest_state();
    ASSERT_NE(state, nullptr);
    const auto& schema = m.replicated_schema();
    const auto& reg = m.registry();
    const auto* ids = reg.try_storage<proto::net_id>();
    ASSERT_NE(ids, nullptr);
    EXPECT_EQ(ids->size(), state->entity_count());
    std::vector<std::uint32_t> values;
    for (std::size_t c = 0; c < schema.size(); ++c) {
        const auto& codec = schema.codec(c);
        const auto rows = codec.pool_entities(reg);
        EXPECT_EQ(rows.size(), state->size(c)) << schema.component_at(c).name;
        values.resize(schema.component_at(c).fields.size());
        for (const auto e : rows) {
            const auto id = m.net_of(e);
            ASSERT_TRUE(id.has_value());
            const auto row = find_row(*state, c, *id);
            ASSERT_TRUE(row.has_value()) << "entity " << id->index << " missing from the state";
            codec.quantize_one(reg, e, values.data());
            for (std::size_t f = 0; f < values.size(); ++f) {
                ASSERT_EQ(values[f], state->components[c].fields[f].get(*row))
                    << schema.component_at(c).name << "." << schema.component_at(c).fields[f].name
                    << " of entity " << id->index;
            }
        }
    }
}

/// A TCP listener on 127.0.0.1 run by its own io_context thread; `on_accept` gets each accepted socket
/// (without one, accepted sockets are kept open and never written to).
class fake_server {
public:
    using handler = std::function<void(std::shared_ptr<asio::ip::tcp::socket>)>;

    explicit fake_server(handler on_accept = {})
        : acceptor_{io_, asio::ip::tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}}
        , on_accept_{std::move(on_accept)} {
        accept();
        thread_ = std::thread{[this] { io_.run(); }};
    }
    fake_server(const fake_server&) = delete;
    fake_server& operator=(const fake_server&) = delete;
    ~fake_server() {
        io_.stop();
        thread_.join();
    }

    [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    [[nodiscard]] asio::io_context& io() { return io_; }

private:
    void accept() {
        auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
        acceptor_.async_accept(*socket, [this, socket](const asio::error_code& ec) {
            if (!ec) {
                if (on_accept_) {
                    on_accept_(socket);
                } else {
                    kept_.push_back(socket); // on the io thread only
                }
                accept();
            }
        });
    }

    asio::io_context io_;
    asio::ip::tcp::acceptor acceptor_;
    handler on_accept_;
    std::vector<std::shared_ptr<asio::ip::tcp::socket>> kept_; // destroyed before io_
    std::thread thread_;
};

/// A port on 127.0.0.1 where nothing listens (bound, then released).
inline std::uint16_t unused_port() {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor{io, asio::ip::tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}};
    return acceptor.local_endpoint().port();
}

} // namespace ecsnet::client::testing
