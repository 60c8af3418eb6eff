// Connect tokens against the real server run with the studio's key (--key-file), over both transports
// (ClientTokens/tcp, ClientTokens/udp):
// - a token issued for the server connects, with client::connect(token) and with client_options::
//   connect_token, and the session is the usual one (welcome, exact snapshots);
// - without a token (the client's development token over UDP, nothing over TCP) the server refuses:
//   over UDP it answers nothing (connect_failed, request_timed_out, within the connect timeout), over TCP
//   it says authentication_failed.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include <ecsnet/transport/connect_token.hpp>
#include <ecsnet/transport/key.hpp>

#include "client_support.hpp"

namespace client_token_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::client::testing;
using ecsnet::client::client_state;
using ecsnet::client::disconnect_reason;
using ecsnet::client::transport_kind;

// The studio's key in a file, as `ecsnet-token keygen` writes it; removed with this object.
struct key_file {
    transport::key key{transport::generate_key()};
    std::filesystem::path path;
    key_file() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("ecsnet_client_key_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".hex");
        std::ofstream{path} << transport::to_hex(key) << "\n";
    }
    key_file(const key_file&) = delete;
    key_file& operator=(const key_file&) = delete;
    ~key_file() { std::filesystem::remove(path); }
};

std::string issue_for(const key_file& key, std::uint16_t port, std::uint64_t client_id) {
    transport::token_params params;
    params.protocol_id = ecsnet::client::default_protocol_id;
    params.client_id = client_id;
    params.server_addresses = {*transport::net_address::parse("127.0.0.1:" + std::to_string(port))};
    params.timeout_seconds = 10;
    return transport::to_base64(*transport::issue_token(params, key.key));
}

class ClientTokens : public ::testing::TestWithParam<transport_kind> {};

TEST_P(ClientTokens, AnIssuedTokenConnectsToAKeyedServer) {
    key_file key;
    test_server server{200, 30, 0.0F, key.path.string()};
    {
        ecsnet::client::client net{arena::replicated_schema(), over(GetParam(), "holder")};
        std::vector<applied_record> applied;
        record_applied(net, applied);
        ASSERT_TRUE(net.connect(issue_for(key, server.port(), 1)));
        ASSERT_TRUE(poll_until(net, [&] { return applied.size() >= 10; })) << net.disconnect_message();
        EXPECT_NE(net.own_entity(), null_entity);
        EXPECT_GE(expect_checksums_match(server, applied), 10U);
    }
    // From the options, with connect(host, port).
    auto options = over(GetParam(), "configured");
    options.connect_token = issue_for(key, server.port(), 2);
    ecsnet::client::client net{arena::replicated_schema(), options};
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; })) << net.disconnect_message();
}

TEST_P(ClientTokens, AKeyedServerRefusesAClientWithoutAToken) {
    key_file key;
    test_server server{50, 30, 0.0F, key.path.string()};
    auto options = over(GetParam(), "tokenless");
    options.connect_timeout = 700ms;
    ecsnet::client::client net{arena::replicated_schema(), options};
    const auto started = std::chrono::steady_clock::now();
    ASSERT_TRUE(net.connect("127.0.0.1", server.port()));
    ASSERT_TRUE(poll_until(net, [&] { return net.state() == client_state::disconnected; }));
    EXPECT_LT(std::chrono::steady_clock::now() - started, 2000ms);
    if (GetParam() == transport_kind::udp) {
        // The transport answers nothing to a token it cannot open.
        EXPECT_EQ(net.disconnect_reason(), disconnect_reason::connect_failed);
        EXPECT_NE(net.disconnect_message().find("request_timed_out"), std::string::npos)
            << net.disconnect_message();
    } else {
        EXPECT_EQ(net.disconnect_reason(), disconnect_reason::authentication_failed)
            << net.disconnect_message();
        EXPECT_TRUE(net.last_disconnect().from_server);
    }
    // The server sends its refusal before it removes the connection: the client can see it first.
    EXPECT_TRUE(wait_until(
        [&] { return server.server().call([&] { return server.server().clients().empty(); }); }, 2000ms))
        << "the refused connection is still among the server's clients";
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientTokens,
                         ::testing::Values(transport_kind::tcp, transport_kind::udp), transport_name);

} // namespace

} // namespace client_token_test
