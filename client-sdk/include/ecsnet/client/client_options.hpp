#pragma once

// The settings of a client. Every field has a working default; a game usually sets `name` and, if it does
// not call poll() from its loop, `threading`.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ecsnet::client {

/// Where a client that owns its io_context does its network work (see client.hpp, "Three ways to run").
enum class threading : std::uint8_t {
    poll,       // on the thread that calls poll(), inside poll(): no thread of its own
    own_thread, // on a thread of its own; snapshots are still applied inside poll()
};

struct client_options {
    /// Shown in the server's logs and player lists (the server keeps at most 64 bytes).
    std::string name{"ecsnet-client"};
    /// Opaque credentials for the server's transport (ClientHello.connect_token).
    std::string connect_token;

    threading mode{threading::poll};

    /// A thin client reads only each snapshot's header and acks it, without mirroring anything (load tests:
    /// the server does a full client's work, the client almost none). registry() stays empty.
    bool thin{false};
    /// The most the client wants to receive, kilobits per second (0: the server's default); servers that
    /// manage interest fit each snapshot to the smaller of this and their own budget.
    std::uint32_t max_receive_kbps{0};

    /// Resolving the host and opening the TCP connection: connect_failed after this long.
    std::chrono::milliseconds connect_timeout{5000};
    /// From the TCP connection to the ServerWelcome: handshake_timeout after this long.
    std::chrono::milliseconds handshake_timeout{5000};
    /// Nothing received from the server for this long: timeout. The server sends a snapshot every tick.
    std::chrono::milliseconds idle_timeout{10'000};
    /// How often a Ping measures the round-trip time (and keeps the session alive).
    std::chrono::milliseconds ping_interval{1000};
    /// After close(): how long the Disconnect(CLIENT_QUIT) may take to leave before the socket closes.
    std::chrono::milliseconds close_grace{500};

    /// Interpolation runs this far behind the estimated server time (render_time()).
    std::chrono::microseconds interpolation_delay{100'000};
    /// Window of the per-second rates of stats() (bytes in and out, snapshots).
    std::chrono::milliseconds rate_window{2000};

    /// Largest frame accepted from the server, checked on its length prefix (protocol_error beyond).
    std::size_t max_frame_size{std::size_t{1} << 20};
    /// Bytes queued for the server beyond which send_input() refuses new inputs (a stalled connection).
    std::size_t max_unsent_bytes{std::size_t{1} << 20};
    /// Largest input payload send_input() accepts (the server refuses more than 1024 bytes).
    std::size_t max_input_size{1024};
    /// own_thread mode: received snapshots waiting for poll() beyond which the oldest are dropped
    /// (stats().snapshots_dropped); later deltas still apply, against the baselines the client acked.
    std::size_t max_pending_snapshots{64};

    /// The most applied states the mirror keeps as delta baselines (it keeps fewer when the server's
    /// baselines allow: proto/mirror.hpp).
    std::size_t mirror_depth{32};
    /// Applied states copied for interpolation (interpolation.hpp): enough to reach interpolation_delay
    /// back with some to spare (10 ticks: 333 ms at 30 Hz). Each costs a copy of the replicated state per
    /// snapshot; 0 turns interpolation off (sample() then gives the mirror's current components), which
    /// suits headless clients such as bots.
    std::size_t interpolation_states{10};
};

} // namespace ecsnet::client
