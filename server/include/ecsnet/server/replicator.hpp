#pragma once

// How the server turns its history into each client's snapshots: the part of a session that depends on
// whether the server manages interest. Two kinds:
//   world_replicator     every client receives the whole replicated world (Snapshot), clients that acked the
//                        same ticks sharing one encoding (--relevancy-radius 0, or a world without a
//                        spatial layout);
//   interest_replicator  each client receives its own view (ViewSnapshot): the entities relevant to it,
//                        under its bandwidth budget, coded per entity and shared between clients.
// game_server keeps what is common (handshake, flow control, acks' validity, timing) and asks its
// replicator for the rest. Everything runs on the server's network thread, except what a replicator does
// on its own workers inside tick() and prepare().

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <ecsnet/proto/handshake.hpp>
#include <ecsnet/proto/state.hpp>

#include "game_world.hpp"

namespace ecsnet::server {

/// One client's replication state (its replicator's kind).
class client_replication {
public:
    virtual ~client_replication() = default;
};

/// A snapshot ready to send: the frame (length prefix + Envelope) for stream transports, and where its
/// Envelope starts, for datagram transports.
struct outgoing_snapshot {
    std::shared_ptr<const std::string> frame;
    std::size_t envelope_offset{};
    proto::tick_type tick{};
    /// No baseline: a datagram transport sends it reliably (it may be large, and nothing deltas from it
    /// until it arrives).
    bool full_state{};

    [[nodiscard]] std::string_view envelope() const noexcept {
        return std::string_view{*frame}.substr(envelope_offset);
    }
};

/// Why a client cannot be served: a disconnect reason and its message.
struct refusal {
    v1::DisconnectReason reason{};
    std::string message;
};

class replicator {
public:
    virtual ~replicator() = default;

    [[nodiscard]] virtual bool interest_managed() const noexcept = 0;
    /// Once per tick, after the history captured it. `alongside`, when set, is the rest of the tick's work
    /// on what was captured (lag compensation's record): it only reads the registry and the history, and
    /// runs exactly once before tick() returns, on one of the replicator's workers if it has some, while
    /// the replicator brings its own tables up to date (the tick's serial part is shorter by it).
    virtual void tick(proto::tick_type tick, std::uint64_t server_time_us,
                      const std::function<void()>& alongside) = 0;
    void tick(proto::tick_type tick, std::uint64_t server_time_us) { this->tick(tick, server_time_us, {}); }

    /// A client completed its handshake: its state, or why it cannot be served.
    virtual std::unique_ptr<client_replication>
    join(client_id client, entity avatar, const v1::ClientHello& hello, std::optional<refusal>& refused) = 0;
    /// The client left.
    virtual void leave(client_replication& client) = 0;
    /// What the ServerWelcome says of replication.
    virtual void welcome(client_replication& client, v1::ServerWelcome& welcome) = 0;
    /// An Ack the server accepted (an acked tick it sent, or a full-state request).
    virtual void on_ack(client_replication& client, const v1::Ack& ack) = 0;
    /// Once per tick, after tick(), with the clients whose snapshot() the tick asks for next (and sends at
    /// once): a replicator may write their snapshots ahead, in parallel, for snapshot() to hand out. Every
    /// snapshot() of this tick for another client, or for a client whose link could not send it, still works.
    virtual void prepare(std::span<client_replication* const> clients) { static_cast<void>(clients); }
    /// The snapshot of the newest tick for this client, or nothing.
    virtual std::optional<outgoing_snapshot> snapshot(client_replication& client) = 0;
    /// Bytes the client's snapshot took on the wire (budget accounting).
    virtual void sent(client_replication& client, std::size_t wire_bytes) = 0;
};

} // namespace ecsnet::server
