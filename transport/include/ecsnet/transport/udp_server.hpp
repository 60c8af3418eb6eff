#pragma once

// The server's UDP socket (Asio): a server_core on one socket, on an io_context its owner runs. It
// receives every datagram into the core, sends what the core writes (non-blocking: a datagram the socket
// buffer cannot take is lost, counted in send_failures, as the network could lose it), and runs the core's
// timers. With a sim_config, outgoing and incoming datagrams pass through a net_simulator each (loss,
// latency, jitter, duplication, reordering) for testing the game under bad networks.
//
// Threads: everything runs on the io_context's thread(s) through one strand-free socket, so run the
// io_context on one thread, and call the server's methods from that thread (from a server_handler
// callback, a timer, or asio::post). The counters are atomics, readable from anywhere. With send_thread
// (the default) the sealed datagrams leave through a thread of the server's own (batch_sender.hpp), all
// those a handler writes once it returns.
//
//   asio::io_context io;
//   udp_server server{io, options, handler};   // binds now; throws std::system_error if it cannot
//   server.start();                            // receive loop and timers
//   io.run();

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>

#include "net_simulator.hpp"
#include "server_core.hpp"

namespace ecsnet::transport {

struct udp_server_options {
    std::string bind_address{"0.0.0.0"}; // "::" for dual-stack IPv6 and IPv4
    std::uint16_t port{0};               // 0: any free port (tests)
    server_config config;
    /// The network simulator on both paths; unset or !enabled(): none.
    std::optional<sim_config> simulator;
    /// How often the core's timers run (keep-alives, timeouts, resends, acks).
    std::chrono::milliseconds update_interval{5};
    /// Kernel socket buffers (a burst of datagrams waits here between two reads).
    int receive_buffer_bytes{4 << 20};
    int send_buffer_bytes{4 << 20};
    /// Hand the datagrams to the kernel on a thread of their own (batch_sender.hpp), so that the owner's
    /// thread does not wait for sendmmsg(2); false: on the io_context's thread. Linux only.
    bool send_thread{true};
    /// Read the socket on a timer, this often, instead of as each datagram arrives: the datagrams that come
    /// meanwhile are taken together, in one wake-up of the thread instead of one or a few each (4,000
    /// wake-ups a second at 1,000 clients). A read that stops at its rounds' limit goes on at once; after
    /// 100 reads in a row found nothing, the server reads every update_interval until a datagram comes (an
    /// idle server wakes as often as its timers). A datagram waits in the socket up to the interval, so
    /// the RTT its peer measures may grow by as much (half of it on average). An owner that must see what
    /// arrived by some moment calls receive_waiting() then (the game server, as its tick starts). Zero:
    /// read each datagram as it arrives.
    std::chrono::microseconds receive_interval{1000};
};

class batch_sender;
class incoming_batch;
class outgoing_batch;

class udp_server {
public:
    /// Binds the socket. Throws std::system_error when it cannot, std::invalid_argument when the config
    /// names no public address and the socket is bound to a wildcard (0.0.0.0, ::).
    udp_server(asio::io_context& io, udp_server_options options, server_handler& handler);
    ~udp_server();
    udp_server(const udp_server&) = delete;
    udp_server& operator=(const udp_server&) = delete;

    /// Starts receiving and the timers.
    void start();
    /// Stops receiving and the timers and closes the socket (connections are dropped silently: call
    /// disconnect_all first to tell the clients). The pending callbacks of the io_context see it closed.
    void stop();
    /// Takes every datagram waiting in the socket now (at most the rounds of one wake-up), and sends the
    /// replies: what has arrived is then handled, whatever the receive_interval.
    void receive_waiting();

    [[nodiscard]] net_address local_address() const { return local_; }
    [[nodiscard]] std::uint16_t port() const noexcept { return local_.port; }

    send_status send(connection_id id, channel ch, std::span<const std::byte> message);
    void flush(connection_id id);
    void flush_all();
    /// Asks for what send() and flush() to `id` will read (server_core::prefetch_send). Only a hint.
    void prefetch_send(connection_id id) const noexcept { core_->prefetch_send(id); }
    bool disconnect(connection_id id, std::uint8_t code, std::string_view message,
                    std::uint16_t retry_after_s = 0);
    void disconnect_all(std::uint8_t code, std::string_view message, std::uint16_t retry_after_s = 0);

    [[nodiscard]] std::optional<connection_stats> stats(connection_id id) const;
    [[nodiscard]] std::optional<connection_info> info(connection_id id) const { return core_->info(id); }
    [[nodiscard]] std::size_t connection_count() const noexcept { return core_->connection_count(); }
    [[nodiscard]] const server_counters& counters() const noexcept { return core_->counters(); }
    [[nodiscard]] server_table_sizes table_sizes() const noexcept { return core_->table_sizes(); }
    /// Whether this server accepts development tokens (dev_key.hpp): the owner warns at start.
    [[nodiscard]] bool uses_dev_key() const noexcept { return core_->uses_dev_key(); }
    /// The core, for what the wrappers above do not cover.
    [[nodiscard]] server_core& core() noexcept { return *core_; }

private:
    void receive();
    [[nodiscard]] bool reads_on_timer() const noexcept {
        return options_.receive_interval > std::chrono::microseconds::zero();
    }
    void read_after(std::chrono::microseconds delay);
    // Reads what waits, a batch at a time, in bounded rounds (the timers and the tick get their turn);
    // returns how many datagrams it read.
    std::size_t read_waiting();
    // The most read_waiting() reads at once.
    static constexpr std::size_t read_rounds = 8;
    void arm_timer();
    void on_timer();
    void transmit(const net_address& to, std::span<const std::uint8_t> datagram);
    void send_now(const net_address& to, std::span<const std::uint8_t> datagram);
    // Sets a full outgoing_ aside for the handler's end, or sends it now (without a sending thread, or with
    // no empty batch left).
    void set_aside_full_batch();
    void flush_outgoing();
    void stop_sending();

    udp_server_options options_;
    // With a receive_interval the socket is opened on an io_context nobody runs: a datagram's arrival then
    // wakes no thread (with the socket in the owner's epoll set, each one did, whether a read waited or
    // not), and the socket is read on the interval's timer and by receive_waiting().
    asio::io_context quiet_io_;
    asio::ip::udp::socket socket_;
    asio::steady_timer timer_;
    asio::steady_timer receive_timer_; // the receive_interval
    net_address local_;
    asio::ip::udp protocol_{asio::ip::udp::v4()};
    std::unique_ptr<server_core> core_;
    std::optional<basic_net_simulator<net_address>> sim_out_;
    std::optional<basic_net_simulator<net_address>> sim_in_;
    // What the socket received in one call, and what waits to be sent in one (datagram_batch.hpp).
    std::unique_ptr<incoming_batch> incoming_;
    std::unique_ptr<outgoing_batch> outgoing_;
    std::unique_ptr<batch_sender> sender_; // with send_thread: sends the batches outgoing_ fills
    // Batches filled while the current handler runs, oldest first: they leave with the rest when it returns.
    std::vector<std::unique_ptr<outgoing_batch>> filled_;
    bool flush_posted_{false};
    // Reads in a row that found nothing (with a receive_interval): after idle_after_empty_reads of them the
    // server reads at its timers' pace.
    static constexpr std::uint32_t idle_after_empty_reads = 100;
    std::uint32_t empty_reads_{0};
    std::shared_ptr<bool> alive_;
    bool running_{false};
};

} // namespace ecsnet::transport
