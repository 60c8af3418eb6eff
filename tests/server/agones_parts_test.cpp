// The Agones client's pure parts: the retry delays, the tick watchdog (driven by a test clock), reading the
// GameServer's state from the sidecar's JSON, and the two-label counter its metrics use.

#include <gtest/gtest.h>

#include "ecsnet/server/agones/backoff.hpp"
#include "ecsnet/server/agones/game_server_state.hpp"
#include "ecsnet/server/agones/tick_watchdog.hpp"
#include "ecsnet/server/metrics.hpp"

namespace agones_parts_test {

namespace {

using namespace std::chrono_literals;
using namespace ecsnet::server;

TEST(AgonesBackoff, DoublesFromTheInitialDelayUpToTheCapWithJitterInItsUpperHalf) {
    agones::backoff delays{100ms, 1000ms, 7};
    EXPECT_EQ(delays.cap(1), 100ms);
    EXPECT_EQ(delays.cap(2), 200ms);
    EXPECT_EQ(delays.cap(4), 800ms);
    EXPECT_EQ(delays.cap(5), 1000ms);
    EXPECT_EQ(delays.cap(60), 1000ms);
    for (std::uint32_t failures = 1; failures < 10; ++failures) {
        for (int draw = 0; draw < 50; ++draw) {
            const auto d = delays.delay(failures);
            EXPECT_GE(d, delays.cap(failures) / 2);
            EXPECT_LE(d, delays.cap(failures));
        }
    }
}

TEST(AgonesTickWatchdog, AdvancingUntilTheCounterHasNotChangedForTheStallTime) {
    using clock = agones::tick_watchdog::clock;
    agones::tick_watchdog watchdog{300ms};
    const clock::time_point t0{};
    EXPECT_TRUE(watchdog.advancing(10, t0));
    EXPECT_TRUE(watchdog.advancing(10, t0 + 299ms));
    EXPECT_FALSE(watchdog.advancing(10, t0 + 300ms)); // stalled
    EXPECT_FALSE(watchdog.advancing(10, t0 + 5s));
    EXPECT_TRUE(watchdog.advancing(11, t0 + 5s)); // ticking again
    EXPECT_TRUE(watchdog.advancing(11, t0 + 5s + 200ms));
    EXPECT_FALSE(watchdog.advancing(11, t0 + 5s + 300ms));
}

TEST(AgonesGameServerState, ReadFromAWatchLineOrABareGameServer) {
    EXPECT_EQ(
        agones::game_server_state(
            R"({"result":{"object_meta":{"name":"gs","labels":{"status":"x"}},"status":{"state":"Allocated","address":"10.0.0.1","ports":[{"name":"game","port":7001}]}}})"),
        "Allocated");
    EXPECT_EQ(
        agones::game_server_state(
            R"( { "object_meta" : { "annotations" : { "a" : "{\"state\":\"no\"}" } } , "status" : { "ports" : [ ] , "state" : "Ready" } } )"),
        "Ready");
    EXPECT_EQ(agones::game_server_state(R"({"error":{"code":14,"message":"unavailable"}})"), std::nullopt);
    EXPECT_EQ(agones::game_server_state(R"({"status":{"address":"1.2.3.4"}})"), std::nullopt);
    EXPECT_EQ(agones::game_server_state(R"({"status":{"state":"Rea)"), std::nullopt); // truncated
    EXPECT_EQ(agones::game_server_state(""), std::nullopt);
    EXPECT_EQ(agones::game_server_state("not json"), std::nullopt);
}

TEST(AgonesGameServerState, CodesOfTheStateGauge) {
    EXPECT_EQ(agones::state_code(""), 0.0);
    EXPECT_EQ(agones::state_code("Ready"), 3.0);
    EXPECT_EQ(agones::state_code("Allocated"), 4.0);
    EXPECT_EQ(agones::state_code("Shutdown"), 6.0);
    EXPECT_EQ(agones::state_code("Somethingnew"), 8.0);
}

TEST(CounterGrid, CountsPerPairOfLabelValuesAndRendersEveryPair) {
    metrics_registry registry;
    auto& grid = registry.add_counter_grid("test_requests_total", "Requests.", "call", {"ready", "health"},
                                           "result", {"ok", "error"});
    grid.with("ready", "ok").add();
    grid.with("health", "error").add(2);
    grid.with("nonsense", "nonsense").add(); // into the last declared values
    const auto text = registry.render();
    EXPECT_NE(text.find("# TYPE test_requests_total counter\n"), std::string::npos);
    EXPECT_NE(text.find("test_requests_total{call=\"ready\",result=\"ok\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("test_requests_total{call=\"ready\",result=\"error\"} 0\n"), std::string::npos);
    EXPECT_NE(text.find("test_requests_total{call=\"health\",result=\"error\"} 3\n"), std::string::npos);
}

} // namespace

} // namespace agones_parts_test
