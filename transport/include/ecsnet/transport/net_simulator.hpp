#pragma once

// A network simulator for datagrams: loss, latency, jitter, duplication and reordering (sim_config.hpp),
// deterministic for a seed (sim_random.hpp) and driven by the caller's time. The security layer puts one on
// its send path and one on its receive path (each datagram submitted with its destination or source, any
// copyable Address type), and tests put one between two links.
//
//   submit(datagram, now[, address])   copies it, decides its fate: dropped, or due at now + its delay (and
//                                      maybe a duplicate a little later)
//   deliver_due(now, out)              every datagram due by `now`, in due order (ties in submit order):
//                                      out(span) or out(span, address)
//   next_due()                         when the next one is due (the owner's timer)
//
// With the simulator disabled (sim_config{}), datagrams are due at their submit time and never dropped.
// Memory: at most max_datagrams held; buffers are reused.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "clock.hpp"
#include "random.hpp"
#include "sim_config.hpp"

namespace ecsnet::transport {

struct sim_stats {
    std::uint64_t submitted{}, delivered{}, lost{}, duplicated{}, reordered{}, overflow{};
};

/// The fate of one datagram (the part of the simulator that does not depend on the address type).
class sim_schedule {
public:
    struct fate {
        std::uint8_t copies{0}; // 0 (lost), 1, or 2 (duplicated)
        bool reordered{false};
        clock::duration delay[2]{};
    };

    explicit sim_schedule(const sim_config& config) noexcept
        : config_{config}
        , random_{config.seed} {}

    /// Draws the next datagram's fate (always the same number of draws, so fates depend on the seed and the
    /// datagram's rank only).
    fate next() noexcept;

    /// New settings; the random stream goes on (it is not reseeded).
    void configure(const sim_config& config) noexcept { config_ = config; }
    [[nodiscard]] const sim_config& config() const noexcept { return config_; }

private:
    sim_config config_;
    sim_random random_;
};

template<typename Address = std::monostate>
class basic_net_simulator {
public:
    explicit basic_net_simulator(sim_config config = {})
        : schedule_{config} {}

    /// Copies the datagram and schedules it (or drops it).
    void submit(std::span<const std::byte> datagram, clock::time_point now,
                const Address& address = Address{}) {
        ++stats_.submitted;
        const auto fate = schedule_.next();
        if (fate.copies == 0) {
            ++stats_.lost;
            return;
        }
        stats_.reordered += fate.reordered ? 1 : 0;
        stats_.duplicated += fate.copies > 1 ? 1 : 0;
        for (std::uint8_t copy = 0; copy < fate.copies; ++copy) {
            if (held_.size() >= schedule_.config().max_datagrams) {
                ++stats_.overflow;
                return;
            }
            auto bytes = take_buffer();
            bytes.assign(datagram.begin(), datagram.end());
            held_.push_back(held{now + fate.delay[copy], order_++, std::move(bytes), address});
            std::push_heap(held_.begin(), held_.end(), later);
        }
    }

    /// Delivers every datagram due by `now` to out(std::span<const std::byte>) or
    /// out(std::span<const std::byte>, const Address&); returns how many. `out` may submit more datagrams
    /// (to this simulator or another).
    template<typename Out>
    std::size_t deliver_due(clock::time_point now, Out&& out) {
        std::size_t count = 0;
        while (!held_.empty() && held_.front().due <= now) {
            std::pop_heap(held_.begin(), held_.end(), later);
            held datagram = std::move(held_.back());
            held_.pop_back();
            const std::span<const std::byte> bytes{datagram.bytes};
            if constexpr (std::is_invocable_v<Out&, std::span<const std::byte>, const Address&>) {
                out(bytes, datagram.address);
            } else {
                out(bytes);
            }
            ++count;
            ++stats_.delivered;
            give_back(std::move(datagram.bytes));
        }
        return count;
    }

    [[nodiscard]] std::optional<clock::time_point> next_due() const {
        if (held_.empty()) {
            return std::nullopt;
        }
        return held_.front().due;
    }

    [[nodiscard]] std::size_t in_flight() const noexcept { return held_.size(); }
    [[nodiscard]] const sim_stats& stats() const noexcept { return stats_; }
    [[nodiscard]] const sim_config& config() const noexcept { return schedule_.config(); }
    /// New settings for the datagrams submitted from now on (those held keep their times).
    void configure(const sim_config& config) noexcept { schedule_.configure(config); }

private:
    struct held {
        clock::time_point due;
        std::uint64_t order;
        std::vector<std::byte> bytes;
        Address address;
    };
    // A min-heap on (due, order).
    static bool later(const held& a, const held& b) noexcept {
        return a.due != b.due ? a.due > b.due : a.order > b.order;
    }
    std::vector<std::byte> take_buffer() {
        if (spare_.empty()) {
            return {};
        }
        auto bytes = std::move(spare_.back());
        spare_.pop_back();
        return bytes;
    }
    void give_back(std::vector<std::byte>&& bytes) {
        if (spare_.size() < max_spare) {
            bytes.clear();
            spare_.push_back(std::move(bytes));
        }
    }

    static constexpr std::size_t max_spare = 256;

    sim_schedule schedule_;
    std::vector<held> held_;
    std::vector<std::vector<std::byte>> spare_;
    std::uint64_t order_{0};
    sim_stats stats_;
};

using net_simulator = basic_net_simulator<>;

} // namespace ecsnet::transport
