#pragma once

// Encryption of every packet but the connection request (docs/protocol.md, section 10.5).
//
//   [prefix] (u8)   low 4 bits: packet type (1..6); high 4 bits: how many sequence bytes follow (1..8)
//   [sequence]      that many bytes, little-endian, high zero bytes omitted
//   [ciphertext]    the packet type's data, ChaCha20-Poly1305 (IETF) encrypted
//   [MAC] (16)
//
// Nonce: 4 zero bytes then the 64-bit sequence, little-endian; each direction of a connection has its own
// key, so a nonce never repeats under one key as long as each sender counts its sequences up. Associated
// data: version info (13 bytes), protocol id (u64), the prefix byte: a packet cannot be replayed into
// another protocol or turned into another type. The response packet is authenticated but not
// encrypted (its data is a sealed challenge token the server must read before it knows the client's
// key): its data travels in clear and the MAC is ChaCha20-Poly1305 of an empty message, with the data
// appended to the associated data.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "drop_reason.hpp"
#include "key.hpp"
#include "outcome.hpp"
#include "protocol.hpp"

namespace ecsnet::transport {

/// How many bytes a sequence takes on the wire: 1 to 8 (its high zero bytes omitted, 0 takes 1).
[[nodiscard]] constexpr std::size_t sequence_bytes(std::uint64_t sequence) noexcept {
    std::size_t count = 1;
    while (count < 8 && (sequence >> (8 * count)) != 0) {
        ++count;
    }
    return count;
}

/// Size of an encrypted packet carrying `data_size` bytes of data under `sequence`.
[[nodiscard]] constexpr std::size_t sealed_size(std::uint64_t sequence, std::size_t data_size) noexcept {
    return 1 + sequence_bytes(sequence) + data_size + mac_bytes;
}

struct datagram_header {
    packet_type type{};
    std::uint8_t prefix{};
    std::uint64_t sequence{};
    std::size_t size{}; // prefix + sequence bytes: where the data starts
};

/// Reads an encrypted packet's prefix and sequence, before any crypto: bad_prefix for a type of 0 or
/// above 6 or a sequence length outside 1..8; malformed when the datagram cannot hold header + MAC or is
/// above 1,200 bytes.
[[nodiscard]] outcome<datagram_header, drop_reason>
read_datagram_header(std::span<const std::uint8_t> datagram) noexcept;

/// Encrypts `data` as a packet of `type` into `out`; returns its size, or 0 when `out` is too small.
std::size_t seal_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                        const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out) noexcept;

/// Decrypts a packet read by read_datagram_header into `out` (which must hold datagram.size() - header.size -
/// 16 bytes); returns the data's size, or nullopt when the MAC does not verify.
[[nodiscard]] std::optional<std::size_t> open_packet(const datagram_header& header,
                                                     std::span<const std::uint8_t> datagram, const key& k,
                                                     std::uint64_t protocol_id,
                                                     std::span<std::uint8_t> out) noexcept;

/// A packet whose data travels in clear under a MAC (the response): writes it into `out`, returns its
/// size or 0 when `out` is too small.
std::size_t seal_clear_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                              const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out) noexcept;

/// Verifies a clear packet's MAC; its data is datagram[header.size, size - 16).
[[nodiscard]] bool verify_clear_packet(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                       const key& k, std::uint64_t protocol_id) noexcept;

} // namespace ecsnet::transport
