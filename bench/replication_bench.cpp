// Replication benchmark on the standard scene (arena/include/ecsnet/arena/scene.hpp): 10,000 entities in a
// 2 km x 2 km arena, 30 ticks a second; each tick 20% move, 1% change health, 0.1% spawn, 0.1% despawn.
//
// The world is simulated for one hour (108,000 ticks, without replication) before anything is measured, so
// tick numbers, entity generations and timestamps have the sizes they have in a running server. Then each
// benchmark runs the scene tick by tick: the server captures the tick into its history, encodes it for a
// client whose newest ack is 1 tick old (b1) and for one whose newest ack is 4 ticks old (b4) (each with its
// previous ack as second baseline for extrapolation), and both clients apply what they get.
//
// Counters (bench/RESULTS.md explains each):
//   bits_per_moving_entity_b1/_b4   whole frame bits (length prefix + Envelope) / entities that moved
//                                   since the baseline
//   idle_tick_bytes                 whole frame of a tick where nothing changed, 1-tick-old baseline
//   full_state_bytes_per_entity     whole frame of a full state / entities
//   encode_ns_per_changed           encoding one client's snapshot (delta + Envelope + frame, no cache) /
//                                   entities changed since the baseline
//   decode_ns_per_changed           decoding, checking, rebuilding the state and updating the client's
//                                   registry / entities changed since the baseline
//   history_bytes_per_entity_tick   history memory / (stored ticks x entities)
// Floors measured in the same run: copying a tick's quantized state (`*_vs_state_copy` ratios).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/ecs/work_queue.hpp"
#include "ecsnet/proto/encoder.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/framing.hpp"
#include "ecsnet/proto/mirror.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::proto;
// The machine is shared: time is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time, so that
// other processes' work is not counted as ours.
struct clock_type {
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<clock_type, duration>;
    static time_point now() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return time_point{duration{std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec}};
    }
};

constexpr std::uint32_t tick_rate = 30;

std::size_t warmup_ticks() {
    if (const char* env = std::getenv("ECSNET_BENCH_WARMUP_TICKS")) {
        return static_cast<std::size_t>(std::strtoull(env, nullptr, 10));
    }
    return 108000; // one hour at 30 Hz
}

double seconds(clock_type::duration d) {
    return std::chrono::duration<double>(d).count();
}

// Entities whose replicated state differs between two ticks (created, destroyed, or any component added,
// removed or changed), and those among them whose Transform (component 0) moved.
struct change_count {
    std::size_t changed{};
    std::size_t moved{};
};

change_count count_changes(const schema_layout& layout, const replicated_state& from,
                           const replicated_state& to, const std::vector<std::uint32_t>& replaced) {
    std::vector<std::uint32_t> a;
    std::vector<std::uint32_t> b;
    std::vector<std::uint8_t> changed_flag;
    std::vector<std::uint8_t> moved_flag;
    b = to.flat(b);
    const auto max_index = b.empty() ? 0U : b.back();
    a = from.flat(a);
    const auto top = std::max(max_index, a.empty() ? 0U : a.back()) + 1;
    changed_flag.assign(top, 0);
    moved_flag.assign(top, 0);
    for (const auto id : replaced) {
        changed_flag[id] = 1;
    }
    // Entities in one state only.
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a.size() || j < b.size()) {
        if (j == b.size() || (i < a.size() && a[i] < b[j])) {
            changed_flag[a[i++]] = 1;
        } else if (i == a.size() || b[j] < a[i]) {
            changed_flag[b[j++]] = 1;
        } else {
            ++i;
            ++j;
        }
    }
    for (std::size_t c = 0; c < layout.size(); ++c) {
        flatten(from.ids(c), a);
        flatten(to.ids(c), b);
        i = 0;
        j = 0;
        while (i < a.size() || j < b.size()) {
            if (j == b.size() || (i < a.size() && a[i] < b[j])) {
                changed_flag[a[i++]] = 1;
            } else if (i == a.size() || b[j] < a[i]) {
                changed_flag[b[j++]] = 1;
            } else {
                for (std::size_t f = 0; f < layout[c].fields.size(); ++f) {
                    if (from.components[c].fields[f].get(i) != to.components[c].fields[f].get(j)) {
                        changed_flag[b[j]] = 1;
                        if (c == 0) {
                            moved_flag[b[j]] = 1;
                        }
                    }
                }
                ++i;
                ++j;
            }
        }
    }
    change_count out;
    for (std::size_t k = 0; k < top; ++k) {
        out.changed += changed_flag[k];
        out.moved += moved_flag[k] != 0 && changed_flag[k] != 0 ? 1 : 0;
    }
    return out;
}

// The same delta coded with byte-aligned zigzag varints instead of bit-packed exp-Golomb codes, to decide
// which is smaller (bench/RESULTS.md): LEB128 counts, ids, gaps, generations, values and differences; one
// byte per change mask; one byte per section flag.
std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

std::size_t varint_columns_size(const schema_layout& layout, const delta& d) {
    const auto ids = [](const std::vector<std::uint32_t>& list) {
        std::size_t n = varint_size(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            n += varint_size(i == 0 ? list[0] : list[i] - list[i - 1] - 1);
        }
        return n;
    };
    std::size_t bytes = 1 + ids(d.destroyed) + ids(d.created);
    for (const auto g : d.created_generations) {
        bytes += varint_size(g);
    }
    for (std::size_t c = 0; c < layout.size(); ++c) {
        const auto& cd = d.components[c];
        bytes += 1;
        if (cd.empty()) {
            continue;
        }
        bytes += ids(cd.removed) + 1 + (cd.added_are_created ? 0 : ids(cd.added)) + ids(cd.changed);
        for (const auto& values : cd.added_values) {
            for (const auto v : values) {
                bytes += varint_size(v);
            }
        }
        bytes += layout[c].fields.size() > 1 ? cd.masks.size() : 0;
        for (std::size_t f = 0; f < cd.residuals.size(); ++f) {
            for (const auto r : cd.residuals[f]) {
                bytes += varint_size(zigzag(sign_extend(r, layout[c].fields[f].bits)));
            }
        }
    }
    return bytes;
}

// The server, its history and two clients, warmed up once per process.
struct bench_world {
    registry server;
    arena::scene scene{server, arena::scene_options{}};
    snapshot_history history{arena::replicated_schema(), server, history_options{32, tick_rate}};
    snapshot_encoder encoder{history};
    mirror client_b1{arena::replicated_schema(), mirror_options{32, tick_rate, {}}};
    mirror client_b4{arena::replicated_schema(), mirror_options{32, tick_rate, {}}};
    tick_type tick{};
    arena::scene_random jitter{99};

    bench_world() {
        scene.populate();
        for (std::size_t n = 0; n < warmup_ticks(); ++n) {
            scene.step();
        }
        tick = static_cast<tick_type>(warmup_ticks());
        for (int n = 0; n < 40; ++n) {
            advance();
            apply(client_b1, 1);
            apply(client_b4, 4);
        }
    }

    void advance() {
        scene.step();
        ++tick;
        // The tick's time: nominal plus up to 2 ms of scheduling lateness.
        history.capture(tick, history.nominal_time_us(tick) + jitter.below(2000));
    }

    [[nodiscard]] baselines acked(std::uint32_t age) const { return baselines{tick - age, tick - age - 1}; }

    void apply(mirror& client, std::uint32_t age) {
        const auto snapshot = encoder.encode(acked(age));
        if (!client.apply_envelope(snapshot->envelope)) {
            std::abort();
        }
    }
};

bench_world& world() {
    static bench_world instance;
    return instance;
}

constexpr int measured_ticks = 150;

// The encode and the decode + apply of one client's snapshot, out of line so that callgrind's
// --toggle-collect can count them alone (bench/RESULTS.md gives the commands): BM_EncodeDecodeB1 calls both,
// BM_StandardScene calls measured_decode for its 1-tick-old client (with a cache simulation, what that
// client's applies miss in the scene).
[[gnu::noinline]] std::string measured_encode(snapshot_encoder& encoder, const baselines& wanted) {
    v1::Envelope envelope;
    encoder.encode(wanted, *envelope.mutable_snapshot());
    return encode_envelope(envelope);
}

[[gnu::noinline]] bool measured_decode(mirror& client, const std::string& bytes) {
    return client.apply_envelope(bytes).has_value();
}

// The 4-tick client's apply in BM_StandardScene (its baselines do not chain, so it takes the comparing
// paths), for --toggle-collect='*measured_lagging_decode*'. Takes a string_view so that the linker cannot
// fold it into measured_decode.
[[gnu::noinline]] bool measured_lagging_decode(mirror& client, std::string_view envelope) {
    return client.apply_envelope(envelope).has_value();
}

void BM_StandardScene(benchmark::State& state) {
    auto& w = world();
    const auto& layout = w.history.layout();
    double bits_b1 = 0;
    double bits_b4 = 0;
    double bits_b1_plain = 0;
    double varint_b1 = 0;
    double packed_b1 = 0;
    double moved_b1 = 0;
    double moved_b4 = 0;
    double changed_b1 = 0;
    double encode_s = 0;
    double decode_s = 0;
    double decode_b4_s = 0;
    double changed_b4 = 0;
    double capture_s = 0;
    double copy_s = 0;
    double entities = 0;
    std::vector<std::uint32_t> replaced;
    replicated_state copy;
    snapshot_encoder plain{w.history, encoder_options{false}};
    for (auto _ : state) {
        for (int n = 0; n < measured_ticks; ++n) {
            w.scene.step();
            ++w.tick;
            const auto t0 = clock_type::now();
            w.history.capture(w.tick, w.history.nominal_time_us(w.tick) + w.jitter.below(2000));
            const auto t1 = clock_type::now();
            capture_s += seconds(t1 - t0);
            entities += static_cast<double>(w.history.newest().entity_count());

            // Floor: copying the tick's quantized state.
            const auto c0 = clock_type::now();
            copy = w.history.newest();
            benchmark::DoNotOptimize(copy);
            copy_s += seconds(clock_type::now() - c0);

            // b1: encode (timed, uncached), then apply (timed).
            const auto e0 = clock_type::now();
            v1::Envelope envelope;
            w.encoder.encode(w.acked(1), *envelope.mutable_snapshot());
            const auto bytes = encode_envelope(envelope);
            std::string frame;
            append_length_prefix(frame, bytes.size());
            frame += bytes;
            benchmark::DoNotOptimize(frame.data());
            encode_s += seconds(clock_type::now() - e0);
            packed_b1 += static_cast<double>(envelope.snapshot().columns().size());
            varint_b1 += static_cast<double>(varint_columns_size(layout, w.encoder.last_delta()));
            bits_b1 += 8.0 * static_cast<double>(frame.size());

            const auto d0 = clock_type::now();
            if (!measured_decode(w.client_b1, bytes)) {
                state.SkipWithError("b1 client refused a snapshot");
                return;
            }
            decode_s += seconds(clock_type::now() - d0);

            // Counting what changed since each baseline (not timed).
            w.history.entered_since(w.tick - 1, replaced);
            const auto c1 = count_changes(layout, *w.history.find(w.tick - 1), w.history.newest(), replaced);
            moved_b1 += static_cast<double>(c1.moved);
            changed_b1 += static_cast<double>(c1.changed);
            w.history.entered_since(w.tick - 4, replaced);
            const auto c4 = count_changes(layout, *w.history.find(w.tick - 4), w.history.newest(), replaced);
            moved_b4 += static_cast<double>(c4.moved);
            changed_b4 += static_cast<double>(c4.changed);

            // b4 and the plain (no extrapolation) b1 variant.
            const auto s4 = w.encoder.encode(w.acked(4));
            bits_b4 += 8.0 * static_cast<double>(s4->frame.size());
            const auto d4 = clock_type::now();
            if (!measured_lagging_decode(w.client_b4, s4->envelope)) {
                state.SkipWithError("b4 client refused a snapshot");
                return;
            }
            decode_b4_s += seconds(clock_type::now() - d4);
            bits_b1_plain += 8.0 * static_cast<double>(plain.encode(w.acked(1))->frame.size());
        }
    }
    const double ticks = static_cast<double>(state.iterations()) * measured_ticks;
    state.counters["bits_per_moving_entity_b1"] = bits_b1 / moved_b1;
    state.counters["bits_per_moving_entity_b4"] = bits_b4 / moved_b4;
    state.counters["bits_per_moving_entity_b1_no_extrapolation"] = bits_b1_plain / moved_b1;
    state.counters["bytes_per_tick_b1"] = bits_b1 / 8 / ticks;
    state.counters["bytes_per_tick_b4"] = bits_b4 / 8 / ticks;
    state.counters["columns_varint_vs_packed_b1"] = varint_b1 / packed_b1;
    state.counters["moved_per_tick_b1"] = moved_b1 / ticks;
    state.counters["changed_per_tick_b1"] = changed_b1 / ticks;
    state.counters["changed_per_tick_b4"] = changed_b4 / ticks;
    state.counters["encode_ns_per_changed"] = 1e9 * encode_s / changed_b1;
    state.counters["decode_ns_per_changed"] = 1e9 * decode_s / changed_b1;
    state.counters["decode_ns_per_changed_b4"] = 1e9 * decode_b4_s / changed_b4;
    state.counters["capture_ns_per_entity"] = 1e9 * capture_s / entities;
    state.counters["state_copy_ns_per_entity"] = 1e9 * copy_s / entities;
    state.counters["encode_vs_state_copy"] = encode_s / copy_s;
    state.counters["decode_vs_state_copy"] = decode_s / copy_s;
    state.counters["capture_vs_state_copy"] = capture_s / copy_s;
    state.counters["history_bytes_per_entity_tick"] =
        static_cast<double>(w.history.memory_bytes()) /
        (static_cast<double>(w.history.size()) * static_cast<double>(w.history.newest().entity_count()));
}
BENCHMARK(BM_StandardScene)->Iterations(1)->Unit(benchmark::kMillisecond);

// Ticks where nothing changed, one hour into a session: the world stands still. The size varies a little
// with the tick number, the lateness and the CRC (varints), so the mean and the largest of 600 idle ticks
// are reported, with up to 2 ms of lateness, and without a timestamp (a lateness of 0: the field is omitted).
void BM_IdleTick(benchmark::State& state) {
    auto& w = world();
    registry frozen;
    arena::scene still{frozen, arena::scene_options{}};
    still.populate();
    double total = 0;
    double largest = 0;
    double total_no_time = 0;
    double largest_no_time = 0;
    constexpr int ticks = 600;
    for (auto _ : state) {
        for (const bool timed : {true, false}) {
            snapshot_history history{arena::replicated_schema(), frozen, history_options{32, tick_rate}};
            snapshot_encoder encoder{history};
            arena::scene_random jitter{5};
            for (int n = 0; n < ticks + 1; ++n) {
                const auto tick = w.tick + static_cast<tick_type>(n);
                history.capture(tick, history.nominal_time_us(tick) + (timed ? 1 + jitter.below(2000) : 0));
                if (n == 0) {
                    continue;
                }
                const auto snapshot = encoder.encode(baselines{tick - 1, tick - 2});
                if (!snapshot->idle) {
                    state.SkipWithError("a tick of a frozen world is not idle");
                    return;
                }
                const auto bytes = static_cast<double>(snapshot->frame.size());
                (timed ? total : total_no_time) += bytes;
                auto& top = timed ? largest : largest_no_time;
                top = std::max(top, bytes);
            }
        }
    }
    const double runs = static_cast<double>(state.iterations()) * ticks;
    state.counters["idle_tick_bytes"] = total / runs;
    state.counters["idle_tick_bytes_max"] = largest;
    state.counters["idle_tick_bytes_without_time"] = total_no_time / runs;
    state.counters["idle_tick_bytes_without_time_max"] = largest_no_time;
    state.counters["tick"] = static_cast<double>(w.tick);
}
BENCHMARK(BM_IdleTick)->Iterations(1);

void BM_FullState(benchmark::State& state) {
    auto& w = world();
    snapshot_encoder encoder{w.history};
    std::size_t bytes = 0;
    double encode_s = 0;
    double decode_s = 0;
    for (auto _ : state) {
        const auto t0 = clock_type::now();
        v1::Envelope envelope;
        encoder.encode(baselines{}, *envelope.mutable_snapshot());
        const auto payload = encode_envelope(envelope);
        bytes = framed_size(payload.size());
        encode_s += seconds(clock_type::now() - t0);
        mirror fresh{arena::replicated_schema(), mirror_options{32, tick_rate, {}}};
        const auto t1 = clock_type::now();
        if (!fresh.apply_envelope(payload)) {
            state.SkipWithError("full state refused");
            return;
        }
        decode_s += seconds(clock_type::now() - t1);
    }
    const double entities = static_cast<double>(w.history.newest().entity_count());
    const double runs = static_cast<double>(state.iterations());
    state.counters["full_state_bytes_per_entity"] = static_cast<double>(bytes) / entities;
    state.counters["full_state_encode_ns_per_entity"] = 1e9 * encode_s / runs / entities;
    state.counters["full_state_decode_ns_per_entity"] = 1e9 * decode_s / runs / entities;
}
BENCHMARK(BM_FullState)->Iterations(3)->Unit(benchmark::kMillisecond);

// The 1-tick-old case alone, for instruction counts under callgrind: each tick encodes one uncached
// snapshot for acks one tick old (measured_encode) and applies it on a client (measured_decode). (It leaves
// the 4-tick client behind: run it after BM_StandardScene, as registered.)
void BM_EncodeDecodeB1(benchmark::State& state) {
    auto& w = world();
    const auto& layout = w.history.layout();
    std::vector<std::uint32_t> replaced;
    double changed = 0;
    double encode_s = 0;
    double decode_s = 0;
    constexpr int ticks = 60;
    for (auto _ : state) {
        for (int n = 0; n < ticks; ++n) {
            w.advance();
            const auto e0 = clock_type::now();
            const auto bytes = measured_encode(w.encoder, w.acked(1));
            const auto e1 = clock_type::now();
            if (!measured_decode(w.client_b1, bytes)) {
                state.SkipWithError("b1 client refused a snapshot");
                return;
            }
            const auto e2 = clock_type::now();
            encode_s += seconds(e1 - e0);
            decode_s += seconds(e2 - e1);
            w.history.entered_since(w.tick - 1, replaced);
            changed += static_cast<double>(
                count_changes(layout, *w.history.find(w.tick - 1), w.history.newest(), replaced).changed);
        }
    }
    const double runs = static_cast<double>(state.iterations()) * ticks;
    state.counters["ticks"] = runs;
    state.counters["changed_per_tick"] = changed / runs;
    state.counters["encode_ns_per_changed"] = 1e9 * encode_s / changed;
    state.counters["decode_ns_per_changed"] = 1e9 * decode_s / changed;
}
BENCHMARK(BM_EncodeDecodeB1)->Iterations(1)->Unit(benchmark::kMillisecond);

// Change detection (issue 5): compare-based capture (what snapshot_history does) against tracking changes
// with registry signals. Signal tracking costs the game a listener call per write (measured: the standard
// scene's step with on_construct/on_update/on_destroy listeners feeding a work_queue, minus the same step
// without), and a signal-driven capture still has to produce the tick's columns: at least copy the previous
// tick's (measured) and re-quantize each dirty entity after finding its row (measured: lower_bound in the
// compact ids + quantize_one). Insertions and removals of spawned and despawned rows come on top.
void BM_ChangeDetection(benchmark::State& state) {
    const auto& schema = arena::replicated_schema();
    registry plain;
    registry tracked;
    arena::scene plain_scene{plain, arena::scene_options{.seed = 11}};
    arena::scene tracked_scene{tracked, arena::scene_options{.seed = 11}};
    plain_scene.populate();
    tracked_scene.populate();
    work_queue<> dirty;
    std::vector<scoped_connection> connections;
    const auto mark = [&dirty](registry&, entity e) { dirty.push(e); };
    connections.emplace_back(tracked.on_construct<arena::Transform>().connect(mark));
    connections.emplace_back(tracked.on_update<arena::Transform>().connect(mark));
    connections.emplace_back(tracked.on_destroy<arena::Transform>().connect(mark));
    connections.emplace_back(tracked.on_update<arena::Health>().connect(mark));
    snapshot_history history{schema, plain, history_options{32, tick_rate}};
    double plain_s = 0;
    double tracked_s = 0;
    double capture_s = 0;
    double copy_s = 0;
    double patch_s = 0;
    double dirty_count = 0;
    replicated_state copy;
    std::vector<std::uint32_t> values(4);
    constexpr int ticks = 100;
    tick_type tick = 0;
    for (auto _ : state) {
        for (int n = 0; n < ticks; ++n) {
            auto t0 = clock_type::now();
            plain_scene.step();
            auto t1 = clock_type::now();
            const auto report = tracked_scene.step();
            auto t2 = clock_type::now();
            history.capture(++tick, 0);
            auto t3 = clock_type::now();
            plain_s += seconds(t1 - t0);
            tracked_s += seconds(t2 - t1);
            capture_s += seconds(t3 - t2);
            // The signal-driven capture's floor: copy the previous columns, then patch the dirty rows.
            const auto c0 = clock_type::now();
            copy = history.newest();
            const auto c1 = clock_type::now();
            const auto& ids = copy.entity_ids();
            dirty.drain([&](entity e) {
                if (tracked.valid(e) && tracked.all_of<arena::Transform>(e)) {
                    benchmark::DoNotOptimize(ids.lower_bound(to_index(e)));
                    schema.codec(0).quantize_one(tracked, e, values.data());
                    benchmark::DoNotOptimize(values.data());
                }
                dirty_count += 1;
            });
            // Spawned and despawned rows: inserted into / erased from every column of the copy.
            for (std::size_t k = 0; k < report.spawned + report.despawned; ++k) {
                const auto at = static_cast<std::ptrdiff_t>(tick * 7919 % (copy.entity_count() - 1));
                for (auto& component : copy.components) {
                    for (auto& column : component.fields) {
                        column.visit([&](auto& v) {
                            if (k < report.spawned) {
                                v.insert(v.begin() + at, v[static_cast<std::size_t>(at)]);
                            } else {
                                v.erase(v.begin() + at);
                            }
                        });
                    }
                }
                if (k < report.spawned) {
                    copy.entities.insert(0xFFFF0U + static_cast<std::uint32_t>(k));
                } else {
                    copy.entities.erase_at(static_cast<std::size_t>(at));
                }
            }
            const auto c2 = clock_type::now();
            copy_s += seconds(c1 - c0);
            patch_s += seconds(c2 - c1);
        }
    }
    const double runs = static_cast<double>(state.iterations()) * ticks;
    state.counters["compare_capture_us_per_tick"] = 1e6 * capture_s / runs;
    state.counters["signal_listener_overhead_us_per_tick"] = 1e6 * (tracked_s - plain_s) / runs;
    state.counters["signal_capture_floor_us_per_tick"] = 1e6 * (copy_s + patch_s) / runs;
    state.counters["signal_total_floor_us_per_tick"] = 1e6 * (tracked_s - plain_s + copy_s + patch_s) / runs;
    state.counters["dirty_per_tick"] = dirty_count / runs;
    state.counters["step_us_per_tick"] = 1e6 * plain_s / runs;
}
BENCHMARK(BM_ChangeDetection)->Iterations(1)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
