// Every bad case of the server has its own test: the offender is disconnected with its reason, and a
// well-behaved client connected at the same time keeps mirroring the world exactly (every snapshot passes
// the mirror's checksum check, none is refused, ticks keep arriving).

#include <algorithm>
#include <atomic>
#include <future>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server_support.hpp"

namespace sessions_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;

// A mirror client pumping on its own thread while a test misbehaves.
class bystander {
public:
    bystander(running_server& server, std::chrono::milliseconds duration)
        : done_{std::async(std::launch::async, [&server, duration] {
            mirror_client client{server.port(), "bystander"};
            const auto ticks_before = server.get().metrics().ticks.value();
            client.pump(duration);
            const auto ticks_ran = server.get().metrics().ticks.value() - ticks_before;
            return result{client.applied_ticks, client.refusals, client.disconnect.has_value(), ticks_ran};
        })} {}

    // Checks the bystander mirrored exactly, receiving most ticks, and was never disconnected; and that the
    // server kept ticking meanwhile, whatever the test's misbehaving client did.
    void expect_unharmed(std::chrono::milliseconds duration, std::uint32_t tick_rate = 30) {
        const auto r = done_.get();
        EXPECT_TRUE(r.refusals.empty())
            << "first refusal: " << (r.refusals.empty() ? "" : r.refusals.front());
        EXPECT_FALSE(r.disconnected);
        const auto at_rate = static_cast<double>(duration.count()) / 1000.0 * tick_rate;
        const auto ran = static_cast<double>(r.ticks_ran);
        EXPECT_GE(ran, 0.25 * at_rate) << "the server stalled";
        // Of the ticks the server ran: under the sanitizers on a loaded machine a 10,000-entity world's
        // ticks take 40 to 60 ms, so the server runs about 60 of them in 3 s, not 90.
        EXPECT_GE(static_cast<double>(r.ticks.size()), 0.7 * std::min(at_rate, ran))
            << "the bystander starved";
        EXPECT_TRUE(std::is_sorted(r.ticks.begin(), r.ticks.end()));
    }

private:
    struct result {
        std::vector<proto::tick_type> ticks;
        std::vector<std::string> refusals;
        bool disconnected;
        std::uint64_t ticks_ran; // by the server while the bystander pumped
    };
    std::future<result> done_;
};

TEST(Sessions, GarbageBeforeTheHandshakeIsAProtocolError) {
    running_server server;
    bystander watcher{server, 1500ms};
    raw_client offender{server.port()};
    offender.send_bytes(std::string("\x03garbage that is no envelope at all", 36));
    const auto reason = offender.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::PROTOCOL_ERROR);
    EXPECT_FALSE(reason->message().empty());
    EXPECT_TRUE(offender.closed_within(2000ms));
    watcher.expect_unharmed(1500ms);
}

TEST(Sessions, AWrongProtocolVersionIsRefused) {
    running_server server;
    bystander watcher{server, 1000ms};
    raw_client offender{server.port()};
    auto hello = proto::make_client_hello(arena::replicated_schema().layout(), "", "old client");
    hello.mutable_client_hello()->set_protocol_version(proto::protocol_version + 7);
    offender.send(hello);
    const auto reason = offender.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::VERSION_MISMATCH);
    EXPECT_NE(reason->message().find(std::to_string(proto::protocol_version + 7)), std::string::npos)
        << reason->message();
    watcher.expect_unharmed(1000ms);
}

struct Other {
    float value;
};

TEST(Sessions, AWrongSchemaIsRefusedNamingTheComponent) {
    running_server server;
    bystander watcher{server, 1000ms};
    using namespace ecsnet::proto;
    // The arena's Transform, but yaw in 10 bits instead of 12.
    static const schema different{
        component<arena::Transform>("Transform",
                                    field<&arena::Transform::x>("x", fixed_point<20>{-1024.0, 1.0 / 512}),
                                    field<&arena::Transform::y>("y", fixed_point<20>{-1024.0, 1.0 / 512}),
                                    field<&arena::Transform::z>("z", fixed_point<18>{-256.0, 1.0 / 512}),
                                    field<&arena::Transform::yaw>("yaw", angle<10>{})),
        component<arena::Health>("Health", field<&arena::Health::value>("value", integer<>{})),
        component<arena::Kind>("Kind", field<&arena::Kind::value>("value", integer<>{})),
        component<arena::LastHit>("LastHit", field<&arena::LastHit::target>("target", integer<>{}),
                                  field<&arena::LastHit::tick>("tick", integer<>{}),
                                  field<&arena::LastHit::hits>("hits", integer<>{}))};
    raw_client offender{server.port()};
    offender.send_hello(different);
    const auto reason = offender.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::SCHEMA_MISMATCH);
    EXPECT_NE(reason->message().find("Transform"), std::string::npos) << reason->message();
    watcher.expect_unharmed(1000ms);
}

TEST(Sessions, AnOversizedLengthPrefixIsRefusedBeforeItsPayload) {
    running_server server;
    bystander watcher{server, 1000ms};
    raw_client offender{server.port()};
    // A varint prefix announcing 0xFFFFFFFF bytes, and no payload at all: the refusal cannot have waited
    // for (or allocated) the frame.
    offender.send_bytes(std::string("\xff\xff\xff\xff\x0f", 5));
    const auto reason = offender.read_disconnect(2000ms);
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::PROTOCOL_ERROR);
    EXPECT_NE(reason->message().find("exceeds"), std::string::npos) << reason->message();
    watcher.expect_unharmed(1000ms);
}

TEST(Sessions, ATruncatedFrameThenSilenceTimesOut) {
    auto options = test_options();
    options.handshake_timeout = 400ms;
    options.idle_timeout = 600ms;
    running_server server{options};
    bystander watcher{server, 1500ms};

    raw_client before_handshake{server.port()};
    before_handshake.send_bytes(std::string("\x40partial", 8)); // 64 bytes announced, 7 sent
    auto reason = before_handshake.read_disconnect(2000ms);
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::HANDSHAKE_TIMEOUT);

    raw_client after_handshake{server.port()};
    after_handshake.send_hello();
    after_handshake.send_bytes(std::string("\x40partial", 8));
    reason = after_handshake.read_disconnect(2000ms);
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::TIMEOUT);
    watcher.expect_unharmed(1500ms);
}

TEST(Sessions, AClientThatStopsReadingIsDisconnectedAndItsBacklogStaysBounded) {
    // Deltas of 10,000 entities (about 13 kB each): the window's 15 of them overflow the socket buffers.
    auto options = test_options(10'000);
    options.max_unsent_bytes = 256 * 1024;
    options.socket_send_buffer = 16 * 1024;
    options.write_stall_timeout = 500ms;
    running_server server{options};
    bystander watcher{server, 3000ms};

    // A client whose game loop froze: it read its welcome and its full state, acked it, and reads no more
    // (with a tiny receive buffer). The server sends deltas until its socket stalls.
    raw_client stuck{server.port(), 4096};
    stuck.send_hello(arena::replicated_schema(), "stuck");
    std::optional<proto::tick_type> first;
    for (int i = 0; i < 50 && !first; ++i) {
        if (auto message = stuck.read(100ms); message && message->has_snapshot()) {
            first = message->snapshot().tick();
        }
    }
    ASSERT_TRUE(first.has_value());
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(*first);
    stuck.send(ack);
    std::size_t worst_backlog = 0;
    bool seen = false;
    bool gone = false;
    const auto deadline = steady::now() + 8000ms;
    while (!gone && steady::now() < deadline) {
        const auto clients = server.get().call([&server] { return server.get().clients(); });
        const auto it =
            std::find_if(clients.begin(), clients.end(), [](const auto& c) { return c.name == "stuck"; });
        if (it != clients.end()) {
            seen = true;
            worst_backlog = std::max(worst_backlog, it->unsent_bytes);
        } else if (seen) {
            gone = true;
        }
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(seen);
    EXPECT_TRUE(gone) << "the client that never reads was not disconnected";
    EXPECT_LE(worst_backlog, options.max_unsent_bytes);
    EXPECT_EQ(server.get().metrics().disconnects.with("SLOW_CONSUMER").value(), 1U);
    const auto reason = stuck.read_disconnect(2000ms); // reading now: its reason may still be there
    if (reason) {
        EXPECT_EQ(reason->reason(), v1::SLOW_CONSUMER);
    }
    watcher.expect_unharmed(3000ms);
}

TEST(Sessions, TheClientLimitRefusesTheNextOneWithServerFull) {
    auto options = test_options();
    options.max_clients = 3;
    running_server server{options};
    bystander watcher{server, 1500ms};
    std::this_thread::sleep_for(100ms);
    raw_client second{server.port()};
    second.send_hello();
    ASSERT_TRUE(second.read()); // welcome
    raw_client third{server.port()};
    third.send_hello();
    ASSERT_TRUE(third.read());
    raw_client fourth{server.port()};
    const auto reason = fourth.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::SERVER_FULL);
    watcher.expect_unharmed(1500ms);
}

TEST(Sessions, AnOverloadedServerRefusesNewClientsWithARetryHintUntilItsTicksRecover) {
    // The tick observer makes every tick take longer than the period (33 ms) while `slow` holds.
    std::atomic<bool> slow{true};
    auto options = test_options();
    options.max_tick_load = 0.9; // the default, which the other tests turn off
    options.retry_after_seconds = 7;
    running_server server{options, [&slow](proto::tick_type, const proto::snapshot_history&) {
                              if (slow.load()) {
                                  std::this_thread::sleep_for(40ms);
                              }
                          }};
    std::this_thread::sleep_for(1500ms); // a second of slow ticks fills the load's window
    raw_client refused{server.port()};
    const auto reason = refused.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::SERVER_FULL);
    EXPECT_NE(reason->message().find("overloaded"), std::string::npos) << reason->message();
    EXPECT_EQ(reason->retry_after_seconds(), 7U);
    EXPECT_EQ(server.get().metrics().overload_refusals.value(), 1U);

    slow = false; // a second of fast ticks, and the door opens again
    std::this_thread::sleep_for(1500ms);
    raw_client admitted{server.port()};
    admitted.send_hello();
    const auto welcome = admitted.read();
    ASSERT_TRUE(welcome);
    EXPECT_TRUE(welcome->has_server_welcome());
    EXPECT_EQ(server.get().metrics().overload_refusals.value(), 1U);
}

TEST(Sessions, AnOverloadedServerSendsEachClientEveryOtherTickUntilItsTicksRecover) {
    std::atomic<bool> slow{false};
    auto options = test_options();
    options.max_snapshot_stride = 2;
    running_server server{options, [&slow](proto::tick_type, const proto::snapshot_history&) {
                              if (slow.load()) {
                                  std::this_thread::sleep_for(40ms); // longer than the 33 ms period
                              }
                          }};
    mirror_client client{server.port()};
    const auto stride = [&server] { return server.get().metrics().snapshot_stride.value(); };
    const auto pump_until = [&client](const auto& done) {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            client.pump(100ms);
        }
        return done();
    };
    // The gaps between the ticks the client applied, from its second snapshot on.
    const auto gaps = [&client] {
        std::vector<proto::tick_type> out;
        for (std::size_t i = 2; i < client.applied_ticks.size(); ++i) {
            out.push_back(client.applied_ticks[i] - client.applied_ticks[i - 1]);
        }
        return out;
    };
    client.pump(500ms);
    EXPECT_EQ(stride(), 1.0);

    slow = true; // a second of overrunning ticks: every other tick for each client
    ASSERT_TRUE(pump_until([&] { return stride() == 2.0; }));
    client.applied_ticks.clear();
    client.pump(1500ms);
    const auto slow_gaps = gaps();
    ASSERT_GE(slow_gaps.size(), 5U);
    for (const auto gap : slow_gaps) {
        EXPECT_EQ(gap % 2, 0U) << "a snapshot off the client's turn"; // a TCP link busy at its turn skips it
    }
    EXPECT_GE(std::count(slow_gaps.begin(), slow_gaps.end(), 2U),
              static_cast<std::ptrdiff_t>(slow_gaps.size() / 2));

    slow = false; // caught up: every tick again
    ASSERT_TRUE(pump_until([&] { return stride() == 1.0; }));
    client.applied_ticks.clear();
    client.pump(1000ms);
    const auto fast_gaps = gaps();
    ASSERT_GE(fast_gaps.size(), 10U);
    EXPECT_GE(std::count(fast_gaps.begin(), fast_gaps.end(), 1U),
              static_cast<std::ptrdiff_t>(fast_gaps.size() * 8 / 10));
    EXPECT_TRUE(client.refusals.empty()) << client.refusals.front(); // every strided delta applied exactly
    EXPECT_FALSE(client.disconnect);
}

TEST(Sessions, AServerSendingFewerSnapshotsRefusesNewClientsAsOverloaded) {
    // One tick in three overruns (45 ms for a 33 ms period): the stride rises, while the ticks take on
    // average about half the period, under --max-tick-load.
    std::atomic<unsigned> ticks{0};
    auto options = test_options();
    options.max_tick_load = 0.9;
    options.max_snapshot_stride = 2;
    running_server server{options, [&ticks](proto::tick_type, const proto::snapshot_history&) {
                              if (ticks++ % 3 == 0) {
                                  std::this_thread::sleep_for(45ms);
                              }
                          }};
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (server.get().metrics().snapshot_stride.value() != 2.0 &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(50ms);
    }
    ASSERT_EQ(server.get().metrics().snapshot_stride.value(), 2.0);
    raw_client refused{server.port()};
    const auto reason = refused.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::SERVER_FULL);
    EXPECT_NE(reason->message().find("a snapshot every 2 ticks"), std::string::npos) << reason->message();
    EXPECT_GE(server.get().metrics().overload_refusals.value(), 1U);
}

TEST(Sessions, AnInputCannotMoveSomeoneElsesAvatar) {
    running_server server;
    mirror_client victim{server.port(), "victim"};
    mirror_client attacker{server.port(), "attacker"};
    ASSERT_TRUE(victim.own && attacker.own);
    victim.pump(300ms);
    attacker.pump(300ms);
    const auto victim_before = victim.transform_of(*victim.own);
    ASSERT_TRUE(victim_before);

    attacker.send_move(1.0F, 0.0F, 8.0F, victim.own->index); // aimed at the victim's avatar
    for (int i = 0; i < 20; ++i) {
        attacker.pump(20ms);
        victim.pump(20ms);
    }
    const auto victim_after = victim.transform_of(*victim.own);
    ASSERT_TRUE(victim_after);
    EXPECT_EQ(victim_after->x, victim_before->x);
    EXPECT_EQ(victim_after->y, victim_before->y);
    EXPECT_GE(server.get().metrics().refused_inputs.value(), 1U);
    EXPECT_FALSE(attacker.disconnect); // refused, not disconnected
    EXPECT_TRUE(victim.refusals.empty());
    EXPECT_TRUE(attacker.refusals.empty());

    // Its own avatar it may move.
    const auto attacker_before = attacker.transform_of(*attacker.own);
    attacker.send_move(1.0F, 0.0F, 8.0F);
    for (int i = 0; i < 20; ++i) {
        attacker.pump(20ms);
    }
    const auto attacker_after = attacker.transform_of(*attacker.own);
    ASSERT_TRUE(attacker_before && attacker_after);
    EXPECT_GT(attacker_after->x, attacker_before->x + 1.0F);
}

TEST(Sessions, UnexpectedMessagesAndAcksOfUnsentTicksAreProtocolErrors) {
    running_server server;
    raw_client early{server.port()};
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(5);
    early.send(ack); // before the handshake
    auto reason = early.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::PROTOCOL_ERROR);

    raw_client liar{server.port()};
    liar.send_hello();
    ack.mutable_ack()->set_tick(1'000'000);
    liar.send(ack);
    reason = liar.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::PROTOCOL_ERROR);
    EXPECT_NE(reason->message().find("never sent"), std::string::npos);

    raw_client impostor{server.port()};
    impostor.send_hello();
    v1::Envelope snapshot;
    snapshot.mutable_snapshot()->set_tick(1);
    impostor.send(snapshot);
    reason = impostor.read_disconnect();
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::PROTOCOL_ERROR);
}

TEST(Sessions, AClientThatStopsAckingIsHeldToTheWindowThenResumesWithDeltas) {
    auto options = test_options();
    options.max_unacked_ticks = 5;
    running_server server{options};
    bystander watcher{server, 2000ms};

    raw_client lagging{server.port()};
    lagging.send_hello(arena::replicated_schema(), "lagging");
    std::vector<v1::Snapshot> received;
    const auto read_snapshots = [&](std::chrono::milliseconds duration) {
        const auto deadline = steady::now() + duration;
        while (steady::now() < deadline) {
            if (auto message = lagging.read(100ms); message && message->has_snapshot()) {
                received.push_back(message->snapshot());
            }
        }
    };
    // 400 ms is 12 ticks; without acks the window lets 6 through at most (the first, then 5 more). Not much
    // longer: the ack below must name a tick the server's history (32 ticks) still holds, or the answer is a
    // full state, on a loaded machine too (1 s, 30 ticks, left it 2 ticks to spare, and a CI run used them).
    read_snapshots(400ms);
    ASSERT_FALSE(received.empty());
    EXPECT_LE(received.size(), 6U);
    for (std::size_t i = 1; i < received.size(); ++i) {
        EXPECT_LE(received[i].tick() - received.front().tick(), options.max_unacked_ticks);
    }
    EXPECT_GT(server.get().metrics().snapshots_held.value(), 0U);

    // An ack of the newest tick it received reopens the window; what follows is delta-coded against it.
    const auto acked = received.back().tick();
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(acked);
    lagging.send(ack);
    received.clear();
    read_snapshots(300ms);
    ASSERT_FALSE(received.empty()) << "the ack did not resume the snapshots";
    EXPECT_GT(received.front().tick(), acked);
    EXPECT_FALSE(received.front().full_state());
    EXPECT_EQ(received.front().tick() - 1 - received.front().baseline_gap(), acked);
    watcher.expect_unharmed(2000ms);
}

TEST(Sessions, AcksOlderThanTheFullStateInFlightAreIgnoredUntilItsOwnArrives) {
    running_server server{test_options()};
    raw_client joining{server.port()};
    joining.send_hello(arena::replicated_schema(), "joining");
    std::optional<v1::Snapshot> full;
    for (int i = 0; i < 30 && !full; ++i) {
        if (auto message = joining.read(100ms); message && message->has_snapshot()) {
            full = message->snapshot();
        }
    }
    ASSERT_TRUE(full && full->full_state());
    const auto next_snapshot = [&](std::chrono::milliseconds within) -> std::optional<v1::Snapshot> {
        const auto deadline = steady::now() + within;
        while (steady::now() < deadline) {
            if (auto message = joining.read(50ms); message && message->has_snapshot()) {
                return message->snapshot();
            }
        }
        return std::nullopt;
    };

    // An ack and a full-state request from before the full state arrived (a repeat, a duplicate): the
    // server keeps waiting for the full state's own ack, and sends no second full state.
    v1::Envelope stale;
    stale.mutable_ack()->set_tick(full->tick() - 1);
    joining.send(stale);
    stale.mutable_ack()->set_full_state_requested(true);
    joining.send(stale);
    EXPECT_FALSE(next_snapshot(300ms)) << "a stale ack released the server";
    EXPECT_EQ(server.get().metrics().stale_acks.value(), 2U);

    // Its own ack (a repeat is as good) resumes the stream, delta-coded against it.
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(full->tick());
    joining.send(ack);
    joining.send(ack);
    const auto delta = next_snapshot(1000ms);
    ASSERT_TRUE(delta);
    EXPECT_FALSE(delta->full_state());
    EXPECT_EQ(delta->tick() - 1 - delta->baseline_gap(), full->tick());
    EXPECT_EQ(server.get().metrics().stale_acks.value(), 2U);
}

// A full state acked late (its delivery took longer than the window) leaves room for one delta before the
// window holds; if that one is lost the client has nothing newer to ack. Its repeated ack (UDP clients
// repeat theirs) gets one more snapshot, the newest, so neither side waits for the other for good.
TEST(Sessions, ARepeatedAckWhileHeldSendsOneMoreSnapshot) {
    auto options = test_options();
    options.max_unacked_ticks = 5;
    running_server server{options};
    raw_client late{server.port()};
    late.send_hello(arena::replicated_schema(), "late");
    const auto read_snapshots = [&](std::chrono::milliseconds duration) {
        std::vector<v1::Snapshot> received;
        const auto deadline = steady::now() + duration;
        while (steady::now() < deadline) {
            if (auto message = late.read(50ms); message && message->has_snapshot()) {
                received.push_back(message->snapshot());
            }
        }
        return received;
    };
    auto first = read_snapshots(500ms); // 15 ticks: the full state waits for its ack meanwhile
    ASSERT_EQ(first.size(), 1U);
    ASSERT_TRUE(first[0].full_state());
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(first[0].tick());
    late.send(ack);
    const auto window = read_snapshots(300ms);
    ASSERT_EQ(window.size(), 1U) << "the acked tick is 15 ticks behind: one delta, then held";
    EXPECT_FALSE(window[0].full_state());

    late.send(ack); // the same ack again: held, and nothing newer to ack (say the delta was lost)
    const auto nudged = read_snapshots(300ms);
    ASSERT_EQ(nudged.size(), 1U);
    EXPECT_FALSE(nudged[0].full_state());
    EXPECT_GT(nudged[0].tick(), window[0].tick());
    EXPECT_EQ(nudged[0].tick() - 1 - nudged[0].baseline_gap(), first[0].tick());
}

} // namespace

} // namespace sessions_test
