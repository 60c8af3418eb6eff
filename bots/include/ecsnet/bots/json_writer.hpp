#pragma once

// A minimal JSON writer for the run report: objects, arrays, strings (escaped per RFC 8259), numbers
// (non-finite ones written as null) and booleans, with two-space indentation. The caller nests begin/end
// calls correctly; keys are written with key() before each member of an object.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ecsnet::bots {

class json_writer {
public:
    json_writer& begin_object();
    json_writer& end_object();
    json_writer& begin_array();
    json_writer& end_array();
    json_writer& key(std::string_view name);
    json_writer& value(std::string_view text);
    json_writer& value(const char* text) { return value(std::string_view{text}); }
    json_writer& value(double number);
    json_writer& value(bool flag);
    template<typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) json_writer& value(T number) {
        before_value();
        out_ += std::to_string(number);
        return *this;
    }

    /// key(name) then value(v).
    template<typename T>
    json_writer& member(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }

    [[nodiscard]] const std::string& str() const noexcept { return out_; }

    /// `text` as a JSON string literal, quotes included.
    [[nodiscard]] static std::string quote(std::string_view text);

private:
    void before_value();
    void newline();
    json_writer& close_container(char closing);

    std::string out_;
    std::vector<bool> first_; // per open container: nothing written in it yet
    bool after_key_{false};
};

} // namespace ecsnet::bots
