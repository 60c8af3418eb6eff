#pragma once

// 32-byte symmetric keys: the studio's private token key (shared by the backend and its servers, never
// given to clients), the per-direction keys a token carries, the server's challenge key.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol.hpp"

namespace ecsnet::transport {

using key = std::array<std::uint8_t, key_bytes>;

/// A fresh random key (libsodium's randombytes).
[[nodiscard]] key generate_key();

/// 64 lowercase hex digits: the format of `ecsnet-token keygen` and of key files.
[[nodiscard]] std::string to_hex(const key& k);

/// Reads 64 hex digits (either case); whitespace around them (a key file's newline) is ignored.
[[nodiscard]] std::optional<key> key_from_hex(std::string_view text);

} // namespace ecsnet::transport
