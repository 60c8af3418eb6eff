#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header).

#include <chrono>
#include <cstddef>

namespace ecsnet::transport {

struct link_config {
    std::size_t max_body_bytes{1175};
    std::size_t max_message_bytes{256 * 1024};
};

} // namespace ecsnet::transport
