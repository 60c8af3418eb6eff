#pragma once

// The send side of the unreliable channel: messages queued by send() until the next write_packets, which
// writes them all (whole, or in fragments when over one body; each fragmented message gets the next 16-bit
// group id at send()). Bytes go into one flat buffer that keeps its capacity, so the steady state (a
// snapshot or two per tick) allocates nothing.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "channel.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

class unreliable_queue {
public:
    struct item {
        std::size_t offset{};
        std::uint32_t size{};
        sequence_t group{}; // fragmented messages only
        bool fragmented{};
    };

    unreliable_queue(std::size_t max_queue_bytes, std::size_t max_message_bytes, std::size_t max_whole_bytes)
        : max_queue_bytes_{max_queue_bytes}
        , max_message_bytes_{max_message_bytes}
        , max_whole_bytes_{max_whole_bytes} {}

    send_status push(std::span<const std::byte> message) {
        if (message.size() > max_message_bytes_) {
            return send_status::too_big;
        }
        if (bytes_.size() + message.size() > max_queue_bytes_) {
            return send_status::queue_full;
        }
        item it{bytes_.size(), static_cast<std::uint32_t>(message.size()), 0,
                message.size() > max_whole_bytes_};
        if (it.fragmented) {
            it.group = next_group_++;
        }
        bytes_.insert(bytes_.end(), message.begin(), message.end());
        items_.push_back(it);
        return send_status::queued;
    }

    [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
    [[nodiscard]] std::span<const item> items() const noexcept { return items_; }
    [[nodiscard]] std::span<const std::byte> bytes(const item& it) const noexcept {
        return std::span<const std::byte>{bytes_}.subspan(it.offset, it.size);
    }
    [[nodiscard]] std::size_t queued_bytes() const noexcept { return bytes_.size(); }
    void clear() noexcept {
        bytes_.clear();
        items_.clear();
    }

private:
    std::vector<std::byte> bytes_;
    std::vector<item> items_;
    std::size_t max_queue_bytes_;
    std::size_t max_message_bytes_;
    std::size_t max_whole_bytes_;
    sequence_t next_group_{0};
};

} // namespace ecsnet::transport
