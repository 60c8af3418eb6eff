#include "ecsnet/server/agones/game_server_state.hpp"

#include <array>
#include <cstddef>

namespace ecsnet::server::agones {

namespace {

// A small cursor over JSON text: enough to find one key of one object, skipping everything else.
class json_cursor {
public:
    explicit json_cursor(std::string_view text)
        : text_{text} {}

    [[nodiscard]] bool done() const noexcept { return at_ >= text_.size(); }

    void skip_space() noexcept {
        while (!done() &&
               (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
            ++at_;
        }
    }

    bool take(char c) noexcept {
        skip_space();
        if (!done() && text_[at_] == c) {
            ++at_;
            return true;
        }
        return false;
    }

    // A string at the cursor (escapes kept as written except \" and \\: state names have none).
    std::optional<std::string> string() {
        skip_space();
        if (done() || text_[at_] != '"') {
            return std::nullopt;
        }
        std::string out;
        for (++at_; !done(); ++at_) {
            const char c = text_[at_];
            if (c == '"') {
                ++at_;
                return out;
            }
            if (c == '\\' && at_ + 1 < text_.size()) {
                ++at_;
            }
            out.push_back(text_[at_]);
        }
        return std::nullopt;
    }

    // Skips one value of any kind; false on malformed text.
    bool skip_value() {
        skip_space();
        if (done()) {
            return false;
        }
        if (text_[at_] == '"') {
            return string().has_value();
        }
        if (text_[at_] != '{' && text_[at_] != '[') {
            while (!done() && text_[at_] != ',' && text_[at_] != '}' && text_[at_] != ']') {
                ++at_;
            }
            return true;
        }
        std::size_t depth = 0;
        while (!done()) {
            const char c = text_[at_];
            if (c == '"') {
                if (!string()) {
                    return false;
                }
                continue;
            }
            ++at_;
            if (c == '{' || c == '[') {
                ++depth;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return true;
            }
        }
        return false;
    }

    // With the cursor at an object, moves to the value of `key` in it; false if the object has none.
    bool find_key(std::string_view key) {
        if (!take('{')) {
            return false;
        }
        if (take('}')) {
            return false;
        }
        for (;;) {
            const auto name = string();
            if (!name || !take(':')) {
                return false;
            }
            if (*name == key) {
                return true;
            }
            if (!skip_value()) {
                return false;
            }
            if (!take(',')) {
                return false;
            }
        }
    }

    [[nodiscard]] std::size_t position() const noexcept { return at_; }
    void seek(std::size_t at) noexcept { at_ = at; }

private:
    std::string_view text_;
    std::size_t at_{0};
};

} // namespace

std::optional<std::string> game_server_state(std::string_view json) {
    json_cursor cursor{json};
    const auto start = cursor.position();
    // A watch line wraps the GameServer in {"result": ...}; GET /gameserver returns it bare.
    if (!cursor.find_key("result")) {
        cursor.seek(start);
    }
    if (!cursor.find_key("status") || !cursor.find_key("state")) {
        return std::nullopt;
    }
    return cursor.string();
}

double state_code(std::string_view state) noexcept {
    static constexpr std::array<std::string_view, 7> known{
        "Scheduled", "RequestReady", "Ready", "Allocated", "Reserved", "Shutdown", "Unhealthy"};
    for (std::size_t i = 0; i < known.size(); ++i) {
        if (known[i] == state) {
            return static_cast<double>(i + 1);
        }
    }
    return state.empty() ? 0.0 : static_cast<double>(known.size() + 1);
}

} // namespace ecsnet::server::agones
