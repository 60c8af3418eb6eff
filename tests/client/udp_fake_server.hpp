#pragma once

// An ecsnet server in miniature over UDP, for the SDK's UDP tests: a transport::udp_server on 127.0.0.1
// (ephemeral port) run by a thread of its own, speaking the wire mapping of docs/protocol.md (section 10):
// on a ClientHello (reliable) it sends, as scripted,
//  - `welcome_and_ticks`: a ServerWelcome (reliable) naming entity 0 as the client's avatar, then every
//    tick (33 ms) a snapshot of a small world of moving entities: full states on reliable until the
//    client acks, then deltas on unreliable, as the real server does;
//  - `reply`: the given messages (channel, bytes) and nothing else;
//  - `silence`: nothing at all (the transport stays connected, keep-alives flowing).
// It records what each client sent (the channel and the bytes of each message), the state checksum of
// every tick, and how each connection ended (the disconnect code and message). The real server's UDP side
// is tested through client_test, end_to_end_test and client_udp_test's other cases.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <asio/error_code.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/proto/encoder.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/handshake.hpp>
#include <ecsnet/proto/history.hpp>
#include <ecsnet/transport/dev_key.hpp>
#include <ecsnet/transport/udp_server.hpp>

#include "ecsnet/client/client_options.hpp"

namespace ecsnet::client::testing {

/// What udp_fake_server does on a ClientHello (see above).
enum class udp_script : std::uint8_t { welcome_and_ticks, reply, silence };

struct udp_fake_settings {
    udp_script what{udp_script::welcome_and_ticks};
    /// The schema the welcome declares (the arena's by default).
    const proto::schema* welcome_schema{&arena::replicated_schema()};
    /// udp_script::reply: sent in answer to the hello.
    std::vector<std::pair<transport::channel, std::string>> reply;
    /// udp_script::reply: the time between two of its messages (0: all in one packet, reliable first).
    std::chrono::milliseconds reply_spacing{0};
    transport::key private_key{transport::dev_private_key};
    std::uint64_t protocol_id{default_protocol_id};
};

class udp_fake_server : public transport::server_handler {
public:
    using script = udp_script;
    using settings = udp_fake_settings;

    struct message {
        transport::channel channel{};
        v1::Envelope envelope;
    };

    udp_fake_server()
        : udp_fake_server(settings{}) {}
    explicit udp_fake_server(settings s)
        : settings_{std::move(s)}
        , server_{io_, options_for(settings_), *this}
        , tick_timer_{io_}
        , history_{arena::replicated_schema(), world_}
        , encoder_{history_} {
        for (int i = 0; i < 20; ++i) {
            const auto e = world_.create();
            world_.emplace<arena::Transform>(e, static_cast<float>(i), 1.0F, 0.0F, 0.0F);
            world_.emplace<arena::Health>(e, std::uint16_t{100});
            world_.emplace<arena::Kind>(e, static_cast<std::uint8_t>(i == 0 ? 8 : 1));
            entities_.push_back(e);
        }
        epoch_unix_us_ = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                        std::chrono::system_clock::now().time_since_epoch())
                                                        .count());
        server_.start();
        tick();
        thread_ = std::thread{[this] { io_.run(); }};
    }
    udp_fake_server(const udp_fake_server&) = delete;
    udp_fake_server& operator=(const udp_fake_server&) = delete;
    ~udp_fake_server() override {
        io_.stop();
        thread_.join();
    }

    [[nodiscard]] std::uint16_t port() const { return server_.port(); }
    [[nodiscard]] transport::net_address address() const { return server_.local_address(); }

    /// Runs `fn` on the server's thread and returns its result.
    template<typename Fn>
    auto call(Fn fn) {
        std::promise<decltype(fn())> result;
        asio::post(io_, [&] {
            if constexpr (std::is_void_v<decltype(fn())>) {
                fn();
                result.set_value();
            } else {
                result.set_value(fn());
            }
        });
        return result.get_future().get();
    }

    /// Disconnects every client with `code` and `message` (as a server shutting down does).
    void disconnect_all(std::uint8_t code, const std::string& message) {
        call([&] { server_.disconnect_all(code, message); });
    }

    [[nodiscard]] std::size_t connections() {
        return call([&] { return server_.connection_count(); });
    }
    [[nodiscard]] std::vector<message> received() {
        std::lock_guard lock{mutex_};
        return received_;
    }
    [[nodiscard]] std::size_t count(v1::Envelope::MessageCase which) {
        std::lock_guard lock{mutex_};
        return static_cast<std::size_t>(
            std::count_if(received_.begin(), received_.end(),
                          [which](const message& m) { return m.envelope.message_case() == which; }));
    }
    /// How connections ended: (code, message), in order.
    [[nodiscard]] std::vector<std::pair<std::uint8_t, std::string>> endings() {
        std::lock_guard lock{mutex_};
        return endings_;
    }
    [[nodiscard]] std::optional<std::uint64_t> checksum(proto::tick_type tick) {
        std::lock_guard lock{mutex_};
        const auto it = checksums_.find(tick);
        return it == checksums_.end() ? std::nullopt : std::optional{it->second};
    }
    [[nodiscard]] const transport::server_counters& counters() const { return server_.counters(); }

    // transport::server_handler (the server's thread)
    void on_connected(const transport::connection_info& info) override { clients_[info.id]; }

    void on_message(transport::connection_id id, transport::channel ch,
                    std::span<const std::byte> bytes) override {
        message m{ch, {}};
        if (!m.envelope.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
            return;
        }
        {
            std::lock_guard lock{mutex_};
            received_.push_back(m);
        }
        auto& client = clients_[id];
        if (m.envelope.has_ack()) {
            client.acks.on_ack(m.envelope.ack(), history_.newest_tick());
        }
        if (!m.envelope.has_client_hello() || client.hello) {
            return;
        }
        client.hello = true;
        switch (settings_.what) {
        case script::welcome_and_ticks: {
            proto::welcome_info info;
            info.client_id = static_cast<std::uint32_t>(id);
            info.tick_rate = 30;
            info.current_tick = history_.newest_tick();
            info.own_entity = history_.to_net(entities_.front());
            info.server_epoch_unix_us = epoch_unix_us_;
            send(id, transport::channel::reliable,
                 proto::make_server_welcome(settings_.welcome_schema->layout(), info).SerializeAsString());
            client.welcomed = true;
            break;
        }
        case script::reply:
            if (settings_.reply_spacing.count() == 0) {
                for (const auto& [channel, reply] : settings_.reply) {
                    send(id, channel, reply);
                }
            } else {
                send_spaced(id, 0);
            }
            break;
        case script::silence:
            break;
        }
    }

    void on_disconnected(transport::connection_id id, const transport::disconnect_info& info) override {
        clients_.erase(id);
        std::lock_guard lock{mutex_};
        endings_.emplace_back(info.code, info.message);
    }

private:
    struct client_state {
        bool hello{false};
        bool welcomed{false};
        proto::ack_tracker acks;
    };

    static transport::udp_server_options options_for(const settings& s) {
        transport::udp_server_options options;
        options.bind_address = "127.0.0.1";
        options.config.protocol_id = s.protocol_id;
        options.config.private_key = s.private_key;
        return options;
    }

    void send(transport::connection_id id, transport::channel ch, const std::string& bytes) {
        static_cast<void>(
            server_.send(id, ch, std::span{reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}));
        server_.flush(id);
    }

    // Reply message `index`, then the next one reply_spacing later.
    void send_spaced(transport::connection_id id, std::size_t index) {
        if (index >= settings_.reply.size()) {
            return;
        }
        send(id, settings_.reply[index].first, settings_.reply[index].second);
        auto timer = std::make_shared<asio::steady_timer>(io_, settings_.reply_spacing);
        timer->async_wait([this, timer, id, index](const asio::error_code& ec) {
            if (!ec) {
                send_spaced(id, index + 1);
            }
        });
    }

    // Every 33 ms: the entities move, the tick is captured, each welcomed client gets its snapshot.
    void tick() {
        ++tick_;
        for (const auto e : entities_) {
            world_.patch<arena::Transform>(e, [](arena::Transform& t) { t.y += 0.25F; });
        }
        history_.capture(tick_, std::uint64_t{tick_} * 1'000'000 / 30);
        {
            std::lock_guard lock{mutex_};
            checksums_[tick_] = history_.newest().checksum;
        }
        for (auto& [id, client] : clients_) {
            if (!client.welcomed) {
                continue;
            }
            const auto snapshot = encoder_.encode(client.acks.next());
            send(id, snapshot->used.baseline ? transport::channel::unreliable : transport::channel::reliable,
                 snapshot->envelope);
        }
        tick_timer_.expires_after(std::chrono::milliseconds{33});
        tick_timer_.async_wait([this](const asio::error_code& ec) {
            if (!ec) {
                tick();
            }
        });
    }

    settings settings_;
    asio::io_context io_;
    transport::udp_server server_;
    asio::steady_timer tick_timer_;
    registry world_;
    std::vector<entity> entities_;
    proto::snapshot_history history_;
    proto::snapshot_encoder encoder_;
    proto::tick_type tick_{0};
    std::uint64_t epoch_unix_us_{};
    std::map<transport::connection_id, client_state> clients_; // the server's thread only
    std::mutex mutex_;
    std::vector<message> received_;
    std::vector<std::pair<std::uint8_t, std::string>> endings_;
    std::map<proto::tick_type, std::uint64_t> checksums_;
    std::thread thread_;
};

} // namespace ecsnet::client::testing
