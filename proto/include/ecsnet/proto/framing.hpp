#pragma once

// Framing for stream transports (TCP, TLS, WebSocket streams): each frame is a length prefix followed by
// that many bytes, one serialized Envelope. The prefix is the payload length as a base-128 varint (LEB128,
// 1 to 5 bytes), the same prefix protobuf's "delimited" helpers use (writeDelimitedTo/parseDelimitedFrom in
// Java, C#, Python...), so a client in another language can reuse them.
//
// The maximum frame size (default 1 MiB) is checked on the prefix, before anything is allocated for the
// frame; a prefix of more than 5 bytes or above 2^32 - 1 is an error too. Errors are values; once a
// decoder has failed it stays failed (the stream cannot be resynchronised: drop the connection).
//
// Complexity: encoding and decoding are O(bytes). The decoder copies a frame only when it arrives in
// pieces (its buffer then holds at most one partial frame: max frame size + 5 bytes).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "result.hpp"

namespace ecsnet::proto {

inline constexpr std::size_t default_max_frame_size = std::size_t{1} << 20;
/// The most bytes a length prefix takes.
inline constexpr std::size_t max_length_prefix_size = 5;

/// Appends the length prefix of a `size`-byte frame to `out`.
void append_length_prefix(std::string& out, std::size_t size);

/// Appends one frame (prefix + payload) to `out`; refuses a payload above `max_frame_size`.
result<void> append_frame(std::string& out, std::string_view payload,
                          std::size_t max_frame_size = default_max_frame_size);

/// Size of the prefix + payload of a frame holding `payload_size` bytes.
[[nodiscard]] std::size_t framed_size(std::size_t payload_size) noexcept;

/// Incremental decoder: feed bytes as they arrive, get every complete frame.
class frame_decoder {
public:
    explicit frame_decoder(std::size_t max_frame_size = default_max_frame_size) noexcept
        : max_frame_size_{max_frame_size} {}

    /// Consumes `bytes`, calling on_frame(std::string_view payload) for each frame they complete, in order
    /// (the view is valid during the call only). on_frame returns void, or bool: false stops decoding
    /// there (the rest of `bytes` is dropped; the transport is expected to close). After an error the
    /// decoder keeps failing until reset().
    template<typename OnFrame>
    result<void> feed(std::string_view bytes, OnFrame&& on_frame);

    /// Bytes of an incomplete frame held back (prefix included); at most 5 + max_frame_size().
    [[nodiscard]] std::size_t buffered() const noexcept { return prefix_size_ + payload_.size(); }
    [[nodiscard]] bool failed() const noexcept { return failed_; }
    [[nodiscard]] std::size_t max_frame_size() const noexcept { return max_frame_size_; }
    /// Forgets any partial frame and any error.
    void reset() noexcept;

private:
    // Appends one prefix byte; returns false on an invalid or too large prefix (failed_ is then set).
    bool push_prefix_byte(std::uint8_t byte, result<void>& status);
    result<void> fail(errc code, std::string message);
    [[nodiscard]] std::string too_large_message(std::uint64_t length) const;

    std::string payload_;          // payload of the frame being completed
    std::uint64_t expected_{};     // its length, once the prefix is complete
    std::uint64_t prefix_value_{}; // prefix bytes decoded so far
    std::size_t prefix_size_{};    // prefix bytes read so far (0 to 5)
    bool in_payload_{false};
    std::size_t max_frame_size_;
    bool failed_{false};
};

namespace detail {
template<typename OnFrame>
bool deliver_frame(OnFrame& on_frame, std::string_view payload) {
    if constexpr (std::is_same_v<decltype(on_frame(payload)), bool>) {
        return on_frame(payload);
    } else {
        on_frame(payload);
        return true;
    }
}
} // namespace detail

template<typename OnFrame>
result<void> frame_decoder::feed(std::string_view bytes, OnFrame&& on_frame) {
    if (failed_) {
        return make_error(errc::malformed_message, "the frame decoder failed earlier: reset it or close");
    }
    result<void> status;
    while (!bytes.empty()) {
        if (!in_payload_ && prefix_size_ == 0) {
            // Fast path: a whole frame at the front of `bytes` is delivered without copying.
            std::uint64_t length = 0;
            std::size_t used = 0;
            bool complete = false;
            for (; used < bytes.size() && used < max_length_prefix_size; ++used) {
                const auto byte = static_cast<std::uint8_t>(bytes[used]);
                length |= std::uint64_t{byte & 0x7FU} << (7 * used);
                if ((byte & 0x80U) == 0) {
                    complete = true;
                    ++used;
                    break;
                }
            }
            if (complete && length <= max_frame_size_ && length <= 0xFFFFFFFFU &&
                bytes.size() - used >= length) {
                const auto payload = bytes.substr(used, static_cast<std::size_t>(length));
                bytes.remove_prefix(used + static_cast<std::size_t>(length));
                if (!detail::deliver_frame(on_frame, payload)) {
                    return {};
                }
                continue;
            }
        }
        if (!in_payload_) {
            // Slow path: one prefix byte at a time (at most 5 per frame).
            if (!push_prefix_byte(static_cast<std::uint8_t>(bytes.front()), status)) {
                return status;
            }
            bytes.remove_prefix(1);
            if (!in_payload_ || expected_ != 0) {
                continue;
            }
        } else {
            // The payload grows with what arrives: nothing is reserved on the prefix's word alone.
            const auto need = static_cast<std::size_t>(expected_) - payload_.size();
            const auto take = std::min(need, bytes.size());
            payload_.append(bytes.substr(0, take));
            bytes.remove_prefix(take);
            if (payload_.size() < expected_) {
                return {};
            }
        }
        // A frame is complete.
        std::string frame = std::move(payload_);
        payload_.clear();
        in_payload_ = false;
        prefix_size_ = 0;
        prefix_value_ = 0;
        expected_ = 0;
        if (!detail::deliver_frame(on_frame, frame)) {
            return {};
        }
    }
    return {};
}

} // namespace ecsnet::proto
