#pragma once

// The client's UDP transport: a transport::udp_client (connect tokens, the handshake, encryption, the
// link's three channels, the optional network simulator) on the session's handler executor, carrying each
// Envelope as one message (docs/protocol.md, section 10, and the mapping in connection.hpp).
//
// Connecting: with a token, to the servers it names, in order; without one, the host is resolved (IPv4
// addresses first) and a development token made for those addresses (transport::make_dev_token), which
// only a server started with --insecure-dev accepts. The connect timeout is shared between the token's
// addresses. The transport's errors become disconnect reasons with the transport's name for them in the
// message: a denial for a full server is server_full, the server's disconnect its code (from_server), a
// token refused at once or a server that never answers connect_failed.
//
// Lifetime: the udp_client's handlers hold raw pointers to it, so it is destroyed on the handler executor
// only, in a handler of its own: from open() the connection is held by a wait on `lifetime_`, which
// teardown() cancels and whose handler destroys the udp_client. An io_context destroyed before that handler
// ran destroys it unrun, and the connection with it (Asio's own pattern for connections).

#include <memory>
#include <string>

#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>

#include <ecsnet/transport/udp_client.hpp>

#include "connection.hpp"
#include "ecsnet/client/client_options.hpp"

namespace ecsnet::client::detail {

class udp_connection : public connection,
                       public transport::client_handler,
                       public std::enable_shared_from_this<udp_connection> {
public:
    udp_connection(handler_executor executor, const client_options& options,
                   std::weak_ptr<connection_events> events);
    ~udp_connection() override;

    void open(const connect_target& target) override;
    void send(outgoing kind, const v1::Envelope& message) override;
    void close(int reason, std::string_view message, bool tell_server, std::function<void()> quiet) override;
    void abort() override;
    void simulate(const transport::sim_config& config) override;
    [[nodiscard]] std::size_t unsent_bytes() const override { return 0; }
    [[nodiscard]] std::string pending_detail() const override;

    // transport::client_handler
    void on_connected(const transport::net_address& server) override;
    void on_message(transport::channel ch, std::span<const std::byte> message) override;
    void on_disconnected(transport::client_error error, const transport::disconnect_info& info) override;
    void on_delivered() override;

private:
    void start(const transport::connect_token& token);
    void report_traffic();
    /// Closes the udp_client; a handler of its own destroys it, then lets go of this connection.
    void teardown();

    template<typename Fn>
    void tell(Fn&& fn) {
        if (auto events = events_.lock()) {
            fn(*events);
        }
    }

    handler_executor executor_;
    const std::chrono::milliseconds connect_timeout_;
    const std::chrono::milliseconds idle_timeout_;
    const std::chrono::milliseconds close_grace_;
    const std::uint64_t protocol_id_;
    bool simulated_;
    std::weak_ptr<connection_events> events_;
    asio::ip::udp::resolver resolver_;
    asio::steady_timer close_timer_;
    asio::steady_timer lifetime_; // its pending wait holds this connection, from open() to teardown()
    transport::udp_client_options client_options_;
    std::unique_ptr<transport::udp_client> client_;
    std::string servers_; // the addresses tried, for messages
    std::string scratch_; // each outgoing Envelope, serialized
    std::function<void()> quiet_;
    std::uint64_t reported_in_{0};
    std::uint64_t reported_out_{0};
    bool resolving_{false};
    bool closed_{false};
    bool torn_down_{false};
};

} // namespace ecsnet::client::detail
