#pragma once

// Whole-world replication (replicator.hpp): every client receives the replicated world, as a delta from
// the newest tick it acked (with the one before for extrapolation), and clients that acked the same ticks
// share one encoding (proto::snapshot_encoder).

#include <ecsnet/proto/encoder.hpp>
#include <ecsnet/proto/history.hpp>

#include "replicator.hpp"
#include "server_metrics.hpp"

namespace ecsnet::server {

class world_replicator final : public replicator {
public:
    world_replicator(const proto::snapshot_history& history, server_metrics& metrics);

    [[nodiscard]] bool interest_managed() const noexcept override { return false; }
    using replicator::tick;
    void tick(proto::tick_type tick, std::uint64_t server_time_us,
              const std::function<void()>& alongside) override;
    std::unique_ptr<client_replication> join(client_id client, entity avatar, const v1::ClientHello& hello,
                                             std::optional<refusal>& refused) override;
    void leave(client_replication& client) override;
    void welcome(client_replication& client, v1::ServerWelcome& welcome) override;
    void on_ack(client_replication& client, const v1::Ack& ack) override;
    std::optional<outgoing_snapshot> snapshot(client_replication& client) override;
    void sent(client_replication& client, std::size_t wire_bytes) override;

private:
    const proto::snapshot_history* history_;
    server_metrics* metrics_;
    proto::snapshot_encoder encoder_;
};

} // namespace ecsnet::server
