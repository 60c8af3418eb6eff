// A consumer of the installed ecsnet package: builds a client on the demo schema, reads its (empty)
// mirror with a view, makes a development token with the installed transport (libsodium, found through the
// package), and checks that connecting with it where nobody answers is reported as connect_failed.

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/client/client.hpp>
#include <ecsnet/transport/dev_key.hpp>

int main() {
    ecsnet::client::client_options options; // UDP, the default
    options.connect_timeout = std::chrono::milliseconds{500};
    ecsnet::client::client net{ecsnet::arena::replicated_schema(), options};
    std::size_t mirrored = 0;
    net.registry().view<const ecsnet::arena::Transform>().each(
        [&](const ecsnet::arena::Transform&) { ++mirrored; });

    ecsnet::transport::dev_token_params params;
    params.protocol_id = ecsnet::client::default_protocol_id;
    params.server_addresses = {*ecsnet::transport::net_address::parse("127.0.0.1:1")}; // nobody on port 1
    const auto token = ecsnet::transport::make_dev_token(params);
    if (!token) {
        std::printf("no development token: %s\n",
                    std::string{ecsnet::transport::to_string(token.error())}.c_str());
        return 1;
    }
    net.connect(ecsnet::transport::to_base64(*token));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
    while (net.state() != ecsnet::client::client_state::disconnected &&
           std::chrono::steady_clock::now() < deadline) {
        net.poll();
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
    const auto reason = net.disconnect_reason();
    std::printf("mirrored %zu entities; disconnect reason: %s (%s)\n", mirrored,
                std::string{ecsnet::client::to_string(reason)}.c_str(), net.disconnect_message().c_str());
    return mirrored == 0 && reason == ecsnet::client::disconnect_reason::connect_failed ? 0 : 1;
}
