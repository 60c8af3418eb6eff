#pragma once

// Two non-blocking UDP sockets on 127.0.0.1 (ports picked by the kernel), and a bounded receive loop, for
// the tests of the datagram batches and their sender thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

#include "ecsnet/transport/datagram_batch.hpp"

namespace ecsnet::transport::testing {

struct loopback_socket_pair {
    asio::io_context io;
    asio::ip::udp::socket sender{io, asio::ip::udp::endpoint{asio::ip::make_address("127.0.0.1"), 0}};
    asio::ip::udp::socket receiver{io, asio::ip::udp::endpoint{asio::ip::make_address("127.0.0.1"), 0}};

    explicit loopback_socket_pair(int receive_buffer_bytes = 1 << 20) {
        receiver.set_option(asio::socket_base::receive_buffer_size{receive_buffer_bytes});
        sender.non_blocking(true);
        receiver.non_blocking(true);
    }
};

/// Receives from a non-blocking socket until `count` datagrams came or `limit` passed.
inline std::vector<std::vector<std::uint8_t>>
receive_all(asio::ip::udp::socket& socket, std::size_t count,
            std::chrono::milliseconds limit = std::chrono::seconds{1}) {
    incoming_batch incoming;
    std::vector<std::vector<std::uint8_t>> got;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (got.size() < count && std::chrono::steady_clock::now() < deadline) {
        const auto n = incoming.receive(
            socket, [&](std::span<const std::uint8_t> datagram, const asio::ip::udp::endpoint&) {
                got.emplace_back(datagram.begin(), datagram.end());
            });
        if (n == 0) {
            std::this_thread::sleep_for(std::chrono::microseconds{200});
        }
    }
    return got;
}

} // namespace ecsnet::transport::testing
