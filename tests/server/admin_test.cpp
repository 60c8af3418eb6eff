// The admin endpoint of a running server: /metrics in the Prometheus text format (checked by promtool)
// with every metric operations dashboards rely on, and /healthz answering 200 while the tick loop runs.

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

#include <gtest/gtest.h>
#include <httplib.h>

#include "server_support.hpp"

namespace admin_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;

int promtool_check(const std::string& text, std::string& output) {
    const auto path = ::testing::TempDir() + "ecsnet_admin_metrics.txt";
    {
        std::ofstream file{path};
        file << text;
    }
    FILE* pipe = popen(("promtool check metrics < " + path + " 2>&1").c_str(), "r");
    char buffer[256];
    while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
        output += buffer;
    }
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The value of the sample named exactly `name` (labels included), or -1.
double sample(const std::string& text, std::string_view name) {
    std::istringstream lines{text};
    std::string line;
    while (std::getline(lines, line)) {
        if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ' ') {
            return std::stod(line.substr(name.size() + 1));
        }
    }
    return -1.0;
}

TEST(Admin, MetricsAndHealthOfARunningServer) {
    running_server server;
    mirror_client client{server.port(), "metered"};
    client.send_move(0.0F, 1.0F, 4.0F);
    client.pump(700ms);
    raw_client rude{server.port()};
    rude.send_bytes("\x05hello"); // a whole frame whose 5 bytes are no Envelope
    ASSERT_TRUE(rude.read_disconnect());
    client.pump(200ms);

    httplib::Client http{"127.0.0.1", server.get().admin_port()};
    http.set_read_timeout(5, 0);
    const auto health = http.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);

    const auto metrics = http.Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_EQ(metrics->status, 200);
    EXPECT_NE(metrics->get_header_value("Content-Type").find("text/plain"), std::string::npos);
    const auto& text = metrics->body;
    for (const char* name :
         {"ecsnet_tick_duration_seconds_bucket", "ecsnet_tick_duration_seconds_sum",
          "ecsnet_tick_overruns_total", "ecsnet_connected_clients 1", "ecsnet_entities ",
          "ecsnet_network_sent_bytes_total", "ecsnet_network_received_bytes_total",
          "ecsnet_snapshot_size_bytes_bucket", "ecsnet_disconnects_total{reason=\"PROTOCOL_ERROR\"} 1",
          "ecsnet_disconnects_total{reason=\"TIMEOUT\"} 0", "ecsnet_snapshot_stride 1\n"}) {
        EXPECT_NE(text.find(name), std::string::npos) << name;
    }
    EXPECT_EQ(text.find("ecsnet_network_sent_bytes_total 0\n"), std::string::npos);

    // The tick's parts add up to its duration. The tick runs beside the scrape, so the two may be a tick
    // apart: at most one tick's budget (a 30 Hz tick in this test takes far less than 33 ms).
    double parts = 0.0;
    for (const char* phase : {"inputs", "systems", "capture", "prepare", "send", "other"}) {
        const auto seconds =
            sample(text, std::string{"ecsnet_tick_phase_seconds_total{phase=\""} + phase + "\"}");
        EXPECT_GE(seconds, 0.0) << phase;
        parts += seconds;
    }
    for (const char* busy : {"inputs", "systems", "capture", "send"}) {
        EXPECT_GT(sample(text, std::string{"ecsnet_tick_phase_seconds_total{phase=\""} + busy + "\"}"), 0.0)
            << busy;
    }
    const auto duration = sample(text, "ecsnet_tick_duration_seconds_sum");
    EXPECT_GT(duration, 0.0);
    EXPECT_NEAR(parts, duration, 0.033);
    std::string output;
    EXPECT_EQ(promtool_check(text, output), 0) << output;

    server.stop();
    EXPECT_FALSE(server.get().healthy());
}

} // namespace

} // namespace admin_test
