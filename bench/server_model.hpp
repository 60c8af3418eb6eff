#pragma once

// The server's replication without sockets, for the bench programs that measure it
// (server_replication_callgrind, interest_surge): the demo arena of 10,000 NPCs, clients joined through
// server::interest_replicator (radius 160 m, about 200 entities each, budget 128 kbps), and per tick what
// game_server::tick does for them: the world's systems, the capture, the replicator's tick (grid, relevant
// sets), then each client's snapshot and its ack, `lag` to `lag` + 2 ticks late; with `burst` B, client i
// acks every (i mod B) + 1 ticks, all it has at once.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ecsnet/proto/history.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/server_metrics.hpp"

namespace ecsnet::bench {

struct bench_client {
    entity avatar{null_entity};
    std::unique_ptr<server::client_replication> replication;
    std::deque<proto::tick_type> in_flight;
    std::size_t lag{};
    std::size_t burst{1}; // acks come this many at once
};

struct server_model {
    // The world's systems on one thread whatever `workers`: what changes is the replication alone.
    server_model(std::uint32_t period, std::size_t workers, std::size_t lag, std::size_t burst)
        : lag{lag}
        , burst{burst}
        , world{server::arena_options{10'000, 42, 30, 1}}
        , history{world.replicated_schema(), world.registry(), proto::history_options{32, 30}}
        , replicator{world, history, *world.spatial(),
                     server::interest_options{160.0F, 128, 30, period, 128, 52, workers}, metrics} {}

    void join(std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            const auto id = static_cast<server::client_id>(clients.size() + 1);
            const auto avatar = world.client_joined(id, "bench" + std::to_string(id));
            std::optional<server::refusal> refused;
            bench_client c;
            c.avatar = avatar;
            c.replication = replicator.join(id, avatar, v1::ClientHello{}, refused);
            c.lag = lag + clients.size() % 3;
            c.burst = 1 + clients.size() % burst;
            replications.push_back(c.replication.get());
            clients.push_back(std::move(c));
        }
    }

    void tick() {
        world.update(1.0 / 30.0);
        ++now;
        const auto time_us = std::uint64_t{now} * 1'000'000 / 30;
        history.capture(now, time_us);
        replicator.tick(now, time_us);
        replicator.prepare(replications); // every client takes this tick's (no flow control here)
        for (auto& c : clients) {
            if (auto snapshot = replicator.snapshot(*c.replication)) {
                bytes += snapshot->envelope().size();
                replicator.sent(*c.replication, snapshot->envelope().size() + 52);
                c.in_flight.push_back(snapshot->tick);
            }
            if (c.in_flight.size() < c.lag + c.burst) {
                continue; // its acks have not arrived yet: they will together
            }
            while (c.in_flight.size() > c.lag) {
                v1::Ack ack;
                ack.set_tick(c.in_flight.front());
                c.in_flight.pop_front();
                replicator.on_ack(*c.replication, ack);
            }
        }
    }

    std::size_t lag;
    std::size_t burst;
    server::arena_world world;
    proto::snapshot_history history;
    server::server_metrics metrics;
    server::interest_replicator replicator;
    std::vector<bench_client> clients;
    std::vector<server::client_replication*> replications;
    proto::tick_type now{0};
    std::size_t bytes{0}; // the snapshots' envelopes, since it was last set to 0
};

} // namespace ecsnet::bench
