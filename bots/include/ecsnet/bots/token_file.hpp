#pragma once

// --token-file: connect tokens for the bots, one base64 token per line (what `ecsnet-token issue` prints,
// one run per bot), bot i using line i. Blank lines and lines starting with '#' are skipped; every token
// must read (transport::read_token_base64), so a truncated file is refused before any bot starts.

#include <cstddef>
#include <string>
#include <vector>

namespace ecsnet::bots {

struct token_file {
    std::vector<std::string> tokens;
    /// Empty when the file was read; otherwise why not ("cannot open ...", "line 3: bad_base64").
    std::string error;
};

[[nodiscard]] token_file read_token_file(const std::string& path);

} // namespace ecsnet::bots
