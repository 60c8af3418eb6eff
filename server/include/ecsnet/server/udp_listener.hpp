#pragma once

// The server's UDP side: a transport::udp_server (tokens, handshake, encryption, the link) whose
// connections become udp_connections handed to the game server; it routes each message to its connection
// and tells the server of every refused datagram (counted by the transport, logged by the server behind
// its limiter).

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <asio/io_context.hpp>

#include <ecsnet/transport/udp_server.hpp>

#include "client_link.hpp"
#include "udp_connection.hpp"

namespace ecsnet::server {

class udp_listener final : public transport::server_handler {
public:
    using drop_sink = std::function<void(transport::drop_reason, const transport::net_address&)>;

    /// Binds (throws std::system_error if it cannot). Nothing is received before start().
    udp_listener(asio::io_context& io, transport::udp_server_options options, connection_handler& handler,
                 std::chrono::milliseconds handshake_timeout, drop_sink on_drop);
    ~udp_listener() override;

    void start();
    /// Tells every client (code, message), then closes the socket.
    void stop(std::uint8_t code, std::string_view message, std::uint16_t retry_after_s = 0);

    [[nodiscard]] std::uint16_t port() const noexcept { return server_.port(); }
    [[nodiscard]] transport::udp_server& server() noexcept { return server_; }
    [[nodiscard]] const transport::udp_server& server() const noexcept { return server_; }

    // transport::server_handler
    void on_connected(const transport::connection_info& info) override;
    void on_message(transport::connection_id id, transport::channel ch,
                    std::span<const std::byte> message) override;
    void on_disconnected(transport::connection_id id, const transport::disconnect_info& info) override;
    void on_dropped(transport::drop_reason reason, const transport::net_address& from) override;

private:
    asio::io_context& io_;
    connection_handler& handler_;
    std::chrono::milliseconds handshake_timeout_;
    drop_sink on_drop_;
    transport::udp_server server_;
    struct slot {
        transport::connection_id id{};
        std::shared_ptr<udp_connection> connection;
    };
    // Found for every message: by the transport's slot (transport::connection_slot), one array access.
    std::vector<slot> connections_;

    [[nodiscard]] slot* find(transport::connection_id id) noexcept;
    bool stopped_{false};
};

} // namespace ecsnet::server
