// The packet header's encoding (docs/protocol.md section 9.2).

#include "ecsnet/transport/packet_header.hpp"

#include <algorithm>

namespace ecsnet::transport {

namespace {

[[nodiscard]] std::uint8_t ack_bits_byte(std::uint32_t bits, int k) noexcept {
    return static_cast<std::uint8_t>((bits >> (8 * k)) & 0xFFU);
}

[[nodiscard]] std::uint8_t flags_of(const packet_header& header) noexcept {
    if (!header.has_ack) {
        return 0;
    }
    std::uint8_t flags = header_flag::has_ack;
    for (int k = 0; k < 4; ++k) {
        if (ack_bits_byte(header.ack_bits, k) != 0xFFU) {
            flags = static_cast<std::uint8_t>(flags | (header_flag::ack_bits_byte0 << k));
        }
    }
    return flags;
}

} // namespace

std::size_t header_size(const packet_header& header) noexcept {
    if (!header.has_ack) {
        return min_header_bytes;
    }
    std::size_t size = min_header_bytes + 2 + varint_size(std::min(header.ack_delay, max_ack_delay_units));
    for (int k = 0; k < 4; ++k) {
        size += ack_bits_byte(header.ack_bits, k) != 0xFFU ? 1 : 0;
    }
    return size;
}

void write_header(byte_writer& out, const packet_header& header) noexcept {
    const auto flags = flags_of(header);
    out.put_u8(flags);
    out.put_u16(header.sequence);
    if (!header.has_ack) {
        return;
    }
    out.put_u16(header.ack);
    for (int k = 0; k < 4; ++k) {
        if ((flags & (header_flag::ack_bits_byte0 << k)) != 0) {
            out.put_u8(ack_bits_byte(header.ack_bits, k));
        }
    }
    out.put_varint(std::min(header.ack_delay, max_ack_delay_units));
}

receive_error read_header(byte_reader& in, packet_header& header) noexcept {
    std::uint8_t flags = 0;
    if (!in.get_u8(flags) || !in.get_u16(header.sequence)) {
        return receive_error::truncated;
    }
    if ((flags & header_flag::reserved) != 0) {
        return receive_error::bad_header;
    }
    header.has_ack = (flags & header_flag::has_ack) != 0;
    if (!header.has_ack) {
        header.ack = 0;
        header.ack_bits = 0;
        header.ack_delay = 0;
        // Without an ack there is no ack field to describe.
        return flags == 0 ? receive_error::none : receive_error::bad_header;
    }
    if (!in.get_u16(header.ack)) {
        return receive_error::truncated;
    }
    std::uint32_t bits = 0;
    for (int k = 0; k < 4; ++k) {
        std::uint8_t byte = 0xFF;
        if ((flags & (header_flag::ack_bits_byte0 << k)) != 0) {
            if (!in.get_u8(byte)) {
                return receive_error::truncated;
            }
            if (byte == 0xFF) {
                return receive_error::bad_header; // a 0xFF byte is never sent: not canonical
            }
        }
        bits |= static_cast<std::uint32_t>(byte) << (8 * k);
    }
    if ((bits & 1U) == 0) {
        return receive_error::bad_header; // bit 0 is `ack` itself, which was received
    }
    header.ack_bits = bits;
    switch (in.get_varint(header.ack_delay)) {
    case varint_status::ok:
        break;
    case varint_status::truncated:
        return receive_error::truncated;
    default:
        return receive_error::bad_varint;
    }
    if (header.ack_delay > max_ack_delay_units) {
        return receive_error::bad_varint;
    }
    return receive_error::none;
}

std::uint32_t to_ack_delay_units(std::chrono::nanoseconds delay) noexcept {
    if (delay.count() <= 0) {
        return 0;
    }
    const auto units = delay / std::chrono::nanoseconds{ack_delay_unit};
    return units >= max_ack_delay_units ? max_ack_delay_units : static_cast<std::uint32_t>(units);
}

} // namespace ecsnet::transport
