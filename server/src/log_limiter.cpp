#include "ecsnet/server/log_limiter.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ecsnet::server {

namespace {

// 1930 -> "1,930": summaries are read by people.
std::string with_separators(std::uint64_t value) {
    const auto digits = std::to_string(value);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) {
            out.push_back(',');
        }
        out.push_back(digits[i]);
    }
    return out;
}

std::string describe(std::chrono::steady_clock::duration period) {
    const auto seconds = std::chrono::duration<double>(period).count();
    if (seconds >= 1.0 && std::floor(seconds) == seconds) {
        return fmt::format("{} s", static_cast<std::uint64_t>(seconds));
    }
    return fmt::format("{} ms", std::chrono::duration_cast<std::chrono::milliseconds>(period).count());
}

} // namespace

log_limiter::log_limiter(std::size_t burst, clock::duration period, summary_sink sink)
    : burst_{burst}
    , period_{std::max<clock::duration>(period, std::chrono::milliseconds{1})}
    , sink_{std::move(sink)} {
    kinds_.reserve(max_kinds + 1);
}

log_limiter::kind_record& log_limiter::record_of(std::string_view kind, clock::time_point now) {
    const auto found = std::find_if(kinds_.begin(), kinds_.end(),
                                    [kind](const kind_record& record) { return record.kind == kind; });
    if (found != kinds_.end()) {
        return *found;
    }
    if (kinds_.size() >= max_kinds) {
        // static: clang 14 will not let the lambda below read a local constant uncaptured.
        static constexpr std::string_view other = "other log lines";
        const auto shared = std::find_if(kinds_.begin(), kinds_.end(),
                                         [](const kind_record& record) { return record.kind == other; });
        if (shared != kinds_.end()) {
            return *shared;
        }
        kinds_.push_back(kind_record{std::string{other}, now});
        return kinds_.back();
    }
    kinds_.push_back(kind_record{std::string{kind}, now});
    return kinds_.back();
}

void log_limiter::close_window(kind_record& record, clock::time_point now) {
    if (record.suppressed > 0 && sink_) {
        sink_(fmt::format("{} more {} in the last {}", with_separators(record.suppressed), record.kind,
                          describe(now - record.window_start)));
    }
    record.window_start = now;
    record.written = 0;
    record.suppressed = 0;
}

bool log_limiter::allow(std::string_view kind, clock::time_point now) {
    auto& record = record_of(kind, now);
    if (now - record.window_start >= period_) {
        close_window(record, now);
    }
    if (record.written < burst_) {
        ++record.written;
        return true;
    }
    ++record.suppressed;
    ++record.suppressed_total;
    next_due_ = std::min(next_due_, record.window_start + period_);
    return false;
}

void log_limiter::flush(clock::time_point now) {
    if (now < next_due_) {
        return;
    }
    next_due_ = clock::time_point::max();
    for (auto& record : kinds_) {
        if (record.suppressed == 0) {
            continue;
        }
        if (now - record.window_start >= period_) {
            close_window(record, now);
        } else {
            next_due_ = std::min(next_due_, record.window_start + period_);
        }
    }
}

void log_limiter::flush_all(clock::time_point now) {
    for (auto& record : kinds_) {
        if (record.suppressed > 0) {
            close_window(record, now);
        }
    }
    next_due_ = clock::time_point::max();
}

std::uint64_t log_limiter::suppressed_total(std::string_view kind) const {
    const auto found = std::find_if(kinds_.begin(), kinds_.end(),
                                    [kind](const kind_record& record) { return record.kind == kind; });
    return found == kinds_.end() ? 0 : found->suppressed_total;
}

} // namespace ecsnet::server
