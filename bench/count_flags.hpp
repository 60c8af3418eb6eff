#pragma once

// The command lines of the sockets-free cost programs (the *_callgrind benches): "--name N" pairs of whole
// numbers, each with its smallest accepted value. Anything else is a usage error, so that a mistyped flag
// never measures the defaults unnoticed.

#include <cstdlib>
#include <initializer_list>
#include <string_view>

namespace ecsnet::bench {

struct count_flag {
    std::string_view name;
    long minimum;
    long* value;
};

/// Reads argv into the flags' values; false for an unknown flag, a flag without a value, a value that is
/// not a whole number, or one below its minimum.
inline bool read_count_flags(int argc, char** argv, std::initializer_list<count_flag> flags) {
    if (argc % 2 == 0) {
        return false;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view name{argv[i]};
        char* end = nullptr;
        const long value = std::strtol(argv[i + 1], &end, 10);
        const count_flag* match = nullptr;
        for (const auto& flag : flags) {
            if (flag.name == name) {
                match = &flag;
            }
        }
        if (match == nullptr || end == argv[i + 1] || *end != '\0' || value < match->minimum) {
            return false;
        }
        *match->value = value;
    }
    return true;
}

} // namespace ecsnet::bench
