#pragma once

// One client's UDP connection (a client_link), authenticated and encrypted by the transport
// (transport::udp_server): every Envelope is one transport message. Control messages go on the reliable
// channel (Pong, which is only worth its freshness, on the unreliable one); snapshots on the unreliable
// one, each tick, except full states, which go reliably (a big state must not depend on every fragment
// arriving); the client's Inputs arrive on the redundant channel, its Acks and Pings on the unreliable one.
// A Disconnect is the transport's disconnect, whose code is the v1::DisconnectReason.
//
// Timers: the ClientHello must arrive within the handshake timeout; silence is the transport's timeout.
// Everything runs on the server's network thread.

#include <chrono>
#include <memory>
#include <span>
#include <string>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <ecsnet/transport/server_handler.hpp>

#include "client_link.hpp"

namespace ecsnet::server {

class udp_listener;

class udp_connection final : public client_link, public std::enable_shared_from_this<udp_connection> {
public:
    udp_connection(asio::io_context& io, udp_listener& listener, connection_handler& handler,
                   transport::connection_id id, std::string remote,
                   std::chrono::milliseconds handshake_timeout);

    /// Starts the handshake timer.
    void start();

    [[nodiscard]] std::string_view transport() const noexcept override { return "udp"; }
    void send(const v1::Envelope& message) override;
    void want_snapshot() override;
    void prefetch_send() const noexcept override;
    void disconnect(v1::DisconnectReason reason, std::string message) override;
    void abort() override;
    void handshake_done() override;
    [[nodiscard]] link_measures measures() const override;
    [[nodiscard]] std::size_t wire_bytes(const outgoing_snapshot& snapshot) const noexcept override;

    [[nodiscard]] transport::connection_id id() const noexcept { return id_; }

    /// From the listener: a message of the client.
    void received(transport::channel ch, std::span<const std::byte> bytes);
    /// From the listener: the transport ended the connection (whoever decided).
    void closed(const transport::disconnect_info& info);

private:
    void send_bytes(transport::channel ch, std::string_view bytes);
    void leave();

    udp_listener& listener_;
    connection_handler& handler_;
    transport::connection_id id_;
    std::chrono::milliseconds handshake_timeout_;
    asio::steady_timer handshake_timer_;
    std::string scratch_;
    bool closing_{false};
    bool left_{false};
    bool closed_{false};
};

} // namespace ecsnet::server
