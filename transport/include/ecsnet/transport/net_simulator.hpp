#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header): the agreed API shape
// (datagrams with an address), loss and fixed latency only.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <variant>
#include <vector>

#include "clock.hpp"
#include "sim_config.hpp"

namespace ecsnet::transport {

template<typename Address = std::monostate>
class basic_net_simulator {
public:
    explicit basic_net_simulator(sim_config config = {})
        : config_{config}
        , state_{config.seed | 1} {}

    void submit(std::span<const std::byte> datagram, clock::time_point now,
                const Address& address = Address{}) {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        if (static_cast<double>(state_ % 1'000'000) / 1e6 < config_.loss ||
            held_.size() >= config_.max_datagrams) {
            return;
        }
        held_.push_back({now + config_.latency, {datagram.begin(), datagram.end()}, address});
    }

    template<typename Out>
    std::size_t deliver_due(clock::time_point now, Out&& out) {
        std::size_t count = 0;
        while (!held_.empty() && held_.front().due <= now) {
            auto datagram = std::move(held_.front());
            held_.erase(held_.begin());
            if constexpr (std::is_invocable_v<Out&, std::span<const std::byte>, const Address&>) {
                out(std::span<const std::byte>{datagram.bytes}, datagram.address);
            } else {
                out(std::span<const std::byte>{datagram.bytes});
            }
            ++count;
        }
        return count;
    }

    [[nodiscard]] std::optional<clock::time_point> next_due() const {
        if (held_.empty()) {
            return std::nullopt;
        }
        return held_.front().due;
    }

private:
    struct held {
        clock::time_point due;
        std::vector<std::byte> bytes;
        Address address;
    };
    sim_config config_;
    std::uint64_t state_;
    std::vector<held> held_; // fixed latency: due times in submit order
};

using net_simulator = basic_net_simulator<>;

} // namespace ecsnet::transport
