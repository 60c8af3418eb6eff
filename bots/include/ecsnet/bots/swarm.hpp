#pragma once

// The load-test engine behind ecsnet-bots: N bots (bot.hpp) on one asio::io_context run by a few threads
// (options.threads), connected gradually over the ramp, measured for the duration, then closed.
//
//   t = 0 .. ramp        bot i connects at ramp * i / N
//   ramp .. ramp + dur   measured; one progress sample per progress_interval, kept in report.progress and
//                        printed as a line to `progress` (unless quiet)
//   end                  every bot is read (the report's per-bot figures), then closed (Disconnect
//                        CLIENT_QUIT); the run waits at most close_timeout for them to leave
//
// The run ends early, with a clear reason in the report, when it is interrupted (`stop`), when every bot
// has failed to connect or been dropped, or when connected bots have applied no snapshot for
// stall_timeout (the server stopped answering). Every wait is bounded: connects and handshakes by their
// timeouts, the run by ramp + duration, the end by close_timeout.
//
// Desyncs, drops and connect failures are logged to `log` as they happen (event_log.hpp).
// The report is judged (swarm_report.hpp, judge()): report.passed() is what the exit status follows.

#include <atomic>
#include <ostream>

#include "swarm_options.hpp"
#include "swarm_report.hpp"

namespace ecsnet::bots {

[[nodiscard]] swarm_report run_swarm(const swarm_options& options, std::ostream& progress, std::ostream& log,
                                     const std::atomic<bool>* stop = nullptr);

} // namespace ecsnet::bots
