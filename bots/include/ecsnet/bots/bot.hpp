#pragma once

// One bot: a real SDK client (client::client on the swarm's io_context, so its own strand and its own
// mirror), the behaviour steering its avatar, and what it measures. A thin bot (client_options::thin) has
// no mirror: it acks each snapshot's header, measures its latency the same way and sends the same inputs
// (its behaviour cannot see its avatar: wander never turns back from the edge).
//
// On every snapshot the SDK applies (the mirror has checked it against the server's checksum), the bot
// records the update latency: the moment it applied it (this machine's wall clock) minus the server's
// timestamp of that tick (ServerWelcome.server_epoch_unix_us + the snapshot's server time), then sends its
// behaviour's input. A snapshot the mirror refuses for a checksum mismatch is a desync: logged with its tick
// and counted (client_stats::checksum_mismatches). A connection that ends before the bot closes it is a
// connect failure (never welcomed) or a drop (welcomed), logged with the reason.
//
// Threads: the callbacks run on the client's strand; connect(), close() and read() may be called from any
// thread (the measurements are behind a mutex taken once per snapshot).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <asio/io_context.hpp>

#include <ecsnet/arena/input.hpp>
#include <ecsnet/client/client.hpp>
#include <ecsnet/client/prediction.hpp>

#include "behaviour.hpp"
#include "event_log.hpp"
#include "latency_histogram.hpp"
#include "swarm_options.hpp"

namespace ecsnet::bots {

enum class bot_phase : std::uint8_t {
    waiting,    // not started yet (ramp)
    connecting, // connect() called, no welcome yet
    connected,  // welcomed: snapshots flow
    failed,     // ended before any welcome: a connect failure
    dropped,    // ended after the welcome, before the run's end: disconnected by the server or the network
    closed,     // closed by the swarm at the end of the run
};

[[nodiscard]] std::string_view to_string(bot_phase phase) noexcept;

/// Counters every bot of a swarm updates (cheap enough to read every few milliseconds).
struct swarm_counters {
    std::atomic<std::uint64_t> snapshots_applied{0};
    std::atomic<std::size_t> connected{0}; // bots in phase connected
    std::atomic<std::size_t> ended{0};     // bots in phase failed, dropped or closed
};

/// What a bot measured, as read at one moment.
struct bot_reading {
    bot_phase phase{bot_phase::waiting};
    /// A thin bot (no mirror: no desync to find).
    bool thin{};
    /// The server welcomed it (phase connected, or dropped/closed after a welcome).
    bool welcomed{};
    /// Since its welcome, to the moment of the reading or to its end.
    double connected_seconds{};
    /// From connect() to the welcome (0 if never welcomed).
    double connect_seconds{};
    /// Snapshots applied: one per tick applied.
    std::uint64_t applied{};
    std::optional<proto::tick_type> first_tick;
    std::optional<proto::tick_type> last_tick;
    std::uint32_t tick_rate{};
    /// Latencies below zero (this machine's clock behind the server's), recorded as 0.
    std::uint64_t negative_latencies{};
    /// From client_stats.
    std::uint64_t desyncs{};
    std::uint64_t snapshots_refused{};
    std::uint64_t full_states{};
    std::uint64_t bytes_in{};
    std::uint64_t bytes_out{};
    std::uint64_t inputs_sent{};
    std::uint64_t inputs_refused{};
    /// From the transport (UDP only).
    std::uint64_t packets_sent{};
    std::uint64_t packets_lost{};
    std::uint64_t resends{};
    std::uint64_t inputs_overflowed{};
    /// --predict: server states compared with the prediction of their tick, and those that differed.
    std::uint64_t ticks_compared{};
    std::uint64_t mispredictions{};
    /// Why it ended (phase failed, dropped or closed).
    client::disconnect_info ended;
};

class bot {
public:
    /// Bot `index` of its kind: full bots 0..clients-1, thin bots 0..thin-1 (tokens and seeds count the thin
    /// ones after the full ones).
    bot(asio::io_context& io, std::size_t index, bool thin, const swarm_options& options,
        swarm_counters& counters, event_log& log);
    bot(const bot&) = delete;
    bot& operator=(const bot&) = delete;
    ~bot();

    /// Starts connecting (once).
    void connect();
    /// Ends the session (Disconnect(CLIENT_QUIT) to the server); what ends it afterwards is no drop.
    void close();
    /// True once no connection is opening or open.
    [[nodiscard]] bool settled() const;
    /// What the bot has done so far; with `latency`, also adds every latency recorded so far to it, read
    /// together with the counts (a snapshot applied between two separate reads would count a latency
    /// sample with no applied snapshot).
    [[nodiscard]] bot_reading read(std::chrono::steady_clock::time_point now,
                                   latency_histogram* latency = nullptr) const;

    /// Its position among all the bots of the run (full ones first).
    [[nodiscard]] std::size_t index() const noexcept { return index_; }
    [[nodiscard]] bool thin() const noexcept { return thin_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
    using steady = std::chrono::steady_clock;

    void handle_connected();
    void handle_snapshot(const proto::applied_snapshot& applied);
    void handle_refused(const proto::error& error);
    void handle_disconnected(const client::disconnect_info& info);
    void set_phase(bot_phase phase); // with mutex_ held

    std::unique_ptr<client::prediction<arena::Transform>> prediction_; // --predict, full bots
    std::string steering_{arena::encode(arena::move_input{})};         // the newest input, when predicting
    const std::size_t index_;
    const bool thin_;
    const std::string name_;
    const std::string host_;
    const std::uint16_t port_;
    swarm_counters* counters_;
    event_log* log_;

    mutable std::mutex mutex_;
    bot_phase phase_{bot_phase::waiting};
    bool closing_{false};
    steady::time_point connect_started_{};
    steady::time_point connected_at_{};
    steady::time_point ended_at_{};
    std::uint64_t applied_{};
    std::optional<proto::tick_type> first_tick_;
    std::optional<proto::tick_type> last_tick_;
    std::uint32_t tick_rate_{};
    latency_histogram latency_;
    std::uint64_t negative_latencies_{};
    client::disconnect_info ended_;

    behaviour behaviour_; // on the strand only
    // Last: destroyed first, so no callback can run on a half-destroyed bot (client.hpp, "Lifetime").
    std::unique_ptr<client::client> client_;
};

} // namespace ecsnet::bots
