#include "ecsnet/server/logging.hpp"

#include <chrono>
#include <stdexcept>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <google/protobuf/stubs/logging.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "ecsnet/server/json_escape.hpp"

namespace ecsnet::server {

namespace {

// protobuf writes a line to stderr for every string with invalid UTF-8 it refuses to parse, unthrottled: any
// peer could write the server's log with malformed messages. The refusal itself is counted and logged through
// the log limiter where the message is handled; protobuf's own line is kept for --log-level debug.
void protobuf_log_to_debug(google::protobuf::LogLevel level, const char* file, int line,
                           const std::string& message) {
    if (level == google::protobuf::LOGLEVEL_FATAL) {
        spdlog::critical("protobuf {}:{}: {}", file, line, message);
    } else {
        spdlog::debug("protobuf {}:{}: {}", file, line, message);
    }
}

} // namespace

void json_formatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
    std::string line;
    line.reserve(msg.payload.size() + 96);
    const auto since_epoch = msg.time.time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch - seconds).count();
    line += fmt::format("{{\"time\":\"{:%Y-%m-%dT%H:%M:%S}.{:06d}Z\",\"level\":\"",
                        fmt::gmtime(static_cast<std::time_t>(seconds.count())), micros);
    const auto level = spdlog::level::to_string_view(msg.level);
    line.append(level.data(), level.size());
    line += "\",\"logger\":\"";
    append_json_escaped(line, std::string_view{msg.logger_name.data(), msg.logger_name.size()});
    line += "\",\"msg\":\"";
    append_json_escaped(line, std::string_view{msg.payload.data(), msg.payload.size()});
    line += "\"}\n";
    dest.append(line.data(), line.data() + line.size());
}

std::unique_ptr<spdlog::formatter> json_formatter::clone() const {
    return std::make_unique<json_formatter>();
}

log_format parse_log_format(std::string_view text) {
    if (text == "text") {
        return log_format::text;
    }
    if (text == "json") {
        return log_format::json;
    }
    throw std::invalid_argument("log format must be text or json, not '" + std::string{text} + "'");
}

void configure_logging(std::string_view name, std::string_view level, log_format format) {
    const auto parsed = spdlog::level::from_str(std::string{level});
    if (parsed == spdlog::level::off && level != "off") {
        throw std::invalid_argument("unknown log level '" + std::string{level} +
                                    "' (trace, debug, info, warn, error, critical, off)");
    }
    auto logger = std::make_shared<spdlog::logger>(std::string{name},
                                                   std::make_shared<spdlog::sinks::stdout_sink_mt>());
    if (format == log_format::json) {
        logger->set_formatter(std::make_unique<json_formatter>());
    } else {
        logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
    }
    logger->set_level(parsed);
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(std::move(logger));
    google::protobuf::SetLogHandler(&protobuf_log_to_debug);
}

} // namespace ecsnet::server
