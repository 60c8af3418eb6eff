#pragma once

// The run as one self-contained HTML page (ecsnet-bots --report-html FILE): inline CSS and inline SVG, no
// script, nothing fetched, so it opens anywhere, offline, and can be attached to a ticket. It shows:
//   #summary            the verdict, clients, duration, transport, ticks applied ratio, desyncs, latency
//   #latency-histogram  the full bots' update latency (thin bots': #thin-latency-histogram) as SVG bars,
//                       one a quarter octave (coarse_bins), from the swarm's merged histogram
//   #progress           the run second by second (progress_series): connected bots, snapshots/s, bytes
//                       in/out, latency p99 (a table, and the snapshots/s and latency p99 as SVG lines)
//   #bots               one row a bot: name, state, ticks applied, desyncs, latency p50/p99, bytes, why it
//                       ended early (at most max_bot_rows rows: the page says how many were left out)
// Every string from outside (bot names from --name-prefix, the host, server messages) is escaped.

#include <cstddef>
#include <string>
#include <string_view>

#include "swarm_report.hpp"

namespace ecsnet::bots {

/// More bots than this and the per-bot table shows the first ones only (a 20,000-row table helps no one).
inline constexpr std::size_t max_bot_rows = 2000;

/// `text` with & < > " ' replaced by character references: safe as element content and as a quoted
/// attribute value.
[[nodiscard]] std::string html_escape(std::string_view text);

/// The page.
[[nodiscard]] std::string to_html(const swarm_report& report);

} // namespace ecsnet::bots
