// Junk connections at a high rate must not turn into as many log lines: each kind of line a peer can
// cause is written a few times, then summarized once a period, while /metrics counts every event exactly.
// (A log that grows with what strangers send is how a disk fills and a host dies.)

#include <atomic>
#include <cctype>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "ecsnet/server/log_limiter.hpp"
#include "ecsnet/server/logging.hpp"
#include "ecsnet/v1/envelope.pb.h"
#include "server_support.hpp"

namespace log_flood_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;

// Routes spdlog's default logger to a string for the lifetime of the object.
class captured_log {
public:
    captured_log()
        : previous_{spdlog::default_logger()} {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
        auto logger = std::make_shared<spdlog::logger>("capture", sink);
        logger->set_level(spdlog::level::info);
        logger->set_pattern("%v");
        spdlog::set_default_logger(logger);
    }
    captured_log(const captured_log&) = delete;
    captured_log& operator=(const captured_log&) = delete;
    ~captured_log() { spdlog::set_default_logger(previous_); }

    [[nodiscard]] std::string text() const { return text_.str(); }

private:
    std::shared_ptr<spdlog::logger> previous_;
    std::ostringstream text_;
};

std::uint64_t total_disconnects(server::game_server& server) {
    auto& family = server.metrics().disconnects;
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < family.size(); ++i) {
        total += static_cast<std::uint64_t>(family.counter_at(i).value());
    }
    return total;
}

TEST(LogLimiter, WritesABurstPerPeriodThenOneSummaryWithTheExactCount) {
    std::vector<std::string> summaries;
    server::log_limiter limiter{3, std::chrono::seconds{10},
                                [&](std::string_view line) { summaries.emplace_back(line); }};
    const auto start = std::chrono::steady_clock::time_point{} + std::chrono::hours{1};
    int written = 0;
    for (int i = 0; i < 1933; ++i) {
        written += limiter.allow("PROTOCOL_ERROR disconnects", start + std::chrono::milliseconds{i}) ? 1 : 0;
    }
    EXPECT_EQ(written, 3);
    EXPECT_TRUE(summaries.empty()); // the period has not ended
    limiter.flush(start + std::chrono::seconds{5});
    EXPECT_TRUE(summaries.empty());
    limiter.flush(start + std::chrono::seconds{10});
    ASSERT_EQ(summaries.size(), 1U);
    EXPECT_EQ(summaries[0], "1,930 more PROTOCOL_ERROR disconnects in the last 10 s");
    // A new period writes a new burst; other kinds have their own.
    EXPECT_TRUE(limiter.allow("PROTOCOL_ERROR disconnects", start + std::chrono::seconds{11}));
    EXPECT_TRUE(limiter.allow("joins", start + std::chrono::seconds{11}));
    EXPECT_EQ(limiter.suppressed_total("PROTOCOL_ERROR disconnects"), 1930U);
}

TEST(LogLimiter, KindsBeyondTheLimitShareOneRecord) {
    std::vector<std::string> summaries;
    server::log_limiter limiter{1, std::chrono::seconds{1},
                                [&](std::string_view line) { summaries.emplace_back(line); }};
    const auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours{1};
    for (int i = 0; i < 1000; ++i) {
        static_cast<void>(limiter.allow("kind " + std::to_string(i), now));
    }
    limiter.flush_all(now + std::chrono::seconds{1});
    ASSERT_EQ(summaries.size(), 1U);
    EXPECT_EQ(summaries[0], "935 more other log lines in the last 1 s"); // 64 kinds, 1 line each, 1 shared
}

// A string with invalid UTF-8 in a peer's message: protobuf refuses it and, once the server's logging is
// configured, writes its line at the debug level only, not one line per message to stderr.
TEST(LogFlood, MalformedStringsWriteNothingToStderr) {
    ecsnet::v1::Envelope envelope;
    envelope.mutable_client_hello()->set_client_name("AB");
    auto bytes = envelope.SerializeAsString();
    const auto at = bytes.find("AB");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, 2, "\xff\xfe"); // not UTF-8

    ecsnet::server::configure_logging("log-flood-test", "warn", ecsnet::server::log_format::text);
    ::testing::internal::CaptureStderr();
    for (int i = 0; i < 100; ++i) {
        ecsnet::v1::Envelope parsed;
        EXPECT_FALSE(parsed.ParseFromString(bytes));
    }
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(LogFlood, JunkConnectionsLeaveABoundedLogAndExactCounters) {
    constexpr int junk_connections = 2000;
    captured_log log;
    auto options = test_options();
    options.log_burst = 5;
    options.log_period = std::chrono::milliseconds{60'000}; // longer than the test: summaries at shutdown
    running_server server{options};

    const auto deadline = steady::now() + 30s;
    for (int i = 0; i < junk_connections && steady::now() < deadline; ++i) {
        raw_client junk{server.port()};
        junk.send_bytes(std::string("\x03"
                                    "abc",
                                    4)); // a whole frame that is no Envelope
    }
    while (total_disconnects(server.get()) < junk_connections && steady::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(total_disconnects(server.get()), static_cast<std::uint64_t>(junk_connections));

    // The server carried on: a real client still joins and mirrors.
    {
        mirror_client client{server.port(), "after-the-flood"};
        client.pump(400ms);
        EXPECT_FALSE(client.applied_ticks.empty());
        EXPECT_TRUE(client.refusals.empty());
    }
    server.stop();                                 // writes the pending summaries
    std::map<std::string, std::uint64_t> expected; // per reason, from /metrics
    {
        auto& family = server.get().metrics().disconnects;
        for (std::size_t i = 0; i < family.size(); ++i) {
            if (const auto n = static_cast<std::uint64_t>(family.counter_at(i).value()); n > 0) {
                expected[family.value_at(i)] = n;
            }
        }
    }
    const auto text = log.text();

    std::map<std::string, std::uint64_t> logged;
    std::istringstream lines{text};
    std::string line;
    std::size_t line_count = 0;
    // "... disconnected: REASON (...": a line written; "N more REASON disconnects in the last ...": a
    // summary. (No std::regex: GCC 12's sanitizer builds warn inside it.)
    const auto reason_at = [](const std::string& from, std::size_t at) {
        std::size_t end = at;
        while (end < from.size() &&
               (std::isupper(static_cast<unsigned char>(from[end])) != 0 || from[end] == '_')) {
            ++end;
        }
        return from.substr(at, end - at);
    };
    while (std::getline(lines, line)) {
        ++line_count;
        constexpr std::string_view marker = "disconnected: ";
        if (const auto at = line.find(marker); at != std::string::npos) {
            ++logged[reason_at(line, at + marker.size())];
            continue;
        }
        constexpr std::string_view more = " more ";
        if (const auto at = line.find(more);
            at != std::string::npos && line.find(" disconnects in the last") != std::string::npos) {
            auto digits = line.substr(0, at);
            std::erase(digits, ',');
            logged[reason_at(line, at + more.size())] += std::stoull(digits);
        }
    }
    EXPECT_EQ(logged, expected) << text;        // every disconnect is either a line or in a summary
    EXPECT_LT(line_count, 40U) << text;         // not 2,000
    EXPECT_LT(text.size(), 8U * 1024U) << text; // bytes, whatever the lines hold
}

// An overrun's line says where the tick's time went: every part by name, the slow one with its time.
TEST(LogFlood, AnOverrunsLineSaysWhichPartOfTheTickTookTheTime) {
    captured_log log;
    std::atomic<unsigned> ticks{0};
    running_server server{test_options(), [&ticks](proto::tick_type, const proto::snapshot_history&) {
                              if (ticks++ % 10 == 5) { // the observer runs in the capture part
                                  std::this_thread::sleep_for(45ms);
                              }
                          }};
    const auto deadline = steady::now() + 10s;
    while (server.get().metrics().tick_overruns.value() < 2 && steady::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    server.stop();
    ASSERT_GE(server.get().metrics().tick_overruns.value(), 2U);
    const auto text = log.text();
    const auto at = text.find("overran: ");
    ASSERT_NE(at, std::string::npos) << text;
    const auto line = text.substr(at, text.find('\n', at) - at);
    for (const char* part : {"(inputs ", ", systems ", ", prepare ", ", send ", ", other "}) {
        EXPECT_NE(line.find(part), std::string::npos) << part << " in: " << line;
    }
    const auto capture = line.find(", capture ");
    ASSERT_NE(capture, std::string::npos) << line;
    EXPECT_GE(std::stod(line.substr(capture + 10)), 40.0) << line; // the observer's 45 ms
}

} // namespace

} // namespace log_flood_test
