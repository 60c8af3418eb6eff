// What a surge of relevancy changes does to the server's tick (issue 15, "Bad input and limits": a teleport
// or a mass spawn changes the relevant sets of thousands of entities in one tick, and the tick must stay
// under its deadline, the entries spread over ticks by priority). The sockets-free server of
// server_model.hpp (10,000 NPCs, N clients of about 200 entities each, relevancy every 8 ticks, acks 1 to 3
// ticks late) runs steady, then one tick brings the event:
//   --event teleport   every client's avatar moves to a random place of the arena: each set is replaced
//   --event spawn      --count K NPCs appear around each of --places P clients' avatars (K / P each, within
//                      40 m): the sets of the clients near them grow by hundreds to thousands at once
//   --event despawn    every NPC within 300 m of --places P clients' avatars is destroyed
// Each tick's wall time is measured whole (systems, capture, relevancy, the snapshots written on the
// workers and the acks), with its snapshot bytes per client. It prints the ticks before the event (their
// median and highest), the event's tick, the highest of the ticks after it, the last 30 ticks (the world's
// new steady state: a spawn leaves it larger), the tick from which the snapshots are back to their new
// steady size, and the tick deadline at 30 Hz (33.3 ms).
//   build/bench/interest_surge --clients 1000 --workers 2 --event teleport
// Flags: --clients N (1000), --workers W (2), --event teleport|spawn|despawn (teleport), --count K (5000),
// --places P (20), --before B (60 ticks measured before), --after A (120 ticks after), --warmup W (90),
// --period P (the relevancy period: interest_options' default).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/arena/movement.hpp>

#include "count_flags.hpp"
#include "server_model.hpp"

namespace {

using namespace ecsnet;
using ecsnet::bench::server_model;

enum class surge { teleport, spawn, despawn };

struct tick_measure {
    double wall_ms{};
    double bytes_per_client{};
};

tick_measure measured_tick(server_model& m) {
    m.bytes = 0;
    const auto start = std::chrono::steady_clock::now();
    m.tick();
    const auto wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
    return {wall.count(), static_cast<double>(m.bytes) / static_cast<double>(m.clients.size())};
}

// The ticks before the event and those after it, each a function of its own, so that under
//   valgrind --tool=callgrind --toggle-collect='*ticks_after*' build/bench/interest_surge --after 4 ...
// (or '*ticks_before*' with --before 4) the instructions of either are told apart.
[[gnu::noinline]] std::vector<tick_measure> ticks_before(server_model& m, long count) {
    std::vector<tick_measure> out;
    for (long t = 0; t < count; ++t) {
        out.push_back(measured_tick(m));
    }
    return out;
}

[[gnu::noinline]] std::vector<tick_measure> ticks_after(server_model& m, long count) {
    std::vector<tick_measure> out;
    for (long t = count; t > 0; --t) { // another loop than ticks_before's, so the two are not folded
        out.push_back(measured_tick(m));
    }
    return out;
}

// The event, made just before a tick: the tick's capture and relevancy see it whole.
void bring(server_model& m, surge event, std::size_t count, std::size_t places, std::mt19937& random) {
    auto& reg = m.world.registry();
    const auto edge = static_cast<float>(arena::movement_edge);
    std::uniform_real_distribution<float> anywhere{-edge, edge};
    std::uniform_int_distribution<std::size_t> some_client{0, m.clients.size() - 1};
    switch (event) {
    case surge::teleport:
        for (const auto& c : m.clients) {
            auto& t = reg.get<arena::Transform>(c.avatar);
            t.x = anywhere(random);
            t.y = anywhere(random);
        }
        return;
    case surge::spawn:
        for (std::size_t p = 0; p < places; ++p) {
            const auto& t = reg.get<arena::Transform>(m.clients[some_client(random)].avatar);
            m.world.spawn_wave(t.x, t.y, 40.0F, count / places);
        }
        return;
    case surge::despawn: {
        std::vector<arena::Transform> centres;
        for (std::size_t p = 0; p < places; ++p) {
            centres.push_back(reg.get<arena::Transform>(m.clients[some_client(random)].avatar));
        }
        std::vector<entity> doomed;
        reg.view<arena::Transform>(exclude<server::Avatar>).each([&](entity e, const arena::Transform& t) {
            for (const auto& c : centres) {
                if (std::hypot(t.x - c.x, t.y - c.y) < 300.0F) {
                    doomed.push_back(e);
                    return;
                }
            }
        });
        for (const auto e : doomed) {
            reg.destroy(e);
        }
        std::printf("despawned %zu NPCs\n", doomed.size());
        return;
    }
    }
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    surge event = surge::teleport;
    std::vector<char*> counts{argv[0]};
    for (int i = 1; i < argc; ++i) { // --event takes a word; the other flags are counts
        if (std::strcmp(argv[i], "--event") == 0 && i + 1 < argc) {
            const std::string_view name{argv[++i]};
            if (name == "teleport" || name == "spawn" || name == "despawn") {
                event = name == "teleport" ? surge::teleport
                        : name == "spawn"  ? surge::spawn
                                           : surge::despawn;
                continue;
            }
            std::fprintf(stderr, "interest_surge: --event teleport|spawn|despawn\n");
            return 2;
        }
        counts.push_back(argv[i]);
    }
    long clients = 1000;
    long workers = 2;
    long count = 5000;
    long places = 20;
    long before = 60;
    long after = 120;
    long warmup = 90;
    long period = ecsnet::server::interest_options{}.relevancy_period;
    if (!ecsnet::bench::read_count_flags(static_cast<int>(counts.size()), counts.data(),
                                         {{"--clients", 1, &clients},
                                          {"--workers", 1, &workers},
                                          {"--count", 1, &count},
                                          {"--places", 1, &places},
                                          {"--before", 1, &before},
                                          {"--after", 2, &after},
                                          {"--warmup", 0, &warmup},
                                          {"--period", 1, &period}})) {
        std::fprintf(stderr,
                     "usage: %s [--clients N] [--workers W] [--event teleport|spawn|despawn] [--count K] "
                     "[--places P] [--before B] [--after A] [--warmup W] [--period P]\n",
                     argv[0]);
        return 2;
    }

    server_model m{static_cast<std::uint32_t>(period), static_cast<std::size_t>(workers), 1, 1};
    m.join(static_cast<std::size_t>(clients));
    for (long t = 0; t < warmup; ++t) {
        m.tick();
    }
    std::vector<double> steady_wall;
    std::vector<double> steady_bytes;
    for (const auto& measure : ticks_before(m, before)) {
        steady_wall.push_back(measure.wall_ms);
        steady_bytes.push_back(measure.bytes_per_client);
    }
    std::mt19937 random{7};
    bring(m, event, static_cast<std::size_t>(count), static_cast<std::size_t>(places), random);
    const auto surge_ticks = ticks_after(m, after);

    // The world after the event is another steady state (a spawn makes it larger, a despawn smaller): the
    // last 30 ticks measure it, and the surge is what the ticks before them do beyond it.
    const auto tail = std::min<std::size_t>(30, surge_ticks.size() / 2);
    std::vector<double> after_wall;
    std::vector<double> after_bytes;
    for (std::size_t t = surge_ticks.size() - tail; t < surge_ticks.size(); ++t) {
        after_wall.push_back(surge_ticks[t].wall_ms);
        after_bytes.push_back(surge_ticks[t].bytes_per_client);
    }
    const auto bytes_after = median(after_bytes);
    const auto highest =
        std::max_element(surge_ticks.begin(), surge_ticks.end() - static_cast<std::ptrdiff_t>(tail),
                         [](const auto& a, const auto& b) { return a.wall_ms < b.wall_ms; });
    // Settled: from this tick on, no tick's snapshots are larger than 1.25 times the largest of the new
    // steady state's (whose periodic bumps are no surge).
    std::size_t settled = surge_ticks.size();
    const auto settled_bytes = 1.25 * *std::max_element(after_bytes.begin(), after_bytes.end());
    while (settled > 0 && surge_ticks[settled - 1].bytes_per_client <= settled_bytes) {
        --settled;
    }
    std::printf("clients %ld, workers %ld, relevancy period %ld, event %s\n", clients, workers, period,
                event == surge::teleport ? "teleport"
                : event == surge::spawn  ? "spawn"
                                         : "despawn");
    std::printf("  before: ticks median %.2f ms, highest %.2f ms, %.0f bytes per client\n",
                median(steady_wall), *std::max_element(steady_wall.begin(), steady_wall.end()),
                median(steady_bytes));
    std::printf(
        "  the event's tick %.2f ms; the highest of the %zu ticks after it %.2f ms (tick +%td, %.0f bytes "
        "per client); deadline 33.33 ms\n",
        surge_ticks[0].wall_ms, surge_ticks.size() - tail, highest->wall_ms, highest - surge_ticks.begin(),
        highest->bytes_per_client);
    std::printf(
        "  after (the last %zu ticks): median %.2f ms, highest %.2f ms, %.0f bytes per client; snapshots "
        "no larger than 1.25x their largest from tick +%zu on\n",
        tail, median(after_wall), *std::max_element(after_wall.begin(), after_wall.end()), bytes_after,
        settled);
    std::printf("ticks after the event (ms, bytes per client):");
    for (std::size_t t = 0; t < std::min<std::size_t>(surge_ticks.size(), 40); ++t) {
        std::printf(" %.1f/%.0f", surge_ticks[t].wall_ms, surge_ticks[t].bytes_per_client);
    }
    std::printf("\n");
    return 0;
}
