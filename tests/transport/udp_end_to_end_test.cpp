// udp_server and udp_client over 127.0.0.1 through the network simulator (loss 10% and 30%, latency,
// jitter, duplicates, reordering), a game's traffic both ways for about a second: every channel keeps
// its guarantee end to end through the encryption layer. Reliable messages (small controls and 40 kB full
// states) arrive all, once, in order; redundant inputs arrive all, once, in order; unreliable ones arrive
// at most once, intact, some lost. Duplicated datagrams are dropped by the replay window.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include <gtest/gtest.h>

#include "udp_socket_support.hpp"

namespace udp_end_to_end_test {

namespace {

using namespace ecsnet::transport;
using namespace ecsnet::transport::testing;
using namespace std::chrono_literals;

// [channel u8][index u32][length-derived filler]: each message says what it is and can be checked whole.
std::vector<std::byte> make(channel ch, std::uint32_t index, std::size_t size) {
    std::vector<std::byte> out(std::max<std::size_t>(size, 5));
    out[0] = static_cast<std::byte>(ch);
    std::memcpy(out.data() + 1, &index, 4);
    for (std::size_t i = 5; i < out.size(); ++i) {
        out[i] = static_cast<std::byte>((index * 31 + i * 7) & 0xFF);
    }
    return out;
}

struct received_log {
    std::vector<std::uint32_t> reliable, unreliable, redundant;
    std::size_t corrupt{0};

    void add(channel ch, std::span<const std::byte> m) {
        if (m.size() < 5 || static_cast<channel>(m[0]) != ch) {
            ++corrupt;
            return;
        }
        std::uint32_t index = 0;
        std::memcpy(&index, m.data() + 1, 4);
        for (std::size_t i = 5; i < m.size(); ++i) {
            if (m[i] != static_cast<std::byte>((index * 31 + i * 7) & 0xFF)) {
                ++corrupt;
                return;
            }
        }
        (ch == channel::reliable     ? reliable
         : ch == channel::unreliable ? unreliable
                                     : redundant)
            .push_back(index);
    }
};

struct server_side : server_handler {
    received_log log;
    std::vector<connection_id> ids;
    void on_connected(const connection_info& info) override { ids.push_back(info.id); }
    void on_message(connection_id, channel ch, std::span<const std::byte> m) override { log.add(ch, m); }
    void on_disconnected(connection_id, const disconnect_info&) override {}
};

struct client_side : client_handler {
    received_log log;
    void on_message(channel ch, std::span<const std::byte> m) override { log.add(ch, m); }
};

std::vector<std::uint32_t> sequence(std::uint32_t count) {
    std::vector<std::uint32_t> out(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        out[i] = i;
    }
    return out;
}

void expect_at_most_once_and_known(const std::vector<std::uint32_t>& got, std::uint32_t sent,
                                   const char* what) {
    std::set<std::uint32_t> seen;
    for (const auto index : got) {
        EXPECT_LT(index, sent) << what;
        EXPECT_TRUE(seen.insert(index).second) << what << " " << index << " delivered twice";
    }
}

struct scenario {
    double loss;           // per direction
    bool server_simulator; // also on the server's side (the loss then split between the two)
};

class EndToEnd : public ::testing::TestWithParam<scenario> {};

TEST_P(EndToEnd, EveryChannelKeepsItsGuaranteeThroughTheSimulator) {
    const auto [loss, on_server] = GetParam();
    // With simulators on both sides a datagram crosses two: each gets the share giving `loss` overall.
    const double per_simulator = on_server ? 1.0 - std::sqrt(1.0 - loss) : loss;
    sim_config sim;
    sim.loss = per_simulator;
    sim.latency = 10ms;
    sim.jitter = 4ms;
    sim.duplicate = 0.05;
    sim.reorder = 0.05;

    asio::io_context io;
    auto options = local_server_options();
    if (on_server) {
        options.simulator = sim;
        options.simulator->seed = 11;
    }
    server_side server_events;
    udp_server server{io, options, server_events};
    server.start();
    client_side client_events;
    udp_client_options client_options;
    client_options.simulator = sim;
    client_options.simulator->seed = 7;
    udp_client client{io.get_executor(), client_options, client_events};
    ASSERT_TRUE(client.connect(token_for(server, options.config.private_key, 1, 10)));
    ASSERT_TRUE(run_until(
        io, [&] { return client.state() == client_state::connected && !server_events.ids.empty(); }, 10s))
        << to_string(client.error());
    const auto id = server_events.ids[0];

    std::uint32_t reliable_down = 0, unreliable_down = 0, reliable_up = 0, unreliable_up = 0,
                  redundant_up = 0;
    for (int tick = 0; tick < 100; ++tick) {
        // Server: a snapshot every tick (some fragmented), a control message every 5, a full state at 20
        // and 60.
        const auto snapshot_size = tick % 10 == 0 ? std::size_t{3000} : std::size_t{300};
        ASSERT_EQ(
            server.send(id, channel::unreliable, make(channel::unreliable, unreliable_down++, snapshot_size)),
            send_status::queued);
        if (tick % 5 == 0) {
            ASSERT_EQ(server.send(id, channel::reliable, make(channel::reliable, reliable_down++, 40)),
                      send_status::queued);
        }
        if (tick == 20 || tick == 60) {
            ASSERT_EQ(server.send(id, channel::reliable, make(channel::reliable, reliable_down++, 40'000)),
                      send_status::queued);
        }
        server.flush(id);
        // Client: an input every tick, an ack every tick, a control message every 10.
        ASSERT_EQ(client.send(channel::redundant, make(channel::redundant, redundant_up++, 24)),
                  send_status::queued);
        ASSERT_EQ(client.send(channel::unreliable, make(channel::unreliable, unreliable_up++, 12)),
                  send_status::queued);
        if (tick % 10 == 0) {
            ASSERT_EQ(client.send(channel::reliable, make(channel::reliable, reliable_up++, 100)),
                      send_status::queued);
        }
        client.flush();
        run_for(io, 10ms);
    }
    ASSERT_TRUE(run_until(
        io,
        [&] {
            return client_events.log.reliable.size() == reliable_down &&
                   server_events.log.reliable.size() == reliable_up &&
                   server_events.log.redundant.size() == redundant_up;
        },
        20s))
        << "reliable down " << client_events.log.reliable.size() << "/" << reliable_down << ", reliable up "
        << server_events.log.reliable.size() << "/" << reliable_up << ", redundant up "
        << server_events.log.redundant.size() << "/" << redundant_up;

    EXPECT_EQ(client_events.log.reliable, sequence(reliable_down)); // all, once, in order
    EXPECT_EQ(server_events.log.reliable, sequence(reliable_up));
    EXPECT_EQ(server_events.log.redundant, sequence(redundant_up));
    expect_at_most_once_and_known(client_events.log.unreliable, unreliable_down, "unreliable down");
    expect_at_most_once_and_known(server_events.log.unreliable, unreliable_up, "unreliable up");
    EXPECT_EQ(client_events.log.corrupt, 0U);
    EXPECT_EQ(server_events.log.corrupt, 0U);
    // Lossy but not empty: at 30% loss a 300-byte snapshot (one datagram) gets through ~70% of the time.
    EXPECT_GT(client_events.log.unreliable.size(), unreliable_down / 3);
    EXPECT_LT(client_events.log.unreliable.size(), unreliable_down);
    EXPECT_GT(server_events.log.unreliable.size(), unreliable_up / 3);

    // Duplicates made by the simulator were refused by the replay windows; nothing failed to decrypt.
    EXPECT_GT(server.counters().dropped.value(drop_reason::replayed) +
                  client.dropped().value(drop_reason::replayed),
              0U);
    EXPECT_EQ(server.counters().dropped.value(drop_reason::decrypt_failed), 0U);
    EXPECT_EQ(server.counters().dropped.value(drop_reason::link_refused), 0U);
    EXPECT_EQ(client.dropped().value(drop_reason::decrypt_failed), 0U);
    const auto stats = server.stats(id);
    ASSERT_TRUE(stats);
    EXPECT_GT(stats->link.resends, 0U);
    EXPECT_GT(stats->link.loss, loss / 4);
    EXPECT_GT(stats->link.rtt.count(), 10'000); // at least the simulated latency, in microseconds
}

INSTANTIATE_TEST_SUITE_P(Loss, EndToEnd,
                         ::testing::Values(scenario{0.10, false}, scenario{0.30, false},
                                           scenario{0.20, true}),
                         [](const auto& info) {
                             return "Loss" + std::to_string(static_cast<int>(info.param.loss * 100)) +
                                    (info.param.server_simulator ? "BothSides" : "ClientSide");
                         });

} // namespace

} // namespace udp_end_to_end_test
