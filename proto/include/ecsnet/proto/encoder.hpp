#pragma once

// The server side of a snapshot: the delta from a baseline a client acked to the history's newest tick,
// packed into an Envelope and framed. Clients that acked the same baselines get the same bytes: encode()
// caches its result per (baseline, second baseline) until the history captures a new tick, so encoding for
// N clients costs one delta per distinct baseline pair, not N.
//
// Baselines: `baseline` is the newest tick the client acked; `second` the one it acked before (both still
// in the client's history, as it keeps its last applied ticks). Fields declared prediction::linear are then
// coded against a linear extrapolation from `second` through `baseline` (docs/protocol.md). A baseline the
// history no longer holds gives a full state; a second one it no longer holds, no extrapolation.
//
// Idle ticks: when the newest state equals the baseline, the snapshot carries no columns and no checksum.
//
// Cost: O(changes) for a 1-tick-old baseline (the history lists what changed since the previous tick),
// O(entities) otherwise (whole columns compared). Not thread-safe: one encoder per thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta.hpp"
#include "ecsnet/v1/snapshot.pb.h"
#include "history.hpp"

namespace ecsnet::proto {

struct baselines {
    std::optional<tick_type> baseline;
    std::optional<tick_type> second;
    bool operator==(const baselines&) const = default;
};

/// Per client, the baselines to encode against, from its Acks: the newest tick it acked and the one it
/// acked before. Baselines only move forward (an older ack is ignored), which lets the client drop every
/// state older than the baselines of the last snapshot it applied (mirror.hpp). After a full-state request
/// (a client that could not apply a snapshot) it gives no baseline until the client acks a tick at or
/// after the server's tick when the request arrived.
class ack_tracker {
public:
    /// An Ack received while the server's newest tick is `server_tick`.
    void on_ack(const v1::Ack& ack, tick_type server_tick) noexcept;
    /// The baselines for the next snapshot (no baseline: a full state).
    [[nodiscard]] baselines next() const noexcept { return {newest_, previous_}; }
    /// Forgets every ack (the client reconnected, or its state is unknown).
    void reset() noexcept;

private:
    std::optional<tick_type> newest_;
    std::optional<tick_type> previous_;
    tick_type floor_{};
};

struct encoder_options {
    /// Extrapolate prediction::linear fields when a second baseline is available.
    bool extrapolate{true};
};

/// One encoded snapshot of the newest tick, shareable between clients.
struct encoded_snapshot {
    tick_type tick{};
    /// The baselines actually used (empty baseline: a full state).
    baselines used;
    /// Length prefix + serialized Envelope{snapshot}: ready to write to a stream transport.
    std::string frame;
    /// Serialized Envelope alone (for datagram transports and size accounting).
    std::string envelope;
    /// Bytes of the packed columns.
    std::size_t columns_bytes{};
    /// True when the state equals the baseline's (no columns, no checksum).
    bool idle{};
};

class snapshot_encoder {
public:
    explicit snapshot_encoder(const snapshot_history& history, encoder_options options = {});

    /// The snapshot of the newest tick for a client whose acks are `wanted`; cached until the next capture.
    /// Precondition: the history is not empty.
    [[nodiscard]] std::shared_ptr<const encoded_snapshot> encode(const baselines& wanted);

    /// Uncached: fills `out` and returns the baselines used.
    baselines encode(const baselines& wanted, v1::Snapshot& out);

    /// The baselines encode(wanted) would use.
    [[nodiscard]] baselines usable(const baselines& wanted) const noexcept;

    /// The delta computed by the last uncached encode (empty for an idle tick), for statistics.
    [[nodiscard]] const delta& last_delta() const noexcept { return delta_; }
    /// Distinct snapshots encoded for the current newest tick (cache entries).
    [[nodiscard]] std::size_t cached() const noexcept { return cache_.size(); }

private:
    const snapshot_history* history_;
    encoder_options options_;
    delta delta_;
    delta_workspace work_;
    bit_writer bits_;
    std::vector<std::uint32_t> created_;
    std::vector<std::uint32_t> fresh_;
    std::optional<tick_type> cache_tick_;
    std::vector<std::pair<baselines, std::shared_ptr<const encoded_snapshot>>> cache_;
};

} // namespace ecsnet::proto
