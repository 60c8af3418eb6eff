#pragma once

// Encryption of every packet but the connection request (docs/protocol.md, section 10.5).
//
//   [prefix] (u8)   low 4 bits: packet type (1..6); high 4 bits: how many sequence bytes follow (1..8)
//   [sequence]      that many bytes, little-endian, high zero bytes omitted
//   [ciphertext]    the packet type's data, encrypted with the connection's AEAD
//   [MAC] (16)
//
// The AEAD: ChaCha20-Poly1305 (IETF) for the handshake's packets and wherever either end lacks AES
// instructions; AES-256-GCM for a connection's packets when both ends have them (the challenge offers the
// server's ciphers, the response names the client's choice: protocol.md 10.4). Both take a 32-byte key and
// a 12-byte nonce and give a 16-byte MAC, so the layout is the same; AES-256-GCM costs about half as much
// per packet on CPUs with AES-NI and PCLMULQDQ (bench/RESULTS.md, "Transport: the security layer").
//
// Nonce: 4 zero bytes then the 64-bit sequence, little-endian; each direction of a connection has its own
// key, so a nonce never repeats under one key as long as each sender counts its sequences up. Associated
// data: version info (13 bytes), protocol id (u64), the prefix byte: a packet cannot be replayed into
// another protocol or turned into another type. The response packet is authenticated but not
// encrypted (its data is a sealed challenge token the server must read before it knows the client's
// key): its data travels in clear and the MAC is ChaCha20-Poly1305 of an empty message, with the data
// appended to the associated data.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "drop_reason.hpp"
#include "key.hpp"
#include "outcome.hpp"
#include "protocol.hpp"

namespace ecsnet::transport {

/// A connection's AEAD once connected. The numbers are on the wire (the response's choice) and are bits of
/// a cipher set: (1 << cipher).
enum class packet_cipher : std::uint8_t {
    chacha20_poly1305 = 0, // every machine
    aes256_gcm = 1,        // libsodium's needs AES-NI and PCLMULQDQ (x86-64)
};
inline constexpr std::uint8_t cipher_bit(packet_cipher cipher) noexcept {
    return static_cast<std::uint8_t>(1U << static_cast<unsigned>(cipher));
}
/// Every cipher any end may offer; other bits are refused.
inline constexpr std::uint8_t known_ciphers =
    cipher_bit(packet_cipher::chacha20_poly1305) | cipher_bit(packet_cipher::aes256_gcm);
/// The ciphers this machine runs: ChaCha20-Poly1305 always, AES-256-GCM when the CPU has its instructions.
[[nodiscard]] std::uint8_t available_ciphers() noexcept;
/// A config's cipher set (0: all) as this machine can honour it: ChaCha20-Poly1305 always in.
[[nodiscard]] inline std::uint8_t usable_ciphers(std::uint8_t configured) noexcept {
    return static_cast<std::uint8_t>(((configured == 0 ? known_ciphers : configured) & available_ciphers()) |
                                     cipher_bit(packet_cipher::chacha20_poly1305));
}
/// What a client picks from the server's offer and its own set: AES-256-GCM when both have it.
[[nodiscard]] constexpr packet_cipher choose_cipher(std::uint8_t offered, std::uint8_t own) noexcept {
    return (offered & own & cipher_bit(packet_cipher::aes256_gcm)) != 0 ? packet_cipher::aes256_gcm
                                                                        : packet_cipher::chacha20_poly1305;
}

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

/// Encrypts `data` as a packet of `type` into `out`; returns its size, or 0 when `out` is too small (or
/// the cipher is not available here).
std::size_t seal_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                        const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out,
                        packet_cipher cipher = packet_cipher::chacha20_poly1305) noexcept;

/// Decrypts a packet read by read_datagram_header into `out` (which must hold datagram.size() - header.size -
/// 16 bytes); returns the data's size, or nullopt when the MAC does not verify.
[[nodiscard]] std::optional<std::size_t>
open_packet(const datagram_header& header, std::span<const std::uint8_t> datagram, const key& k,
            std::uint64_t protocol_id, std::span<std::uint8_t> out,
            packet_cipher cipher = packet_cipher::chacha20_poly1305) noexcept;

/// One direction's key of a connection, made ready for its cipher once: AES-256-GCM's key schedule and
/// GHASH key (libsodium's beforenm, about 280 instructions) are computed here, not for every packet as the
/// key-taking seal_packet/open_packet do. Wiped when destroyed.
class packet_key {
public:
    packet_key(const key& k, packet_cipher cipher) noexcept;
    ~packet_key();
    packet_key(const packet_key&) = delete;
    packet_key& operator=(const packet_key&) = delete;

    [[nodiscard]] packet_cipher cipher() const noexcept { return cipher_; }

private:
    friend std::size_t seal_packet(packet_type, std::uint64_t, std::span<const std::uint8_t>,
                                   const packet_key&, std::uint64_t, std::span<std::uint8_t>) noexcept;
    friend std::optional<std::size_t> open_packet(const datagram_header&, std::span<const std::uint8_t>,
                                                  const packet_key&, std::uint64_t,
                                                  std::span<std::uint8_t>) noexcept;

    key key_;
    packet_cipher cipher_;
    bool usable_; // the cipher runs here (and, for AES-256-GCM, its state was computed)
    // libsodium's crypto_aead_aes256gcm_state (512 bytes, 16-aligned), unused under ChaCha20-Poly1305.
    alignas(16) std::array<unsigned char, 512> aes_state_{};
};

/// seal_packet under a prepared key (its own cipher): the same packet, byte for byte.
std::size_t seal_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                        const packet_key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out) noexcept;

/// open_packet under a prepared key (its own cipher).
[[nodiscard]] std::optional<std::size_t> open_packet(const datagram_header& header,
                                                     std::span<const std::uint8_t> datagram,
                                                     const packet_key& k, std::uint64_t protocol_id,
                                                     std::span<std::uint8_t> out) noexcept;

/// A packet whose data travels in clear under a MAC (the response): writes it into `out`, returns its
/// size or 0 when `out` is too small.
std::size_t seal_clear_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                              const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out) noexcept;

/// Verifies a clear packet's MAC; its data is datagram[header.size, size - 16).
[[nodiscard]] bool verify_clear_packet(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                       const key& k, std::uint64_t protocol_id) noexcept;

} // namespace ecsnet::transport
