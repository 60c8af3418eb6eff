// STAND-IN until wip/transport-core merges: see link.hpp and net_simulator.hpp.

#include <algorithm>
#include <cstring>

#include "ecsnet/transport/link.hpp"

namespace ecsnet::transport {

link::link(link_config config)
    : config_{config} {}

send_status link::send(channel ch, std::span<const std::byte> message, clock::time_point) {
    if (message.size() + 3 > config_.max_body_bytes) {
        return send_status::too_big;
    }
    queued_.push_back(static_cast<std::byte>(ch));
    queued_.push_back(static_cast<std::byte>(message.size() & 0xFF));
    queued_.push_back(static_cast<std::byte>(message.size() >> 8));
    queued_.insert(queued_.end(), message.begin(), message.end());
    return send_status::queued;
}

std::size_t link::write_packets(clock::time_point,
                                const std::function<void(std::span<const std::byte>)>& sink) {
    std::size_t bodies = 0;
    std::size_t start = 0;
    while (start < queued_.size()) {
        std::size_t end = start;
        while (end < queued_.size()) {
            const auto size = 3 + (std::to_integer<std::size_t>(queued_[end + 1]) |
                                   (std::to_integer<std::size_t>(queued_[end + 2]) << 8));
            if (end + size - start > config_.max_body_bytes) {
                break;
            }
            end += size;
        }
        sink(std::span{queued_}.subspan(start, end - start));
        stats_.packets_sent++;
        stats_.bytes_sent += end - start;
        ++bodies;
        start = end;
    }
    queued_.clear();
    return bodies;
}

receive_result link::receive(std::span<const std::byte> body, clock::time_point,
                             const std::function<void(channel, std::span<const std::byte>)>& deliver) {
    std::size_t at = 0;
    while (at < body.size()) { // validate whole before delivering
        if (body.size() - at < 3 || std::to_integer<unsigned>(body[at]) > 2) {
            return {receive_error::truncated, 0};
        }
        const auto size =
            std::to_integer<std::size_t>(body[at + 1]) | (std::to_integer<std::size_t>(body[at + 2]) << 8);
        if (body.size() - at - 3 < size) {
            return {receive_error::truncated, 0};
        }
        at += 3 + size;
    }
    std::size_t delivered = 0;
    for (at = 0; at < body.size();) {
        const auto size =
            std::to_integer<std::size_t>(body[at + 1]) | (std::to_integer<std::size_t>(body[at + 2]) << 8);
        deliver(static_cast<channel>(body[at]), body.subspan(at + 3, size));
        ++delivered;
        at += 3 + size;
    }
    stats_.packets_received++;
    stats_.bytes_received += body.size();
    return {receive_error::none, delivered};
}

bool link::wants_to_send(clock::time_point) const {
    return !queued_.empty();
}

std::optional<clock::time_point> link::next_send_time(clock::time_point now) const {
    return queued_.empty() ? std::nullopt : std::optional{now};
}

clock::duration link::oldest_unacked_reliable_age(clock::time_point) const {
    return {};
}

} // namespace ecsnet::transport
