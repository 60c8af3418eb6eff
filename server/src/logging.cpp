#include "ecsnet/server/logging.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <google/protobuf/stubs/logging.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace ecsnet::server {

namespace {

// Length of the valid UTF-8 sequence starting at text[at] (1 to 4), or 0 if the bytes there are not one
// (overlong forms, surrogates and code points above U+10FFFF are invalid, per RFC 3629).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
    const auto continuation = [&](std::size_t i) { return at + i < text.size() && (byte(i) & 0xC0) == 0x80; };
    const unsigned char lead = byte(0);
    if (lead >= 0xC2 && lead <= 0xDF) {
        return continuation(1) ? 2 : 0;
    }
    if (lead >= 0xE0 && lead <= 0xEF) {
        if (!continuation(1) || !continuation(2)) {
            return 0;
        }
        const bool overlong = lead == 0xE0 && byte(1) < 0xA0;
        const bool surrogate = lead == 0xED && byte(1) >= 0xA0;
        return overlong || surrogate ? 0 : 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        if (!continuation(1) || !continuation(2) || !continuation(3)) {
            return 0;
        }
        const bool overlong = lead == 0xF0 && byte(1) < 0x90;
        const bool too_large = lead == 0xF4 && byte(1) >= 0x90;
        return overlong || too_large ? 0 : 4;
    }
    return 0;
}

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

void append_json_escaped(std::string& out, std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    for (std::size_t at = 0; at < text.size();) {
        const char c = text[at];
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x80) {
            // Valid UTF-8 is copied as is; a byte that is not part of valid UTF-8 becomes U+FFFD, so the
            // line always parses whatever a client sent.
            if (const auto length = utf8_sequence_length(text, at); length != 0) {
                out.append(text.substr(at, length));
                at += length;
            } else {
                out += "\ufffd";
                ++at;
            }
            continue;
        }
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (byte < 0x20 || byte == 0x7f) {
                out += "\\u00";
                out += hex[byte >> 4];
                out += hex[byte & 0xf];
            } else {
                out += c;
            }
        }
        ++at;
    }
}

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
