// A consumer of the installed ecsnet package: builds a client on the demo schema, reads its (empty)
// mirror with a view, and checks that connecting where nothing listens is reported as connect_failed.

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/client/client.hpp>

int main() {
    ecsnet::client::client net{ecsnet::arena::replicated_schema()};
    std::size_t mirrored = 0;
    net.registry().view<const ecsnet::arena::Transform>().each(
        [&](const ecsnet::arena::Transform&) { ++mirrored; });

    net.connect("127.0.0.1", 1); // nothing listens on port 1
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
