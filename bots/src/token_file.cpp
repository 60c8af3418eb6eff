#include "ecsnet/bots/token_file.hpp"

#include <fstream>

#include <ecsnet/transport/connect_token.hpp>

namespace ecsnet::bots {

token_file read_token_file(const std::string& path) {
    token_file out;
    std::ifstream in{path};
    if (!in) {
        out.error = "cannot open " + path;
        return out;
    }
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') {
            continue;
        }
        const auto token = transport::read_token_base64(line);
        if (!token) {
            out.tokens.clear();
            out.error = path + ", line " + std::to_string(number) + ": not a connect token (" +
                        std::string{transport::to_string(token.error())} + ")";
            return out;
        }
        out.tokens.push_back(line.substr(first, line.find_last_not_of(" \t\r") - first + 1));
    }
    return out;
}

} // namespace ecsnet::bots
