#pragma once

// Test harness for the server: an in-process server on 127.0.0.1 with ephemeral ports, a raw protocol
// client (blocking socket, reads with deadlines) that can misbehave at will, and a well-behaved mirroring
// client built on proto::mirror that checks every snapshot.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <asio/buffer.hpp>
#include <asio/error.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/socket_base.hpp>
#include <asio/write.hpp>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/input.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/framing.hpp>
#include <ecsnet/proto/handshake.hpp>
#include <ecsnet/proto/mirror.hpp>

#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/game_server.hpp"

namespace ecsnet::testing_support {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

inline server::server_options test_options(std::size_t npcs = 200) {
    server::server_options options;
    options.bind_address = "127.0.0.1";
    options.port = 0;
    options.admin_port = 0;
    options.npcs = npcs;
    options.workers = 2;
    options.log_level = "warn";
    options.relevancy_radius = 0.0F; // every client sees the whole world (the interest tests set a radius)
    options.insecure_dev = true;     // the raw clients here send no token
    options.max_tick_load = 0.0;     // a loaded test machine must not refuse clients as overload
    options.max_snapshot_stride = 1; // nor send them fewer snapshots
    return options;
}

/// A server running on its own thread for the lifetime of the object.
class running_server {
public:
    explicit running_server(server::server_options options = test_options(),
                            server::game_server::tick_observer observer = {}) {
        server::arena_options arena;
        arena.npcs = options.npcs;
        arena.tick_rate = options.tick_rate;
        arena.workers = options.workers;
        server_ =
            std::make_unique<server::game_server>(options, std::make_unique<server::arena_world>(arena));
        if (observer) {
            server_->on_tick(std::move(observer));
        }
        server_->open();
        thread_ = std::thread{[this] { server_->run(false); }};
    }
    running_server(const running_server&) = delete;
    running_server& operator=(const running_server&) = delete;
    ~running_server() { stop(); }

    void stop() {
        if (thread_.joinable()) {
            server_->stop();
            thread_.join();
        }
    }

    [[nodiscard]] server::game_server& get() noexcept { return *server_; }
    [[nodiscard]] std::uint16_t port() const noexcept { return server_->port(); }

private:
    std::unique_ptr<server::game_server> server_;
    std::thread thread_;
};

/// A client that speaks the protocol by hand: connect, send any bytes, read frames with a deadline.
class raw_client {
public:
    explicit raw_client(std::uint16_t port, int receive_buffer = 0)
        : socket_{io_} {
        socket_.open(asio::ip::tcp::v4());
        if (receive_buffer > 0) {
            socket_.set_option(asio::socket_base::receive_buffer_size{receive_buffer});
        }
        socket_.connect({asio::ip::make_address("127.0.0.1"), port});
        socket_.set_option(asio::ip::tcp::no_delay{true});
        socket_.non_blocking(true);
    }

    void send_bytes(std::string_view bytes) {
        asio::write(socket_, asio::buffer(bytes.data(), bytes.size()));
    }

    void send(const v1::Envelope& message) {
        std::string frame;
        ASSERT_TRUE(proto::append_envelope_frame(frame, message));
        send_bytes(frame);
    }

    void send_hello(const proto::schema& schema = arena::replicated_schema(), std::string name = "test") {
        send(proto::make_client_hello(schema.layout(), "", name));
    }

    /// The next message, or nothing when `timeout` passes first or the connection ends.
    std::optional<v1::Envelope> read(std::chrono::milliseconds timeout = 3000ms) {
        const auto deadline = steady::now() + timeout;
        while (true) {
            if (!pending_.empty()) {
                auto message = std::move(pending_.front());
                pending_.erase(pending_.begin());
                return message;
            }
            if (closed_ || steady::now() >= deadline) {
                return std::nullopt;
            }
            char buffer[64 * 1024];
            asio::error_code ec;
            const auto count = socket_.read_some(asio::buffer(buffer), ec);
            if (ec == asio::error::would_block) {
                std::this_thread::sleep_for(1ms);
                continue;
            }
            if (ec) {
                closed_ = true;
                continue;
            }
            const auto status =
                decoder_.feed(std::string_view{buffer, count}, [this](std::string_view payload) {
                    auto decoded = proto::decode_envelope(payload);
                    if (decoded) {
                        pending_.push_back(std::move(decoded.value()));
                    }
                });
            if (!status) {
                closed_ = true;
            }
        }
    }

    /// Reads until a Disconnect arrives (skipping anything else); its reason, or nothing on timeout.
    std::optional<v1::Disconnect> read_disconnect(std::chrono::milliseconds timeout = 5000ms) {
        const auto deadline = steady::now() + timeout;
        while (steady::now() < deadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
            auto message = read(std::max(left, 1ms));
            if (!message) {
                if (closed_) {
                    return std::nullopt;
                }
                continue;
            }
            if (message->has_disconnect()) {
                return message->disconnect();
            }
        }
        return std::nullopt;
    }

    /// Whether the server closed the connection within `timeout`.
    bool closed_within(std::chrono::milliseconds timeout) {
        const auto deadline = steady::now() + timeout;
        while (!closed_ && steady::now() < deadline) {
            static_cast<void>(read(10ms));
            pending_.clear();
        }
        return closed_;
    }

private:
    asio::io_context io_;
    asio::ip::tcp::socket socket_;
    proto::frame_decoder decoder_;
    std::vector<v1::Envelope> pending_;
    bool closed_{false};
};

/// A well-behaved client: handshakes, applies every snapshot to a mirror (which checks the checksum),
/// acks, and records what it applied.
class mirror_client {
public:
    explicit mirror_client(std::uint16_t port, std::string name = "mirror")
        : raw_{port}
        , mirror_{arena::replicated_schema()} {
        raw_.send_hello(arena::replicated_schema(), std::move(name));
        auto welcome = raw_.read();
        if (!welcome || !welcome->has_server_welcome()) {
            ADD_FAILURE() << "no ServerWelcome";
            return;
        }
        mirror_.welcome(welcome->server_welcome());
        client_id = welcome->server_welcome().client_id();
        if (welcome->server_welcome().has_own_entity()) {
            own = proto::net_entity{welcome->server_welcome().own_entity().index(),
                                    welcome->server_welcome().own_entity().generation()};
        }
    }

    /// Reads and applies snapshots for `duration` (or until disconnected).
    void pump(std::chrono::milliseconds duration) {
        const auto deadline = steady::now() + duration;
        while (steady::now() < deadline) {
            auto message = raw_.read(10ms);
            if (!message) {
                continue;
            }
            if (message->has_disconnect()) {
                disconnect = message->disconnect();
                return;
            }
            if (!message->has_snapshot()) {
                continue;
            }
            auto applied = mirror_.apply(message->snapshot());
            if (applied) {
                applied_ticks.push_back(applied->tick);
            } else {
                refusals.push_back(std::string{applied.message()});
            }
            v1::Envelope ack;
            *ack.mutable_ack() = mirror_.make_ack();
            raw_.send(ack);
        }
    }

    void send_move(float dir_x, float dir_y, float speed, std::uint32_t target = 0) {
        v1::Envelope input;
        input.mutable_input()->set_sequence(++sequence_);
        input.mutable_input()->set_payload(arena::encode(arena::move_input{target, dir_x, dir_y, speed}));
        raw_.send(input);
    }

    [[nodiscard]] proto::mirror& mirror() noexcept { return mirror_; }
    [[nodiscard]] raw_client& raw() noexcept { return raw_; }

    /// The mirrored Transform of an entity of the server, if the mirror has it.
    std::optional<arena::Transform> transform_of(proto::net_entity id) {
        const auto local = mirror_.find(id);
        if (local == null_entity) {
            return std::nullopt;
        }
        const auto* t = mirror_.registry().try_get<arena::Transform>(local);
        return t ? std::optional{*t} : std::nullopt;
    }

    std::uint32_t client_id{};
    std::optional<proto::net_entity> own;
    std::vector<proto::tick_type> applied_ticks;
    std::vector<std::string> refusals;
    std::optional<v1::Disconnect> disconnect;

private:
    raw_client raw_;
    proto::mirror mirror_;
    std::uint32_t sequence_{};
};

} // namespace ecsnet::testing_support
