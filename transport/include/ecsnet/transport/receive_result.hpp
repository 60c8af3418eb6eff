#pragma once

// What link::receive says about a body. A body is accepted whole or refused whole: a refused body changes
// nothing and delivers nothing, and the reason (one per refusal, counted in link_stats::refused) says why.
// `duplicate` and `stale` happen on healthy networks (a datagram delivered twice, or very late) and are
// harmless; every other reason is a body a correct peer never sends (malformed(): the owner counts it and
// may disconnect the peer).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ecsnet::transport {

enum class receive_error : std::uint8_t {
    none = 0,
    body_too_big,             // a body above max_body_bytes
    duplicate,                // a packet sequence already received
    stale,                    // a packet sequence older than the duplicate window (1,024 packets)
    truncated,                // the body ends inside the header or inside a chunk's fixed fields
    bad_header,               // reserved header bits set, ack bitfield without bit 0, a non-canonical header
    bad_varint,               // a varint longer than 4 bytes or with a padding byte
    sequence_out_of_window,   // a packet sequence more than max_sequence_jump ahead of the newest received
    ack_out_of_window,        // an ack of a packet sequence this link has not sent
    unknown_chunk,            // a chunk type this version does not define
    empty_run,                // a message run of 0 messages
    length_past_end,          // a message or fragment whose length runs past the end of the body
    message_too_big,          // a message (or fragmented message's total) above its channel's limit
    bad_fragment,             // fragment size 0 or above the body, count above max_fragments, index >= count
    inconsistent_fragments,   // fragments of one message that disagree on its total or fragment size
    too_many_fragments,       // more fragment chunks in one body than max_fragment_chunks_per_body
    message_id_out_of_window, // a reliable message or block id reliable_window or more ahead of the next
                              // expected
    reliable_buffer_full,     // more reliable bytes held for ordering than max_reliable_queue_bytes
    block_conflict,           // a fragment of a second block while another block is incomplete
    bad_fragment_ack,         // a fragment ack naming fragments past the block's end, or not canonical
};
inline constexpr std::size_t receive_error_count = 20;

[[nodiscard]] std::string_view to_string(receive_error error) noexcept;

struct receive_result {
    receive_error error{receive_error::none};
    std::size_t delivered{0}; // messages delivered (all channels)

    [[nodiscard]] bool ok() const noexcept { return error == receive_error::none; }
    [[nodiscard]] explicit operator bool() const noexcept { return ok(); }
    /// Refused for a reason a correct peer never causes (anything but none, duplicate and stale).
    [[nodiscard]] bool malformed() const noexcept {
        return error != receive_error::none && error != receive_error::duplicate &&
               error != receive_error::stale;
    }
};

} // namespace ecsnet::transport
