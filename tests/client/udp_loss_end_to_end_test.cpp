// Issue 14's end-to-end tests through the network simulator: the real server in-process (UDP, development
// tokens, the whole world, so that every applied tick checks against the server's checksum), SDK clients on
// one application io_context run by two threads, each with the transport's simulator on both of its paths.
// - 50 clients for 20 s at 10% loss, 100 ms latency and 20 ms jitter each way, 1% duplication and 1%
//   reordering: every join completes; every applied snapshot's checksum is the server's of its tick and the
//   mirror verifies (0 desyncs); every client converges (its newest tick a few ticks behind the server's);
//   the server received every input each client sent, once.
// - 30% loss for 10 s, then none: no client is dropped, and within 1 s of the loss ending every client has
//   applied a tick the server ran after it ended.

#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/arena/input.hpp"

namespace udp_loss_end_to_end_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::client::testing;
using ecsnet::client::client_state;
using ecsnet::client::transport_kind;
using steady = std::chrono::steady_clock;

constexpr std::size_t npcs = 300;
constexpr float relevancy_radius =
    0.0F; // whole world: each applied tick checks against the server's own checksum

struct lossy_client {
    std::vector<applied_record> applied; // on the client's strand only
    // Last: destroyed first, so that no callback still writes into `applied` (client.hpp, "Lifetime"): the
    // swarm destroys its clients while its threads run their strands.
    std::unique_ptr<ecsnet::client::client> net;
};

class lossy_swarm {
public:
    lossy_swarm(test_server& server, std::size_t count, const transport::sim_config& sim,
                const std::string& prefix) {
        for (std::size_t i = 0; i < count; ++i) {
            auto w = std::make_unique<lossy_client>();
            auto options = over(transport_kind::udp, prefix + std::to_string(i));
            options.interpolation_states = 0;
            options.simulator = sim;
            options.simulator.seed = 1000 + i; // each client its own losses
            options.connect_timeout = 10'000ms;
            options.handshake_timeout = 10'000ms;
            w->net = std::make_unique<ecsnet::client::client>(io_, arena::replicated_schema(), options);
            auto& c = *w->net;
            auto& record = *w;
            c.on_snapshot([&c, &record](const proto::applied_snapshot& applied) {
                const auto* state = c.mirror().newest_state();
                record.applied.push_back({applied.tick, state != nullptr ? state->checksum : 0,
                                          c.mirror().verify(), applied.full_state});
            });
            EXPECT_TRUE(c.connect("127.0.0.1", server.port()));
            clients_.push_back(std::move(w));
        }
        for (int t = 0; t < 2; ++t) {
            threads_.emplace_back([this] { io_.run(); });
        }
    }
    lossy_swarm(const lossy_swarm&) = delete;
    lossy_swarm& operator=(const lossy_swarm&) = delete;

    ~lossy_swarm() {
        clients_.clear(); // each says CLIENT_QUIT on its strand
        work_.reset();
        for (auto& t : threads_) {
            t.join();
        }
    }

    [[nodiscard]] std::size_t size() const { return clients_.size(); }
    [[nodiscard]] ecsnet::client::client& net(std::size_t i) { return *clients_[i]->net; }

    /// What client `i` applied so far (copied on its strand).
    [[nodiscard]] std::vector<applied_record> applied(std::size_t i) {
        std::promise<std::vector<applied_record>> result;
        asio::post(clients_[i]->net->get_executor(), [&] { result.set_value(clients_[i]->applied); });
        return result.get_future().get();
    }
    [[nodiscard]] std::optional<proto::tick_type> newest(std::size_t i) { return net(i).stats().newest_tick; }

    [[nodiscard]] bool all(const std::function<bool(std::size_t)>& pred) const {
        for (std::size_t i = 0; i < clients_.size(); ++i) {
            if (!pred(i)) {
                return false;
            }
        }
        return true;
    }

    /// One input from every client, as a game sends them (walking in a circle).
    void send_inputs(std::uint32_t step) {
        for (std::size_t i = 0; i < clients_.size(); ++i) {
            const float angle = 0.1F * static_cast<float>(step + i);
            arena::move_input input{0, std::cos(angle), std::sin(angle), 3.0F};
            EXPECT_TRUE(clients_[i]->net->send_input(arena::encode(input)));
        }
    }

private:
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_{asio::make_work_guard(io_)};
    std::vector<std::unique_ptr<lossy_client>> clients_;
    std::vector<std::thread> threads_;
};

// The inputs the server received from each client, by name.
std::map<std::string, std::uint64_t> inputs_received(test_server& server) {
    return server.server().call([&server] {
        std::map<std::string, std::uint64_t> out;
        for (const auto& c : server.server().clients()) {
            out[c.name] = c.inputs_received;
        }
        return out;
    });
}

// What the server holds of a client, for failure messages.
std::string describe(test_server& server, const std::string& name) {
    return server.server().call([&server, &name] {
        for (const auto& c : server.server().clients()) {
            if (c.name == name) {
                return "sent " + (c.sent ? std::to_string(*c.sent) : std::string{"-"}) + ", acked " +
                       (c.acked ? std::to_string(*c.acked) : std::string{"-"}) + ", resends " +
                       std::to_string(c.resends) + ", bytes sent " + std::to_string(c.bytes_sent);
            }
        }
        return std::string{"has no such client"};
    });
}

TEST(UdpLoss, FiftyClientsThroughTenPercentLossStayExactConvergeAndLoseNoInput) {
    test_server server{npcs, 30, relevancy_radius};
    transport::sim_config sim;
    sim.loss = 0.10;
    sim.latency = 100ms;
    sim.jitter = 20ms;
    sim.duplicate = 0.01;
    sim.reorder = 0.01;
    lossy_swarm swarm{server, 50, sim, "lossy"};

    // Every join completes: a full state applied.
    ASSERT_TRUE(wait_until(
        [&] { return swarm.all([&](std::size_t i) { return swarm.newest(i).has_value(); }); }, 20'000ms));

    // 20 s of play, an input every 100 ms each.
    const auto end = steady::now() + 20s;
    for (std::uint32_t step = 0; steady::now() < end; ++step) {
        swarm.send_inputs(step);
        std::this_thread::sleep_for(100ms);
    }
    // The redundant channel delivers the last inputs within a few round trips, even at 10% loss.
    const auto sent = [&](std::size_t i) { return swarm.net(i).stats().inputs_sent; };
    ASSERT_TRUE(wait_until(
        [&] {
            const auto received = inputs_received(server);
            return swarm.all([&](std::size_t i) {
                const auto it = received.find("lossy" + std::to_string(i));
                return it != received.end() && it->second >= sent(i);
            });
        },
        5000ms));
    const auto received = inputs_received(server);
    const auto newest = server.newest_tick();

    std::size_t compared = 0;
    for (std::size_t i = 0; i < swarm.size(); ++i) {
        const auto name = "lossy" + std::to_string(i);
        const auto stats = swarm.net(i).stats();
        EXPECT_EQ(swarm.net(i).state(), client_state::connected) << name;
        EXPECT_EQ(stats.checksum_mismatches, 0U) << name;
        EXPECT_GT(stats.packet_loss, 0.0) << name; // the simulator did drop
        EXPECT_EQ(received.at(name), stats.inputs_sent) << name << ": every input, once";
        EXPECT_GE(stats.inputs_sent, 150U) << name;

        const auto applied = swarm.applied(i);
        ASSERT_FALSE(applied.empty()) << name;
        compared += expect_checksums_match(server, applied);
        // Converged: its newest tick is the server's but for the latency (100 ms, 3 ticks) and a few lost.
        EXPECT_GE(applied.back().tick + 15, newest)
            << name << ": received " << stats.snapshots_received << ", refused " << stats.snapshots_refused
            << " (unknown baselines " << stats.unknown_baselines << "), full states "
            << stats.full_states_received << ", acks repeated " << stats.acks_repeated
            << ", packets received " << stats.packets_received << ", lost " << stats.packets_lost
            << ", messages dropped " << stats.messages_dropped << ", bytes received " << stats.bytes_received
            << "; the server " << describe(server, name);
        // And it kept up: at 10% loss most ticks arrive (a client whose full state took longer than the
        // flow-control window to be acked loses a few seconds more at its start: half is the floor).
        const auto span = applied.back().tick - applied.front().tick + 1;
        EXPECT_GE(applied.size() * 10, span * 5) << name << ": " << applied.size() << " of " << span;
    }
    EXPECT_GE(compared, swarm.size() * 400);
}

TEST(UdpLoss, ThirtyPercentLossForTenSecondsDropsNoOneAndAllConvergeWithinASecondOfItsEnd) {
    test_server server{npcs, 30, relevancy_radius};
    transport::sim_config calm;
    calm.latency = 25ms;
    lossy_swarm swarm{server, 20, calm, "storm"};
    ASSERT_TRUE(wait_until(
        [&] { return swarm.all([&](std::size_t i) { return swarm.newest(i).has_value(); }); }, 10'000ms));

    auto storm = calm;
    storm.loss = 0.30;
    for (std::size_t i = 0; i < swarm.size(); ++i) {
        storm.seed = 2000 + i;
        swarm.net(i).set_simulator(storm);
    }
    const auto storm_end = steady::now() + 10s;
    for (std::uint32_t step = 0; steady::now() < storm_end; ++step) {
        swarm.send_inputs(step);
        std::this_thread::sleep_for(100ms);
    }
    for (std::size_t i = 0; i < swarm.size(); ++i) {
        calm.seed = 3000 + i;
        swarm.net(i).set_simulator(calm);
    }
    const auto calm_from = server.newest_tick() + 1;
    const auto calm_start = steady::now();

    // Within 1 s every client applied a tick the server ran after the loss ended.
    const bool converged = wait_until(
        [&] {
            return swarm.all([&](std::size_t i) {
                const auto n = swarm.newest(i);
                return n && *n >= calm_from;
            });
        },
        1000ms);
    const auto took = steady::now() - calm_start;
    EXPECT_TRUE(converged) << "after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                           << " ms";
    std::this_thread::sleep_for(500ms);
    for (std::size_t i = 0; i < swarm.size(); ++i) {
        const auto name = "storm" + std::to_string(i);
        const auto stats = swarm.net(i).stats();
        EXPECT_EQ(swarm.net(i).state(), client_state::connected) << name << ": no client is dropped";
        EXPECT_EQ(stats.checksum_mismatches, 0U) << name;
        expect_checksums_match(server, swarm.applied(i));
    }
}

} // namespace

} // namespace udp_loss_end_to_end_test
