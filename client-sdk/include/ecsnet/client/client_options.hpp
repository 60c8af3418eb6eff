#pragma once

// The settings of a client. Every field has a working default; a game usually sets `name`, the
// `connect_token` its backend issued and, if it does not call poll() from its loop, `threading`.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <ecsnet/transport/sim_config.hpp>

namespace ecsnet::client {

/// How a client reaches its server (docs/protocol.md: sections 1 to 8 over TCP, 9 and 10 over UDP).
enum class transport_kind : std::uint8_t {
    udp, // datagrams with connect tokens, encryption and three channels (transport/): the production path
    tcp, // one TCP stream of length-prefixed frames: for networks that block UDP, and for debugging
};

/// The ecsnet game protocol's id in connect tokens: the default of ecsnet-server (--protocol-id) and of
/// `ecsnet-token issue`. A token for another protocol id is refused by the server.
inline constexpr std::uint64_t default_protocol_id = 0x4543534E45540001ULL; // "ECSNET", 1

/// Where a client that owns its io_context does its network work (see client.hpp, "Three ways to run").
enum class threading : std::uint8_t {
    poll,       // on the thread that calls poll(), inside poll(): no thread of its own
    own_thread, // on a thread of its own; snapshots are still applied inside poll()
};

/// The largest input payload that fits a redundant-channel message (256 bytes) inside its Envelope and
/// Input (at most 18 bytes of tags, lengths and varints).
inline constexpr std::size_t max_udp_input_size = 256 - 18;

struct client_options {
    /// Shown in the server's logs and player lists (the server keeps at most 64 bytes).
    std::string name{"ecsnet-client"};
    /// The connect token the studio's backend issued (docs/client.md, "Connecting with a token"): its
    /// 2,048-byte serialized form or its base64 text (2,731 characters; whitespace ignored). Over UDP it
    /// opens the connection (to the servers it names; connect(host, port) then ignores host and port);
    /// empty, the client makes a development token for host:port itself, which only a server started with
    /// --insecure-dev accepts. Over TCP its 2,048 bytes go in ClientHello.connect_token (bytes that do not
    /// read as a token are sent as they are); empty, nothing is sent (development servers accept that).
    std::string connect_token;
    /// UDP (default) or TCP.
    transport_kind transport{transport_kind::udp};
    /// The protocol id of the development tokens the client makes (UDP without connect_token).
    std::uint64_t protocol_id{default_protocol_id};
    /// UDP only: a network simulator on the client's socket, both ways (loss, latency, jitter, duplicates,
    /// reordering; transport/sim_config.hpp). Off by default.
    ecsnet::transport::sim_config simulator{};

    threading mode{threading::poll};
    /// client(io_context&, ...) only: the application promises that one thread alone runs that io_context
    /// (ecsnet-bots runs one per thread). The client's handlers then run on the io_context's own executor
    /// rather than on a strand of it: the one thread already runs them one at a time, and the strand cost
    /// a lock and a hand-over per handler (bench/RESULTS.md, twenty-fourth pass: 3,000 of a thin bot's
    /// 19,000 instructions a snapshot).
    /// Calls from other threads stay safe (they are posted). Ignored by the other constructor.
    bool single_threaded_io{false};

    /// A thin client reads only each snapshot's header and acks it, without mirroring anything (load tests:
    /// the server does a full client's work, the client almost none). registry() stays empty; on_snapshot
    /// reports each acked header (tick, server time, full_state; no entity counts).
    bool thin{false};
    /// Client-side prediction (prediction.hpp): the client asks the server for an InputStatus each tick
    /// (how early its inputs arrive) and a prediction attached to it runs ahead of the server. Off: a
    /// prediction attached only sends the inputs, for the tick the client sees, and draws the server's state.
    bool prediction{false};
    /// The most the client wants to receive, kilobits per second (0: the server's default); servers that
    /// manage interest fit each snapshot to the smaller of this and their own budget.
    std::uint32_t max_receive_kbps{0};

    /// Resolving the host and opening the connection (TCP: connecting the socket; UDP: the transport's
    /// handshake, each server address of the token getting this long): connect_failed after this long.
    std::chrono::milliseconds connect_timeout{5000};
    /// From the open connection to the ServerWelcome: handshake_timeout after this long.
    std::chrono::milliseconds handshake_timeout{5000};
    /// No message received from the server for this long: timeout. The server sends a snapshot every tick.
    /// Development tokens (UDP) carry it, rounded up to whole seconds, as the transport's timeout.
    std::chrono::milliseconds idle_timeout{10'000};
    /// How often a Ping measures the round-trip time (and keeps the session alive).
    std::chrono::milliseconds ping_interval{1000};
    /// After close(): how long the Disconnect(CLIENT_QUIT) may take to leave before the socket closes (UDP:
    /// only with the simulator on, whose delayed datagrams still have to leave).
    std::chrono::milliseconds close_grace{500};

    /// Interpolation runs this far behind the estimated server time (render_time()).
    std::chrono::microseconds interpolation_delay{100'000};
    /// Window of the per-second rates of stats() (bytes in and out, snapshots).
    std::chrono::milliseconds rate_window{2000};

    /// TCP: the largest frame accepted from the server, checked on its length prefix (protocol_error
    /// beyond). UDP: the transport's limits apply (a message of at most 256 kB).
    std::size_t max_frame_size{std::size_t{1} << 20};
    /// TCP: bytes queued for the server beyond which send_input() refuses new inputs (a stalled
    /// connection). UDP: inputs are never refused for this; the transport keeps the newest 32 unacked ones
    /// (stats().inputs_overflowed counts those pushed out).
    std::size_t max_unsent_bytes{std::size_t{1} << 20};
    /// Largest input payload send_input() accepts (the server refuses more than 1024 bytes). Over UDP an
    /// Input rides the redundant channel, whose messages hold at most 256 bytes: payloads above
    /// max_udp_input_size are refused.
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
