// console_client: the smallest game on the ecsnet client SDK. It connects to the server of scripts/run
// (127.0.0.1:7777 by default), walks its avatar in a circle with the arena's move inputs, and prints once a
// second the entity count, its own position, the round-trip time, the bandwidth and (UDP) the packet loss. It
// exits on Ctrl-C (telling the server it quits), after --duration seconds, or when the server disconnects it,
// printing the reason.
//
//   build/client-sdk/console_client --host 127.0.0.1 --port 7777 --name walker --duration 10   # UDP
//   build/client-sdk/console_client --tcp ...          --token "$(ecsnet-token issue ...)"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/input.hpp>
#include <ecsnet/arena/movement.hpp>
#include <ecsnet/client/client.hpp>
#include <ecsnet/client/prediction.hpp>

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_signal(int) {
    interrupted.store(true);
}

} // namespace

int main(int argc, char** argv) {
    std::string host = "127.0.0.1";
    std::uint16_t port = 7777;
    std::string name = "console";
    double duration = 0.0;
    bool threaded = false;
    bool tcp = false;
    std::string token;
    CLI::App app{"Connects to ecsnet-server, walks its avatar in a circle, and prints what it sees."};
    app.add_option("--host", host, "server address")->capture_default_str();
    app.add_option("--port", port, "server game port")->capture_default_str();
    app.add_option("--name", name, "player name shown by the server")->capture_default_str();
    app.add_option("--duration", duration, "seconds to run (0: until Ctrl-C or disconnect)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_flag("--thread", threaded,
                 "do the network work on a thread of the client's own (RTT then excludes "
                 "the frame time)");
    app.add_flag("--tcp", tcp, "connect over TCP rather than UDP");
    bool predict = false;
    app.add_flag("--predict", predict,
                 "predict the avatar ahead of the server (client-side prediction; docs/client.md)");
    app.add_option("--token", token,
                   "a connect token in base64 (ecsnet-token issue); without one, a development token for "
                   "--host:--port (a server run with --insecure-dev)");
    CLI11_PARSE(app, argc, argv);

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    using ecsnet::arena::Transform;
    using clock = std::chrono::steady_clock;

    ecsnet::client::client_options options;
    options.name = name;
    options.mode = threaded ? ecsnet::client::threading::own_thread : ecsnet::client::threading::poll;
    options.transport = tcp ? ecsnet::client::transport_kind::tcp : ecsnet::client::transport_kind::udp;
    options.connect_token = token; // over UDP it names the server: host and port are then unused
    options.prediction = predict;
    ecsnet::client::client net{ecsnet::arena::replicated_schema(), options};
    // With --predict it sends the move for each tick and runs the avatar ahead; without, it only sends.
    ecsnet::client::prediction<Transform> me_ahead{
        net, {&ecsnet::arena::predict_avatar, &ecsnet::arena::position_of, &ecsnet::arena::displace}};
    net.on_connected([&net] {
        std::printf("connected as client %u, tick rate %u Hz\n", net.client_id(), net.tick_rate());
    });
    net.connect(host, port);
    std::printf("connecting to %s:%u over %s as '%s'\n", host.c_str(), port, tcp ? "TCP" : "UDP",
                name.c_str());

    constexpr double speed = 4.0;  // m/s
    constexpr double radius = 8.0; // m: a lap every 2 pi r / v, about 12.6 s
    constexpr auto frame = std::chrono::milliseconds{16};
    constexpr auto input_period = std::chrono::milliseconds{100};
    const auto started = clock::now();
    auto next_input = started;
    auto next_report = started + std::chrono::seconds{1};
    bool quitting = false;

    while (true) {
        net.poll();
        const auto state = net.state();
        if (state == ecsnet::client::client_state::disconnected) {
            break;
        }
        const auto now = clock::now();
        const double elapsed = std::chrono::duration<double>(now - started).count();
        if (!quitting && (interrupted.load() || (duration > 0.0 && elapsed >= duration))) {
            quitting = true;
            net.close(interrupted.load() ? "interrupted" : "done");
            continue;
        }
        if (state == ecsnet::client::client_state::connected && predict) {
            const double heading = elapsed * speed / radius;
            me_ahead.update(ecsnet::arena::encode(
                ecsnet::arena::move_input{0, static_cast<float>(std::cos(heading)),
                                          static_cast<float>(std::sin(heading)), static_cast<float>(speed)}));
        } else if (state == ecsnet::client::client_state::connected && now >= next_input) {
            // Heading along the circle's tangent: turning at speed / radius radians per second.
            const double heading = elapsed * speed / radius;
            ecsnet::arena::move_input move;
            move.dir_x = static_cast<float>(std::cos(heading));
            move.dir_y = static_cast<float>(std::sin(heading));
            move.speed = static_cast<float>(speed);
            net.send_input(ecsnet::arena::encode(move));
            next_input = now + input_period;
        }
        if (now >= next_report) {
            next_report += std::chrono::seconds{1};
            const auto stats = net.stats();
            const auto* ids = net.registry().try_storage<ecsnet::proto::net_id>();
            const auto me = net.sample<Transform>(net.own_entity());
            std::printf("tick %u  entities %zu  me (%.2f, %.2f)  rtt %.2f ms  in %.1f kB/s  out %.1f kB/s  "
                        "snapshots %.1f/s  loss %.1f%%\n",
                        stats.newest_tick.value_or(0), ids != nullptr ? ids->size() : std::size_t{0},
                        me ? me->x : 0.0F, me ? me->y : 0.0F,
                        static_cast<double>(stats.rtt_smoothed.count()) / 1000.0,
                        stats.bytes_in_per_second / 1000.0, stats.bytes_out_per_second / 1000.0,
                        stats.snapshots_per_second, stats.packet_loss * 100.0);
            if (predict) {
                const auto ahead = me_ahead.visible();
                std::printf("  predicted (%.2f, %.2f), %lld ticks ahead, %llu mispredictions\n",
                            ahead ? ahead->x : 0.0F, ahead ? ahead->y : 0.0F,
                            static_cast<long long>(stats.prediction.ticks_ahead),
                            static_cast<unsigned long long>(stats.prediction.mispredictions));
            }
            std::fflush(stdout);
        }
        std::this_thread::sleep_for(frame);
    }

    const auto why = net.last_disconnect();
    std::printf("disconnected: %s%s%s%s\n", std::string{ecsnet::client::to_string(why.reason)}.c_str(),
                why.from_server ? " (from the server)" : "", why.message.empty() ? "" : ": ",
                why.message.c_str());
    const bool expected = why.reason == ecsnet::client::disconnect_reason::client_quit ||
                          why.reason == ecsnet::client::disconnect_reason::shutdown;
    return expected ? 0 : 1;
}
