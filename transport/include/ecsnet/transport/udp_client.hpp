#pragma once

// The client's UDP socket (Asio): a client_core on one socket, on an executor its owner runs (an
// io_context's, or a strand of it: hundreds of bots share a few threads that way). connect() with a token
// starts the handshake; messages arrive through the client_handler; send() and flush() queue and send.
// With a sim_config, outgoing and incoming datagrams pass through a net_simulator each.
//
// The socket is opened for the family of the server address being tried (IPv4 or IPv6), bound to
// `bind_address` when given (tests bind 127.0.0.x), otherwise to any address and port.
//
// Threads: call everything on the executor (from a client_handler callback, or asio::post/dispatch to it).

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <asio/any_io_executor.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>

#include "client_core.hpp"
#include "net_simulator.hpp"

namespace ecsnet::transport {

struct udp_client_options {
    client_config config;
    /// The network simulator on both paths; unset or !enabled(): none.
    std::optional<sim_config> simulator;
    /// The longest the client sleeps between two runs of the core's timers; it wakes earlier whenever the
    /// core has something due (a request resend, a keep-alive, the link's resends and acks, a timeout).
    std::chrono::milliseconds update_interval{50};
    /// A local address to bind ("127.0.0.2"); empty: any.
    std::string bind_address;
    int receive_buffer_bytes{1 << 20};
    int send_buffer_bytes{1 << 20};
};

class udp_client {
public:
    udp_client(asio::any_io_executor executor, udp_client_options options, client_handler& handler);
    ~udp_client();
    udp_client(const udp_client&) = delete;
    udp_client& operator=(const udp_client&) = delete;

    /// Starts connecting (see client_core::connect): the 2,048-byte token, its base64 form, or a token
    /// already read. False when refused at once (error() says why).
    bool connect(std::span<const std::uint8_t> token_bytes);
    bool connect_base64(std::string_view token_text);
    bool connect(const connect_token& token);

    send_status send(channel ch, std::span<const std::byte> message);
    void flush();
    /// New network simulator settings, on both paths, for the datagrams from now on (those held keep their
    /// times); a client without a simulator gets one.
    void configure_simulator(const sim_config& config);
    /// Ends the connection with a reason (redundant disconnect packets when connected); the socket stays
    /// open for a later connect().
    void disconnect(std::uint8_t code, std::string_view message);
    /// Closes the socket and stops the timers (without telling the server: disconnect() first).
    void close();

    [[nodiscard]] client_state state() const noexcept { return core_.state(); }
    /// client_core::delivering().
    [[nodiscard]] bool delivering() const noexcept { return core_.delivering(); }
    [[nodiscard]] client_error error() const noexcept { return core_.error(); }
    [[nodiscard]] const disconnect_info& server_disconnect() const noexcept {
        return core_.server_disconnect();
    }
    [[nodiscard]] connection_stats stats() const { return core_.stats(clock::now()); }
    [[nodiscard]] const drop_counters& dropped() const noexcept { return core_.dropped(); }
    /// The bound local address (unset before the first connect()).
    [[nodiscard]] std::optional<net_address> local_address() const;
    /// Datagrams the socket would not take.
    [[nodiscard]] std::uint64_t send_failures() const noexcept { return send_failures_; }
    [[nodiscard]] client_core& core() noexcept { return core_; }

private:
    void ensure_socket(const net_address& server);
    void receive();
    void arm_timer();
    void on_timer();
    void send_due();
    void transmit(const net_address& to, std::span<const std::uint8_t> datagram);
    void send_now(const net_address& to, std::span<const std::uint8_t> datagram);
    void started();

    asio::any_io_executor executor_;
    udp_client_options options_;
    asio::ip::udp::socket socket_;
    asio::ip::udp socket_protocol_{asio::ip::udp::v4()}; // of the open socket (no getsockname per send)
    asio::steady_timer timer_;
    bool timer_armed_{false};
    clock::time_point timer_due_{};
    client_core core_;
    std::optional<basic_net_simulator<net_address>> sim_out_;
    std::optional<basic_net_simulator<net_address>> sim_in_;
    asio::ip::udp::endpoint sender_;
    std::array<std::uint8_t, 2048> receive_buffer_{};
    std::shared_ptr<bool> alive_;
    std::uint64_t socket_generation_{0};
    bool timer_running_{false};
    bool receiving_{false}; // inside a datagram's handlers: send() leaves the packet to send_due()
    std::uint64_t send_failures_{0};
};

} // namespace ecsnet::transport
