#pragma once

// One connection as its owner sees it: the peer's address, the link's measures (RTT, loss, resends,
// bytes of bodies) and the datagrams on the wire.

#include <chrono>
#include <cstdint>

#include "address.hpp"
#include "link_stats.hpp"
#include "packet_crypto.hpp"

namespace ecsnet::transport {

struct connection_stats {
    net_address remote;
    link_stats link; // RTT, loss, resends, body bytes
    std::uint64_t datagrams_sent{};
    std::uint64_t datagrams_received{}; // authenticated ones
    std::uint64_t bytes_sent{};         // whole UDP payloads
    std::uint64_t bytes_received{};
    std::uint64_t keep_alives_sent{};
    packet_cipher cipher{}; // the connection's packets' AEAD (chosen in the handshake)
    std::chrono::milliseconds connected_for{};
    std::chrono::milliseconds since_last_received{};
};

} // namespace ecsnet::transport
