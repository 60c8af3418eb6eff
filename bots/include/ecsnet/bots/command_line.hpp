#pragma once

// ecsnet-bots' flags (docs/bots.md lists them): parsed into swarm_options, checked (ranges, a token file
// with a token for every bot, simulator flags with UDP only), or the exit code to leave with (0 after
// --help, 2 for bad arguments, the reason already written to `err`).

#include <optional>
#include <ostream>
#include <string>

#include "swarm_options.hpp"

namespace ecsnet::bots {

struct command_line {
    std::optional<swarm_options> options; // set: run with these
    std::string report_path;              // --report, or empty
    std::string report_html_path;         // --report-html, or empty
    std::string token_file;               // --token-file, or empty
    int exit_code{0};                     // when options is unset
};

[[nodiscard]] command_line parse_command_line(int argc, const char* const* argv, std::ostream& out,
                                              std::ostream& err);

} // namespace ecsnet::bots
