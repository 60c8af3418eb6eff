#pragma once

// What a server tells its owner (the game server): a client connected, a message arrived, a connection
// ended (and why, and who decided). Called on the thread running the server; a handler may call the
// server back (send, flush, disconnect) from inside any of them.

#include <cstdint>
#include <span>
#include <string>

#include "address.hpp"
#include "channel.hpp"
#include "connect_token.hpp"
#include "drop_reason.hpp"

namespace ecsnet::transport {

/// A connection's id on its server: never reused while the server runs. Its low 32 bits are the
/// connection's slot (below the server's max_clients, reused once the connection ends), its high 32 bits the
/// slot's generation (from 1, so that no id is 0): an owner may keep its own per-connection state in an
/// array indexed by the slot, as the server does (connection_manager.hpp).
using connection_id = std::uint64_t;

[[nodiscard]] constexpr std::uint32_t connection_slot(connection_id id) noexcept {
    return static_cast<std::uint32_t>(id);
}
[[nodiscard]] constexpr std::uint32_t connection_generation(connection_id id) noexcept {
    return static_cast<std::uint32_t>(id >> 32);
}
[[nodiscard]] constexpr connection_id make_connection_id(std::uint32_t slot,
                                                         std::uint32_t generation) noexcept {
    return (connection_id{generation} << 32) | slot;
}

struct connection_info {
    connection_id id{};
    std::uint64_t client_id{};        // from the connect token: who the backend authenticated
    transport::user_data user_data{}; // from the connect token, opaque to the transport
    net_address remote;
};

enum class closed_by : std::uint8_t {
    peer,  // the other side sent a disconnect
    local, // this side decided: the owner's disconnect(), a timeout, a stalled or broken link (on a server:
           // the server decided; on a client: the client did)
};

struct disconnect_info {
    std::uint8_t code{}; // disconnect_code.hpp's values, or the owner's own
    std::string message; // UTF-8, at most 127 bytes on the wire
    closed_by by{closed_by::local};
    std::uint16_t retry_after_s{0}; // the retry hint of the disconnect packet (0: none)
};

class server_handler {
public:
    virtual ~server_handler() = default;
    virtual void on_connected(const connection_info& info) = 0;
    virtual void on_message(connection_id id, channel ch, std::span<const std::byte> message) = 0;
    virtual void on_disconnected(connection_id id, const disconnect_info& info) = 0;
    /// Every refused datagram, already counted in server_counters::dropped. Per packet: an attacker decides
    /// how often this runs, so log from it only behind a rate limiter. Default: nothing.
    virtual void on_dropped(drop_reason reason, const net_address& from) {
        (void)reason;
        (void)from;
    }
};

} // namespace ecsnet::transport
