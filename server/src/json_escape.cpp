#include "ecsnet/server/json_escape.hpp"

#include <nlohmann/json.hpp>

namespace ecsnet::server {

void append_json_escaped(std::string& out, std::string_view text) {
    const auto quoted = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out.append(quoted, 1, quoted.size() - 2); // without the quotes
}

} // namespace ecsnet::server
