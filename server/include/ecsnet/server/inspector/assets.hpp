#pragma once

// The inspector's page (server/inspector/: index.html, inspector.js, inspector.css), embedded into the
// binary at build time (cmake/embed_files.cmake): the admin endpoint serves it with no file access and
// nothing fetched from the network.

#include <span>
#include <string_view>

namespace ecsnet::server::inspector {

struct asset {
    std::string_view name; // file name, e.g. "inspector.js"
    std::string_view content_type;
    std::string_view bytes;
};

[[nodiscard]] std::span<const asset> page_assets() noexcept;

} // namespace ecsnet::server::inspector
