#pragma once

// The header at the start of every link body (docs/protocol.md section 9.2): the packet's sequence and the
// acks of the peer's packets: the newest sequence received (`ack`) and a 32-bit field whose bit n says
// whether `ack - n` was received, so every ack is repeated in the next 32 packets at least. The ack delay
// (time between receiving `ack` and sending this header) lets the peer take it out of its RTT samples.
//
// Compact, as reliable.io's: a flags byte says which of the ack field's bytes differ from 0xFF (no loss
// means none are sent): 3 bytes before the first ack, 6 to 12 after. The encoding is canonical (one per
// header): a reader refuses reserved bits, absent-ack fields, 0xFF bytes sent anyway, a padded varint.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "byte_io.hpp"
#include "receive_result.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

inline constexpr std::size_t min_header_bytes = 3;
inline constexpr std::size_t max_header_bytes = 12;
/// The unit of the ack delay field.
inline constexpr std::chrono::microseconds ack_delay_unit{32};
/// The ack delay is a varint of at most 3 bytes: up to 2^21 - 1 units (67 s); longer delays are capped.
inline constexpr std::uint32_t max_ack_delay_units = (std::uint32_t{1} << 21) - 1;

namespace header_flag {
inline constexpr std::uint8_t has_ack = 0x01;
inline constexpr std::uint8_t ack_bits_byte0 = 0x02; // bits 1..4: byte k of ack_bits follows (it is not 0xFF)
inline constexpr std::uint8_t reserved = 0xE0;
} // namespace header_flag

struct packet_header {
    sequence_t sequence{};
    bool has_ack{};            // the sender has received at least one packet
    sequence_t ack{};          // newest packet sequence received
    std::uint32_t ack_bits{};  // bit n: `ack - n` received (bit 0 is always set)
    std::uint32_t ack_delay{}; // in ack_delay_unit, at most max_ack_delay_units

    friend bool operator==(const packet_header&, const packet_header&) = default;
};

/// Bytes write_header(h) takes.
[[nodiscard]] std::size_t header_size(const packet_header& header) noexcept;
/// Writes the header (out must have header_size(header) bytes of room).
void write_header(byte_writer& out, const packet_header& header) noexcept;
/// Reads and checks a header: none, truncated, bad_header or bad_varint.
[[nodiscard]] receive_error read_header(byte_reader& in, packet_header& header) noexcept;
/// An ack delay as the field's units (rounded down, capped).
[[nodiscard]] std::uint32_t to_ack_delay_units(std::chrono::nanoseconds delay) noexcept;

} // namespace ecsnet::transport
