#pragma once

// Log lines that any remote peer can cause (a refused connection, a bad input, a disconnect) are limited per
// kind, so that junk sent at a few thousand connections a second cannot fill a disk: the first `burst`
// lines of a kind in each `period` are written, the rest are only counted, and when the period ends one
// line says how many were left out ("1,930 more PROTOCOL_ERROR disconnects in the last 10 s"). The exact
// counts are always in /metrics; the log keeps examples and a summary.
//
// Kinds are short labels chosen by the program (never text a peer sent); at most `max_kinds` are tracked,
// further ones share one "other" record. Not thread-safe: the server's network thread owns it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ecsnet::server {

class log_limiter {
public:
    using clock = std::chrono::steady_clock;
    /// Writes one summary line (the limiter builds the text).
    using summary_sink = std::function<void(std::string_view line)>;

    static constexpr std::size_t max_kinds = 64;

    log_limiter(std::size_t burst, clock::duration period, summary_sink sink);

    /// Whether a line of `kind` (a noun phrase in the plural: "PROTOCOL_ERROR disconnects") may be written
    /// at `now`; when not, the line is counted for the period's summary.
    [[nodiscard]] bool allow(std::string_view kind, clock::time_point now);

    /// Writes the summary of every kind whose period has ended with lines left out. Cheap when nothing is
    /// due: call it often (the server calls it every tick) so summaries come on time even when a kind's
    /// lines stop.
    void flush(clock::time_point now);

    /// Writes every pending summary now, whatever the periods (at shutdown).
    void flush_all(clock::time_point now);

    /// Lines of `kind` left out since the limiter started (for tests).
    [[nodiscard]] std::uint64_t suppressed_total(std::string_view kind) const;

private:
    struct kind_record {
        std::string kind;
        clock::time_point window_start;
        std::size_t written{};
        std::uint64_t suppressed{};       // in the current window
        std::uint64_t suppressed_total{}; // since the start
    };

    kind_record& record_of(std::string_view kind, clock::time_point now);
    void close_window(kind_record& record, clock::time_point now);

    std::size_t burst_;
    clock::duration period_;
    summary_sink sink_;
    std::vector<kind_record> kinds_;
    clock::time_point next_due_{clock::time_point::max()};
};

} // namespace ecsnet::server
