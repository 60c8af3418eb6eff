#pragma once

// An in-memory network for the security layer's tests: one server_core, any number of client_cores,
// datagrams queued between them and delivered by pump(), simulated time. Every datagram passes a
// filter (drop, change or record it), and every datagram is recorded with its source and destination.

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ecsnet/transport/client_core.hpp"
#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"
#include "ecsnet/transport/server_core.hpp"

namespace ecsnet::transport::testing {

using namespace std::chrono_literals;

inline constexpr std::uint64_t test_protocol = 0xEC5E7;

struct datagram {
    net_address from;
    net_address to;
    std::vector<std::uint8_t> bytes;
};

struct server_events : server_handler {
    struct message {
        connection_id id;
        channel ch;
        std::string bytes;
    };
    std::vector<connection_info> connected;
    std::vector<message> messages;
    std::vector<std::pair<connection_id, disconnect_info>> disconnected;
    std::vector<drop_reason> dropped;
    std::function<void(connection_id, channel, std::span<const std::byte>)> on_message_hook;

    void on_connected(const connection_info& info) override { connected.push_back(info); }
    void on_message(connection_id id, channel ch, std::span<const std::byte> m) override {
        messages.push_back({id, ch, std::string{reinterpret_cast<const char*>(m.data()), m.size()}});
        if (on_message_hook) {
            on_message_hook(id, ch, m);
        }
    }
    void on_disconnected(connection_id id, const disconnect_info& info) override {
        disconnected.emplace_back(id, info);
    }
    void on_dropped(drop_reason reason, const net_address&) override { dropped.push_back(reason); }
};

struct client_events : client_handler {
    int connected{0};
    std::vector<std::pair<channel, std::string>> messages;
    std::vector<std::pair<client_error, disconnect_info>> disconnected;
    std::vector<drop_reason> dropped;

    void on_connected(const net_address&) override { ++connected; }
    void on_message(channel ch, std::span<const std::byte> m) override {
        messages.emplace_back(ch, std::string{reinterpret_cast<const char*>(m.data()), m.size()});
    }
    void on_disconnected(client_error error, const disconnect_info& info) override {
        disconnected.emplace_back(error, info);
    }
    void on_dropped(drop_reason reason) override { dropped.push_back(reason); }
};

inline std::span<const std::byte> text(const std::string& s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

class harness {
public:
    explicit harness(server_config config = default_config())
        : server_address_{*net_address::parse("10.0.0.1:7777")}
        , now_{clock::time_point{} + 1h}
        , unix_{1'700'000'000} {
        if (config.public_addresses.empty()) {
            config.public_addresses = {server_address_};
        }
        config.unix_clock = [this] { return unix_; };
        key_ = config.private_key;
        server_ = std::make_unique<server_core>(
            config, server_events_,
            [this](const net_address& to, std::span<const std::uint8_t> bytes) {
                queue_.push_back({server_address_, to, {bytes.begin(), bytes.end()}});
            },
            now_);
    }

    static server_config default_config() {
        server_config config;
        config.protocol_id = test_protocol;
        config.private_key = generate_key();
        config.max_clients = 8;
        return config;
    }

    /// A client at `address` ("10.0.0.2:5000" by default; each client its own address).
    client_core& add_client(const std::string& address, client_config config = {}) {
        const auto from = *net_address::parse(address);
        config.unix_clock = [this] { return unix_; };
        auto events = std::make_unique<client_events>();
        auto client = std::make_unique<client_core>(
            config, *events, [this, from](const net_address& to, std::span<const std::uint8_t> bytes) {
                queue_.push_back({from, to, {bytes.begin(), bytes.end()}});
            });
        auto& added = *client;
        clients_[from] = {std::move(client), std::move(events)};
        return added;
    }
    client_events& events_of(const std::string& address) {
        return *clients_.at(*net_address::parse(address)).events;
    }

    connect_token token(std::uint64_t client_id = 42, std::vector<net_address> servers = {},
                        std::uint32_t expire_seconds = 60, std::uint32_t timeout_seconds = 5,
                        std::optional<key> with_key = std::nullopt) {
        token_params params;
        params.protocol_id = test_protocol;
        params.client_id = client_id;
        params.server_addresses = servers.empty() ? std::vector{server_address_} : std::move(servers);
        params.expire_seconds = expire_seconds;
        params.timeout_seconds = timeout_seconds;
        params.user_data[0] = static_cast<std::uint8_t>(client_id);
        params.now_unix = unix_;
        auto issued = issue_token(params, with_key.value_or(key_));
        return *issued;
    }

    /// Delivers queued datagrams (and those they cause) until none is left; at most `limit` of them.
    std::size_t pump(std::size_t limit = 10'000) {
        std::size_t delivered = 0;
        while (!queue_.empty() && delivered < limit) {
            auto d = std::move(queue_.front());
            queue_.pop_front();
            log_.push_back(d);
            if (filter && !filter(d)) {
                continue;
            }
            ++delivered;
            deliver(d);
        }
        return delivered;
    }

    void deliver(const datagram& d) {
        if (d.to == server_address_) {
            server_->receive(d.bytes, d.from, now_);
        } else if (const auto it = clients_.find(d.to); it != clients_.end()) {
            it->second.client->receive(d.bytes, d.from, now_);
        }
    }

    /// Advances time by `step` at a time up to `total`, running every timer and pumping in between.
    void run(clock::duration total, clock::duration step = 10ms) {
        for (clock::duration t{}; t < total; t += step) {
            now_ += step;
            server_->update(now_);
            for (auto& [address, c] : clients_) {
                c.client->update(now_);
            }
            pump();
        }
    }

    /// Runs until `done()` or `limit` of simulated time passed; whether done() became true.
    bool run_until(const std::function<bool()>& done, clock::duration limit = 10s,
                   clock::duration step = 10ms) {
        for (clock::duration t{}; t < limit; t += step) {
            if (done()) {
                return true;
            }
            run(step, step);
        }
        return done();
    }

    /// Connects a client with a fresh token; whether both sides saw the connection.
    bool connect(client_core& client, std::uint64_t client_id = 42) {
        if (!client.connect(token(client_id), now_)) {
            return false;
        }
        pump();
        return run_until([&] { return client.state() == client_state::connected; }, 3s);
    }

    server_core& server() { return *server_; }
    server_events& server_events_log() { return server_events_; }
    const net_address& server_address() const { return server_address_; }

    /// The first half of a handshake done by hand: `token`'s request from `from`, and the challenge the
    /// server answers with, opened (nullopt if the server sent anything else).
    std::optional<challenge_data> challenge_for(const connect_token& token, const net_address& from) {
        server_->receive(write_connection_request(token), from, now_);
        if (queue_.size() != 1) {
            return std::nullopt;
        }
        const auto packet = queue_.front().bytes;
        queue_.clear();
        const auto header = read_datagram_header(packet);
        std::array<std::uint8_t, max_datagram_bytes> plain{};
        const auto size = header
                              ? open_packet(*header, packet, token.server_to_client_key, test_protocol, plain)
                              : std::nullopt;
        if (!size) {
            return std::nullopt;
        }
        const auto challenge = read_challenge(std::span{plain}.first(*size));
        return challenge ? std::optional{*challenge} : std::nullopt;
    }
    clock::time_point& now() { return now_; }
    std::uint64_t& unix_time() { return unix_; }
    std::deque<datagram>& queue() { return queue_; }
    std::vector<datagram>& log() { return log_; }
    const key& private_key() const { return key_; }
    std::uint64_t dropped(drop_reason reason) const { return server_->counters().dropped.value(reason); }

    std::function<bool(datagram&)> filter;

private:
    struct client_slot {
        std::unique_ptr<client_core> client;
        std::unique_ptr<client_events> events;
    };

    net_address server_address_;
    clock::time_point now_;
    std::uint64_t unix_;
    key key_{};
    server_events server_events_;
    std::unique_ptr<server_core> server_;
    std::map<net_address, client_slot> clients_;
    std::deque<datagram> queue_;
    std::vector<datagram> log_;
};

} // namespace ecsnet::transport::testing
