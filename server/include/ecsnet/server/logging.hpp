#pragma once

// Logging set-up: spdlog to standard output, as human-readable text or as JSON lines (one object per
// line: time, level, logger, msg), with the message escaped per RFC 8259 so any byte a client sends and we
// log (a client name, a bad frame's description) yields valid JSON.

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/formatter.h>
#include <spdlog/spdlog.h>

namespace ecsnet::server {

enum class log_format { text, json };

/// spdlog formatter writing {"time":"...","level":"info","logger":"server","msg":"..."} lines.
class json_formatter final : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
    [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override;
};

/// Replaces the default logger with one named `name` writing to stdout in `format`, at `level` ("trace",
/// "debug", "info", "warn", "error", "critical", "off"); throws std::invalid_argument for another level.
void configure_logging(std::string_view name, std::string_view level, log_format format);

/// Parses "text" or "json"; throws std::invalid_argument otherwise.
[[nodiscard]] log_format parse_log_format(std::string_view text);

} // namespace ecsnet::server
