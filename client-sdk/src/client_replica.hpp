#pragma once

// What a client mirrors of its server (the apply side of client.hpp): the mirror, whole-world or the
// interest-managed view as the welcome says (one registry for both), the copies of applied states that
// interpolation reads, and what the welcome named (client id, tick rate, epoch, own avatar). It applies
// each snapshot atomically and says what to ack; a thin client (client_options::thin) reads only the
// header and acks its tick. No threads, no network: the session calls it where the threading mode says.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <ecsnet/ecs/registry.hpp>
#include <ecsnet/proto/mirror.hpp>
#include <ecsnet/proto/schema.hpp>
#include <ecsnet/proto/view_mirror.hpp>

#include "ecsnet/client/client_options.hpp"
#include "ecsnet/client/interpolation.hpp"
#include "ecsnet/v1/envelope.pb.h"

namespace ecsnet::client::detail {

/// What became of one snapshot.
struct snapshot_outcome {
    enum class kind : std::uint8_t {
        applied,   // mirrored (thin: its header read): `applied`; send `ack`
        refused,   // the mirror refused it (stale, unknown baseline, checksum mismatch...): `error`; send
                   // `ack`, which asks for a full state when the mirror needs one
        ignored,   // thin: not newer than the newest acked; nothing to send
        malformed, // not a snapshot at all (`error.message` says why): the server is broken
    };
    kind what{kind::ignored};
    proto::applied_snapshot applied;
    proto::error error;
    v1::Envelope ack;
};

class client_replica {
public:
    client_replica(const proto::schema& schema, const client_options& options);

    /// A new session's welcome: the mirror is cleared and picked (world or view), the identity taken.
    void welcome(const v1::ServerWelcome& welcome);
    /// Applies (or, thin, acks) one serialized Envelope holding a Snapshot or a ViewSnapshot.
    [[nodiscard]] snapshot_outcome apply(std::string_view envelope);

    [[nodiscard]] ecsnet::registry& registry() noexcept { return registry_; }
    [[nodiscard]] const ecsnet::registry& registry() const noexcept { return registry_; }
    [[nodiscard]] proto::replica& mirror() noexcept { return *mirror_; }
    [[nodiscard]] const proto::replica& mirror() const noexcept { return *mirror_; }
    [[nodiscard]] bool interest_managed() const noexcept { return interest_managed_; }
    [[nodiscard]] const std::optional<proto::net_entity>& own_net() const noexcept { return own_net_; }
    [[nodiscard]] std::uint32_t client_id() const noexcept { return client_id_; }
    [[nodiscard]] std::uint32_t tick_rate() const noexcept { return tick_rate_; }
    [[nodiscard]] std::uint64_t epoch_unix_us() const noexcept { return epoch_unix_us_; }
    [[nodiscard]] const state_buffer& interpolation() const noexcept { return interpolation_; }

private:
    snapshot_outcome ack_header(std::string_view envelope);

    const bool thin_;
    ecsnet::registry registry_;
    proto::mirror world_mirror_;
    proto::view_mirror view_mirror_;
    proto::replica* mirror_{&world_mirror_};
    state_buffer interpolation_;
    std::optional<proto::net_entity> own_net_;
    std::uint32_t client_id_{};
    std::uint32_t tick_rate_{30};
    std::uint64_t epoch_unix_us_{};
    bool interest_managed_{false};
    // Thin: the newest tick acked, and the scratch its headers are parsed into.
    std::optional<proto::tick_type> thin_newest_;
    v1::Envelope thin_envelope_;
};

} // namespace ecsnet::client::detail
