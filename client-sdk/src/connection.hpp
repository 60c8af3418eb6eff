#pragma once

// What a session (session.hpp) needs from a transport, TCP or UDP: open a connection to a server, carry
// serialized Envelopes both ways, say when it opened and why it ended, and close it, telling the server why.
//
// Like the connections of Asio's examples, each lives in a shared_ptr that its pending handlers hold, and
// runs on the session's strand. A session opens one connection per connect(); when the session ends it
// close()s it, after which the connection reports nothing more and winds down on its own (a Disconnect
// still leaving, a grace period). It reports to the session through a weak_ptr: a session already gone
// is simply not told.
//
// The wire mapping (docs/protocol.md, sections 1 and 10): TCP sends every Envelope as a length-prefixed
// frame on one stream; UDP sends each as one transport message, on the channel its kind calls for.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <asio/any_io_executor.hpp>
#include <asio/io_context.hpp>
#include <asio/strand.hpp>

#include <ecsnet/transport/connect_token.hpp>
#include <ecsnet/transport/sim_config.hpp>

#include "ecsnet/client/disconnect.hpp"
#include "ecsnet/v1/envelope.pb.h"

namespace ecsnet::client::detail {

/// A strand of the client's io_context (client::executor_type).
using strand_type = asio::strand<asio::io_context::executor_type>;
/// Where every handler of a client runs: its strand, or the io_context's executor itself when one thread
/// alone runs it (client_options::single_threaded_io).
using handler_executor = asio::any_io_executor;

/// What a message is: the transport picks how to send it (UDP: its channel).
enum class outgoing : std::uint8_t {
    hello, // ClientHello: reliable
    ack,   // Ack: unreliable (the next one supersedes a lost one)
    input, // Input: redundant (repeated in every packet until acked)
    ping,  // Ping, and Pong answering the server's Ping: unreliable
};

/// Where a connection goes.
struct connect_target {
    /// A host name or address and a port; empty host: the token's addresses.
    std::string host;
    std::uint16_t port{};
    /// The token to connect with (UDP), read from the options or given to connect(token).
    std::optional<transport::connect_token> token;
};

/// What the UDP transport measures, for the client_stats fields marked "UDP only" (and its RTT).
struct transport_figures {
    std::chrono::microseconds rtt{}; // zero until the first sample
    std::chrono::microseconds rtt_variance{};
    std::chrono::microseconds rtt_min{};
    double packet_loss{};
    std::uint64_t packets_sent{};
    std::uint64_t packets_received{};
    std::uint64_t packets_lost{};
    std::uint64_t resends{};
    std::uint64_t inputs_overflowed{};
    std::uint64_t messages_dropped{};
};

/// What a connection tells its session, on the strand.
class connection_events {
public:
    virtual ~connection_events() = default;
    /// The connection is open: the session sends its ClientHello.
    virtual void on_open() = 0;
    /// One serialized Envelope from the server. `ordered`: it came on an ordered stream or channel (TCP,
    /// UDP reliable), so nothing sent before it can still arrive after it.
    virtual void on_message(std::string_view envelope, bool ordered) = 0;
    /// Bytes from the server that are not the protocol (TCP: a bad frame): the session ends with
    /// protocol_error and tells the server. The connection delivers nothing more unless told otherwise.
    virtual void on_malformed(std::string description) = 0;
    /// The connection ended without the session closing it: refused, lost, timed out, or the server's
    /// disconnect (from_server). Nothing is reported after it.
    virtual void on_closed(disconnect_info info) = 0;
    /// Bytes read from and written to the socket since the last report, and (UDP) what the transport
    /// measured so far.
    virtual void on_traffic(std::uint64_t bytes_in, std::uint64_t bytes_out,
                            const transport_figures* figures) = 0;
};

class connection {
public:
    connection() = default;
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    virtual ~connection() = default;

    /// Starts connecting; on_open or on_closed follows.
    virtual void open(const connect_target& target) = 0;
    /// Queues a message (ignored once closing).
    virtual void send(outgoing kind, const v1::Envelope& message) = 0;
    /// Ends the connection: when `tell_server`, the server hears `reason` (a v1::DisconnectReason value) and
    /// `message`; `quiet` is called once nothing more will leave (at once, or after the last write or a
    /// grace period). Reports nothing to the session afterwards.
    virtual void close(int reason, std::string_view message, bool tell_server,
                       std::function<void()> quiet) = 0;
    /// Closes at once, without a word (the client is being destroyed).
    virtual void abort() = 0;
    /// UDP: the network simulator's settings from now on (client::set_simulator). TCP: nothing.
    virtual void simulate(const transport::sim_config& /*config*/) {}
    /// Bytes waiting to be written (TCP; 0 over UDP, whose inputs never wait behind a stalled stream).
    [[nodiscard]] virtual std::size_t unsent_bytes() const = 0;
    /// Where a connection still not open stands, for the connect timeout's message: ": request_timed_out
    /// (...)", or empty.
    [[nodiscard]] virtual std::string pending_detail() const = 0;
};

} // namespace ecsnet::client::detail
