#include "ecsnet/server/world_replicator.hpp"

namespace ecsnet::server {

namespace {

struct world_client final : client_replication {
    proto::ack_tracker acks; // the baselines its acks allow (they only move forward)
};

world_client& state_of(client_replication& client) {
    return static_cast<world_client&>(client);
}

} // namespace

world_replicator::world_replicator(const proto::snapshot_history& history, server_metrics& metrics)
    : history_{&history}
    , metrics_{&metrics}
    , encoder_{history} {}

void world_replicator::tick(proto::tick_type, std::uint64_t, const std::function<void()>& alongside) {
    if (alongside) {
        alongside();
    }
}

std::unique_ptr<client_replication> world_replicator::join(client_id, entity, const v1::ClientHello&,
                                                           std::optional<refusal>&) {
    return std::make_unique<world_client>();
}

void world_replicator::leave(client_replication&) {}

void world_replicator::welcome(client_replication&, v1::ServerWelcome& welcome) {
    welcome.set_interest_managed(false);
}

void world_replicator::on_ack(client_replication& client, const v1::Ack& ack) {
    state_of(client).acks.on_ack(ack, history_->empty() ? 0 : history_->newest_tick());
}

std::optional<outgoing_snapshot> world_replicator::snapshot(client_replication& client) {
    const auto cached_before = encoder_.cached();
    auto snapshot = encoder_.encode(state_of(client).acks.next());
    if (encoder_.cached() != cached_before) {
        metrics_->snapshots_encoded.add();
    }
    const auto offset = snapshot->frame.size() - snapshot->envelope.size();
    const auto tick = snapshot->tick;
    const bool full = !snapshot->used.baseline.has_value();
    return outgoing_snapshot{std::shared_ptr<const std::string>{snapshot, &snapshot->frame}, offset, tick,
                             full};
}

void world_replicator::sent(client_replication&, std::size_t) {}

} // namespace ecsnet::server
