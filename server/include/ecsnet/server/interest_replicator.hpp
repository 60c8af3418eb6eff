#pragma once

// Interest-managed replication (replicator.hpp; docs/architecture.md, "Interest management"): each client
// receives its own view of the world, the entities relevant to it, under a bandwidth budget.
//
// Per tick: the entity rows of the new tick (proto::row_history), the shared encoder's tables and cache
// (proto::view_encoder), the spatial grid moved to the rows' positions (only entities that changed cell
// touch its lists), the `relevance` marks the game set (always relevant, owner-only, hidden, priority).
// Per client, every `relevancy_period` ticks (staggered over the clients so each tick does the same share;
// one whose avatar jumped farther than half the hysteresis margin before its turn, at most half a turn's
// share of such clients a tick):
// its relevant set around its avatar, with hysteresis (an entity enters within the radius and leaves beyond
// 1.1 times it), at most `max_entering` entering per update, its own avatar and what it owns or what is
// always relevant whatever the distance, and the world's may_see veto; each entity's priority weight from
// its distance (full within a tenth of the radius, falling with its square beyond, within [1, 8]) times its
// relevance priority. Per snapshot: proto::client_view writes the delta from the client's newest acked
// view, admitting changes by weight x ticks waiting while the client's token bucket (--client-budget-kbps,
// charged with what each snapshot really took on the wire) holds bits.
//
// Starvation: an entity waiting to be sent gains at least weight_min per tick while every other gains at
// most weight_max, so with N relevant entities and at least one admission per tick it is sent within
// 2 (N - 1) (1 + weight_max / weight_min) ticks (interest/priority_selector.hpp proves it); a view that is
// in flight is sent again whatever the budget, so under a budget smaller than what is in flight, admissions
// wait for acks.
//
// Workers (--workers N > 1): relevant sets are recomputed on N threads, and snapshots written on them too.
// The encoder is not thread-safe, so there is one per worker, each with the envelope it writes into.
// Encoded bits are shared among the clients of one encoder only, so clients are grouped by place: every 8
// ticks, encoder k takes the k-th share of the clients ordered by their avatar's x (group_by_place(), with
// a margin so a client on a border does not go back and forth); neighbours see the same entities, and the
// encoders' cache hits stay near one encoder's. A client that moves to another encoder is sent its tables
// with its next view (the encoders' tables versions are far apart, so its base's version never matches
// the new encoder's). prepare()
// writes the snapshots the tick is about to send, one worker per encoder, and snapshot() hands them out;
// only `tick()` changes what they read (rows, removals, sets), so they read it without locks.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <ecsnet/ecs/thread_pool.hpp>
#include <ecsnet/proto/client_view.hpp>
#include <ecsnet/proto/history.hpp>
#include <ecsnet/proto/row_history.hpp>
#include <ecsnet/proto/view_encoder.hpp>

#include "game_world.hpp"
#include "interest/client_relevancy.hpp"
#include "interest/distance_weight.hpp"
#include "interest/spatial_grid.hpp"
#include "interest/staggered_schedule.hpp"
#include "replicator.hpp"
#include "server_metrics.hpp"

namespace ecsnet::server {

struct interest_options {
    /// Clients see the entities within this many metres of their avatar.
    float radius{160.0F};
    /// Kilobits per second each client may receive (its ClientHello may ask for less).
    std::uint32_t budget_kbps{128};
    std::uint32_t tick_rate{30};
    /// Ticks between two recomputations of a client's relevant set (and sooner after a jump of its avatar).
    std::uint32_t relevancy_period{8};
    /// Entities entering a client's set per recomputation, at most.
    std::size_t max_entering{128};
    /// Bytes a snapshot costs on the wire besides its frame (the transport's headers).
    std::size_t wire_overhead{52};
    /// Threads recomputing relevant sets and writing snapshots, the tick's own included (the clients due in
    /// a tick are split between them; game_world::may_see is then asked from all of them), and encoders.
    std::size_t workers{1};
};

class interest_replicator final : public replicator {
public:
    /// Throws std::invalid_argument when the spatial layout does not name two fields of one component of
    /// the schema.
    interest_replicator(game_world& world, const proto::snapshot_history& history,
                        const spatial_layout& layout, interest_options options, server_metrics& metrics);
    ~interest_replicator() override;

    [[nodiscard]] bool interest_managed() const noexcept override { return true; }
    using replicator::tick;
    /// Brings the rows, the grid and the marks up to date (with `alongside` on the other worker), then
    /// recomputes the relevant sets due this tick, split between the workers.
    void tick(proto::tick_type tick, std::uint64_t server_time_us,
              const std::function<void()>& alongside) override;
    std::unique_ptr<client_replication> join(client_id client, entity avatar, const v1::ClientHello& hello,
                                             std::optional<refusal>& refused) override;
    void leave(client_replication& client) override;
    void welcome(client_replication& client, v1::ServerWelcome& welcome) override;
    void on_ack(client_replication& client, const v1::Ack& ack) override;
    /// With workers: writes these clients' snapshots of the tick, each encoder's clients on one worker.
    void prepare(std::span<client_replication* const> clients) override;
    std::optional<outgoing_snapshot> snapshot(client_replication& client) override;
    void sent(client_replication& client, std::size_t wire_bytes) override;

    /// The relevant entity indices of a client at its last recomputation (for tests and tools).
    [[nodiscard]] std::vector<std::uint32_t> relevant_of(const client_replication& client) const;
    /// One encoder per worker; `encoder_of` the one a client is on.
    [[nodiscard]] std::size_t encoder_count() const noexcept { return encoders_.size(); }
    [[nodiscard]] const proto::view_encoder& encoder(std::size_t at) const noexcept {
        return encoders_[at]->encoder;
    }
    [[nodiscard]] std::size_t encoder_of(const client_replication& client) const noexcept;
    /// The encoders' statistics, summed.
    [[nodiscard]] proto::view_encoder_stats encoder_stats() const noexcept;

private:
    struct client_state;

    void move_grid();
    void read_relevance_marks();
    // What one thread needs to recompute a relevant set.
    struct relevancy_scratch {
        interest::relevancy_changes changes;
        std::vector<std::uint32_t> always_for;
        // The squared distances the grid query found, by index, valid where `stamp` is the update's own:
        // the members' weights need no second lookup of their positions.
        struct found_distance {
            std::uint32_t stamp;
            float d2;
        };
        std::vector<found_distance> found;
        std::uint32_t stamp{0};
        // The set's changes, sorted, and the merged set (swapped with the client's).
        std::vector<std::uint32_t> left;
        std::vector<proto::net_entity> entered;
        std::vector<proto::net_entity> merged;
    };
    void update_relevancy(client_state& c, relevancy_scratch& scratch) const;
    // Whether the client's avatar moved this tick farther than half the hysteresis margin from where its set
    // was last recomputed: as far as the set may be wrong by before its turn (an avatar at the arena's pace
    // never gets there within a period; a teleport does at once).
    [[nodiscard]] bool focus_jumped(const client_state& c) const noexcept;
    // One encoder, the envelope it writes into, the clients pinned to it and those prepare() gave it.
    struct encoder_slot {
        encoder_slot(const proto::row_history& rows, proto::view_encoder_options options,
                     const histogram& budget_use)
            : encoder{rows, options}
            , budget_use{budget_use} {}
        proto::view_encoder encoder;
        v1::Envelope envelope;
        std::string encoded; // the envelope's bytes, before they are framed
        std::size_t clients{};
        std::vector<client_state*> batch;
        // What its snapshots add to the metrics, gathered by the one thread writing them and added by
        // count_written(): an atomic add per client per tick on lines shared by the workers bounced them
        // between the cores.
        proto::view_encoder_stats counted; // the encoder's statistics when last added
        std::uint64_t deferred{};
        histogram_tally budget_use;
    };
    // Thread-safe for clients of distinct encoders.
    outgoing_snapshot write_snapshot(client_state& c, encoder_slot& slot) const;
    // Adds to the metrics what the slot's snapshots gathered since the last call.
    void count_written(encoder_slot& slot) const;
    // Clients to the encoder of their stretch of the arena (by their avatar's x), so that each encoder's
    // codes serve clients that see the same entities.
    void group_by_place(std::span<client_replication* const> clients);
    [[nodiscard]] std::optional<interest::grid_position> position_of(std::uint32_t index) const noexcept;

    game_world* world_;
    bool asks_may_see_; // spatial_layout::asks_may_see
    const proto::snapshot_history* history_;
    interest_options options_;
    server_metrics* metrics_;
    proto::row_history rows_;
    std::vector<std::unique_ptr<encoder_slot>> encoders_; // one per worker (client_views point at them)
    interest::spatial_grid grid_;
    interest::staggered_schedule schedule_;
    interest::distance_weight weight_;
    float jump_squared_; // focus_jumped(): half the margin between the leave and the enter radius, squared

    // Where positions are in a row: the component and its x and y fields, and their fixed-point scales.
    std::size_t component_{};
    std::size_t x_at_{};
    std::size_t y_at_{};
    double x_min_{};
    double x_step_{};
    double y_min_{};
    double y_step_{};

    proto::tick_type tick_{};
    std::int64_t time_offset_us_{};
    std::vector<client_state*> clients_; // dense: a client's position is its place in the schedule
    std::vector<std::uint32_t> in_grid_; // per index: 1 + the generation inserted (0: not in the grid)
    // Ticks between two groupings of the clients by place (group_by_place()): avatars move a few metres a
    // second, and a grouping sorts every client.
    static constexpr proto::tick_type regroup_period = 8;

    // The game's relevance marks, read each tick.
    std::vector<std::uint32_t> always_;                      // indices relevant to everyone
    std::vector<std::pair<client_id, std::uint32_t>> owned_; // (owner, index), sorted
    std::vector<std::uint8_t> vetoed_;                       // by index: hidden, or owner-only
    std::vector<client_id> owner_of_;                        // by index, for owner-only ones
    std::vector<float> priority_;                            // by index (1 unless marked)
    std::vector<std::uint32_t> marked_; // indices with a mark this tick (to reset next tick)

    // scratch
    std::vector<relevancy_scratch> scratch_;            // one per worker
    std::vector<client_state*> due_;                    // clients whose set is recomputed this tick
    std::vector<std::pair<float, client_state*>> by_x_; // group_by_place()
    std::vector<float> x_bounds_;                       // group_by_place(): between encoders' stretches
    std::unique_ptr<thread_pool> pool_;                 // with workers > 1
};

} // namespace ecsnet::server
