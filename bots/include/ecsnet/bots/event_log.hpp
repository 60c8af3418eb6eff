#pragma once

// The run's event log: desyncs, unexpected disconnects and connect failures, one line each, as they
// happen, to a stream (stderr for ecsnet-bots, so stdout keeps the progress lines and the table). After
// `limit` lines of one kind, further events of that kind are only counted, and the count is printed once
// at the end (a server dropping 500 bots must not print 500 lines). Thread-safe.

#include <cstddef>
#include <map>
#include <mutex>
#include <ostream>
#include <string>

namespace ecsnet::bots {

class event_log {
public:
    event_log(std::ostream& out, std::size_t limit)
        : out_{&out}
        , limit_{limit} {}

    /// Logs "kind: message" unless `limit` lines of this kind were logged already.
    void log(const std::string& kind, const std::string& message) {
        std::lock_guard lock{mutex_};
        auto& seen = seen_[kind];
        ++seen;
        if (seen <= limit_) {
            *out_ << kind << ": " << message << '\n' << std::flush;
        }
    }

    /// One line per kind whose events were not all logged.
    void flush_suppressed() {
        std::lock_guard lock{mutex_};
        for (const auto& [kind, seen] : seen_) {
            if (seen > limit_) {
                *out_ << kind << ": " << (seen - limit_) << " more not shown (" << seen << " in all)\n";
            }
        }
        *out_ << std::flush;
    }

private:
    std::mutex mutex_;
    std::ostream* out_;
    std::size_t limit_;
    std::map<std::string, std::size_t> seen_;
};

} // namespace ecsnet::bots
