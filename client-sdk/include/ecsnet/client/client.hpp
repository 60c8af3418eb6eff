#pragma once

// The ecsnet client: connects to an ecsnet server over UDP (connect tokens, encryption, three channels:
// transport/) or TCP, performs the handshake, and mirrors the server's replicated entities into a
// registry the game reads with ordinary views.
//
//   ecsnet::client::client net{ecsnet::arena::replicated_schema(), {.name = "player"}};
//   net.registry().on_construct<ecsnet::proto::net_id>().connect([](ecsnet::registry&, ecsnet::entity e)
//   {...});
//   net.connect(token_from_backend);           // or net.connect("127.0.0.1", 7777) on a development server
//   while (running) {
//       net.poll();                                   // all pending network work, never blocks
//       net.registry().view<const Transform>().each(...);
//       if (auto me = net.sample<Transform>(net.own_entity())) { draw(*me); }   // interpolated
//       net.send_input(ecsnet::arena::encode(move));
//   }
//
// Protocol (docs/protocol.md): ClientHello -> ServerWelcome, then one Snapshot per server tick, each applied
// atomically to the mirror (proto/mirror.hpp) and answered with an Ack (a full-state request after an
// unknown baseline or a checksum mismatch); a Ping about every second feeds the server clock; Inputs
// carry the game's payload with increasing sequence numbers. Over UDP every message is one transport
// message: the hello reliable, acks and pings unreliable, inputs redundant (repeated in every packet until
// acked, so a lost packet loses no input); leaving is the transport's disconnect with a reason code. Over
// TCP: one write in flight, TCP_NODELAY, frames of at most client_options::max_frame_size checked on their
// length prefix. Nothing the server sends can crash the client: bad bytes end the session with
// protocol_error.
//
// The mirror: registry() holds one local entity per replicated server entity, carrying its replicated
// components and a proto::net_id. React to arrivals with on_construct<net_id>, to departures with
// on_destroy<net_id>, to changes with on_update<Component>. The game may add components of its own to
// mirrored entities but must not destroy them or remove their replicated components. own_entity() is the
// avatar the server gave this client. After a disconnect the mirror keeps the last state; the welcome of
// the next connection clears it, and that connection starts from a full state.
//
// Three ways to run:
//  1. threading::poll (default): the client owns an io_context and poll() runs it: every handler, the
//     application of snapshots and every callback happen inside poll(), on the calling thread. No thread.
//  2. threading::own_thread: the client's thread does the socket work (reads, frame decoding, writes,
//     pings, timers); snapshots are queued and applied inside poll() only, so the mirror is touched by the
//     thread that calls poll() alone and needs no lock. Callbacks run inside poll() too.
//  3. client(io_context&, ...): the client runs on the application's io_context, whose threads the
//     application runs (one process can host thousands of clients on a few threads). All of one client's
//     handlers run on its strand (get_executor()), serially; snapshots are applied there as they arrive,
//     and callbacks run there. poll() does nothing.
//
// Thread safety:
//  - From any thread, in every mode: connect(), close(), send_input(), state(), disconnect_reason(),
//    disconnect_message(), last_disconnect(), stats(), server_time_us(), render_time_us(). (connect(),
//    close() and send_input() hand their work to the client's strand; in poll mode, a call from the thread
//    that calls poll() runs at once.)
//  - The mirror and what reads it (registry(), mirror(), own_entity(), own_net_entity(), client_id(),
//    tick_rate(), server_epoch_unix_us(), interpolation_buffer(), window(), sample()): modes 1 and 2, the
//    thread that calls poll(), outside poll() or in callbacks; mode 3, the client's strand only (callbacks,
//    or work posted to get_executor()).
//  - Set callbacks before connect().
//
// Lifetime: the schema must outlive the client. Destroying the client sends CLIENT_QUIT when connected; with
// an owned io_context it waits up to close_grace for it to leave, then stops. On an application io_context
// the client's internals live on until its pending handlers have run (the io_context must run, or be
// destroyed, afterwards); no callback is called once the destructor returns.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/strand.hpp>

#include "ecsnet/ecs/entity.hpp"
#include "ecsnet/ecs/registry.hpp"
#include "ecsnet/proto/mirror.hpp"
#include "ecsnet/proto/schema.hpp"
#include "ecsnet/proto/state.hpp"
#include "ecsnet/proto/view_mirror.hpp"

#include "client_options.hpp"
#include "disconnect.hpp"
#include "interpolation.hpp"
#include "stats.hpp"

namespace ecsnet::client {

namespace detail {
class session; // client-sdk/src/session.hpp: everything a connection shares with its pending handlers
} // namespace detail

class client {
public:
    using executor_type = asio::strand<asio::io_context::executor_type>;
    using reason_type = ecsnet::client::disconnect_reason;

    /// A client with an io_context of its own, run by poll() or by its own thread (options.mode).
    explicit client(const proto::schema& schema, client_options options = {});
    /// A client on the application's io_context (mode 3 above; options.mode is ignored).
    client(asio::io_context& io, const proto::schema& schema, client_options options = {});
    client(const client&) = delete;
    client& operator=(const client&) = delete;
    ~client();

    // ---- the connection (thread-safe) -------------------------------------------------------------

    /// Starts connecting to host:port (asynchronously: see state()). Returns false, doing nothing, while a
    /// connection is opening or open. Resets stats(). Over UDP it uses options().connect_token when set (the
    /// servers that token names), else a development token it makes for host:port (client_options.hpp).
    bool connect(std::string host, std::uint16_t port);
    /// Starts connecting with a connect token from the studio's backend (its 2,048 bytes or its base64
    /// text) to the servers it names, in order (over TCP as over UDP; TCP sends the token in the hello).
    /// Returns false, doing nothing, while a connection is opening or open. A token that does not read ends
    /// the attempt at once with connect_failed, saying why.
    bool connect(std::string_view token);
    /// Ends the connection: CLIENT_QUIT and `message` to the server (TCP: a Disconnect message; UDP: the
    /// transport's disconnect), then the socket closes.
    /// disconnect_reason() becomes client_quit. Nothing happens if no connection is opening or open.
    void close(std::string message = {});

    [[nodiscard]] client_state state() const;
    /// Why the last connection ended (none while the first one is still open).
    [[nodiscard]] reason_type disconnect_reason() const;
    [[nodiscard]] std::string disconnect_message() const;
    [[nodiscard]] disconnect_info last_disconnect() const;
    [[nodiscard]] client_stats stats() const;

    /// Sends one Input carrying `payload`, with the next sequence number and the client's estimate of the
    /// server tick it is for. Returns false (counted in stats().inputs_refused) when not connected, when
    /// the payload exceeds max_input_size, or when max_unsent_bytes wait to be sent.
    bool send_input(std::string_view payload);
    /// The same, for server tick `client_tick` (prediction.hpp sends each input for the tick it predicted it
    /// at; the server applies it at that tick: docs/protocol.md, section 13).
    bool send_input(std::string_view payload, std::uint32_t client_tick);
    /// The tick an input sent now should name to reach the server `margin_ticks` ticks early: the server
    /// clock's next tick plus half the round trip plus the margin, counted from the newest applied tick.
    [[nodiscard]] std::uint32_t lead_tick(double margin_ticks) const;
    /// Used by prediction.hpp: what it measured, for stats().prediction.
    void report_prediction(const prediction_stats& stats);

    /// UDP: the network simulator's settings (client_options::simulator) for the open connection, from the
    /// next datagram on, both ways: a test or a bot can start or end a bout of loss mid-game. The next
    /// connect() starts from client_options::simulator again. Over TCP it does nothing.
    void set_simulator(const transport::sim_config& config);

    /// Modes 1 and 2: does all pending network work (mode 1) and applies the snapshots received (both),
    /// without blocking. Returns the number of snapshots applied. Mode 3: does nothing.
    std::size_t poll();

    // ---- the mirror (see "Thread safety") ---------------------------------------------------------

    [[nodiscard]] ecsnet::registry& registry() noexcept;
    [[nodiscard]] const ecsnet::registry& registry() const noexcept;
    /// The mirror in use: whole-world snapshots (proto::mirror) or, when the server manages interest, the
    /// client's view (proto::view_mirror; removal_reason_of() says why an entity left).
    [[nodiscard]] proto::replica& mirror() noexcept;
    [[nodiscard]] const proto::replica& mirror() const noexcept;
    /// Whether the server sends interest-managed views (from its ServerWelcome).
    [[nodiscard]] bool interest_managed() const noexcept;
    /// The local entity of this client's avatar, or null_entity (none yet, or none given).
    [[nodiscard]] entity own_entity() const noexcept;
    /// The avatar's server identity, from ServerWelcome.
    [[nodiscard]] std::optional<proto::net_entity> own_net_entity() const noexcept;
    /// ServerWelcome.client_id (0 before the first welcome).
    [[nodiscard]] std::uint32_t client_id() const noexcept;
    [[nodiscard]] std::uint32_t tick_rate() const noexcept;
    /// Unix microseconds of the server's epoch (ServerWelcome.server_epoch_unix_us).
    [[nodiscard]] std::uint64_t server_epoch_unix_us() const noexcept;
    /// The copies of the last applied states that interpolation reads (client_options::interpolation_states).
    [[nodiscard]] const state_buffer& interpolation_buffer() const noexcept;

    /// The estimated server clock now, microseconds since the server's epoch (server_clock.hpp).
    [[nodiscard]] std::int64_t server_time_us() const;
    /// server_time_us() - options().interpolation_delay: the time to render at.
    [[nodiscard]] std::int64_t render_time_us() const;
    /// The applied states around `render_time_us` (interpolation.hpp). Valid until the next snapshot.
    [[nodiscard]] interpolation_window window(std::int64_t render_time_us) const;

    /// Component T of mirrored entity `e` at `render_time_us`, interpolated (interpolation.hpp).
    template<typename T>
    [[nodiscard]] std::optional<T> sample(entity e, std::int64_t render_time_us) const {
        return ecsnet::client::sample<T>(mirror(), window(render_time_us), e);
    }
    /// The same at render_time_us().
    template<typename T>
    [[nodiscard]] std::optional<T> sample(entity e) const {
        return sample<T>(e, render_time_us());
    }

    // ---- callbacks (set before connect(); see "Three ways to run" for where they run) ------------

    /// The server welcomed the client (the mirror was just cleared; own_net_entity() is known).
    void on_connected(std::function<void()> callback);
    /// A snapshot was applied (and acked).
    void on_snapshot(std::function<void(const proto::applied_snapshot&)> callback);
    /// The connection ended, with its reason.
    void on_disconnected(std::function<void(const disconnect_info&)> callback);
    /// A snapshot was refused (not applied; also counted in stats()): the mirror's error, e.g.
    /// checksum_mismatch (a desync: the message names the tick; a full state is requested) or
    /// unknown_baseline.
    void on_snapshot_refused(std::function<void(const proto::error&)> callback);
    /// Used by prediction.hpp: called after a snapshot is applied, before on_snapshot's callback. May be set
    /// or removed (an empty function) at any time, from any thread.
    void on_snapshot_first(std::function<void(const proto::applied_snapshot&)> callback);

    /// The strand every handler of this client runs on.
    [[nodiscard]] executor_type get_executor() const noexcept;
    [[nodiscard]] const client_options& options() const noexcept;

private:
    std::unique_ptr<asio::io_context> own_io_;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    std::shared_ptr<detail::session> session_;
    std::thread thread_;
};

} // namespace ecsnet::client
