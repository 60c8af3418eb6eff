#pragma once

// Datagrams sent and received in batches: one sendmmsg(2) for the datagrams a tick sends, one recvmmsg(2)
// for those waiting in the socket, instead of one system call (and, for receiving, one trip through the
// io_context) per datagram. On a server sending a snapshot to each of 1,000 clients 30 times a second the
// calls themselves were a large share of its time (bench/RESULTS.md, "Capacity with interest management").
// Elsewhere than Linux both fall back to one call per datagram.

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <asio/ip/udp.hpp>

#include "ecsnet/transport/protocol.hpp"

#if defined(__linux__)
#include <sys/socket.h>
#endif

namespace ecsnet::transport {

/// Datagrams waiting to be sent; flush() sends them. Not thread-safe.
class outgoing_batch {
public:
    static constexpr std::size_t capacity = 64;

    /// Copies one datagram (at most max_datagram_bytes) for `to`; false when the batch is full (flush
    /// first) or the datagram too big.
    bool add(const asio::ip::udp::endpoint& to, std::span<const std::uint8_t> datagram) noexcept {
        if (count_ == capacity || datagram.size() > max_datagram_bytes) {
            return false;
        }
        auto& slot = slots_[count_++];
        slot.to = to;
        slot.size = datagram.size();
        std::copy(datagram.begin(), datagram.end(), slot.bytes.begin());
        return true;
    }

    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
    [[nodiscard]] bool full() const noexcept { return count_ == capacity; }
    [[nodiscard]] std::size_t size() const noexcept { return count_; }

    /// Sends every datagram in the batch and empties it; returns how many the socket did not take (its
    /// buffer full, or an error: UDP gives no second chance, the caller counts them as failures).
    std::size_t flush(asio::ip::udp::socket& socket) noexcept {
        if (!socket.is_open()) {
            return std::exchange(count_, 0);
        }
#if defined(__linux__)
        return flush(socket.native_handle());
#else
        const std::size_t count = std::exchange(count_, 0);
        std::size_t lost = 0;
        for (std::size_t i = 0; i < count; ++i) {
            asio::error_code ec;
            socket.send_to(asio::buffer(slots_[i].bytes.data(), slots_[i].size), slots_[i].to, 0, ec);
            lost += ec ? 1 : 0;
        }
        return lost;
#endif
    }

#if defined(__linux__)
    /// The same through the socket's descriptor, which another thread may use while the socket's owner
    /// goes on with it (batch_sender.hpp): the owner must not close it meanwhile.
    std::size_t flush(int socket_fd) noexcept {
        const std::size_t count = std::exchange(count_, 0);
        if (count == 0) {
            return 0;
        }
        for (std::size_t i = 0; i < count; ++i) {
            auto& slot = slots_[i];
            iov_[i] = {slot.bytes.data(), slot.size};
            headers_[i] = {};
            headers_[i].msg_hdr.msg_name = slot.to.data();
            headers_[i].msg_hdr.msg_namelen = static_cast<socklen_t>(slot.to.size());
            headers_[i].msg_hdr.msg_iov = &iov_[i];
            headers_[i].msg_hdr.msg_iovlen = 1;
        }
        std::size_t done = 0;
        while (done < count) {
            const int sent = ::sendmmsg(socket_fd, headers_.data() + done,
                                        static_cast<unsigned>(count - done), MSG_DONTWAIT);
            if (sent > 0) {
                done += static_cast<std::size_t>(sent);
                continue;
            }
            if (sent < 0 && errno == EINTR) {
                continue;
            }
            // Would block, or the first remaining datagram failed (ICMP-reported, too big): that one is
            // lost, the others still go.
            if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                ++done;
                ++failed_;
                continue;
            }
            break;
        }
        const std::size_t lost = failed_ + (count - done);
        failed_ = 0;
        return lost;
    }
#endif

private:
    struct slot {
        asio::ip::udp::endpoint to;
        std::size_t size{};
        std::array<std::uint8_t, max_datagram_bytes> bytes{};
    };
    std::array<slot, capacity> slots_{};
    std::size_t count_{0};
    std::size_t failed_{0};
#if defined(__linux__)
    std::array<iovec, capacity> iov_{};
    std::array<mmsghdr, capacity> headers_{};
#endif
};

/// Receives what waits in a non-blocking socket, up to `capacity` datagrams a call.
class incoming_batch {
public:
    /// The default `ahead` of receive(): nothing to ask for.
    struct no_lookahead {
        void operator()(const asio::ip::udp::endpoint&) const noexcept {}
    };

    static constexpr std::size_t capacity = 32;
    static constexpr std::size_t buffer_bytes = 2048; // more than 1,200: an oversized datagram shows as such

    /// Calls f(std::span<const std::uint8_t> datagram, const asio::ip::udp::endpoint& from) for each
    /// datagram received, and before each but the last ahead(const asio::ip::udp::endpoint& from) with the
    /// next one's sender (to ask for its state while this one is handled); returns how many (0: nothing
    /// waiting, or an error, which concerns one datagram).
    template<typename F, typename Ahead = no_lookahead>
    std::size_t receive(asio::ip::udp::socket& socket, F&& f, Ahead&& ahead = {}) {
#if defined(__linux__)
        for (std::size_t i = 0; i < capacity; ++i) {
            iov_[i] = {buffers_[i].data(), buffer_bytes};
            headers_[i] = {};
            headers_[i].msg_hdr.msg_name = from_[i].data();
            headers_[i].msg_hdr.msg_namelen = static_cast<socklen_t>(from_[i].capacity());
            headers_[i].msg_hdr.msg_iov = &iov_[i];
            headers_[i].msg_hdr.msg_iovlen = 1;
        }
        int got = 0;
        do {
            got = ::recvmmsg(socket.native_handle(), headers_.data(), static_cast<unsigned>(capacity),
                             MSG_DONTWAIT, nullptr);
        } while (got < 0 && errno == EINTR);
        if (got <= 0) {
            return 0;
        }
        for (int i = 0; i < got; ++i) {
            from_[i].resize(headers_[i].msg_hdr.msg_namelen);
        }
        for (int i = 0; i < got; ++i) {
            if (i + 1 < got) {
                ahead(std::as_const(from_[i + 1]));
            }
            f(std::span<const std::uint8_t>{buffers_[i].data(), headers_[i].msg_len}, from_[i]);
        }
        return static_cast<std::size_t>(got);
#else
        asio::error_code ec;
        const auto size = socket.receive_from(asio::buffer(buffers_[0]), from_[0], 0, ec);
        if (ec) {
            return 0;
        }
        f(std::span<const std::uint8_t>{buffers_[0].data(), size}, from_[0]);
        return 1;
#endif
    }

private:
    std::array<std::array<std::uint8_t, buffer_bytes>, capacity> buffers_{};
    std::array<asio::ip::udp::endpoint, capacity> from_{};
#if defined(__linux__)
    std::array<iovec, capacity> iov_{};
    std::array<mmsghdr, capacity> headers_{};
#endif
};

} // namespace ecsnet::transport
