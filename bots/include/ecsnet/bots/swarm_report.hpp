#pragma once

// The result of a load-test run: what ecsnet-bots prints as its final table and writes as its JSON report
// (docs/bots.md lists every key), and the verdict its exit status follows.
//
// Per-bot figures are computed over the bots that were welcomed, each over its own connected time (from
// its welcome to the end of the measurement, or to its disconnect):
//   snapshots per second   applied snapshots / connected seconds
//   ticks applied ratio    applied snapshots / (1 + tick rate x connected seconds): the welcome's full state,
//                          then one per tick the server should have run at its nominal rate. Below 1 when
//                          the bot skipped ticks (the server sends the newest tick when a client's socket
//                          was busy) or when the server itself ran fewer ticks (overruns).
//   tick coverage          applied snapshots / (last tick - first tick + 1): the ticks the server did run
//                          while the bot was connected, so overruns do not count against it.
//   bytes per second       bytes read from (in) and written to (out) the socket / connected seconds.
// Latency: every applied snapshot's update latency, merged across bots (latency_histogram).
// Thin bots (swarm_options::thin) are counted apart, with the same figures: their snapshots are the
// headers they acked, and they have no mirror, so no desync to find.

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "bot.hpp"
#include "latency_histogram.hpp"
#include "progress_series.hpp"
#include "statistics.hpp"
#include "swarm_options.hpp"

namespace ecsnet::bots {

struct latency_summary {
    std::uint64_t samples{};
    std::uint64_t negative_samples{};
    double p50_ms{};
    double p95_ms{};
    double p99_ms{};
    double p999_ms{};
    double max_ms{};
    double mean_ms{};
};

[[nodiscard]] latency_summary summarize_latency(const latency_histogram& histogram,
                                                std::uint64_t negative_samples = 0);

/// How the run ended.
enum class run_end : std::uint8_t {
    duration,       // the planned ramp + duration ran out
    interrupted,    // SIGINT/SIGTERM (or the caller's stop flag)
    all_bots_ended, // every bot failed to connect or was disconnected before the end
    server_stalled, // connected bots, but no snapshot for stall_timeout
};

[[nodiscard]] std::string_view to_string(run_end end) noexcept;

/// The figures of one kind of bot, full or thin (definitions above).
struct bot_group {
    std::size_t clients_requested{};
    std::size_t clients_reached{};  // welcomed
    std::size_t connect_failures{}; // ended before a welcome, or still not welcomed at the end
    std::size_t still_connecting{}; // of those, still trying when the run ended
    std::size_t dropped{};          // welcomed, then disconnected before the end of the run
    std::map<std::string, std::size_t> connect_failure_reasons;
    std::map<std::string, std::size_t> disconnects; // the drops, by reason
    /// The first message seen for each reason of a failure or a drop.
    std::map<std::string, std::string> messages;

    std::uint64_t desyncs{}; // full bots only: thin ones check nothing
    std::size_t desynced_bots{};
    std::uint64_t snapshots_refused{}; // all refusals, desyncs included
    /// Full states applied: each bot's first snapshots (until the server has its first ack), and one after
    /// each refusal.
    std::uint64_t full_states{};

    std::uint64_t snapshots_applied{}; // thin bots: snapshot headers acked
    std::uint64_t inputs_sent{};
    std::uint64_t inputs_refused{};
    std::uint64_t bytes_in{};
    std::uint64_t bytes_out{};
    /// What the bots' UDP transports counted (0 over TCP).
    std::uint64_t packets_sent{};
    std::uint64_t packets_lost{};
    std::uint64_t resends{};
    std::uint64_t inputs_overflowed{};
    /// --predict: server states compared with the bots' predictions, those that differed, and those per
    /// minute of compared game time (all bots together).
    std::uint64_t ticks_compared{};
    std::uint64_t mispredictions{};
    double mispredictions_per_minute{};

    distribution snapshots_per_second;
    distribution ticks_applied_ratio;
    distribution tick_coverage;
    distribution bytes_in_per_second;
    distribution bytes_out_per_second;
    distribution connect_ms;
    latency_summary latency;
    /// The merged latency histogram, coarsened for drawing (coarse_bins).
    std::vector<latency_bin> latency_bins;
};

/// One bot's line of the per-bot table (the HTML report's), read at the end of the measurement.
struct bot_summary {
    std::string name;
    bool thin{};
    bot_phase phase{bot_phase::waiting};
    std::uint64_t applied{}; // snapshots applied (thin bots: acked)
    double ticks_applied_ratio{};
    std::uint64_t desyncs{};
    double latency_p50_ms{};
    double latency_p99_ms{};
    std::uint64_t latency_samples{};
    std::uint64_t bytes_in{};
    std::uint64_t bytes_out{};
    /// Why it ended before the end of the run ("reason: message"); empty when it did not.
    std::string disconnect_reason;
};

/// A bot's line from its reading and its own latency histogram.
[[nodiscard]] bot_summary summarize_bot(std::string name, const bot_reading& reading,
                                        const latency_histogram& latency);

/// The run: the full bots' figures (the bot_group it is), the thin bots' apart, and the verdict.
struct swarm_report : bot_group {
    swarm_options options;

    run_end ended_by{run_end::duration};
    std::string end_detail;
    /// From the first connect to the end of the measurement, and from the end of the ramp to it.
    double elapsed_seconds{};
    double measured_seconds{};
    /// From the servers' welcomes (0 if no bot was welcomed).
    std::uint32_t tick_rate{};

    /// The thin bots (options.thin of them; all zero without).
    bot_group thin;

    /// Every bot, full ones first (bot_summary), and the run second by second (progress_series).
    std::vector<bot_summary> bots;
    progress_series progress;

    /// The bots' process (getrusage).
    double cpu_user_seconds{};
    double cpu_system_seconds{};
    double peak_rss_mb{};

    /// Why the run failed; empty when it passed.
    std::vector<std::string> failures;
    [[nodiscard]] bool passed() const noexcept { return failures.empty(); }
};

/// Fills the per-bot figures and totals of `report` (the full bots) and of `report.thin` from the bots'
/// readings taken at the end of the measurement (see above). `report.options` must be set; the latency
/// summaries are set apart (summarize_latency).
void add_readings(swarm_report& report, const std::vector<bot_reading>& readings);

/// Fills report.failures: no bot welcomed, connect failures, drops (full and thin bots), desyncs, a
/// stalled server, an interruption, and the optional thresholds of the options.
void judge(swarm_report& report);

/// The JSON report.
[[nodiscard]] std::string to_json(const swarm_report& report);

/// The final table and the verdict, for people.
void print_summary(std::ostream& out, const swarm_report& report);

/// "12.3 kB/s", "4.56 MB/s"...
[[nodiscard]] std::string format_rate(double bytes_per_second);

} // namespace ecsnet::bots
