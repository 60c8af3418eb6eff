#pragma once

// One client as the game server sees it, whichever transport carries its messages: a TCP connection
// (tcp_connection.hpp) or a UDP one (udp_connection.hpp). Above this line nothing knows which: sessions,
// the tick, flow control and metrics are one code path.
//
// A link delivers each Envelope the client sends to its connection_handler, asks the handler for a snapshot
// when it can carry one, sends control messages so that they arrive (in order), and ends with a reason.
// Everything runs on the server's network thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <ecsnet/ecs/prefetch.hpp>
#include <ecsnet/proto/envelope.hpp>

#include "replicator.hpp"
#include "session.hpp"

namespace ecsnet::server {

/// What a transport measures of one client.
struct link_measures {
    std::size_t unsent_bytes{}; // queued for the client, not yet accepted by the network
    std::uint64_t bytes_sent{}; // on the wire (payloads: frames on TCP, datagrams on UDP)
    std::uint64_t bytes_received{};
    std::optional<double> rtt_ms; // the transport's estimate (UDP), if any
    std::optional<double> loss;   // fraction of packets lost (UDP)
    std::uint64_t resends{};      // reliable messages and fragments sent again (UDP)
};

class client_link;

/// What the server does with a link's events (implemented by game_server).
class connection_handler {
public:
    virtual ~connection_handler() = default;
    /// A transport opened a link (a TCP connection accepted, a UDP connection authenticated).
    virtual void on_opened(std::shared_ptr<client_link> link) = 0;
    /// A decoded Envelope from the client.
    virtual void on_message(client_link& from, v1::Envelope& message) = 0;
    /// The newest snapshot for this client, or nothing when it has nothing new to send.
    virtual std::optional<outgoing_snapshot> next_snapshot(client_link& to) = 0;
    /// The client left the game (the server decided to disconnect it, or the transport lost it). Once,
    /// before on_closed.
    virtual void on_left(client_link& left) = 0;
    /// The link is gone; once.
    virtual void on_closed(client_link& closed) = 0;
};

class client_link {
public:
    client_link() = default;
    client_link(const client_link&) = delete;
    client_link& operator=(const client_link&) = delete;
    virtual ~client_link() = default;

    [[nodiscard]] session& state() noexcept { return session_; }
    [[nodiscard]] const session& state() const noexcept { return session_; }
    /// "address:port" of the client.
    [[nodiscard]] const std::string& remote() const noexcept { return remote_; }
    /// Who this is, for the logs: "client 3 'name' (address:port)", or "connection from address:port" before
    /// its hello.
    [[nodiscard]] std::string describe() const {
        if (session_.id == 0) {
            return "connection from " + remote_;
        }
        return "client " + std::to_string(session_.id) + " '" + session_.name + "' (" + remote_ + ")";
    }
    /// "tcp" or "udp".
    [[nodiscard]] virtual std::string_view transport() const noexcept = 0;

    /// Sends a control message (welcome, pong...): delivered in order, or the link ends.
    virtual void send(const v1::Envelope& message) = 0;
    /// The client should get the newest snapshot: now, or as soon as its transport can carry it.
    virtual void want_snapshot() = 0;
    /// Asks for what want_snapshot() will read of the transport's state without waiting for it: the tick
    /// sends to a thousand links in turn, each cold in cache, and asks a few links ahead. Only a hint.
    virtual void prefetch_send() const noexcept {}
    /// Asks for this object's lines, the session's and those of the first members of the derived link
    /// (where a link keeps what prefetch_send() reads), without waiting for them: the step before
    /// prefetch_send(), whose virtual call reads the object.
    void prefetch_object() const noexcept { prefetch_bytes(this, sizeof(client_link) + 64); }
    /// Tells the client why, then ends the link. Idempotent.
    virtual void disconnect(v1::DisconnectReason reason, std::string message) = 0;
    /// Ends the link without telling the client (it already said it left).
    virtual void abort() = 0;
    /// The handshake completed: the link's handshake timer stops.
    virtual void handshake_done() = 0;
    [[nodiscard]] virtual link_measures measures() const = 0;
    /// Bytes a snapshot takes on the wire (headers included), for budgets.
    [[nodiscard]] virtual std::size_t wire_bytes(const outgoing_snapshot& snapshot) const noexcept = 0;

protected:
    session session_;
    std::string remote_;
};

} // namespace ecsnet::server
