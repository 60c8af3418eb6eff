#pragma once

// Two non-blocking UDP sockets on 127.0.0.1 (ports picked by the kernel), for the tests of the datagram
// batches and their sender thread.

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

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

} // namespace ecsnet::transport::testing
