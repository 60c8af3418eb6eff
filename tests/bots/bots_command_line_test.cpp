// ecsnet-bots' flags, parsed in-process (bots/command_line.hpp): the defaults; the transport, --thin, the
// simulator flags and --token-file into swarm_options; and every bad combination refused with exit code 2
// and a reason (an unknown transport, values out of range, the simulator over TCP, no bot at all, a token
// file missing, short of tokens, or holding something that is not a token).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include <ecsnet/transport/dev_key.hpp>

#include "ecsnet/bots/command_line.hpp"

namespace bots_command_line_test {

namespace {

using namespace ecsnet::bots;
using namespace std::chrono_literals;

struct parsed {
    command_line result;
    std::string out;
    std::string err;
};

parsed parse(std::vector<std::string> args) {
    args.insert(args.begin(), "ecsnet-bots");
    std::vector<const char*> argv;
    for (const auto& a : args) {
        argv.push_back(a.c_str());
    }
    std::ostringstream out;
    std::ostringstream err;
    auto result = parse_command_line(static_cast<int>(argv.size()), argv.data(), out, err);
    return {std::move(result), out.str(), err.str()};
}

std::string dev_token(std::uint64_t client_id) {
    ecsnet::transport::dev_token_params params;
    params.protocol_id = ecsnet::client::default_protocol_id;
    params.client_id = client_id;
    params.server_addresses = {*ecsnet::transport::net_address::parse("127.0.0.1:7777")};
    return ecsnet::transport::to_base64(*ecsnet::transport::make_dev_token(params));
}

// A file in the temporary directory, removed with this object.
struct temp_file {
    std::filesystem::path path;
    explicit temp_file(const std::string& text) {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() / ("ecsnet_bots_tokens_" + std::to_string(::getpid()) +
                                                         "_" + std::to_string(counter++) + ".txt");
        std::ofstream{path} << text;
    }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    ~temp_file() { std::filesystem::remove(path); }
};

TEST(BotsCommandLine, DefaultsAreUdpFullBotsOnlyAndNoSimulator) {
    const auto p = parse({});
    ASSERT_TRUE(p.result.options.has_value()) << p.err;
    const auto& o = *p.result.options;
    EXPECT_EQ(o.transport, ecsnet::client::transport_kind::udp);
    EXPECT_EQ(o.clients, 10U);
    EXPECT_EQ(o.thin, 0U);
    EXPECT_TRUE(o.tokens.empty());
    EXPECT_FALSE(o.simulator.enabled());
}

TEST(BotsCommandLine, TheNewFlagsReachTheOptions) {
    const auto p = parse({"--transport", "udp", "--clients", "4", "--thin", "30", "--sim-loss", "0.05",
                          "--sim-latency-ms", "40", "--sim-jitter-ms", "7.5", "--sim-duplicate", "0.01",
                          "--sim-reorder", "0.02", "--seed", "9"});
    ASSERT_TRUE(p.result.options.has_value()) << p.err;
    const auto& o = *p.result.options;
    EXPECT_EQ(o.clients, 4U);
    EXPECT_EQ(o.thin, 30U);
    EXPECT_DOUBLE_EQ(o.simulator.loss, 0.05);
    EXPECT_EQ(o.simulator.latency, 40ms);
    EXPECT_EQ(o.simulator.jitter, 7500us);
    EXPECT_DOUBLE_EQ(o.simulator.duplicate, 0.01);
    EXPECT_DOUBLE_EQ(o.simulator.reorder, 0.02);
    EXPECT_EQ(o.simulator.seed, 9U) << "the run's seed";

    const auto tcp = parse({"--transport", "tcp", "--clients", "0", "--thin", "3"});
    ASSERT_TRUE(tcp.result.options.has_value()) << tcp.err;
    EXPECT_EQ(tcp.result.options->transport, ecsnet::client::transport_kind::tcp);
    EXPECT_EQ(tcp.result.options->clients, 0U) << "thin bots alone";
}

TEST(BotsCommandLine, ATokenFileGivesEachBotItsLine) {
    const auto a = dev_token(1);
    const auto b = dev_token(2);
    const auto c = dev_token(3);
    temp_file file{"# tokens for the load test\n" + a + "\n\n  " + b + "  \r\n" + c + "\n"};
    const auto p = parse({"--clients", "2", "--thin", "1", "--token-file", file.path.string()});
    ASSERT_TRUE(p.result.options.has_value()) << p.err;
    EXPECT_EQ(p.result.options->tokens, (std::vector<std::string>{a, b, c}))
        << "comments, blanks, spaces skipped";
    // More tokens than bots: the first ones are used.
    const auto fewer_bots = parse({"--clients", "1", "--token-file", file.path.string()});
    ASSERT_TRUE(fewer_bots.result.options.has_value()) << fewer_bots.err;
    EXPECT_EQ(fewer_bots.result.options->tokens, std::vector<std::string>{a});
}

TEST(BotsCommandLine, BadArgumentsExitTwoWithAReason) {
    temp_file two{dev_token(1) + "\n" + dev_token(2) + "\n"};
    temp_file bad{dev_token(1) + "\nnot-a-token\n"};
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--transport", "quic"}, "--transport"},
        {{"--sim-loss", "1.5"}, "--sim-loss"},
        {{"--sim-latency-ms", "-1"}, "--sim-latency-ms"},
        {{"--sim-reorder", "2"}, "--sim-reorder"},
        {{"--thin", "-1"}, "--thin"},
        {{"--thin", "20001"}, "--thin"},
        {{"--transport", "tcp", "--sim-loss", "0.1"}, "--transport udp"},
        {{"--clients", "0"}, "no bot to run"},
        {{"--token-file", "/nonexistent/tokens.txt"}, "cannot open"},
        {{"--clients", "3", "--token-file", two.path.string()}, "2 tokens"},
        {{"--clients", "1", "--thin", "2", "--token-file", two.path.string()}, "for 3 bots"},
        {{"--clients", "2", "--token-file", bad.path.string()}, "line 2"},
    };
    for (const auto& [args, expected] : cases) {
        std::string joined;
        for (const auto& a : args) {
            joined += a + " ";
        }
        SCOPED_TRACE(joined);
        const auto p = parse(args);
        EXPECT_FALSE(p.result.options.has_value());
        EXPECT_EQ(p.result.exit_code, 2);
        EXPECT_NE((p.err + p.out).find(expected), std::string::npos) << p.err << p.out;
    }
}

TEST(BotsCommandLine, HelpListsEveryFlag) {
    const auto p = parse({"--help"});
    EXPECT_FALSE(p.result.options.has_value());
    EXPECT_EQ(p.result.exit_code, 0);
    for (const char* flag :
         {"--transport", "--thin", "--token-file", "--sim-loss", "--sim-latency-ms", "--sim-jitter-ms",
          "--sim-duplicate", "--sim-reorder", "--clients", "--report"}) {
        EXPECT_NE(p.out.find(flag), std::string::npos) << flag;
    }
}

} // namespace

} // namespace bots_command_line_test
