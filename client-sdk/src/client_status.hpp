#pragma once

// What any thread may read about a client (client.hpp, "Thread safety"): where its connection stands, why
// the last one ended, its stats with their per-second rates, and the estimate of the server's clock. One
// mutex: the session writes, client::state(), stats(), server_time_us()... read from anywhere.

#include <chrono>
#include <cstdint>
#include <mutex>

#include "connection.hpp"
#include "ecsnet/client/disconnect.hpp"
#include "ecsnet/client/rate_meter.hpp"
#include "ecsnet/client/server_clock.hpp"
#include "ecsnet/client/stats.hpp"

namespace ecsnet::client::detail {

using steady = std::chrono::steady_clock;

/// Microseconds on the steady clock (the local times of server_clock).
[[nodiscard]] inline std::int64_t local_us(steady::time_point at) noexcept {
    return std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
}

class client_status {
public:
    explicit client_status(std::chrono::milliseconds rate_window);

    /// A new connection: connecting, no disconnect, stats and rates from zero, the clock forgotten.
    /// `rtt_from_pings`: TCP (the RTT is the Pings'); over UDP the transport measures it. False, changing
    /// nothing, while a connection is opening or open.
    bool begin_connect(bool rtt_from_pings);
    void set_state(client_state state);
    /// The session ended: disconnected, for this reason.
    void end(const disconnect_info& info);

    [[nodiscard]] client_state state() const;
    [[nodiscard]] disconnect_info last_disconnect() const;
    [[nodiscard]] client_stats stats() const;
    [[nodiscard]] std::int64_t server_time_us(steady::time_point now) const;
    /// The server tick an input sent now should reach: the next tick by the estimated server clock, counted
    /// from the newest applied tick (server_clock.hpp, next_tick_at; before any clock sample: the tick after
    /// the newest applied).
    [[nodiscard]] std::uint32_t estimated_server_tick(steady::time_point now) const;

    /// Changes counters under the lock.
    template<typename Fn>
    void update(Fn&& fn) {
        std::lock_guard lock{mutex_};
        fn(stats_);
    }

    void set_tick_rate(std::uint32_t tick_rate);
    void add_traffic(std::uint64_t bytes_in, std::uint64_t bytes_out, steady::time_point now);
    void set_transport_figures(const transport_figures& figures);
    /// A Pong for a Ping sent at `sent_us` (local), received at `received_us`, the server's clock reading
    /// `server_us`.
    void on_pong(std::int64_t sent_us, std::int64_t received_us, std::int64_t server_us);
    /// A snapshot applied (or, thin, acked).
    void on_applied(proto::tick_type tick, std::uint64_t server_time_us, bool full_state,
                    std::uint64_t epoch_unix_us, steady::time_point now);

private:
    mutable std::mutex mutex_;
    client_state state_{client_state::idle};
    disconnect_info disconnect_;
    client_stats stats_;
    rate_meter bytes_in_;
    rate_meter bytes_out_;
    rate_meter snapshots_;
    server_clock clock_;
    std::uint32_t tick_rate_{30};
    bool rtt_from_pings_{true};
};

} // namespace ecsnet::client::detail
