#pragma once

// Helpers for the tests of udp_server and udp_client on real sockets over 127.0.0.1: one io_context run
// by the test thread in short slices, event recorders, a raw UDP socket for speaking the protocol by hand.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/endpoint.hpp"
#include "ecsnet/transport/udp_client.hpp"
#include "ecsnet/transport/udp_server.hpp"
#include "transport_harness.hpp"

namespace ecsnet::transport::testing {

/// Runs `io` until `done()` or `limit` (real time); whether done() became true.
inline bool run_until(asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds{5}) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        io.restart();
        io.run_for(std::chrono::milliseconds{2});
    }
    return true;
}

inline void run_for(asio::io_context& io, std::chrono::milliseconds duration) {
    run_until(
        io, [] { return false; }, duration);
}

inline udp_server_options local_server_options(std::size_t max_clients = 8) {
    udp_server_options options;
    options.bind_address = "127.0.0.1";
    options.port = 0;
    options.config.protocol_id = test_protocol;
    options.config.private_key = generate_key();
    options.config.max_clients = max_clients;
    return options;
}

inline connect_token token_for(const udp_server& server, const key& private_key, std::uint64_t client_id,
                               std::uint32_t timeout_seconds = 5) {
    token_params params;
    params.protocol_id = test_protocol;
    params.client_id = client_id;
    params.server_addresses = {server.local_address()};
    params.timeout_seconds = timeout_seconds;
    params.user_data[0] = static_cast<std::uint8_t>(client_id);
    return *issue_token(params, private_key);
}

/// A plain UDP socket bound to 127.0.0.1 (or another loopback address): speaks to the server by hand.
class raw_socket {
public:
    explicit raw_socket(asio::io_context& io, const std::string& address = "127.0.0.1")
        : socket_{io, asio::ip::udp::endpoint{asio::ip::make_address(address), 0}} {
        socket_.non_blocking(true);
    }
    void send(const std::vector<std::uint8_t>& bytes, const net_address& to) {
        asio::error_code ec;
        socket_.send_to(asio::buffer(bytes), *to_endpoint(to, asio::ip::udp::v4()), 0, ec);
    }
    template<std::size_t N>
    void send(const std::array<std::uint8_t, N>& bytes, const net_address& to) {
        send(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), to);
    }
    /// Every datagram waiting (non-blocking).
    std::vector<std::vector<std::uint8_t>> drain() {
        std::vector<std::vector<std::uint8_t>> out;
        std::array<std::uint8_t, 2048> buffer{};
        asio::ip::udp::endpoint from;
        while (true) {
            asio::error_code ec;
            const auto size = socket_.receive_from(asio::buffer(buffer), from, 0, ec);
            if (ec) {
                break;
            }
            out.emplace_back(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(size));
        }
        return out;
    }
    [[nodiscard]] net_address address() const { return from_endpoint(socket_.local_endpoint()); }

private:
    asio::ip::udp::socket socket_;
};

} // namespace ecsnet::transport::testing
