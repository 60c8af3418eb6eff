// Chunk encodings (docs/protocol.md section 9.3): the checks a reader makes before the link looks at a
// chunk's meaning, and the writers.

#include "ecsnet/transport/chunk.hpp"

#include <cassert>

namespace ecsnet::transport {

namespace {

[[nodiscard]] receive_error varint_error(varint_status status) noexcept {
    return status == varint_status::truncated ? receive_error::truncated : receive_error::bad_varint;
}

[[nodiscard]] receive_error read_varint(byte_reader& in, std::uint32_t& value) noexcept {
    const auto status = in.get_varint(value);
    return status == varint_status::ok ? receive_error::none : varint_error(status);
}

receive_error read_run(byte_reader& in, std::uint32_t max_length, message_run& run) noexcept {
    std::uint8_t count = 0;
    if (!in.get_u16(run.first_id) || !in.get_u8(count)) {
        return receive_error::truncated;
    }
    if (count == 0) {
        return receive_error::empty_run;
    }
    run.count = count;
    const auto start = in.position();
    for (std::uint32_t i = 0; i < run.count; ++i) {
        std::uint32_t length = 0;
        if (const auto error = read_varint(in, length); error != receive_error::none) {
            return error;
        }
        if (length > max_length) {
            return receive_error::message_too_big;
        }
        std::span<const std::byte> bytes;
        if (!in.get_bytes(length, bytes)) {
            return receive_error::length_past_end;
        }
    }
    // The run's messages, as a view of the body: walked again (without checks) by for_each_message.
    run.encoded = in.read_since(start);
    return receive_error::none;
}

receive_error read_fragment(byte_reader& in, const chunk_limits& limits, fragment& frag) noexcept {
    if (!in.get_u16(frag.id)) {
        return receive_error::truncated;
    }
    if (const auto error = read_varint(in, frag.total_bytes); error != receive_error::none) {
        return error;
    }
    if (const auto error = read_varint(in, frag.fragment_bytes); error != receive_error::none) {
        return error;
    }
    if (const auto error = read_varint(in, frag.index); error != receive_error::none) {
        return error;
    }
    if (frag.total_bytes > limits.max_message_bytes) {
        return receive_error::message_too_big;
    }
    if (frag.total_bytes == 0 || frag.fragment_bytes == 0 || frag.fragment_bytes > limits.max_body_bytes) {
        return receive_error::bad_fragment;
    }
    frag.count = fragment_count(frag.total_bytes, frag.fragment_bytes);
    if (frag.count > limits.max_fragments || frag.index >= frag.count) {
        return receive_error::bad_fragment;
    }
    if (!in.get_bytes(fragment_length(frag.total_bytes, frag.fragment_bytes, frag.index), frag.data)) {
        return receive_error::length_past_end;
    }
    return receive_error::none;
}

receive_error read_fragment_ack(byte_reader& in, const chunk_limits& limits, fragment_ack& ack) noexcept {
    if (!in.get_u16(ack.id)) {
        return receive_error::truncated;
    }
    if (const auto error = read_varint(in, ack.first_missing); error != receive_error::none) {
        return error;
    }
    std::uint8_t length = 0;
    if (!in.get_u8(length)) {
        return receive_error::truncated;
    }
    if (length > max_fragment_ack_bitmap_bytes || ack.first_missing > limits.max_fragments) {
        return receive_error::bad_fragment_ack;
    }
    if (!in.get_bytes(length, ack.bitmap)) {
        return receive_error::length_past_end;
    }
    if (length > 0 && ack.bitmap.back() == std::byte{0}) {
        return receive_error::bad_fragment_ack; // trailing zero bytes are never sent: not canonical
    }
    if (length > 0) {
        // The highest fragment the bitmap names must exist in a message of max_fragments fragments.
        std::size_t highest = 0;
        const auto last = static_cast<unsigned>(ack.bitmap.back());
        for (std::size_t bit = 0; bit < 8; ++bit) {
            if (((last >> bit) & 1U) != 0) {
                highest = (length - 1) * 8 + bit;
            }
        }
        if (std::size_t{ack.first_missing} + 1 + highest >= limits.max_fragments) {
            return receive_error::bad_fragment_ack;
        }
    }
    return receive_error::none;
}

} // namespace

receive_error read_chunk(byte_reader& in, const chunk_limits& limits, chunk& out) noexcept {
    std::uint8_t type = 0;
    if (!in.get_u8(type)) {
        return receive_error::truncated;
    }
    out.type = static_cast<chunk_type>(type);
    switch (out.type) {
    case chunk_type::reliable:
    case chunk_type::redundant:
        return read_run(in,
                        out.type == chunk_type::reliable ? limits.max_message_bytes
                                                         : limits.max_redundant_message_bytes,
                        out.run);
    case chunk_type::reliable_fragment:
    case chunk_type::unreliable_fragment:
        return read_fragment(in, limits, out.frag);
    case chunk_type::fragment_ack:
        return read_fragment_ack(in, limits, out.ack);
    case chunk_type::unreliable: {
        std::uint32_t length = 0;
        if (const auto error = read_varint(in, length); error != receive_error::none) {
            return error;
        }
        if (length > limits.max_message_bytes) {
            return receive_error::message_too_big;
        }
        if (!in.get_bytes(length, out.message)) {
            return receive_error::length_past_end;
        }
        return receive_error::none;
    }
    }
    return receive_error::unknown_chunk;
}

void write_unreliable(byte_writer& out, std::span<const std::byte> message) noexcept {
    out.put_u8(static_cast<std::uint8_t>(chunk_type::unreliable));
    out.put_varint(static_cast<std::uint32_t>(message.size()));
    out.put_bytes(message);
}

void write_fragment(byte_writer& out, chunk_type type, sequence_t id, std::uint32_t total_bytes,
                    std::uint32_t fragment_bytes, std::uint32_t index,
                    std::span<const std::byte> data) noexcept {
    assert(data.size() == fragment_length(total_bytes, fragment_bytes, index));
    out.put_u8(static_cast<std::uint8_t>(type));
    out.put_u16(id);
    out.put_varint(total_bytes);
    out.put_varint(fragment_bytes);
    out.put_varint(index);
    out.put_bytes(data);
}

void write_fragment_ack(byte_writer& out, sequence_t id, std::uint32_t first_missing,
                        std::span<const std::byte> bitmap) noexcept {
    assert(bitmap.size() <= max_fragment_ack_bitmap_bytes);
    out.put_u8(static_cast<std::uint8_t>(chunk_type::fragment_ack));
    out.put_u16(id);
    out.put_varint(first_missing);
    out.put_u8(static_cast<std::uint8_t>(bitmap.size()));
    out.put_bytes(bitmap);
}

void run_writer::begin(byte_writer& out, chunk_type type, sequence_t first_id) noexcept {
    out.put_u8(static_cast<std::uint8_t>(type));
    out.put_u16(first_id);
    count_at_ = out.size();
    out.put_u8(0);
    count_ = 0;
    first_id_ = first_id;
    open_ = true;
}

void run_writer::add(byte_writer& out, std::span<const std::byte> message) noexcept {
    assert(open_ && count_ < max_run_messages);
    out.put_varint(static_cast<std::uint32_t>(message.size()));
    out.put_bytes(message);
    ++count_;
}

void run_writer::finish(byte_writer& out) noexcept {
    assert(open_ && count_ > 0);
    out.patch_u8(count_at_, static_cast<std::uint8_t>(count_));
    open_ = false;
}

} // namespace ecsnet::transport
