#pragma once

// threading::own_thread: what the client's network thread hands to poll() on the game's thread (welcomes,
// snapshots, the end of a session), in arrival order, so that the mirror is touched by the game's thread
// alone. Snapshots beyond `max_snapshots` push out the oldest one waiting: later deltas are built on
// baselines the client acked, which the mirror keeps, so they still apply.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "ecsnet/client/disconnect.hpp"
#include "ecsnet/v1/handshake.pb.h"

namespace ecsnet::client::detail {

struct inbound {
    enum class kind : std::uint8_t { welcome, snapshot, disconnected };
    kind what{};
    std::uint64_t session{};
    v1::ServerWelcome welcome;
    std::string snapshot; // the Envelope's bytes
    disconnect_info disconnect;
};

class inbox {
public:
    explicit inbox(std::size_t max_snapshots);

    void push_welcome(std::uint64_t session, const v1::ServerWelcome& welcome);
    /// Returns whether an older snapshot was dropped to make room.
    bool push_snapshot(std::uint64_t session, std::string_view envelope);
    void push_disconnected(std::uint64_t session, disconnect_info info);
    /// Moves everything waiting into `out` (emptied first), oldest first.
    void take(std::deque<inbound>& out);

private:
    const std::size_t max_snapshots_;
    std::mutex mutex_;
    std::deque<inbound> events_;
    std::size_t snapshots_{};
};

} // namespace ecsnet::client::detail
