#pragma once

// How a game marks an entity that a client predicts besides its avatar (issue 17): a server-only component
// (never replicated) on an entity the client's inputs drive too (a vehicle it drives, a pet that follows
// it). The server tells that client, in its InputStatus (docs/protocol.md, section 13), which of its
// entities are marked; the client SDK predicts those it sees with the rules the game registered for them
// (client-sdk prediction.hpp, predict_marked). The game's server-side rule must then depend only on the
// entity's state and that client's inputs, or the client mispredicts (and corrects) whenever it does not.
//
//   registry.emplace<ecsnet::server::predicted_by>(drone, predicted_by{client});
//
// The client's own avatar is predicted without it. Removing the component stops the prediction.

#include "game_world.hpp"

namespace ecsnet::server {

struct predicted_by {
    client_id client{};
};

} // namespace ecsnet::server
