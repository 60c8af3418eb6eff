#pragma once

// The three kinds of delivery a link offers (docs/protocol.md section 9), and what send() answers.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "function_ref.hpp"

namespace ecsnet::transport {

enum class channel : std::uint8_t {
    reliable = 0,   // ordered, exactly once; any size up to max_message_bytes (big ones as blocks: fragments
                    // with per-fragment acks and selective resend). Control messages, full states.
    unreliable = 1, // maybe lost, maybe out of order, never duplicated or corrupted; fragmented when over one
                    // body, a lost fragment loses that message only. Snapshots, pings.
    redundant = 2,  // small messages (inputs): each is repeated in every packet until a packet holding it is
                    // acked; delivered exactly once, in order; at most redundant_window pending.
};
inline constexpr std::size_t channel_count = 3;

/// link::receive's deliver(channel, message): the view is valid during the call only.
using deliver_function = std::function<void(channel, std::span<const std::byte>)>;
/// link::write_packets's sink(body): the view is valid during the call only.
using body_sink = function_ref<void(std::span<const std::byte>)>;

enum class send_status : std::uint8_t {
    queued,     // copied; it will go out in the next write_packets
    too_big,    // above the channel's size limit: never sendable
    queue_full, // the channel's send queue is full (reliable: max_reliable_queue_bytes or reliable_window;
                // unreliable: max_unreliable_queue_bytes): try again once acks or write_packets drain it
};

[[nodiscard]] constexpr std::string_view to_string(channel ch) noexcept {
    switch (ch) {
    case channel::reliable:
        return "reliable";
    case channel::unreliable:
        return "unreliable";
    case channel::redundant:
        return "redundant";
    }
    return "unknown";
}

[[nodiscard]] constexpr std::string_view to_string(send_status status) noexcept {
    switch (status) {
    case send_status::queued:
        return "queued";
    case send_status::too_big:
        return "too_big";
    case send_status::queue_full:
        return "queue_full";
    }
    return "unknown";
}

} // namespace ecsnet::transport
