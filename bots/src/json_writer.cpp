#include "ecsnet/bots/json_writer.hpp"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace ecsnet::bots {

std::string json_writer::quote(std::string_view text) {
    // Escaped as the server's JSON log lines are (server/include/ecsnet/server/json_escape.hpp): RFC 8259,
    // and each byte outside valid UTF-8 (a server's message the bots quote) as U+FFFD.
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void json_writer::newline() {
    out_ += '\n';
    out_.append(first_.size() * 2, ' ');
}

void json_writer::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) {
            out_ += ',';
        }
        first_.back() = false;
        newline();
    }
}

json_writer& json_writer::begin_object() {
    before_value();
    out_ += '{';
    first_.push_back(true);
    return *this;
}

json_writer& json_writer::close_container(char closing) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) {
        newline();
    }
    out_ += closing;
    return *this;
}

json_writer& json_writer::end_object() {
    return close_container('}');
}

json_writer& json_writer::begin_array() {
    before_value();
    out_ += '[';
    first_.push_back(true);
    return *this;
}

json_writer& json_writer::end_array() {
    return close_container(']');
}

json_writer& json_writer::key(std::string_view name) {
    before_value();
    out_ += quote(name);
    out_ += ": ";
    after_key_ = true;
    return *this;
}

json_writer& json_writer::value(std::string_view text) {
    before_value();
    out_ += quote(text);
    return *this;
}

json_writer& json_writer::value(double number) {
    before_value();
    if (!std::isfinite(number)) {
        out_ += "null";
        return *this;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", number);
    out_ += text;
    return *this;
}

json_writer& json_writer::value(bool flag) {
    before_value();
    out_ += flag ? "true" : "false";
    return *this;
}

} // namespace ecsnet::bots
