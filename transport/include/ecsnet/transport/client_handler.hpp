#pragma once

// What a client tells its owner. Called on the thread (or strand) running the client; a handler may call
// the client back (send, flush, disconnect) from inside any of them.

#include <span>

#include "address.hpp"
#include "channel.hpp"
#include "client_state.hpp"
#include "drop_reason.hpp"
#include "server_handler.hpp"

namespace ecsnet::transport {

class client_handler {
public:
    virtual ~client_handler() = default;
    virtual void on_connected(const net_address& server) { (void)server; }
    virtual void on_message(channel ch, std::span<const std::byte> message) = 0;
    /// The connection attempt failed or the connection ended: `error` says why; for
    /// disconnected_by_server, `info` holds the server's code and message (closed_by::peer).
    virtual void on_disconnected(client_error error, const disconnect_info& info) {
        (void)error;
        (void)info;
    }
    /// Every refused datagram (already counted in client_core::dropped()). Default: nothing.
    virtual void on_dropped(drop_reason reason) { (void)reason; }
    /// After the messages of a received datagram were handed over and what their handlers sent has left
    /// (in one packet): once per datagram, with the client's statistics up to date. Default: nothing.
    virtual void on_delivered() {}
};

} // namespace ecsnet::transport
