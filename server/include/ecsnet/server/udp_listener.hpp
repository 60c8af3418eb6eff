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
#include "envelope_decoder.hpp"
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

    /// The decoder a connection decodes a message with, until the handle goes: the listener's own, shared by
    /// its connections, which are all handled on its io thread one message at a time. One decoder's arena
    /// block stays in cache where a thousand connections' own blocks were each cold at every datagram
    /// (bench/RESULTS.md, thirteenth pass). Should a message be decoded while another is still handled
    /// (nothing does that today), the second gets a decoder of its own, so the first stays valid.
    class borrowed_decoder {
    public:
        explicit borrowed_decoder(udp_listener& listener);
        ~borrowed_decoder();
        borrowed_decoder(const borrowed_decoder&) = delete;
        borrowed_decoder& operator=(const borrowed_decoder&) = delete;
        envelope_decoder& operator*() noexcept { return own_ ? *own_ : listener_.decoder_; }
        envelope_decoder* operator->() noexcept { return &**this; }

    private:
        udp_listener& listener_;
        std::unique_ptr<envelope_decoder> own_; // when the listener's was in use
    };
    [[nodiscard]] borrowed_decoder borrow_decoder() { return borrowed_decoder{*this}; }

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
    envelope_decoder decoder_;
    bool decoder_in_use_{false};
};

} // namespace ecsnet::server
