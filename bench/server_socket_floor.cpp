// The floor under the server's CPU per client per tick (issue 15): what the kernel alone costs a UDP server
// thread for one datagram out and one in per client per tick on this machine, with nothing of ecsnet in
// between. One thread plays both sides on 127.0.0.1: a server socket (4 MiB buffers, as udp_server sets)
// and N client sockets. Per tick:
//   send      the server sends each client one datagram (--out-bytes, default 67: what a thin bot received
//             per tick at 1,000 clients, headers and MAC included), sendmmsg 64 at a time, as
//             transport::outgoing_batch does
//   (clients) each client reads its datagram and sends one back (--in-bytes, default 66); not counted
//   receive   the server takes the N datagrams, recvmmsg 32 at a time, as transport::incoming_batch does
// It prints the thread CPU time of `send` and `receive` per client per tick. On loopback the kernel delivers
// a datagram to its receiving socket in the sender's context, so `send` includes the clients' receive path,
// as the server's figure in bench/loadtest does. What it leaves out, so a lower bound: the epoll wake-ups of
// a server that receives as datagrams arrive, the sender thread's hand-over, and everything ecsnet does.
// Flags: --clients N (default 1000), --ticks T (default 300), --out-bytes B, --in-bytes B.

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "count_flags.hpp"
#include "thread_cpu_clock.hpp"

namespace {

using ecsnet::bench::thread_cpu_seconds;

constexpr std::size_t send_batch = 64;    // transport::outgoing_batch::capacity
constexpr std::size_t receive_batch = 32; // transport::incoming_batch::capacity

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "server_socket_floor: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

// A non-blocking UDP socket bound to 127.0.0.1 on a port the kernel picks; its address in `address`.
int bound_socket(sockaddr_in& address, int buffer_bytes) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fail("socket");
    }
    if (buffer_bytes > 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
    }
    address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        fail("bind");
    }
    socklen_t length = sizeof address;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        fail("getsockname");
    }
    return fd;
}

struct options {
    long clients = 1000;
    long ticks = 300;
    long out_bytes = 67;
    long in_bytes = 66;
};

options parse(int argc, char** argv) {
    options o;
    if (!ecsnet::bench::read_count_flags(argc, argv,
                                         {{"--clients", 1, &o.clients},
                                          {"--ticks", 1, &o.ticks},
                                          {"--out-bytes", 1, &o.out_bytes},
                                          {"--in-bytes", 1, &o.in_bytes}}) ||
        o.out_bytes > 1200 || o.in_bytes > 1200) {
        std::fprintf(stderr, "usage: server_socket_floor [--clients N] [--ticks T] [--out-bytes B] "
                             "[--in-bytes B] (sizes at most 1200)\n");
        std::exit(2);
    }
    return o;
}

} // namespace

int main(int argc, char** argv) {
    const options flags = parse(argc, argv);
    const auto clients_count = static_cast<std::size_t>(flags.clients);
    const auto ticks = static_cast<std::size_t>(flags.ticks);
    const auto out_bytes = static_cast<std::size_t>(flags.out_bytes);
    const auto in_bytes = static_cast<std::size_t>(flags.in_bytes);
    sockaddr_in server_address{};
    const int server = bound_socket(server_address, 4 << 20);
    std::vector<int> clients(clients_count);
    std::vector<sockaddr_in> client_addresses(clients_count);
    for (std::size_t i = 0; i < clients_count; ++i) {
        clients[i] = bound_socket(client_addresses[i], 0);
    }

    std::vector<std::uint8_t> out(out_bytes, 0x5A);
    std::vector<std::uint8_t> in(in_bytes, 0xA5);
    std::array<mmsghdr, send_batch> headers{};
    std::array<iovec, send_batch> iov{};
    std::array<std::array<std::uint8_t, 1500>, receive_batch> receive_buffers{};
    std::array<sockaddr_in, receive_batch> sources{};
    std::array<std::uint8_t, 1500> client_buffer{};

    double send_seconds = 0;
    double receive_seconds = 0;
    double client_seconds = 0;
    std::size_t lost = 0;
    for (std::size_t tick = 0; tick < ticks; ++tick) {
        // The server's snapshots, 64 to a call.
        const double send_start = thread_cpu_seconds();
        for (std::size_t first = 0; first < clients_count; first += send_batch) {
            const std::size_t count = std::min(send_batch, clients_count - first);
            for (std::size_t k = 0; k < count; ++k) {
                iov[k] = {out.data(), out.size()};
                headers[k] = {};
                headers[k].msg_hdr.msg_name = &client_addresses[first + k];
                headers[k].msg_hdr.msg_namelen = sizeof(sockaddr_in);
                headers[k].msg_hdr.msg_iov = &iov[k];
                headers[k].msg_hdr.msg_iovlen = 1;
            }
            std::size_t done = 0;
            while (done < count) {
                const int sent =
                    sendmmsg(server, headers.data() + done, static_cast<unsigned>(count - done), 0);
                if (sent <= 0) {
                    lost += count - done; // a full buffer: counted, as the server counts its send failures
                    break;
                }
                done += static_cast<std::size_t>(sent);
            }
        }
        const double clients_start = thread_cpu_seconds();
        send_seconds += clients_start - send_start;

        // The clients read their snapshot and send an input back (not the server's cost).
        for (std::size_t i = 0; i < clients_count; ++i) {
            while (recv(clients[i], client_buffer.data(), client_buffer.size(), 0) > 0) {
            }
            if (sendto(clients[i], in.data(), in.size(), 0,
                       reinterpret_cast<const sockaddr*>(&server_address), sizeof server_address) < 0) {
                ++lost;
            }
        }
        const double receive_start = thread_cpu_seconds();
        client_seconds += receive_start - clients_start;

        // The server takes the inputs, 32 to a call, until the socket is empty.
        for (;;) {
            for (std::size_t k = 0; k < receive_batch; ++k) {
                iov[k] = {receive_buffers[k].data(), receive_buffers[k].size()};
                headers[k] = {};
                headers[k].msg_hdr.msg_name = &sources[k];
                headers[k].msg_hdr.msg_namelen = sizeof(sockaddr_in);
                headers[k].msg_hdr.msg_iov = &iov[k];
                headers[k].msg_hdr.msg_iovlen = 1;
            }
            const int received = recvmmsg(server, headers.data(), receive_batch, 0, nullptr);
            if (received < static_cast<int>(receive_batch)) {
                break;
            }
        }
        receive_seconds += thread_cpu_seconds() - receive_start;
    }

    const double per = 1e6 / static_cast<double>(clients_count * ticks);
    std::printf(
        "clients %zu, ticks %zu, %zu bytes out and %zu in per client per tick: server send %.2f us, "
        "receive %.2f us, together %.2f us per client per tick (thread CPU); the clients' side %.2f us; "
        "%zu datagrams lost\n",
        clients_count, ticks, out_bytes, in_bytes, send_seconds * per, receive_seconds * per,
        (send_seconds + receive_seconds) * per, client_seconds * per, lost);
    for (const int fd : clients) {
        close(fd);
    }
    close(server);
    return lost == 0 ? 0 : 1;
}
