#pragma once

// The GameServer's state ("Ready", "Allocated", ...) read from what the sidecar sends: the JSON of
// GET /gameserver, or one line of GET /watch/gameserver ({"result": {...GameServer...}}). Only
// `status.state` is needed, so this reads that one string rather than taking a JSON library.

#include <optional>
#include <string>
#include <string_view>

namespace ecsnet::server::agones {

/// `status.state` of a GameServer (bare or wrapped in {"result": ...}); nothing if the text has none.
[[nodiscard]] std::optional<std::string> game_server_state(std::string_view json);

/// The number ecsnet_agones_state reports for a state (docs/agones.md): 0 none seen, 1 Scheduled,
/// 2 RequestReady, 3 Ready, 4 Allocated, 5 Reserved, 6 Shutdown, 7 Unhealthy, 8 any other.
[[nodiscard]] double state_code(std::string_view state) noexcept;

} // namespace ecsnet::server::agones
