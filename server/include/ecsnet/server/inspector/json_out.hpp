#pragma once

// A compact JSON writer for the inspector's API (no indentation: the payloads go to a browser several
// times a second). Strings are escaped as the JSON log lines are (json_escape.hpp: whatever their bytes,
// clients' names among them, the page parses); non-finite numbers are written as null. The caller nests
// begin/end calls correctly and calls key() before each member of an object. (bots/json_writer.hpp is the
// bots' pretty-printing one; the server does not depend on the bots.)

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ecsnet/server/json_escape.hpp"

namespace ecsnet::server::inspector {

class json_out {
public:
    json_out& begin_object() { return open('{'); }
    json_out& end_object() { return close('}'); }
    json_out& begin_array() { return open('['); }
    json_out& end_array() { return close(']'); }

    json_out& key(std::string_view name) {
        separate();
        quote(name);
        out_ += ':';
        after_key_ = true;
        return *this;
    }
    json_out& value(std::string_view text) {
        separate();
        quote(text);
        return *this;
    }
    json_out& value(const char* text) { return value(std::string_view{text}); }
    json_out& value(const std::string& text) { return value(std::string_view{text}); }
    json_out& value(bool flag) {
        separate();
        out_ += flag ? "true" : "false";
        return *this;
    }
    json_out& null() {
        separate();
        out_ += "null";
        return *this;
    }
    json_out& value(double number) {
        separate();
        if (!std::isfinite(number)) {
            out_ += "null";
            return *this;
        }
        char buffer[32];
        const auto written = std::to_chars(buffer, buffer + sizeof buffer, number);
        out_.append(buffer, written.ptr);
        return *this;
    }
    template<typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) json_out& value(T number) {
        separate();
        char buffer[24];
        const auto written = std::to_chars(buffer, buffer + sizeof buffer, number);
        out_.append(buffer, written.ptr);
        return *this;
    }
    template<typename T>
    json_out& member(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }

    [[nodiscard]] const std::string& str() const noexcept { return out_; }
    [[nodiscard]] std::string take() noexcept { return std::move(out_); }
    void reserve(std::size_t bytes) { out_.reserve(bytes); }

private:
    json_out& open(char bracket) {
        separate();
        out_ += bracket;
        first_.push_back(true);
        return *this;
    }
    json_out& close(char bracket) {
        out_ += bracket;
        first_.pop_back();
        return *this;
    }
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_.empty()) {
            if (!first_.back()) {
                out_ += ',';
            }
            first_.back() = false;
        }
    }
    void quote(std::string_view text) {
        out_ += '"';
        append_json_escaped(out_, text);
        out_ += '"';
    }

    std::string out_;
    std::vector<bool> first_;
    bool after_key_{false};
};

} // namespace ecsnet::server::inspector
