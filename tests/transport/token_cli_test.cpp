// ecsnet-token, run as a process: keygen writes a key file readable by its owner only; issue prints a
// base64 token that opens with that key and holds what was asked; bad arguments exit 2, an unreadable or
// malformed key file exits 1; inspect reads a token back.

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/key.hpp"

namespace token_cli_test {

namespace {

using namespace ecsnet::transport;

struct run_result {
    int exit_code{-1};
    std::string out;
    std::string err;
};

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in{path};
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs the binary with `args`; stdout and stderr captured through files. The token CLI never blocks on
// input unless told to read stdin (it gets /dev/null).
run_result run(const std::vector<std::string>& args) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("ecsnet_token_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto out_path = dir / "out";
    const auto err_path = dir / "err";
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::freopen("/dev/null", "r", stdin);
        std::freopen(out_path.c_str(), "w", stdout);
        std::freopen(err_path.c_str(), "w", stderr);
        std::vector<char*> argv{const_cast<char*>(ECSNET_TOKEN_BINARY)};
        for (const auto& arg : args) {
            argv.push_back(const_cast<char*>(arg.c_str()));
        }
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    run_result result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out_path), slurp(err_path)};
    std::filesystem::remove_all(dir);
    return result;
}

std::filesystem::path temp_file(const char* name) {
    return std::filesystem::temp_directory_path() / (std::string{name} + "_" + std::to_string(::getpid()));
}

TEST(TokenCli, KeygenPrintsAKey) {
    const auto result = run({"keygen"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(key_from_hex(result.out)) << result.out;
    EXPECT_EQ(result.out.size(), 65U);
}

TEST(TokenCli, IssuedTokenOpensWithTheKeyFileAndHoldsWhatWasAsked) {
    const auto key_file = temp_file("ecsnet_key");
    std::filesystem::remove(key_file);
    const auto keygen = run({"keygen", "--out", key_file.string()});
    ASSERT_EQ(keygen.exit_code, 0) << keygen.err;
    struct stat info {};
    ASSERT_EQ(::stat(key_file.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600U);
    const auto private_key = key_from_hex(slurp(key_file));
    ASSERT_TRUE(private_key);

    const auto result =
        run({"issue", "--key-file", key_file.string(), "--client-id", "12345", "--server", "127.0.0.1:7777",
             "--server", "[::1]:7778", "--expire-seconds", "120", "--timeout-seconds", "7", "--protocol-id",
             "0xABCDEF", "--user-data-hex", "00ff10"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto token = read_token_base64(result.out);
    ASSERT_TRUE(token) << to_string(token.error());
    EXPECT_EQ(token->protocol_id, 0xABCDEFU);
    EXPECT_EQ(token->expire_timestamp - token->create_timestamp, 120U);
    EXPECT_EQ(token->timeout_seconds, 7U);
    ASSERT_EQ(token->server_addresses.size(), 2U);
    EXPECT_EQ(token->server_addresses[0].to_string(), "127.0.0.1:7777");
    EXPECT_EQ(token->server_addresses[1].to_string(), "[::1]:7778");
    const auto opened = open_private_token(
        {token->protocol_id, token->expire_timestamp, token->nonce, token->encrypted_private}, *private_key);
    ASSERT_TRUE(opened) << to_string(opened.error());
    EXPECT_EQ(opened->client_id, 12345U);
    EXPECT_EQ(opened->user_data[0], 0x00);
    EXPECT_EQ(opened->user_data[1], 0xFF);
    EXPECT_EQ(opened->user_data[2], 0x10);
    EXPECT_EQ(opened->user_data[3], 0x00);

    const auto inspect = run({"inspect", result.out});
    EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_NE(inspect.out.find("server [::1]:7778"), std::string::npos) << inspect.out;
    std::filesystem::remove(key_file);
}

TEST(TokenCli, DevKeyTokensOpenWithTheDevKey) {
    const auto result =
        run({"issue", "--dev-key", "--client-id", "1", "--server", "127.0.0.1:7777", "--protocol-id", "1"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("DEVELOPMENT"), std::string::npos);
    const auto token = read_token_base64(result.out);
    ASSERT_TRUE(token);
    EXPECT_TRUE(open_private_token(
        {token->protocol_id, token->expire_timestamp, token->nonce, token->encrypted_private},
        dev_private_key));
}

TEST(TokenCli, BadArgumentsExitTwo) {
    const std::vector<std::vector<std::string>> cases{
        {},
        {"issue", "--dev-key", "--server", "127.0.0.1:1", "--protocol-id", "1"}, // no client id
        {"issue", "--dev-key", "--client-id", "1", "--protocol-id", "1"},        // no server
        {"issue", "--dev-key", "--client-id", "x", "--server", "1.2.3.4:1", "--protocol-id", "1"},
        {"issue", "--dev-key", "--client-id", "1", "--server", "nowhere", "--protocol-id", "1"},
        {"issue", "--dev-key", "--client-id", "1", "--server", "1.2.3.4:1", "--protocol-id", "1",
         "--timeout-seconds", "0"},
        {"issue", "--dev-key", "--client-id", "1", "--server", "1.2.3.4:1", "--protocol-id", "1",
         "--user-data-hex", "abc"},
        {"issue", "--client-id", "1", "--server", "1.2.3.4:1", "--protocol-id", "1"}, // no key
        {"frobnicate"},
    };
    for (const auto& args : cases) {
        const auto result = run(args);
        EXPECT_EQ(result.exit_code, 2) << (args.empty() ? "(none)" : args[0]) << " " << result.err;
        EXPECT_TRUE(result.out.empty() || args.empty()) << result.out;
    }
}

TEST(TokenCli, MissingOrMalformedKeyFileExitsOne) {
    const auto missing = run({"issue", "--key-file", "/nonexistent/key", "--client-id", "1", "--server",
                              "127.0.0.1:1", "--protocol-id", "1"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find("cannot read"), std::string::npos) << missing.err;
    const auto bad_file = temp_file("ecsnet_bad_key");
    std::ofstream{bad_file} << "not a key\n";
    const auto malformed = run({"issue", "--key-file", bad_file.string(), "--client-id", "1", "--server",
                                "127.0.0.1:1", "--protocol-id", "1"});
    EXPECT_EQ(malformed.exit_code, 1);
    EXPECT_TRUE(malformed.out.empty());
    std::filesystem::remove(bad_file);
}

TEST(TokenCli, InspectRefusesWhatIsNotAToken) {
    const auto result = run({"inspect", "bm90IGEgdG9rZW4"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("wrong_size"), std::string::npos) << result.err;
}

} // namespace

} // namespace token_cli_test
