#pragma once

// Where a client stands in the protocol, and what the server knows of it: the same whatever transport
// carries its messages (client_link.hpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ecsnet/ecs/entity.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/state.hpp>

#include "game_world.hpp"
#include "input_buffer.hpp"
#include "replicator.hpp"

namespace ecsnet::server {

struct session {
    enum class phase { handshaking, playing, closing };
    phase state{phase::handshaking};
    client_id id{};
    std::string name;
    entity avatar{null_entity};
    std::unique_ptr<client_replication> replication; // what its replicator keeps of it (after the handshake)
    std::optional<proto::tick_type> acked;           // newest tick acked
    std::optional<proto::tick_type> sent;            // newest tick sent
    // Newest tick acked, or the first tick sent while none is: snapshots wait once `sent` is
    // server_options::max_unacked_ticks past it.
    std::optional<proto::tick_type> ack_anchor;
    // While held, the client repeated an ack of nothing newer (UDP: it received none of what was sent
    // since, e.g. the one delta a full state acked late left room for): one more snapshot goes, or neither
    // side would ever move again.
    bool nudged{false};
    // The tick of a full state sent and not acked yet: nothing more is sent until the client acks it or
    // refuses it (a full state can be large, and one in flight is enough). Acks older than it are stale.
    std::optional<proto::tick_type> full_state_in_flight;
    std::uint32_t last_input_sequence{};
    input_buffer inputs; // received, waiting for their tick (input_buffer.hpp)
    // The client asked for an InputStatus with each tick (ClientHello.wants_input_status: it predicts).
    bool wants_input_status{false};
    // The entities marked predicted_by this client (predicted_by.hpp) as last told, sorted, and the tick the
    // set last changed: InputStatus.predicted goes while the change is recent, and once a second.
    std::vector<proto::net_entity> predicted;
    proto::tick_type predicted_changed_at{};
    std::uint64_t inputs_received{};
    std::uint64_t full_state_requests{}; // acks refusing a delta (the client's mirror disagreed): desyncs
    v1::DisconnectReason close_reason{v1::DISCONNECT_REASON_UNSPECIFIED};
    std::string close_message;
    std::uint32_t retry_after_seconds{0}; // the retry hint of the Disconnect (draining: SHUTDOWN), 0: none
    bool closed_by_peer{false};
    bool admitted{false}; // counted against max_clients (false for connections refused with SERVER_FULL)
};

} // namespace ecsnet::server
