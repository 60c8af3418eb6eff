// Interest-managed views (issue 15) on the standard scene (arena/include/ecsnet/arena/scene.hpp): 10,000
// entities in a 2 km x 2 km arena at 30 Hz, warmed up as replication_bench does (ECSNET_BENCH_WARMUP_TICKS,
// one hour by default) so that ticks and generations have their running-server sizes.
//
//   BM_ViewWholeScene/<ack lag>   one client whose view is the whole scene, acking <lag> ticks behind:
//                                 bits_per_moving_entity (whole frame: length prefix + Envelope) and
//                                 body_bits_per_moving_entity, against replication_bench's whole-world
//                                 snapshots (bits_per_moving_entity_b1 / _b4)
//   BM_ViewClients/<clients>/<shared>
//                                 that many clients, each seeing the entities within 150 m (about 170 of
//                                 the 10,000), acks 1 to 3 ticks behind: the server's view writing per
//                                 client per tick, with the encoder's codes shared between clients (1) or
//                                 coded again for every client (0); share_ratio = bits copied into
//                                 snapshots / bits coded, hit_rate of the encoder's cache; client_apply_ns:
//                                 what a full bot's view_mirror takes to apply one of them (not in the
//                                 server's time)
//
// Time is this thread's CPU time (the machine is shared).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/client_view.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/framing.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/row_history.hpp"
#include "ecsnet/proto/view_encoder.hpp"
#include "ecsnet/proto/view_mirror.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::proto;

struct cpu_clock {
    static std::int64_t now_ns() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
    }
};

std::size_t warmup_ticks() {
    if (const char* env = std::getenv("ECSNET_BENCH_WARMUP_TICKS")) {
        return static_cast<std::size_t>(std::strtoull(env, nullptr, 10));
    }
    return 108000;
}

// The scene, its history and the shared encoder, warmed up.
struct world {
    registry reg;
    arena::scene scene{reg, arena::scene_options{}};
    snapshot_history history{arena::replicated_schema(), reg};
    row_history rows{arena::replicated_schema().layout(), 64};
    view_encoder encoder{rows};
    tick_type tick{};

    world() {
        scene.populate();
        for (std::size_t i = 0; i < warmup_ticks(); ++i) {
            scene.step();
        }
        tick = static_cast<tick_type>(warmup_ticks());
        step();
    }

    // One tick: simulate, capture, rows, encoder.
    arena::scene_tick step() {
        const auto report = scene.step();
        ++tick;
        history.capture(tick, std::uint64_t{tick} * 1000000 / 30 + 700);
        rows.update(history);
        encoder.begin_tick();
        return report;
    }

    // Entities whose row differs from `ticks` ago, among those whose Transform (component 0) changed.
    std::size_t moved_since(tick_type since) const {
        std::size_t moved = 0;
        const auto& layout = rows.layout();
        for (const auto index : rows.alive()) {
            const auto* before = rows.at(index, since);
            if (before == nullptr) {
                continue;
            }
            const auto* now = rows.current(index);
            if (std::memcmp(before + layout.offset(0), now + layout.offset(0), layout.fields(0) * 4) != 0) {
                ++moved;
            }
        }
        return moved;
    }
};

void BM_ViewWholeScene(benchmark::State& state) {
    const auto lag = static_cast<tick_type>(state.range(0));
    world w;
    client_view view{w.encoder};
    view_mirror mirror{arena::replicated_schema()};
    std::vector<net_entity> relevant;
    std::vector<float> weights;
    v1::Envelope envelope;
    std::string frame;
    std::deque<tick_type> applied;
    double frame_bits = 0;
    double body_bits = 0;
    double moved = 0;
    std::size_t measured = 0;
    std::size_t refused = 0;
    for (auto _ : state) {
        for (int t = 0; t < 60; ++t) {
            w.step();
            relevant.clear();
            weights.clear();
            for (const auto index : w.rows.alive()) {
                relevant.push_back({index, w.rows.generation(index)});
                weights.push_back(1.0F);
            }
            const auto report = view.write(relevant, weights, std::int64_t{1} << 40, 700, envelope);
            frame.clear();
            static_cast<void>(append_envelope_frame(frame, envelope));
            const auto applied_now = mirror.apply(envelope.view_snapshot());
            if (!applied_now) {
                ++refused;
                continue;
            }
            applied.push_back(w.tick);
            // The client acks `lag` ticks behind: the server learns of tick t at tick t + lag - 1.
            while (!applied.empty() && applied.front() + lag - 1 <= w.tick) {
                view.on_ack(applied.front(), false);
                applied.pop_front();
            }
            if (report.base && *report.base + lag == w.tick) {
                frame_bits += static_cast<double>(frame.size() * 8);
                body_bits += static_cast<double>(report.body_bits);
                moved += static_cast<double>(w.moved_since(*report.base));
                ++measured;
            }
        }
    }
    state.counters["bits_per_moving_entity"] = moved > 0 ? frame_bits / moved : 0;
    state.counters["body_bits_per_moving_entity"] = moved > 0 ? body_bits / moved : 0;
    state.counters["frame_bytes"] = measured > 0 ? frame_bits / 8 / static_cast<double>(measured) : 0;
    state.counters["moved_per_tick"] = measured > 0 ? moved / static_cast<double>(measured) : 0;
    state.counters["refused"] = static_cast<double>(refused);
}
BENCHMARK(BM_ViewWholeScene)->Arg(1)->Arg(4)->Iterations(3)->Unit(benchmark::kMillisecond);

void BM_ViewClients(benchmark::State& state) {
    const auto count = static_cast<std::size_t>(state.range(0));
    const bool shared = state.range(1) != 0;
    constexpr double radius = 150.0;
    world w;
    std::mt19937_64 random{9};
    std::uniform_real_distribution<double> unit{0.0, 1.0};
    struct client {
        std::unique_ptr<client_view> view;
        std::unique_ptr<view_mirror> mirror;
        double x{};
        double y{};
        tick_type lag{};
        std::deque<tick_type> sent;
    };
    std::vector<client> clients(count);
    for (auto& c : clients) {
        c.view = std::make_unique<client_view>(w.encoder);
        c.mirror = std::make_unique<view_mirror>(arena::replicated_schema());
        c.x = (unit(random) - 0.5) * 1900.0;
        c.y = (unit(random) - 0.5) * 1900.0;
        c.lag = 1 + static_cast<tick_type>(unit(random) * 3.0);
    }
    const auto& layout = w.rows.layout();
    // Relevancy from a uniform grid of 50 m cells (not timed): the server's own is interest_bench's.
    std::vector<std::vector<net_entity>> relevant(count);
    std::vector<std::vector<float>> weights(count);
    constexpr double cell = 50.0;
    constexpr int cells = static_cast<int>(2048 / cell) + 1;
    std::vector<std::vector<std::uint32_t>> grid(static_cast<std::size_t>(cells * cells));
    const auto cell_of = [](double v) {
        return std::clamp(static_cast<int>((v + 1024.0) / cell), 0, cells - 1);
    };
    const auto relevancy = [&] {
        for (auto& list : grid) {
            list.clear();
        }
        const auto position = [&](std::uint32_t index) {
            const auto* row = w.rows.current(index);
            return std::pair{-arena::arena_half_extent + row[layout.offset(0)] * arena::position_step,
                             -arena::arena_half_extent + row[layout.offset(0) + 1] * arena::position_step};
        };
        for (const auto index : w.rows.alive()) {
            const auto [px, py] = position(index);
            grid[static_cast<std::size_t>(cell_of(py) * cells + cell_of(px))].push_back(index);
        }
        for (std::size_t i = 0; i < count; ++i) {
            relevant[i].clear();
            weights[i].clear();
            const auto& c = clients[i];
            for (int gy = cell_of(c.y - radius); gy <= cell_of(c.y + radius); ++gy) {
                for (int gx = cell_of(c.x - radius); gx <= cell_of(c.x + radius); ++gx) {
                    for (const auto index : grid[static_cast<std::size_t>(gy * cells + gx)]) {
                        const auto [px, py] = position(index);
                        if ((px - c.x) * (px - c.x) + (py - c.y) * (py - c.y) <= radius * radius) {
                            relevant[i].push_back({index, w.rows.generation(index)});
                        }
                    }
                }
            }
            std::sort(relevant[i].begin(), relevant[i].end(),
                      [](const net_entity& a, const net_entity& b) { return a.index < b.index; });
            weights[i].assign(relevant[i].size(), 1.0F);
        }
    };
    v1::Envelope envelope;
    std::string bytes;
    std::int64_t write_ns = 0;
    std::int64_t apply_ns = 0;
    std::size_t refused = 0;
    std::size_t writes = 0;
    double relevant_total = 0;
    double bytes_total = 0;
    // Warm the views up (full states), untimed.
    for (int t = 0; t < 10; ++t) {
        w.step();
        relevancy();
        for (std::size_t i = 0; i < count; ++i) {
            static_cast<void>(
                clients[i].view->write(relevant[i], weights[i], std::int64_t{1} << 40, 700, envelope));
            static_cast<void>(clients[i].mirror->apply(envelope.view_snapshot()));
            clients[i].view->on_ack(w.tick, false);
        }
    }
    const auto stats_before = w.encoder.stats();
    for (auto _ : state) {
        for (int t = 0; t < 30; ++t) {
            w.step();
            relevancy();
            const auto start = cpu_clock::now_ns();
            const auto apply_before = apply_ns;
            for (std::size_t i = 0; i < count; ++i) {
                auto& c = clients[i];
                if (!shared) {
                    w.encoder.begin_tick(); // an empty cache for each client: nothing shared
                }
                const auto report =
                    c.view->write(relevant[i], weights[i], std::int64_t{1} << 40, 700, envelope);
                serialize_into(envelope, bytes);
                // What a full bot does with it (not counted in the server's time).
                const auto apply_start = cpu_clock::now_ns();
                refused += c.mirror->apply_envelope(bytes) ? 0 : 1;
                apply_ns += cpu_clock::now_ns() - apply_start;
                relevant_total += static_cast<double>(report.relevant);
                bytes_total += static_cast<double>(bytes.size());
                c.sent.push_back(w.tick);
                while (!c.sent.empty() && c.sent.front() + c.lag <= w.tick) {
                    c.view->on_ack(c.sent.front(), false);
                    c.sent.pop_front();
                }
            }
            write_ns += cpu_clock::now_ns() - start - (apply_ns - apply_before);
            writes += count;
        }
    }
    const auto& stats = w.encoder.stats();
    const auto coded = static_cast<double>(stats.bits_coded - stats_before.bits_coded);
    const auto copied = static_cast<double>(stats.bits_copied - stats_before.bits_copied);
    const auto lookups = static_cast<double>(stats.lookups - stats_before.lookups);
    state.counters["ns_per_client_tick"] = static_cast<double>(write_ns) / static_cast<double>(writes);
    state.counters["client_apply_ns"] = static_cast<double>(apply_ns) / static_cast<double>(writes);
    state.counters["refused"] = static_cast<double>(refused);
    state.counters["relevant_per_client"] = relevant_total / static_cast<double>(writes);
    state.counters["snapshot_bytes"] = bytes_total / static_cast<double>(writes);
    state.counters["share_ratio"] = coded > 0 ? copied / coded : 0;
    state.counters["hit_rate"] =
        lookups > 0 ? static_cast<double>(stats.hits - stats_before.hits) / lookups : 0;
}
BENCHMARK(BM_ViewClients)->Args({1000, 1})->Args({1000, 0})->Iterations(1)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
