#pragma once

// libsodium must be initialized once before use (it picks its implementations and seeds its random
// generator). Every entry point of the transport that touches crypto calls ensure_sodium() first.

namespace ecsnet::transport {

/// Initializes libsodium once (thread-safe); throws std::runtime_error if it cannot (no entropy source).
void ensure_sodium();

} // namespace ecsnet::transport
