// ecsnet-token: the studio's key and connect tokens from the command line.
//
//   ecsnet-token keygen [--out FILE]            a new private key, 64 hex digits (FILE created 0600)
//   ecsnet-token issue (--key-file FILE | --dev-key) --client-id N --server HOST:PORT [--server ...]
//                      --protocol-id P [--expire-seconds S] [--timeout-seconds T] [--user-data-hex HEX]
//                                                a token in base64 on stdout
//   ecsnet-token inspect TOKEN                  the public part of a base64 token (TOKEN "-": stdin)
//
// Exit codes: 0 done, 1 failed (unreadable key file, bad token...), 2 bad arguments.

#include <sys/stat.h>

#include <charconv>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/key.hpp"

namespace {

using namespace ecsnet::transport;

// Decimal, or hexadecimal with 0x.
std::optional<std::uint64_t> parse_u64(const std::string& text) {
    std::uint64_t value = 0;
    int base = 10;
    std::string_view digits{text};
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
    }
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
        return std::nullopt;
    }
    return value;
}

std::optional<user_data> parse_user_data(const std::string& hex) {
    if (hex.size() % 2 != 0 || hex.size() > 2 * user_data_bytes) {
        return std::nullopt;
    }
    user_data out{};
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
        if (ec != std::errc{} || end != hex.data() + i + 2) {
            return std::nullopt;
        }
        out[i / 2] = static_cast<std::uint8_t>(value);
    }
    return out;
}

std::string read_all(std::istream& in) {
    return std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

int keygen(const std::string& out_path) {
    const auto text = to_hex(generate_key()) + "\n";
    if (out_path.empty()) {
        std::cout << text;
        return 0;
    }
    // Created readable by its owner only, before the key is written into it.
    const auto old_mask = ::umask(077);
    std::ofstream out{out_path, std::ios::trunc};
    ::umask(old_mask);
    if (!(out << text) || !out.flush()) {
        std::cerr << "ecsnet-token: cannot write " << out_path << "\n";
        return 1;
    }
    std::cerr << "ecsnet-token: wrote a new key to " << out_path << "\n";
    return 0;
}

struct issue_args {
    std::string key_file;
    bool dev_key{false};
    std::string client_id;
    std::vector<std::string> servers;
    std::string protocol_id;
    std::uint32_t expire_seconds{30};
    std::uint32_t timeout_seconds{10};
    std::string user_data_hex;
};

int issue(const issue_args& args) {
    key private_key{};
    if (args.dev_key) {
        private_key = dev_private_key;
        std::cerr << "ecsnet-token: issuing with the public DEVELOPMENT key: only --insecure-dev servers "
                     "accept it\n";
    } else {
        std::ifstream in{args.key_file};
        if (!in) {
            std::cerr << "ecsnet-token: cannot read the key file " << args.key_file << "\n";
            return 1;
        }
        const auto parsed = key_from_hex(read_all(in));
        if (!parsed) {
            std::cerr << "ecsnet-token: " << args.key_file
                      << " does not hold a key (64 hex digits, as `ecsnet-token keygen` writes)\n";
            return 1;
        }
        private_key = *parsed;
    }
    token_params params;
    const auto client_id = parse_u64(args.client_id);
    const auto protocol_id = parse_u64(args.protocol_id);
    if (!client_id || !protocol_id) {
        std::cerr << "ecsnet-token: --client-id and --protocol-id take a number (decimal, or hex with 0x)\n";
        return 2;
    }
    params.client_id = *client_id;
    params.protocol_id = *protocol_id;
    for (const auto& text : args.servers) {
        const auto address = net_address::parse(text);
        if (!address || address->port == 0) {
            std::cerr << "ecsnet-token: --server " << text
                      << " is not an address with a port (1.2.3.4:7777, [::1]:7777)\n";
            return 2;
        }
        params.server_addresses.push_back(*address);
    }
    if (!args.user_data_hex.empty()) {
        const auto data = parse_user_data(args.user_data_hex);
        if (!data) {
            std::cerr << "ecsnet-token: --user-data-hex takes an even number of hex digits, at most 512\n";
            return 2;
        }
        params.user_data = *data;
    }
    params.expire_seconds = args.expire_seconds;
    params.timeout_seconds = args.timeout_seconds;
    const auto token = issue_token(params, private_key);
    if (!token) {
        std::cerr << "ecsnet-token: cannot issue: " << to_string(token.error()) << "\n";
        return 1;
    }
    std::cout << to_base64(*token) << "\n";
    return 0;
}

int inspect(const std::string& text_or_dash) {
    const auto text = text_or_dash == "-" ? read_all(std::cin) : text_or_dash;
    const auto token = read_token_base64(text);
    if (!token) {
        std::cerr << "ecsnet-token: not a token: " << to_string(token.error()) << "\n";
        return 1;
    }
    std::cout << "protocol_id " << token->protocol_id << "\n"
              << "created " << token->create_timestamp << "\n"
              << "expires " << token->expire_timestamp << "\n"
              << "timeout_seconds " << token->timeout_seconds << "\n";
    for (const auto& address : token->server_addresses) {
        std::cout << "server " << address.to_string() << "\n";
    }
    const auto now = unix_now();
    std::cout << (now >= token->expire_timestamp
                      ? "expired\n"
                      : "valid for " + std::to_string(token->expire_timestamp - now) + " s\n");
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"ecsnet-token: the studio's private key and connect tokens for ecsnet's UDP transport"};
    app.require_subcommand(1);

    std::string out_path;
    auto* keygen_command =
        app.add_subcommand("keygen", "print a new private key (64 hex digits), or write it");
    keygen_command->add_option("--out", out_path,
                               "write the key to this file (created readable by you only)");

    issue_args args;
    auto* issue_command = app.add_subcommand("issue", "issue a connect token, printed in base64");
    auto* key_file = issue_command->add_option("--key-file", args.key_file, "file holding the private key");
    auto* dev = issue_command->add_flag("--dev-key", args.dev_key,
                                        "use the public development key (for --insecure-dev servers only)");
    key_file->excludes(dev);
    issue_command->add_option("--client-id", args.client_id, "the client's id (u64, decimal or 0x hex)")
        ->required();
    issue_command->add_option("--server", args.servers, "a server address, HOST:PORT (repeat: up to 32)")
        ->required()
        ->expected(1, static_cast<int>(max_token_servers));
    issue_command->add_option("--protocol-id", args.protocol_id, "the game's protocol id (u64)")->required();
    issue_command->add_option("--expire-seconds", args.expire_seconds, "the token expires this long from now")
        ->check(CLI::Range(1U, 7U * 24 * 3600))
        ->capture_default_str();
    issue_command->add_option("--timeout-seconds", args.timeout_seconds, "silence that ends a connection")
        ->check(CLI::Range(1U, max_token_timeout_seconds))
        ->capture_default_str();
    issue_command->add_option("--user-data-hex", args.user_data_hex,
                              "up to 256 bytes for the server, in hex");

    std::string token_text;
    auto* inspect_command = app.add_subcommand("inspect", "print the public part of a token");
    inspect_command->add_option("token", token_text, "the token in base64, or - to read it from stdin")
        ->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const auto code = app.exit(error);
        return code == 0 ? 0 : 2;
    }
    try {
        if (keygen_command->parsed()) {
            return keygen(out_path);
        }
        if (issue_command->parsed()) {
            if (args.key_file.empty() && !args.dev_key) {
                std::cerr << "ecsnet-token issue: --key-file or --dev-key is required\n";
                return 2;
            }
            return issue(args);
        }
        return inspect(token_text);
    } catch (const std::exception& error) {
        std::cerr << "ecsnet-token: " << error.what() << "\n";
        return 1;
    }
}
