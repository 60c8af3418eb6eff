#pragma once

// One direction of the virtual wire (tun_wire.cpp): every IP packet read from the source TUN device is
// counted (by transport protocol), handed to the transport's network simulator (loss, latency, jitter,
// duplication, reordering: transport/net_simulator.hpp, deterministic for its seed, at most
// `max_datagrams` held), and written to the destination device when due.
//
//   offer(packet, now)              counts it and schedules it (or drops it: loss, or a full queue)
//   release_due(now, write)         write(span) -> bool for every packet due by `now`, in due order
//   next_due()                      when the next one is due (the loop's timeout)
//
// The counts keep offered = lost + overflow + delivered + write_failed + in flight, in packets and bytes,
// when nothing is duplicated (a duplicated packet counts once in offered, twice in what leaves). How late the
// loop woke for a due packet is recorded too, so that a run can tell the wire's own delay from the one
// it was asked for.

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "ecsnet/transport/clock.hpp"
#include "ecsnet/transport/net_simulator.hpp"
#include "ecsnet/transport/sim_config.hpp"
#include "ip_packet.hpp"

namespace ecsnet::bench::wire {

using transport::clock;

struct traffic {
    std::uint64_t packets{0};
    std::uint64_t bytes{0};

    void add(std::size_t size) noexcept {
        ++packets;
        bytes += size;
    }
};

/// How late the loop released packets after they were due: a log2 histogram in microseconds (bucket b holds
/// lateness below 2^b us, bucket 0 below 1 us), so percentiles are known to within a factor of 2.
class lateness_histogram {
public:
    static constexpr std::size_t buckets = 32;

    void record(clock::duration late) noexcept {
        const auto us = static_cast<std::uint64_t>(
            std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(late).count()));
        const auto bucket = std::min<std::size_t>(buckets - 1, static_cast<std::size_t>(std::bit_width(us)));
        ++counts_[bucket];
        ++count_;
        max_us_ = std::max(max_us_, us);
    }

    [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
    [[nodiscard]] std::uint64_t max_us() const noexcept { return max_us_; }

    /// The upper bound (us) of the bucket holding the q-quantile (nearest rank); 0 when empty.
    [[nodiscard]] std::uint64_t quantile_bound_us(double q) const noexcept {
        if (count_ == 0) {
            return 0;
        }
        const auto rank = std::max<std::uint64_t>(
            1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
        std::uint64_t seen = 0;
        for (std::size_t b = 0; b < buckets; ++b) {
            seen += counts_[b];
            if (seen >= rank) {
                return std::uint64_t{1} << b;
            }
        }
        return max_us_;
    }

private:
    std::array<std::uint64_t, buckets> counts_{};
    std::uint64_t count_{0};
    std::uint64_t max_us_{0};
};

struct direction_counters {
    traffic offered;                                              // read from the source device
    std::array<traffic, ip_protocol_count> offered_by_protocol{}; // the same, by ip_protocol
    traffic lost;                                                 // dropped by the configured loss
    traffic overflow;                                             // dropped: max_datagrams already held
    traffic delivered;                                            // written to the destination device
    traffic write_failed;                                         // the destination device refused them
    std::uint64_t max_in_flight{0};
    lateness_histogram lateness; // per wake that released packets: now - the earliest due time
};

class wire_direction {
public:
    explicit wire_direction(const transport::sim_config& config)
        : simulator_{config} {}

    void offer(std::span<const std::byte> packet, clock::time_point now) {
        counters_.offered.add(packet.size());
        counters_.offered_by_protocol[static_cast<std::size_t>(classify(packet))].add(packet.size());
        const auto lost_before = simulator_.stats().lost;
        const auto held_before = simulator_.in_flight();
        simulator_.submit(packet, now);
        if (simulator_.stats().lost != lost_before) {
            counters_.lost.add(packet.size());
        } else if (simulator_.in_flight() == held_before) {
            counters_.overflow.add(packet.size()); // not even its first copy found room
        }
        counters_.max_in_flight = std::max<std::uint64_t>(counters_.max_in_flight, simulator_.in_flight());
    }

    /// Calls write(std::span<const std::byte>) -> bool (true: written) for every packet due by `now`;
    /// returns how many were released.
    template<typename Write>
    std::size_t release_due(clock::time_point now, Write&& write) {
        const auto due = simulator_.next_due();
        if (!due || *due > now) {
            return 0;
        }
        counters_.lateness.record(now - *due);
        return simulator_.deliver_due(now, [&](std::span<const std::byte> packet) {
            if (write(packet)) {
                counters_.delivered.add(packet.size());
            } else {
                counters_.write_failed.add(packet.size());
            }
        });
    }

    [[nodiscard]] std::optional<clock::time_point> next_due() const { return simulator_.next_due(); }
    [[nodiscard]] std::size_t in_flight() const noexcept { return simulator_.in_flight(); }
    [[nodiscard]] const direction_counters& counters() const noexcept { return counters_; }
    [[nodiscard]] const transport::sim_config& config() const noexcept { return simulator_.config(); }
    [[nodiscard]] const transport::sim_stats& simulator_stats() const noexcept { return simulator_.stats(); }

private:
    transport::net_simulator simulator_;
    direction_counters counters_;
};

} // namespace ecsnet::bench::wire
