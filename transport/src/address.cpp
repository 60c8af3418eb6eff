#include "ecsnet/transport/address.hpp"

#include <arpa/inet.h>
#include <sodium.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "sodium_init.hpp"

namespace ecsnet::transport {

namespace {

std::optional<std::uint16_t> parse_port(std::string_view text) {
    if (text.empty() || text.size() > 5) {
        return std::nullopt;
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value > 65535) {
        return std::nullopt;
    }
    return static_cast<std::uint16_t>(value);
}

// SipHash-2-4 (libsodium's crypto_shorthash) under a key drawn once per process: the per-source tables
// are keyed by addresses an attacker chooses (any source port), and an unkeyed hash would let it aim
// every entry at one bucket.
std::size_t keyed_hash(const net_address& address, bool with_port) noexcept {
    static const auto key = [] {
        ensure_sodium();
        std::array<unsigned char, crypto_shorthash_KEYBYTES> bytes{};
        randombytes_buf(bytes.data(), bytes.size());
        return bytes;
    }();
    // Family, the IP's own bytes (4 for IPv4: every datagram's lookup hashes 7 bytes, one SipHash block,
    // rather than 19), then the port.
    std::array<unsigned char, 1 + 16 + 2> input{};
    input[0] = static_cast<unsigned char>(address.family);
    const std::size_t ip_bytes = address.family == address_family::ipv4 ? 4 : address.ip.size();
    std::copy_n(address.ip.begin(), ip_bytes, input.begin() + 1);
    std::size_t size = 1 + ip_bytes;
    if (with_port) {
        input[size++] = static_cast<unsigned char>(address.port & 0xFF);
        input[size++] = static_cast<unsigned char>(address.port >> 8);
    }
    std::array<unsigned char, crypto_shorthash_BYTES> out{};
    crypto_shorthash(out.data(), input.data(), size, key.data());
    std::uint64_t hash = 0;
    std::memcpy(&hash, out.data(), sizeof hash);
    return static_cast<std::size_t>(hash);
}

} // namespace

net_address net_address::ipv4(std::array<std::uint8_t, 4> octets, std::uint16_t port) noexcept {
    net_address address;
    address.family = address_family::ipv4;
    std::copy(octets.begin(), octets.end(), address.ip.begin());
    address.port = port;
    return address;
}

net_address net_address::ipv6(const std::array<std::uint8_t, 16>& bytes, std::uint16_t port) noexcept {
    net_address address;
    address.family = address_family::ipv6;
    address.ip = bytes;
    address.port = port;
    return address.normalized();
}

net_address net_address::normalized() const noexcept {
    static constexpr std::array<std::uint8_t, 12> mapped_prefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (family == address_family::ipv6 &&
        std::equal(mapped_prefix.begin(), mapped_prefix.end(), ip.begin())) {
        return ipv4({ip[12], ip[13], ip[14], ip[15]}, port);
    }
    return *this;
}

std::optional<net_address> net_address::parse(std::string_view text) {
    std::string host;
    std::string_view port_text;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return std::nullopt;
        }
        host = std::string{text.substr(1, close - 1)};
        port_text = text.substr(close + 2);
        std::array<std::uint8_t, 16> bytes{};
        if (host.empty() || inet_pton(AF_INET6, host.c_str(), bytes.data()) != 1) {
            return std::nullopt;
        }
        const auto port = parse_port(port_text);
        if (!port) {
            return std::nullopt;
        }
        return ipv6(bytes, *port);
    }
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
        return std::nullopt; // no port, or an IPv6 address without brackets
    }
    host = std::string{text.substr(0, colon)};
    port_text = text.substr(colon + 1);
    std::array<std::uint8_t, 4> octets{};
    if (host.empty() || inet_pton(AF_INET, host.c_str(), octets.data()) != 1) {
        return std::nullopt;
    }
    const auto port = parse_port(port_text);
    if (!port) {
        return std::nullopt;
    }
    return ipv4(octets, *port);
}

std::string net_address::ip_string() const {
    char buffer[INET6_ADDRSTRLEN] = {};
    switch (family) {
    case address_family::ipv4:
        inet_ntop(AF_INET, ip.data(), buffer, sizeof buffer);
        return buffer;
    case address_family::ipv6:
        inet_ntop(AF_INET6, ip.data(), buffer, sizeof buffer);
        return buffer;
    case address_family::none:
        break;
    }
    return "none";
}

std::string net_address::to_string() const {
    switch (family) {
    case address_family::ipv4:
        return ip_string() + ":" + std::to_string(port);
    case address_family::ipv6: {
        // Appended piece by piece: g++ 12 sees a false overlap in "[" + std::string (-Wrestrict).
        std::string out{"["};
        out += ip_string();
        out += "]:";
        out += std::to_string(port);
        return out;
    }
    case address_family::none:
        break;
    }
    return "none";
}

std::size_t net_address_hash::operator()(const net_address& address) const noexcept {
    return keyed_hash(address, true);
}

std::size_t net_ip_hash::operator()(const net_address& address) const noexcept {
    return keyed_hash(address, false);
}

} // namespace ecsnet::transport
