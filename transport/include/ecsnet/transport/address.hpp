#pragma once

// An IPv4 or IPv6 address and a UDP port, as connect tokens list servers and as the transport keys its
// per-source state. Independent of Asio (endpoint.hpp converts), so that tokens and packets can be built
// and parsed anywhere. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d, what a dual-stack socket reports for
// an IPv4 peer) are normalized to IPv4, so a token naming 1.2.3.4 matches either way.

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ecsnet::transport {

enum class address_family : std::uint8_t { none = 0, ipv4 = 1, ipv6 = 2 }; // the wire's address type byte

struct net_address {
    address_family family{address_family::none};
    /// IPv4: the first 4 bytes, network order (a.b.c.d); IPv6: all 16, network order. Unused bytes are 0.
    std::array<std::uint8_t, 16> ip{};
    std::uint16_t port{};

    [[nodiscard]] static net_address ipv4(std::array<std::uint8_t, 4> octets, std::uint16_t port) noexcept;
    [[nodiscard]] static net_address ipv6(const std::array<std::uint8_t, 16>& bytes,
                                          std::uint16_t port) noexcept;

    /// "1.2.3.4:7777" or "[::1]:7777" (a port is required); nullopt for anything else.
    [[nodiscard]] static std::optional<net_address> parse(std::string_view text);

    /// "1.2.3.4:7777", "[2001:db8::1]:7777"; "none" for an unset address.
    [[nodiscard]] std::string to_string() const;
    /// The address without the port: "1.2.3.4", "2001:db8::1".
    [[nodiscard]] std::string ip_string() const;

    [[nodiscard]] bool is_set() const noexcept { return family != address_family::none; }
    /// Same family and IP, any port: the key of per-IP limits.
    [[nodiscard]] bool same_ip(const net_address& other) const noexcept {
        return family == other.family && ip == other.ip;
    }
    /// If this is an IPv4-mapped IPv6 address, the IPv4 address; otherwise itself.
    [[nodiscard]] net_address normalized() const noexcept;

    friend auto operator<=>(const net_address&, const net_address&) = default;
};

/// Bytes a serialized address takes: 1 (type) + 4 or 16 + 2 (port).
inline constexpr std::size_t serialized_ipv4_bytes = 1 + 4 + 2;
inline constexpr std::size_t serialized_ipv6_bytes = 1 + 16 + 2;

struct net_address_hash {
    [[nodiscard]] std::size_t operator()(const net_address& address) const noexcept;
};
/// Hashes family and IP only (per-IP tables).
struct net_ip_hash {
    [[nodiscard]] std::size_t operator()(const net_address& address) const noexcept;
};
struct net_ip_equal {
    [[nodiscard]] bool operator()(const net_address& a, const net_address& b) const noexcept {
        return a.same_ip(b);
    }
};

} // namespace ecsnet::transport
