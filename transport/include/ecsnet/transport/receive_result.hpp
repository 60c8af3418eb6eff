#pragma once

// STAND-IN until wip/transport-core merges (the link engineer owns this header).

#include <cstddef>
#include <cstdint>

namespace ecsnet::transport {

enum class receive_error : std::uint8_t { none = 0, duplicate, stale, truncated };
inline constexpr std::size_t receive_error_count = 4;

struct receive_result {
    receive_error error{receive_error::none};
    std::size_t delivered{0};

    [[nodiscard]] bool ok() const noexcept { return error == receive_error::none; }
    [[nodiscard]] explicit operator bool() const noexcept { return ok(); }
    [[nodiscard]] bool malformed() const noexcept {
        return error != receive_error::none && error != receive_error::duplicate &&
               error != receive_error::stale;
    }
};

} // namespace ecsnet::transport
