// SIGTERM to a running ecsnet-server with connected clients: every client receives Disconnect(SHUTDOWN)
// and the process exits 0 within 2 seconds. Runs the real binary.

#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "server_process.hpp"
#include "server_support.hpp"

namespace shutdown_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;
using ecsnet::testing_support::server_process;

TEST(Shutdown, SigtermTellsEveryClientAndExitsWithinTwoSeconds) {
    server_process server{
        {"--bind", "127.0.0.1", "--port", "0", "--admin-port", "0", "--npcs", "500", "--insecure-dev"}};
    const auto port = server.wait_for("listening for clients on 127.0.0.1:", 10'000ms);
    ASSERT_TRUE(port) << server.output();

    std::vector<std::unique_ptr<raw_client>> clients;
    for (int i = 0; i < 5; ++i) {
        clients.push_back(std::make_unique<raw_client>(static_cast<std::uint16_t>(std::stoi(*port))));
        clients.back()->send_hello(arena::replicated_schema(), "client" + std::to_string(i));
        const auto welcome = clients.back()->read();
        ASSERT_TRUE(welcome && welcome->has_server_welcome());
    }

    const auto signalled = steady::now();
    server.signal(SIGTERM);
    for (auto& client : clients) {
        const auto reason = client->read_disconnect(2000ms);
        ASSERT_TRUE(reason);
        EXPECT_EQ(reason->reason(), v1::SHUTDOWN);
    }
    const auto status = server.wait_exit(2000ms);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - signalled);
    ASSERT_TRUE(status) << "still running 2 s after SIGTERM\n" << server.output();
    EXPECT_EQ(*status, 0) << server.output();
    EXPECT_LT(took, 2000ms);
    server.drain();
    EXPECT_NE(server.output().find("shutting down"), std::string::npos);
    EXPECT_NE(server.output().find("SHUTDOWN"),
              std::string::npos); // each disconnect is logged with its reason
}

TEST(Shutdown, SigintWithNoClientExitsAtOnce) {
    server_process server{{"--bind", "127.0.0.1", "--port", "0", "--admin-port", "0", "--npcs", "10",
                           "--log-format", "json", "--insecure-dev"}};
    ASSERT_TRUE(server.wait_for(R"("msg":"listening for clients)", 10'000ms)) << server.output();
    server.signal(SIGINT);
    const auto status = server.wait_exit(2000ms);
    ASSERT_TRUE(status);
    EXPECT_EQ(*status, 0);
}

TEST(Shutdown, ABadFlagExitsNonZeroWithAMessage) {
    server_process server{{"--tick-rate", "0"}};
    const auto status = server.wait_exit(5000ms);
    ASSERT_TRUE(status);
    EXPECT_NE(*status, 0);
    server.drain();
    EXPECT_NE(server.output().find("tick-rate"), std::string::npos) << server.output();
}

} // namespace

} // namespace shutdown_test
