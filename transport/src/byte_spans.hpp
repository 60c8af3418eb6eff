#pragma once

// The same bytes seen as std::byte (asio's buffers, the link's API) or as std::uint8_t (libsodium, the
// packet formats), without copying.

#include <cstddef>
#include <cstdint>
#include <span>

namespace ecsnet::transport::detail {

inline std::span<const std::uint8_t> as_u8(std::span<const std::byte> bytes) noexcept {
    return {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()};
}

inline std::span<const std::byte> as_bytes_of(std::span<const std::uint8_t> bytes) noexcept {
    return {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()};
}

} // namespace ecsnet::transport::detail
