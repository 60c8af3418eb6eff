#pragma once

// The chunks a link body carries after its header (docs/protocol.md section 9.3): each starts with a type
// byte, and a body holds any number of them in any order (the writer's order is its priority order). This
// header defines their encodings: readers that check everything that needs no link state (lengths within
// the body, sizes within the limits, counts and indices consistent), and writers.
//
//   0x01 reliable            run of reliable messages with consecutive ids: u16 first id, u8 count (>= 1),
//                            count x (varint length, bytes)
//   0x02 reliable_fragment   fragment of a block (a reliable message too big for one body): u16 message
//                            id, varint total bytes, varint fragment bytes, varint index, the fragment's
//                            bytes
//   0x03 fragment_ack        which fragments of a block arrived: u16 message id, varint first missing
//                            index, u8 bitmap length (0..32), bitmap (bit j: fragment first_missing + 1 + j)
//   0x04 unreliable          one unreliable message: varint length, bytes
//   0x05 unreliable_fragment fragment of an unreliable message: u16 group id, then as reliable_fragment
//   0x06 redundant           run of redundant messages, as reliable
//
// A fragment's length is implied: fragment_bytes, or what is left of the total for the last one.

#include <cstddef>
#include <cstdint>
#include <span>

#include "byte_io.hpp"
#include "receive_result.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

enum class chunk_type : std::uint8_t {
    reliable = 0x01,
    reliable_fragment = 0x02,
    fragment_ack = 0x03,
    unreliable = 0x04,
    unreliable_fragment = 0x05,
    redundant = 0x06,
};

/// Type, first id and count of a message run.
inline constexpr std::size_t run_header_bytes = 4;
inline constexpr std::size_t max_run_messages = 255;
inline constexpr std::size_t max_fragment_ack_bitmap_bytes = 32;
inline constexpr std::size_t max_fragment_ack_bytes =
    1 + 2 + max_varint_bytes + 1 + max_fragment_ack_bitmap_bytes;
/// A body carries at most this many fragment chunks (both kinds together); a reader refuses more.
inline constexpr std::size_t max_fragment_chunks_per_body = 64;

/// What a reader checks without link state; from the receiving link's config.
struct chunk_limits {
    std::uint32_t max_body_bytes{};
    std::uint32_t max_message_bytes{};
    std::uint32_t max_redundant_message_bytes{};
    std::uint32_t max_fragments{};
};

/// A reliable or redundant run, checked: `encoded` is its count x (varint length, bytes).
struct message_run {
    sequence_t first_id{};
    std::uint32_t count{};
    std::span<const std::byte> encoded{};
};

struct fragment {
    sequence_t id{}; // reliable message id, or unreliable group id
    std::uint32_t total_bytes{};
    std::uint32_t fragment_bytes{};
    std::uint32_t index{};
    std::uint32_t count{}; // derived: ceil(total_bytes / fragment_bytes)
    std::span<const std::byte> data{};
};

struct fragment_ack {
    sequence_t id{};
    std::uint32_t first_missing{}; // fragments below it all arrived
    std::span<const std::byte> bitmap{};
};

/// One chunk as read; only the member of its type is meaningful.
struct chunk {
    chunk_type type{};
    message_run run{};                  // reliable, redundant
    fragment frag{};                    // reliable_fragment, unreliable_fragment
    fragment_ack ack{};                 // fragment_ack
    std::span<const std::byte> message; // unreliable
};

/// Reads the next chunk and checks it against the limits.
[[nodiscard]] receive_error read_chunk(byte_reader& in, const chunk_limits& limits, chunk& out) noexcept;

/// Calls f(std::span<const std::byte>) for each message of a run read by read_chunk, in id order.
template<typename F>
void for_each_message(const message_run& run, F&& f) {
    byte_reader in{run.encoded};
    for (std::uint32_t i = 0; i < run.count; ++i) {
        std::uint32_t length = 0;
        std::span<const std::byte> bytes;
        static_cast<void>(in.get_varint(length));
        static_cast<void>(in.get_bytes(length, bytes));
        f(bytes);
    }
}

[[nodiscard]] constexpr std::uint32_t fragment_count(std::uint32_t total_bytes,
                                                     std::uint32_t fragment_bytes) noexcept {
    return (total_bytes + fragment_bytes - 1) / fragment_bytes;
}
/// Bytes of fragment `index` (index < fragment_count).
[[nodiscard]] constexpr std::uint32_t fragment_length(std::uint32_t total_bytes, std::uint32_t fragment_bytes,
                                                      std::uint32_t index) noexcept {
    const auto offset = index * fragment_bytes;
    return total_bytes - offset < fragment_bytes ? total_bytes - offset : fragment_bytes;
}
/// Bit `bit` of a fragment ack bitmap (fragment first_missing + 1 + bit).
[[nodiscard]] inline bool bitmap_bit(std::span<const std::byte> bitmap, std::size_t bit) noexcept {
    return bit / 8 < bitmap.size() && ((static_cast<unsigned>(bitmap[bit / 8]) >> (bit % 8)) & 1U) != 0;
}

// Writers: the caller has checked the room (byte_writer asserts).

[[nodiscard]] constexpr std::size_t unreliable_chunk_size(std::size_t length) noexcept {
    return 1 + varint_size(static_cast<std::uint32_t>(length)) + length;
}
void write_unreliable(byte_writer& out, std::span<const std::byte> message) noexcept;

[[nodiscard]] constexpr std::size_t
fragment_chunk_size(std::uint32_t total_bytes, std::uint32_t fragment_bytes, std::uint32_t index) noexcept {
    return 1 + 2 + varint_size(total_bytes) + varint_size(fragment_bytes) + varint_size(index) +
           fragment_length(total_bytes, fragment_bytes, index);
}
void write_fragment(byte_writer& out, chunk_type type, sequence_t id, std::uint32_t total_bytes,
                    std::uint32_t fragment_bytes, std::uint32_t index,
                    std::span<const std::byte> data) noexcept;

void write_fragment_ack(byte_writer& out, sequence_t id, std::uint32_t first_missing,
                        std::span<const std::byte> bitmap) noexcept;

/// A run being written: begin() writes its header, add() each message, finish() its count.
class run_writer {
public:
    void begin(byte_writer& out, chunk_type type, sequence_t first_id) noexcept;
    /// Bytes add(message) would take.
    [[nodiscard]] static constexpr std::size_t message_size(std::size_t length) noexcept {
        return varint_size(static_cast<std::uint32_t>(length)) + length;
    }
    void add(byte_writer& out, std::span<const std::byte> message) noexcept;
    void finish(byte_writer& out) noexcept;

    [[nodiscard]] bool open() const noexcept { return open_; }
    [[nodiscard]] std::size_t count() const noexcept { return count_; }
    [[nodiscard]] sequence_t next_id() const noexcept { return static_cast<sequence_t>(first_id_ + count_); }
    [[nodiscard]] sequence_t first_id() const noexcept { return first_id_; }

private:
    std::size_t count_at_{0};
    std::size_t count_{0};
    sequence_t first_id_{0};
    bool open_{false};
};

} // namespace ecsnet::transport
