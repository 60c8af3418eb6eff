// The server's operations layer: metrics in the Prometheus text format (checked by promtool), JSON log
// lines (checked by Python's json module), flags and config files, and tick pacing.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "ecsnet/server/inspector/json_out.hpp"
#include "ecsnet/server/logging.hpp"
#include "ecsnet/server/metrics.hpp"
#include "ecsnet/server/options.hpp"
#include "ecsnet/server/tick_pacer.hpp"

namespace ops_test {

namespace {

using namespace ecsnet::server;

// Runs a shell command with `input` on its standard input; returns its exit status and output.
std::pair<int, std::string> run_with_input(const std::string& command, const std::string& input) {
    // ctest runs this file's tests as parallel processes: each writes its own file (a shared name let one
    // test's command read another's input).
    const auto* test = testing::UnitTest::GetInstance()->current_test_info();
    const auto path = testing::TempDir() + "ecsnet_ops_input_" + test->test_suite_name() + "_" +
                      test->name() + "_" + std::to_string(::getpid()) + ".txt";
    {
        std::ofstream file{path, std::ios::binary};
        file << input;
    }
    std::string output;
    FILE* pipe = popen((command + " < " + path + " 2>&1").c_str(), "r");
    if (pipe == nullptr) {
        return {-1, "popen failed"};
    }
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
        output += buffer;
    }
    const int status = pclose(pipe);
    std::remove(path.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(Metrics, RenderIsValidPrometheusText) {
    metrics_registry metrics;
    auto& ticks = metrics.add_counter("ecsnet_test_ticks_total", "Ticks run.");
    auto& clients = metrics.add_gauge("ecsnet_test_connected_clients", "Clients connected now.");
    auto& durations = metrics.add_histogram("ecsnet_test_tick_duration_seconds", "Time spent in a tick.",
                                            histogram::exponential_bounds(0.0005, 2.0, 8));
    auto& reasons = metrics.add_counter_family("ecsnet_test_disconnects_total", "Disconnects by reason.",
                                               "reason", {"TIMEOUT", "SHUTDOWN"});
    ticks.add(3);
    clients.set(2);
    durations.observe(0.0007);
    durations.observe(0.004);
    durations.observe(5.0);
    reasons.with("TIMEOUT").add();
    reasons.with("something \"odd\"").add(2);

    const auto text = metrics.render();
    EXPECT_NE(text.find("ecsnet_test_ticks_total 3\n"), std::string::npos);
    EXPECT_NE(text.find("ecsnet_test_connected_clients 2\n"), std::string::npos);
    EXPECT_NE(text.find("ecsnet_test_tick_duration_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find("ecsnet_test_tick_duration_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("ecsnet_test_tick_duration_seconds_count 3\n"), std::string::npos);
    EXPECT_NE(text.find("ecsnet_test_disconnects_total{reason=\"TIMEOUT\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("ecsnet_test_disconnects_total{reason=\"other\"} 2\n"), std::string::npos);

    const auto [status, output] = run_with_input("promtool check metrics", text);
    EXPECT_EQ(status, 0) << output << "\n" << text;
}

TEST(Metrics, AScaledFamilyCountsIntegersAndRendersInItsUnit) {
    metrics_registry metrics;
    auto& phases = metrics.add_counter_family("ecsnet_test_phase_seconds_total", "Time per phase.", "phase",
                                              {"inputs", "send"}, 1e-9);
    phases.with("inputs").add(1'500'000'000); // nanoseconds
    phases.with("send").add(250'000);

    const auto text = metrics.render();
    EXPECT_NE(text.find("ecsnet_test_phase_seconds_total{phase=\"inputs\"} 1.5\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("ecsnet_test_phase_seconds_total{phase=\"send\"} 0.00025\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("ecsnet_test_phase_seconds_total{phase=\"other\"} 0\n"), std::string::npos) << text;

    const auto [status, output] = run_with_input("promtool check metrics", text);
    EXPECT_EQ(status, 0) << output << "\n" << text;
}

TEST(Metrics, HistogramQuantilesInterpolateWithinBuckets) {
    histogram h{{1.0, 2.0, 4.0}};
    EXPECT_EQ(h.quantile(0.5), 0.0); // empty
    for (int i = 0; i < 10; ++i) {
        h.observe(1.5); // all in (1, 2]
    }
    EXPECT_DOUBLE_EQ(h.quantile(0.5), 1.5);
    EXPECT_DOUBLE_EQ(h.quantile(1.0), 2.0);
    h.observe(100.0); // +Inf bucket reports the highest finite bound
    EXPECT_DOUBLE_EQ(h.quantile(1.0), 4.0);
    EXPECT_THROW(histogram({2.0, 1.0}), std::invalid_argument);
}

TEST(Metrics, ATallyAddsWhatItObservedAsIfObservedDirectly) {
    const auto bounds = histogram::exponential_bounds(0.25, 2.0, 6);
    for (std::uint32_t seed = 1; seed <= 10; ++seed) {
        std::mt19937 rng{seed};
        histogram direct{bounds};
        histogram tallied{bounds};
        histogram_tally tally{tallied};
        for (int round = 0; round < 20; ++round) {
            const auto n = rng() % 50;
            for (std::uint32_t i = 0; i < n; ++i) {
                // Bounds themselves, between them, below the first and past the last (+Inf).
                const double value = rng() % 4 == 0 ? bounds[rng() % bounds.size()]
                                                    : std::ldexp(static_cast<double>(rng() % 1000), -6);
                direct.observe(value);
                tally.observe(value);
            }
            EXPECT_EQ(tally.count(), n);
            tallied.add(tally);
            EXPECT_EQ(tally.count(), 0U) << "added, then emptied";
            ASSERT_EQ(tallied.cumulative_counts(), direct.cumulative_counts()) << "seed " << seed;
            ASSERT_EQ(tallied.count(), direct.count());
            ASSERT_NEAR(tallied.sum(), direct.sum(), 1e-9 * (1.0 + direct.sum()));
        }
    }
}

TEST(Logging, JsonLinesEscapeWhateverTheMessageHolds) {
    std::ostringstream stream;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream);
    spdlog::logger logger{"test", sink};
    logger.set_formatter(std::make_unique<json_formatter>());
    const std::vector<std::string> messages{
        "plain",
        "quote \" backslash \\ newline \n tab \t",
        std::string{"nul \0 bell \a del \x7f", 18}, // the literal's 18 characters, NUL included
        "utf-8 caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xae",
        "broken utf-8 \xc3 \xff \xed\xa0\x80 \xf4\x90\x80\x80 end",
    };
    for (const auto& message : messages) {
        logger.info("{}", message);
    }
    const auto [status, output] =
        run_with_input("python3 -c 'import json,sys\n"
                       "for line in sys.stdin.buffer:\n"
                       "    record = json.loads(line.decode(\"utf-8\"))\n"
                       "    assert set(record) == {\"time\", \"level\", \"logger\", \"msg\"}, record\n"
                       "    print(repr(record[\"msg\"]))'",
                       stream.str());
    ASSERT_EQ(status, 0) << output;
    EXPECT_NE(output.find("'quote \" backslash \\\\ newline \\n tab \\t'"), std::string::npos) << output;
    EXPECT_NE(output.find("caf\xc3\xa9"), std::string::npos) << output;  // valid UTF-8 kept
    EXPECT_NE(output.find("\xef\xbf\xbd"), std::string::npos) << output; // invalid bytes become U+FFFD
}

TEST(InspectorJson, KeysAndValuesEscapeAsTheLogLinesDo) {
    // The inspector's API carries clients' names: whatever their bytes, a browser must parse the page.
    const std::vector<std::string> texts{
        "quote \" backslash \\ newline \n tab \t",
        std::string{"nul \0 bell \a del \x7f", 18},
        "utf-8 caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xae",
        "broken utf-8 \xc3 \xff \xed\xa0\x80 \xf4\x90\x80\x80 end",
    };
    inspector::json_out out;
    out.begin_array();
    for (const auto& text : texts) {
        out.begin_object().member(text, text).end_object();
    }
    out.end_array();
    const auto [status, output] =
        run_with_input("python3 -c 'import json,sys\n"
                       "for record in json.loads(sys.stdin.buffer.read().decode(\"utf-8\")):\n"
                       "    [(key, value)] = record.items()\n"
                       "    assert key == value, record\n"
                       "    print(ascii(value))'",
                       out.str());
    ASSERT_EQ(status, 0) << output;
    EXPECT_NE(output.find("'quote \" backslash \\\\ newline \\n tab \\t'"), std::string::npos) << output;
    EXPECT_NE(output.find("'nul \\x00 bell \\x07 del \\x7f'"), std::string::npos) << output;
    EXPECT_NE(output.find("caf\\xe9 \\u20ac \\U0001f3ae"), std::string::npos) << output; // valid UTF-8 kept
    // Each byte outside valid UTF-8 (a lone lead, 0xFF, a surrogate, above U+10FFFF) becomes U+FFFD.
    EXPECT_NE(
        output.find("'broken utf-8 \\ufffd \\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd\\ufffd end'"),
        std::string::npos)
        << output;
}

TEST(Options, DefaultsFlagsAndConfigFile) {
    const char* no_flags[] = {"ecsnet-server"};
    const auto defaults = parse_options(1, no_flags);
    ASSERT_TRUE(defaults.options);
    EXPECT_EQ(defaults.options->port, 7777);
    EXPECT_EQ(defaults.options->tick_rate, 30U);
    EXPECT_EQ(defaults.options->max_clients, 1024U);
    EXPECT_EQ(defaults.options->npcs, 10'000U);
    EXPECT_EQ(defaults.options->max_snapshot_stride, 3U); // the SDK's 100 ms interpolation covers 3 ticks

    const auto config = testing::TempDir() + "ecsnet_server_test.toml";
    {
        std::ofstream file{config};
        file << "port = 9001\nnpcs = 12\nlog-format = \"json\"\ntick-rate = 20\n";
    }
    const std::string config_flag = "--config=" + config;
    const char* with_config[] = {"ecsnet-server", config_flag.c_str(), "--tick-rate", "60"};
    const auto parsed = parse_options(4, with_config);
    ASSERT_TRUE(parsed.options);
    EXPECT_EQ(parsed.options->port, 9001);
    EXPECT_EQ(parsed.options->npcs, 12U);
    EXPECT_EQ(parsed.options->log_format_value, log_format::json);
    EXPECT_EQ(parsed.options->tick_rate, 60U); // the flag wins over the file
}

TEST(Options, BadValuesAreRefusedWithAnExitCode) {
    const char* bad_rate[] = {"ecsnet-server", "--tick-rate", "0"};
    EXPECT_FALSE(parse_options(3, bad_rate).options);
    EXPECT_NE(parse_options(3, bad_rate).exit_code, 0);
    const char* bad_format[] = {"ecsnet-server", "--log-format", "xml"};
    EXPECT_FALSE(parse_options(3, bad_format).options);
    const char* short_rewind[] = {"ecsnet-server", "--lag-compensation-ms", "100"}; // 250 to 1,000
    EXPECT_FALSE(parse_options(3, short_rewind).options);
    const char* long_rewind[] = {"ecsnet-server", "--lag-compensation-ms", "1001"};
    EXPECT_FALSE(parse_options(3, long_rewind).options);
    const char* rewind[] = {"ecsnet-server", "--lag-compensation-ms", "250", "--min-fire-interval-ms", "0"};
    const auto with_rewind = parse_options(5, rewind);
    ASSERT_TRUE(with_rewind.options);
    EXPECT_EQ(with_rewind.options->lag_compensation.count(), 250);
    EXPECT_EQ(with_rewind.options->min_fire_interval.count(), 0);
    const char* no_stride[] = {"ecsnet-server", "--max-snapshot-stride", "0"}; // 1 means "never lower"
    EXPECT_FALSE(parse_options(3, no_stride).options);
    const char* stride[] = {"ecsnet-server", "--max-snapshot-stride", "1"};
    const auto with_stride = parse_options(3, stride);
    ASSERT_TRUE(with_stride.options);
    EXPECT_EQ(with_stride.options->max_snapshot_stride, 1U);
    const char* unknown[] = {"ecsnet-server", "--no-such-flag"};
    EXPECT_FALSE(parse_options(2, unknown).options);
    const char* help[] = {"ecsnet-server", "--help"};
    const auto asked = parse_options(2, help);
    EXPECT_FALSE(asked.options);
    EXPECT_EQ(asked.exit_code, 0);
}

TEST(TickPacer, KeepsTheGridAndNeverBursts) {
    using namespace std::chrono_literals;
    const auto start = tick_pacer::clock::time_point{} + 1s;
    tick_pacer pacer{10.0, start}; // 100 ms period
    auto next = pacer.tick_ended(start + 20ms);
    EXPECT_FALSE(next.overrun);
    EXPECT_EQ(next.next_start, start + 100ms);
    next = pacer.tick_ended(start + 150ms); // in time for the slot at 200 ms
    EXPECT_FALSE(next.overrun);
    EXPECT_EQ(next.next_start, start + 200ms);
    // A tick that started at 200 ms and ended at 530 ms overran: the next starts at once, slots skipped.
    next = pacer.tick_ended(start + 530ms);
    EXPECT_TRUE(next.overrun);
    EXPECT_EQ(next.skipped_slots, 2U);
    EXPECT_EQ(next.next_start, start + 530ms);
    next = pacer.tick_ended(start + 540ms); // the grid restarted from there
    EXPECT_FALSE(next.overrun);
    EXPECT_EQ(next.next_start, start + 630ms);
}

} // namespace

} // namespace ops_test
