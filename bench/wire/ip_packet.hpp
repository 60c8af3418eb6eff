#pragma once

// What the virtual wire (tun_wire.cpp) reads of an IP packet: its transport protocol, so that its counts
// say how many of the bytes were TCP, UDP or ICMP. Only the fixed header is read (IPv4's protocol field,
// IPv6's next header: a packet with IPv6 extension headers counts as `other`); a packet too short for its
// version's header, or of another version, is `other` too. Nothing here is trusted or needs to be.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ecsnet::bench::wire {

enum class ip_protocol : std::uint8_t { tcp, udp, icmp, other };

inline constexpr std::size_t ip_protocol_count = 4;
inline constexpr std::array<std::string_view, ip_protocol_count> ip_protocol_names{"tcp", "udp", "icmp",
                                                                                   "other"};

[[nodiscard]] inline std::string_view to_string(ip_protocol protocol) noexcept {
    return ip_protocol_names[static_cast<std::size_t>(protocol)];
}

[[nodiscard]] inline ip_protocol classify(std::span<const std::byte> packet) noexcept {
    constexpr std::size_t ipv4_header = 20;
    constexpr std::size_t ipv6_header = 40;
    if (packet.empty()) {
        return ip_protocol::other;
    }
    const auto version = std::to_integer<unsigned>(packet[0]) >> 4;
    unsigned number = 0;
    if (version == 4 && packet.size() >= ipv4_header) {
        number = std::to_integer<unsigned>(packet[9]);
    } else if (version == 6 && packet.size() >= ipv6_header) {
        number = std::to_integer<unsigned>(packet[6]);
    } else {
        return ip_protocol::other;
    }
    switch (number) {
    case 6:
        return ip_protocol::tcp;
    case 17:
        return ip_protocol::udp;
    case 1:  // ICMP
    case 58: // ICMPv6
        return ip_protocol::icmp;
    default:
        return ip_protocol::other;
    }
}

} // namespace ecsnet::bench::wire
