// The Agones SDK contract against a stand-in sidecar (agones_sidecar.hpp): Ready after the game port
// listens, health pings on their period that stop while the tick stalls, Allocated from the watch stream
// reaching game_world::allocated on the tick thread, the players List following joins and leaves, Shutdown
// when the server ends; and a sidecar that is missing, hangs or answers 500 leaving the tick rate alone
// while its calls are retried with backoff and counted.

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "agones_sidecar.hpp"
#include "server_support.hpp"

namespace agones_sdk_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;

// The arena (arena_world is final: wrapped), plus what these tests watch: the thread that ticks, a switch
// that stalls the tick, and the allocated() calls.
class observed_world final : public server::game_world {
public:
    explicit observed_world(const server::arena_options& options)
        : arena_{options} {}

    [[nodiscard]] const proto::schema& replicated_schema() const override {
        return arena_.replicated_schema();
    }
    [[nodiscard]] ecsnet::registry& registry() override { return arena_.registry(); }
    entity client_joined(server::client_id client, std::string_view name) override {
        return arena_.client_joined(client, name);
    }
    void client_left(server::client_id client, entity avatar) override { arena_.client_left(client, avatar); }
    std::optional<std::string> apply_input(server::client_id client, entity avatar,
                                           const server::client_input& input) override {
        return arena_.apply_input(client, avatar, input);
    }

    void update(double dt) override {
        tick_thread = std::this_thread::get_id();
        // A stalled tick (bounded: a failing test must not hang the suite).
        for (int waited = 0; stall && waited < 5000; ++waited) {
            std::this_thread::sleep_for(1ms);
        }
        arena_.update(dt);
    }

    void allocated(std::string_view game_server_json) override {
        allocated_on = std::this_thread::get_id();
        allocated_json = std::string{game_server_json};
        allocations.fetch_add(1);
    }

    std::atomic<bool> stall{false};
    std::atomic<int> allocations{0};
    std::atomic<std::thread::id> tick_thread{};
    std::atomic<std::thread::id> allocated_on{};
    std::string allocated_json; // read after `allocations` is seen

private:
    server::arena_world arena_;
};

// Fast periods, so that each test takes about a second.
server::server_options agones_options(std::uint16_t sidecar_port) {
    auto options = test_options(200);
    options.agones.enabled = true;
    options.agones.host = "127.0.0.1";
    options.agones.port = sidecar_port;
    options.agones.health_period = 100ms;
    options.agones.tick_stall = 300ms;
    options.agones.request_timeout = 200ms;
    options.agones.retry_initial = 20ms;
    options.agones.retry_max = 200ms;
    options.agones.watch_idle_timeout = 5s;
    options.agones.shutdown_wait = 1000ms;
    return options;
}

// An in-process server over an observed_world, running on its own thread.
class agones_server {
public:
    explicit agones_server(const server::server_options& options) {
        server::arena_options arena;
        arena.npcs = options.npcs;
        arena.tick_rate = options.tick_rate;
        arena.workers = options.workers;
        auto world = std::make_unique<observed_world>(arena);
        world_ = world.get();
        server_ = std::make_unique<server::game_server>(options, std::move(world));
        server_->open();
        thread_ = std::thread{[this] { server_->run(false); }};
    }
    agones_server(const agones_server&) = delete;
    agones_server& operator=(const agones_server&) = delete;
    ~agones_server() { stop(); }

    /// Stops the server; returns how long run() took to return.
    std::chrono::milliseconds stop() {
        const auto started = steady::now();
        if (thread_.joinable()) {
            world_->stall = false;
            server_->stop();
            thread_.join();
        }
        return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started);
    }

    [[nodiscard]] server::game_server& get() noexcept { return *server_; }
    [[nodiscard]] observed_world& world() noexcept { return *world_; }
    [[nodiscard]] std::uint64_t ticks() { return server_->metrics().ticks.value(); }
    [[nodiscard]] std::uint64_t requests(std::string_view call, std::string_view result) {
        return server_->agones()->metrics().requests.with(call, result).value();
    }

    /// Ticks advanced over `window` against the tick rate's count: the sidecar must not slow the tick.
    [[nodiscard]] double tick_ratio(std::chrono::milliseconds window, std::uint32_t tick_rate) {
        const auto before = ticks();
        std::this_thread::sleep_for(window);
        const auto expected = static_cast<double>(tick_rate) * std::chrono::duration<double>(window).count();
        return static_cast<double>(ticks() - before) / expected;
    }

private:
    observed_world* world_{nullptr};
    std::unique_ptr<server::game_server> server_;
    std::thread thread_;
};

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    while (!condition()) {
        if (steady::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

// A 127.0.0.1 port nothing listens on (bound, then closed).
std::uint16_t unused_port() {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor{io, asio::ip::tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}};
    return acceptor.local_endpoint().port();
}

TEST(AgonesSdk, ReadyComesOnceTheGamePortListensAndShutdownWhenTheServerEnds) {
    fake_sidecar sidecar;
    std::atomic<std::uint16_t> game_port{0};
    std::atomic<bool> listening_at_ready{false};
    sidecar.on_call([&](const std::string& path) {
        if (path == "/ready") {
            eventually([&] { return game_port.load() != 0; }, 2s);
            raw_client probe{game_port.load()}; // throws (failing the test) if nothing listens
            listening_at_ready = true;
        }
    });
    auto options = agones_options(sidecar.port());
    // Open first, so the probe knows the port; the server's run() (which sends Ready) starts after.
    agones_server server{options};
    game_port = server.get().port();
    ASSERT_TRUE(sidecar.wait_for_calls("/ready", 1, 3s));
    EXPECT_TRUE(eventually([&] { return server.get().agones()->ready_acknowledged(); }, 2s));
    EXPECT_TRUE(listening_at_ready);
    EXPECT_TRUE(sidecar.calls_to("/shutdown").empty());

    server.stop();
    ASSERT_EQ(sidecar.calls_to("/ready").size(), 1U);
    ASSERT_EQ(sidecar.calls_to("/shutdown").size(), 1U);
    EXPECT_LT(sidecar.calls_to("/ready")[0].at, sidecar.calls_to("/shutdown")[0].at);
    for (const auto& c : sidecar.calls_to("/ready")) {
        EXPECT_EQ(c.method, "POST");
        EXPECT_EQ(c.body, "{}");
    }
}

TEST(AgonesSdk, HealthPingsComeOnTheirPeriodAndStopWhileTheTickStalls) {
    fake_sidecar sidecar;
    agones_server server{agones_options(sidecar.port())};
    ASSERT_TRUE(sidecar.wait_for_calls("/health", 6, 2s));
    const auto pings = sidecar.calls_to("/health");
    for (std::size_t i = 1; i < pings.size(); ++i) {
        EXPECT_LT(pings[i].at - pings[i - 1].at, 250ms) << "ping " << i; // period 100 ms
        EXPECT_GT(pings[i].at - pings[i - 1].at, 50ms) << "ping " << i;
    }

    server.world().stall = true;
    // After the stall threshold (300 ms) plus one period, no more pings.
    std::this_thread::sleep_for(500ms);
    const auto during_stall = sidecar.calls_to("/health").size();
    std::this_thread::sleep_for(400ms);
    EXPECT_EQ(sidecar.calls_to("/health").size(), during_stall) << "pings went on while the tick stalled";
    EXPECT_GT(server.get().agones()->metrics().health_withheld.value(), 0U);

    server.world().stall = false;
    EXPECT_TRUE(sidecar.wait_for_calls("/health", during_stall + 2, 1s)) << "pings did not resume";
}

TEST(AgonesSdk, AllocatedFromTheWatchStreamReachesTheWorldOnTheTickThreadOnce) {
    fake_sidecar sidecar;
    sidecar.set_state("Ready");
    agones_server server{agones_options(sidecar.port())};
    ASSERT_TRUE(sidecar.wait_for_calls("/watch/gameserver", 1, 2s));
    EXPECT_EQ(server.world().allocations.load(), 0);

    sidecar.set_state("Allocated");
    ASSERT_TRUE(eventually([&] { return server.world().allocations.load() == 1; }, 2s));
    EXPECT_EQ(server.world().allocated_on.load(), server.world().tick_thread.load());
    EXPECT_NE(server.world().allocated_json.find("\"Allocated\""), std::string::npos);
    const auto& metrics = server.get().agones()->metrics();
    EXPECT_EQ(metrics.allocations.value(), 1U);
    EXPECT_EQ(metrics.state.value(), 4.0); // Allocated
    const auto rendered = server.get().metrics().registry.render();
    EXPECT_NE(rendered.find("ecsnet_agones_allocations_total 1"), std::string::npos);

    sidecar.set_state("Allocated"); // an update of an allocated server (labels...): not a new allocation
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(server.world().allocations.load(), 1);
    EXPECT_EQ(metrics.allocations.value(), 1U);
}

TEST(AgonesSdk, PlayersAreAddedToTheListOnJoinAndRemovedOnLeave) {
    fake_sidecar sidecar;
    agones_server server{agones_options(sidecar.port())};
    std::string id;
    {
        mirror_client client{server.get().port(), "agones-player"};
        id = std::to_string(client.client_id);
        ASSERT_TRUE(sidecar.wait_for_calls("/v1beta1/lists/players:addValue", 1, 2s));
        // The sidecar records a call before it answers it.
        EXPECT_TRUE(eventually([&] { return sidecar.players() == std::set<std::string>{id}; }, 1s));
        EXPECT_EQ(sidecar.calls_to("/v1beta1/lists/players:addValue")[0].body, "{\"value\":\"" + id + "\"}");
    }
    ASSERT_TRUE(sidecar.wait_for_calls("/v1beta1/lists/players:removeValue", 1, 2s));
    EXPECT_TRUE(eventually([&] { return sidecar.players().empty(); }, 1s));
    // The client counts an answer after the sidecar recorded the call.
    EXPECT_TRUE(eventually([&] { return server.requests("list_remove", "ok") == 1; }, 1s));
    EXPECT_EQ(server.requests("list_add", "ok"), 1U);
}

TEST(AgonesSdk, AMissingSidecarLeavesTheTickAloneAndReadyIsRetriedWithBackoff) {
    auto options = agones_options(unused_port());
    agones_server server{options};
    EXPECT_GT(server.tick_ratio(1000ms, options.tick_rate), 0.85);
    const auto errors = server.requests("ready", "error");
    // Backoff from 20 ms doubling to 200 ms: about 8 attempts in a second, not hundreds.
    EXPECT_GE(errors, 3U);
    EXPECT_LE(errors, 20U);
    EXPECT_FALSE(server.get().agones()->ready_acknowledged());
    EXPECT_LT(server.stop(), 1000ms); // one last attempt each, not retried: the exit is not held
}

TEST(AgonesSdk, ASidecarThatGoesAwayMidRunLeavesTheTickAloneAndIsCalledAgain) {
    auto sidecar = std::make_unique<fake_sidecar>();
    auto options = agones_options(sidecar->port());
    agones_server server{options};
    ASSERT_TRUE(eventually([&] { return server.get().agones()->ready_acknowledged(); }, 2s));
    ASSERT_TRUE(sidecar->wait_for_calls("/watch/gameserver", 1, 2s));

    sidecar.reset(); // its watch stream closes, its port refuses
    const auto health_errors = server.requests("health", "error");
    EXPECT_GT(server.tick_ratio(600ms, options.tick_rate), 0.85);
    EXPECT_GE(server.requests("health", "error"), health_errors + 3); // still pinging, every period
    EXPECT_GE(server.requests("gameserver", "error"), 1U);            // the watch is being reopened
    EXPECT_LT(server.stop(), 1000ms);
}

TEST(AgonesSdk, AHangingSidecarTimesOutWithoutSlowingTheTick) {
    fake_sidecar sidecar;
    sidecar.set_behaviour(fake_sidecar::behaviour::hang, 3000ms);
    auto options = agones_options(sidecar.port());
    agones_server server{options};
    EXPECT_GT(server.tick_ratio(1000ms, options.tick_rate), 0.85);
    EXPECT_GE(server.requests("ready", "timeout"), 2U);
    EXPECT_GE(server.requests("health", "timeout"), 2U);
    EXPECT_FALSE(server.get().agones()->ready_acknowledged());
    EXPECT_LT(server.stop(), 1500ms); // the last attempts time out (200 ms each), the stream is closed
}

TEST(AgonesSdk, ASidecarAnswering500IsRetriedWithGrowingDelaysUntilItRecovers) {
    fake_sidecar sidecar;
    sidecar.set_behaviour(fake_sidecar::behaviour::fail);
    auto options = agones_options(sidecar.port());
    agones_server server{options};
    EXPECT_GT(server.tick_ratio(800ms, options.tick_rate), 0.85);
    const auto attempts = sidecar.calls_to("/ready");
    ASSERT_GE(attempts.size(), 5U);
    // Equal jitter: the first retry waits 10-20 ms, the fourth 80-160 ms.
    EXPECT_LT(attempts[1].at - attempts[0].at, 70ms);
    EXPECT_GT(attempts[4].at - attempts[3].at, 75ms);
    EXPECT_GE(server.requests("ready", "error"), attempts.size() - 1); // the last may not be counted yet
    EXPECT_GE(server.requests("health", "error"), 3U);

    sidecar.set_behaviour(fake_sidecar::behaviour::answer);
    EXPECT_TRUE(eventually([&] { return server.get().agones()->ready_acknowledged(); }, 1s));
    EXPECT_EQ(server.requests("ready", "ok"), 1U);
}

} // namespace

} // namespace agones_sdk_test
