// The ecsnet-bots binary (issue 7), run as a process against a server on 127.0.0.1:
// - the end-to-end test: `ecsnet-bots --clients 50 --duration 5` exits 0, and its JSON report says
//   50 clients reached and zero desyncs (with the keys present);
// - nothing listening on the port: a non-zero exit, a summary that says why, and a report saying so (over
//   TCP: refused; over UDP: no answer within --connect-timeout);
// - --thin besides --clients, with a simulated latency: exit 0, the thin bots counted apart in the report;
// - bad arguments exit 2; --help exits 0 and says the duration counts from the end of the ramp;
// - --report-html: the page rendered by headless chromium (skipped without it) has the histogram and a row
//   per bot, a hostile --name-prefix as text; an unwritable path exits 2, saying why.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "../client/client_support.hpp"

namespace bots_cli_test {

namespace {

using namespace std::chrono_literals;

struct process_result {
    int exit_code{-1}; // -1: killed at the deadline
    std::string out;
    std::string err;
    double seconds{};
};

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in{path};
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs `args` (argv[0] the binary), stdout and stderr to files; kills it after `deadline`.
process_result run_process(const std::vector<std::string>& args, std::chrono::seconds deadline) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("ecsnet_bots_cli_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
    std::filesystem::create_directories(dir);
    const auto out_path = dir / "out.txt";
    const auto err_path = dir / "err.txt";
    const auto started = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, 1);
        ::dup2(err, 2);
        std::vector<char*> argv;
        for (const auto& a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    process_result result;
    int status = 0;
    while (true) {
        const auto done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) {
            result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            break;
        }
        if (std::chrono::steady_clock::now() - started > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(20ms);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    result.out = read_file(out_path);
    result.err = read_file(err_path);
    std::filesystem::remove_all(dir);
    return result;
}

google::protobuf::Struct parse_report(const std::filesystem::path& path) {
    google::protobuf::Struct report;
    const auto text = read_file(path);
    const auto status = google::protobuf::util::JsonStringToMessage(text, &report);
    EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << text;
    return report;
}

std::filesystem::path report_path(const char* name) {
    return std::filesystem::temp_directory_path() /
           (std::string{name} + "_" + std::to_string(::getpid()) + ".json");
}

#ifdef ECSNET_BOTS_BINARY

TEST(BotsCli, FiftyBotsForFiveSecondsExitZeroWithFiftyReachedAndNoDesync) {
    // 200 NPCs: enough to replicate a world, light enough for a sanitizer build of server and bots together.
    ecsnet::client::testing::test_server server{200};
    const auto report = report_path("bots_cli_e2e");
    const auto result = run_process({ECSNET_BOTS_BINARY, "--host", "127.0.0.1", "--port",
                                     std::to_string(server.port()), "--clients", "50", "--duration", "5",
                                     "--behaviour", "wander", "--report", report.string()},
                                    60s);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("PASSED"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("connected 50/50"), std::string::npos) << "progress lines\n" << result.out;

    const auto json = parse_report(report);
    const auto& f = json.fields();
    ASSERT_TRUE(f.contains("clients_reached")) << read_file(report);
    EXPECT_EQ(f.at("clients_reached").number_value(), 50.0);
    EXPECT_EQ(f.at("connect_failures").number_value(), 0.0);
    EXPECT_EQ(f.at("desyncs").number_value(), 0.0);
    EXPECT_TRUE(f.at("passed").bool_value());
    for (const char* key : {"p50", "p95", "p99", "max"}) {
        ASSERT_TRUE(f.at("latency_ms").struct_value().fields().contains(key)) << key;
    }
    EXPECT_GT(f.at("latency_ms").struct_value().fields().at("max").number_value(), 0.0);
    // Every bot applied snapshots (how many depends on the machine: a sanitizer build on a busy machine
    // keeps up with a fraction of the ticks only).
    EXPECT_GT(f.at("snapshots_per_second_min").number_value(), 0.0);
    EXPECT_GT(f.at("ticks_applied_ratio_min").number_value(), 0.0);
    EXPECT_GT(f.at("bytes_in_per_second_per_client").number_value(), 100.0);
    EXPECT_EQ(f.at("parameters").struct_value().fields().at("clients").number_value(), 50.0);
    std::filesystem::remove(report);
}

TEST(BotsCli, NoServerOnThePortExitsNonZeroAndSaysWhy) {
    const auto port = ecsnet::client::testing::unused_port();
    const auto report = report_path("bots_cli_refused");
    const auto result = run_process({ECSNET_BOTS_BINARY, "--transport", "tcp", "--port", std::to_string(port),
                                     "--clients", "5", "--duration", "30", "--report", report.string()},
                                    30s);
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_LT(result.seconds, 10.0) << "ends when every bot has failed, not after the 30 s planned";
    EXPECT_NE(result.out.find("FAILED"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("5 of 5 bots failed to connect (connect_failed 5)"), std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("Connection refused"), std::string::npos) << result.out;
    EXPECT_NE(result.err.find("connect failure: bot-0"), std::string::npos) << result.err;
    const auto json = parse_report(report);
    EXPECT_EQ(json.fields().at("clients_reached").number_value(), 0.0);
    EXPECT_EQ(json.fields().at("connect_failures").number_value(), 5.0);
    EXPECT_FALSE(json.fields().at("passed").bool_value());
    std::filesystem::remove(report);
}

// Over UDP nobody refuses a datagram: the bots give up after the connect timeout, saying so.
TEST(BotsCli, NoServerOverUdpExitsNonZeroWithinTheConnectTimeout) {
    const auto port = ecsnet::client::testing::unused_port();
    const auto result = run_process({ECSNET_BOTS_BINARY, "--port", std::to_string(port), "--clients", "2",
                                     "--thin", "2", "--connect-timeout", "0.5", "--duration", "30"},
                                    30s);
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_LT(result.seconds, 10.0);
    EXPECT_NE(result.out.find("2 of 2 bots failed to connect (connect_failed 2)"), std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("2 of 2 thin bots failed to connect"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("request_timed_out"), std::string::npos) << result.out;
}

// --thin besides --clients, with the simulator: the run passes and the report counts the thin bots apart.
TEST(BotsCli, ThinBotsRunBesidesFullOnes) {
    ecsnet::client::testing::test_server server{200};
    const auto report = report_path("bots_cli_thin");
    const auto result =
        run_process({ECSNET_BOTS_BINARY, "--port", std::to_string(server.port()), "--clients", "5", "--thin",
                     "20", "--duration", "3", "--sim-latency-ms", "5", "--report", report.string()},
                    60s);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("connected 5/5 (thin 20/20)"), std::string::npos) << result.out;
    const auto row = result.out.find("thin bots reached");
    ASSERT_NE(row, std::string::npos) << result.out;
    EXPECT_EQ(result.out.substr(row, result.out.find('\n', row) - row).find("20 / 20") == std::string::npos,
              false)
        << result.out;
    const auto json = parse_report(report);
    const auto& f = json.fields();
    EXPECT_EQ(f.at("clients_reached").number_value(), 5.0);
    const auto& thin = f.at("thin").struct_value().fields();
    EXPECT_EQ(thin.at("clients_reached").number_value(), 20.0);
    EXPECT_EQ(thin.at("dropped").number_value(), 0.0);
    EXPECT_GT(thin.at("snapshots_acked").number_value(), 20.0 * 30.0);
    EXPECT_GT(thin.at("latency_ms").struct_value().fields().at("p50").number_value(), 5.0)
        << "the simulated latency";
    const auto& parameters = f.at("parameters").struct_value().fields();
    EXPECT_EQ(parameters.at("transport").string_value(), "udp");
    EXPECT_EQ(parameters.at("thin").number_value(), 20.0);
    EXPECT_EQ(parameters.at("simulator").struct_value().fields().at("latency_ms").number_value(), 5.0);
    std::filesystem::remove(report);
}

TEST(BotsCli, BadArgumentsExitTwoAndHelpExplainsTheDuration) {
    const auto bad = run_process({ECSNET_BOTS_BINARY, "--behaviour", "fly"}, 10s);
    EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
    const auto zero = run_process({ECSNET_BOTS_BINARY, "--clients", "0"}, 10s);
    EXPECT_EQ(zero.exit_code, 2) << zero.out << zero.err;
    const auto quic = run_process({ECSNET_BOTS_BINARY, "--transport", "quic"}, 10s);
    EXPECT_EQ(quic.exit_code, 2) << quic.out << quic.err;
    const auto simulated_tcp =
        run_process({ECSNET_BOTS_BINARY, "--transport", "tcp", "--sim-loss", "0.1"}, 10s);
    EXPECT_EQ(simulated_tcp.exit_code, 2) << simulated_tcp.out << simulated_tcp.err;
    const auto help = run_process({ECSNET_BOTS_BINARY, "--help"}, 10s);
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("END of the ramp"), std::string::npos) << help.out;
    for (const char* flag :
         {"--host",      "--port",           "--clients",       "--ramp",          "--duration",
          "--behaviour", "--seed",           "--report",        "--threads",       "--name-prefix",
          "--quiet",     "--report-html",    "--transport",     "--thin",          "--token-file",
          "--sim-loss",  "--sim-latency-ms", "--sim-jitter-ms", "--sim-duplicate", "--sim-reorder"}) {
        EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
    }
}

// Headless Debian chromium on PATH, or empty.
std::string find_chromium() {
    const char* path = std::getenv("PATH");
    std::stringstream dirs{path != nullptr ? path : "/usr/bin"};
    for (std::string dir; std::getline(dirs, dir, ':');) {
        for (const char* name : {"chromium", "chromium-browser"}) {
            const auto candidate = std::filesystem::path{dir} / name;
            if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) {
                return candidate.string();
            }
        }
    }
    return {};
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) {
        ++n;
    }
    return n;
}

// --report-html (issue 18) end to end: three bots named with a hostile prefix, their page opened in headless
// chromium, whose rendered DOM has the histogram's bars, the progress table and the three bots' rows, the
// prefix as text and never as an element.
TEST(BotsCli, HtmlReportRendersInHeadlessChromium) {
    const auto chromium = find_chromium();
    if (chromium.empty()) {
        GTEST_SKIP() << "no chromium on PATH (scripts/setup installs it)";
    }
    ecsnet::client::testing::test_server server{200};
    const auto dir = std::filesystem::temp_directory_path() / ("bots_cli_html_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto page = dir / "report.html";
    const auto result =
        run_process({ECSNET_BOTS_BINARY, "--port", std::to_string(server.port()), "--clients", "3",
                     "--duration", "3", "--name-prefix", "<script>document.title='owned'</script>", "--quiet",
                     "--report-html", page.string()},
                    60s);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;

    // --user-data-dir: a profile of its own, not the user's; the deadline bounds a chromium that hangs.
    const auto dom = run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                  "--user-data-dir=" + (dir / "profile").string(), "--dump-dom",
                                  "file://" + page.string()},
                                 60s);
    ASSERT_EQ(dom.exit_code, 0) << dom.err;
    const auto& html = dom.out;
    EXPECT_NE(html.find("id=\"latency-histogram\""), std::string::npos) << html;
    EXPECT_GT(occurrences(html, "<rect class=\"bar\""), 3U) << html;
    EXPECT_NE(html.find("id=\"progress-table\""), std::string::npos) << html;
    EXPECT_EQ(occurrences(html, "<tr class=\"bot\">"), 3U) << html;
    EXPECT_NE(html.find("&lt;script&gt;document.title='owned'&lt;/script&gt;-2"), std::string::npos) << html;
    EXPECT_EQ(html.find("<script"), std::string::npos) << "the prefix became an element\n" << html;
    EXPECT_EQ(html.find("<title>owned"), std::string::npos) << html;
    std::filesystem::remove_all(dir);
}

// A page that cannot be written: a clear error and exit 2 (the run itself failed: no server), no crash.
TEST(BotsCli, UnwritableHtmlReportExitsTwoAndSaysWhy) {
    const auto port = ecsnet::client::testing::unused_port();
    const auto result =
        run_process({ECSNET_BOTS_BINARY, "--transport", "tcp", "--port", std::to_string(port), "--clients",
                     "1", "--duration", "30", "--report-html", "/nonexistent-ecsnet-dir/report.html"},
                    30s);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(
        result.err.find("cannot write the HTML report to /nonexistent-ecsnet-dir/report.html: No such file "
                        "or directory"),
        std::string::npos)
        << result.err;
}

#else

TEST(BotsCli, Skipped) {
    GTEST_SKIP() << "ecsnet-bots is not built (ECSNET_BUILD_APPS=OFF)";
}

#endif

} // namespace

} // namespace bots_cli_test
