#pragma once

// Conversions between net_address and Asio's UDP endpoints. An IPv4 address sent from an IPv6 socket
// (a dual-stack server bound to ::) becomes its IPv4-mapped form; a received IPv4-mapped address becomes
// IPv4 again, so that tokens, per-IP limits and connections see one form.

#include <asio/ip/udp.hpp>

#include "address.hpp"

namespace ecsnet::transport {

[[nodiscard]] inline net_address from_endpoint(const asio::ip::udp::endpoint& endpoint) {
    const auto ip = endpoint.address();
    if (ip.is_v4()) {
        return net_address::ipv4(ip.to_v4().to_bytes(), endpoint.port());
    }
    return net_address::ipv6(ip.to_v6().to_bytes(), endpoint.port()); // normalizes IPv4-mapped
}

/// The endpoint to send `address` to from a socket of `protocol`; nullopt when it cannot (IPv6 from an
/// IPv4 socket, or an unset address).
[[nodiscard]] inline std::optional<asio::ip::udp::endpoint> to_endpoint(const net_address& address,
                                                                        const asio::ip::udp& protocol) {
    if (address.family == address_family::ipv4) {
        const asio::ip::address_v4 v4{{address.ip[0], address.ip[1], address.ip[2], address.ip[3]}};
        if (protocol == asio::ip::udp::v6()) {
            return asio::ip::udp::endpoint{asio::ip::make_address_v6(asio::ip::v4_mapped, v4), address.port};
        }
        return asio::ip::udp::endpoint{v4, address.port};
    }
    if (address.family == address_family::ipv6 && protocol == asio::ip::udp::v6()) {
        return asio::ip::udp::endpoint{asio::ip::address_v6{address.ip}, address.port};
    }
    return std::nullopt;
}

} // namespace ecsnet::transport
