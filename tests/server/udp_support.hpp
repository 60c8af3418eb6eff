#pragma once

// A UDP client for the server's tests, below the SDK: the transport's udp_client on its own io_context
// thread, speaking ecsnet's Envelopes by hand (ClientHello on the reliable channel, Acks and Pings on the
// unreliable one, Inputs on the redundant one), applying what it receives to a proto::mirror, and
// recording everything, so that a test can misbehave at will and check what the server did.

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/input.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/handshake.hpp>
#include <ecsnet/proto/mirror.hpp>
#include <ecsnet/transport/dev_key.hpp>
#include <ecsnet/transport/udp_client.hpp>

#include "ecsnet/server/options.hpp"

namespace ecsnet::testing_support {

class udp_test_client final : public transport::client_handler {
public:
    explicit udp_test_client(std::optional<transport::sim_config> simulator = std::nullopt)
        : work_{asio::make_work_guard(io_)}
        , mirror_{arena::replicated_schema()} {
        transport::udp_client_options options;
        options.simulator = simulator;
        options.config.handshake_timeout = std::chrono::milliseconds{3000};
        client_ = std::make_unique<transport::udp_client>(io_.get_executor(), options, *this);
        thread_ = std::thread{[this] { io_.run(); }};
    }
    udp_test_client(const udp_test_client&) = delete;
    udp_test_client& operator=(const udp_test_client&) = delete;
    ~udp_test_client() override {
        on_io([this] { client_->close(); });
        work_.reset();
        io_.stop();
        thread_.join();
    }

    /// Connects to 127.0.0.1:port with a token of the development key (or `token` when given).
    void connect(std::uint16_t port, std::optional<transport::connect_token> token = std::nullopt) {
        if (!token) {
            transport::dev_token_params params;
            params.protocol_id = server::default_protocol_id;
            params.server_addresses = {*transport::net_address::parse("127.0.0.1:" + std::to_string(port))};
            token = transport::make_dev_token(params).value();
        }
        on_io([this, t = *token] { client_->connect(t); });
    }

    void send(const v1::Envelope& message, transport::channel ch) {
        const auto bytes = proto::encode_envelope(message);
        on_io([this, bytes, ch] {
            client_->send(ch, std::span{reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
            client_->flush();
        });
    }
    void send_hello(std::string name = "udp") {
        send(proto::make_client_hello(arena::replicated_schema().layout(), "", name),
             transport::channel::reliable);
    }
    void send_move(float dir_x, float dir_y, float speed) {
        v1::Envelope input;
        input.mutable_input()->set_sequence(++sequence_);
        input.mutable_input()->set_payload(arena::encode(arena::move_input{0, dir_x, dir_y, speed}));
        send(input, transport::channel::redundant);
        ++inputs_sent;
    }
    void disconnect(std::uint8_t code, std::string message) {
        on_io([this, code, message] { client_->disconnect(code, message); });
    }

    /// Waits until `done()` (checked under the lock) or the timeout.
    template<typename Done>
    bool wait(Done done, std::chrono::milliseconds timeout = std::chrono::milliseconds{5000}) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            {
                std::lock_guard lock{mutex_};
                if (done()) {
                    return true;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds{5});
        }
        std::lock_guard lock{mutex_};
        return done();
    }

    // Under the lock (wait's predicate, or after the client stopped).
    std::mutex mutex_;
    bool connected{false};
    bool welcomed{false};
    std::optional<transport::client_error> ended;
    transport::disconnect_info disconnect_info;
    std::vector<proto::tick_type> applied;
    std::vector<std::string> refusals;
    std::size_t full_states_reliable{};
    std::size_t deltas_unreliable{};
    std::size_t inputs_sent{};
    std::optional<proto::net_entity> own;
    std::optional<arena::Transform> own_transform;

    [[nodiscard]] transport::udp_client& transport_client() noexcept { return *client_; }

private:
    template<typename Fn>
    void on_io(Fn fn) {
        std::promise<void> done;
        asio::post(io_, [&] {
            fn();
            done.set_value();
        });
        done.get_future().wait();
    }

    void on_connected(const transport::net_address&) override {
        std::lock_guard lock{mutex_};
        connected = true;
    }
    void on_disconnected(transport::client_error error, const transport::disconnect_info& info) override {
        std::lock_guard lock{mutex_};
        ended = error;
        disconnect_info = info;
    }
    void on_message(transport::channel ch, std::span<const std::byte> bytes) override {
        auto decoded = proto::decode_envelope({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
        std::lock_guard lock{mutex_};
        if (!decoded) {
            refusals.push_back("malformed: " + std::string{decoded.message()});
            return;
        }
        auto& message = decoded.value();
        if (message.has_server_welcome()) {
            welcomed = true;
            mirror_.welcome(message.server_welcome());
            if (message.server_welcome().has_own_entity()) {
                own = proto::net_entity{message.server_welcome().own_entity().index(),
                                        message.server_welcome().own_entity().generation()};
            }
            return;
        }
        if (!message.has_snapshot()) {
            return;
        }
        if (message.snapshot().full_state()) {
            full_states_reliable += ch == transport::channel::reliable ? 1 : 0;
        } else {
            deltas_unreliable += ch == transport::channel::unreliable ? 1 : 0;
        }
        auto result = mirror_.apply(message.snapshot());
        if (result) {
            applied.push_back(result->tick);
            if (own) {
                if (const auto local = mirror_.find(*own); local != null_entity) {
                    if (const auto* t = mirror_.registry().try_get<arena::Transform>(local)) {
                        own_transform = *t;
                    }
                }
            }
        } else if (result.code() != proto::errc::stale_snapshot) {
            refusals.push_back(std::string{result.message()});
        }
        v1::Envelope ack;
        *ack.mutable_ack() = mirror_.make_ack();
        const auto ack_bytes = proto::encode_envelope(ack);
        client_->send(transport::channel::unreliable,
                      std::span{reinterpret_cast<const std::byte*>(ack_bytes.data()), ack_bytes.size()});
        client_->flush();
    }

    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::unique_ptr<transport::udp_client> client_;
    std::thread thread_;
    proto::mirror mirror_;
    std::uint32_t sequence_{};
};

} // namespace ecsnet::testing_support
