// The compact ordered id array (seed 003_9749a93fa14adb31.txt) against its floor, a sorted flat
// std::vector<uint32_t>, in the same binary and the same run.
//
// Every benchmark runs the compact operation and the same operation on the flat vector in each iteration
// (alternating which goes first), times both, and reports:
//   ratio          compact time / flat time (the figure to quote: < 1 means the compact array is faster)
//   ns_per_op      compact time per operation (the benchmark's own time is the compact time too)
//   flat_ns_per_op flat vector time per operation
//   bytes_per_id   memory_bytes() / size() of the compact column as built by push_back (the vector: 4)
// Arguments: /size/sparse, where sparse = 0 is dense entity ids (size ids drawn from [0, 1.25 * size)) and
// sparse = 1 is random 32-bit ids.
//
// `compact_id_array_bench --probe=<kernel>` runs one kernel once (on 100,000 dense ids, or random ids with
// the _sparse suffix) instead, for `valgrind --tool=callgrind` instruction counts per kernel function (see
// bench/RESULTS.md).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include <ecsnet/ecs/compact_id_array.hpp>

namespace {

using ecsnet::compact_id_array;
using id = std::uint32_t;

// ---- data ----------------------------------------------------------------------------------------------

struct column {
    std::vector<id> flat;
    compact_id_array compact;
    std::vector<id> absent;           // ids not in the column, in random order (for insert/erase)
    std::vector<std::size_t> indices; // random positions (for random access)
    std::vector<id> keys;             // random keys over the column's range (for lower_bound)
};

const column& make_column(std::size_t n, bool sparse) {
    static std::map<std::pair<std::size_t, bool>, std::unique_ptr<column>> cache;
    auto& slot = cache[{n, sparse}];
    if (slot) {
        return *slot;
    }
    slot = std::make_unique<column>();
    column& c = *slot;
    std::mt19937_64 rng{n * 2 + (sparse ? 1 : 0)};
    if (sparse) {
        std::uniform_int_distribution<id> any;
        while (c.flat.size() < n) {
            for (std::size_t k = c.flat.size(); k < n; ++k) {
                c.flat.push_back(any(rng));
            }
            std::sort(c.flat.begin(), c.flat.end());
            c.flat.erase(std::unique(c.flat.begin(), c.flat.end()), c.flat.end());
        }
    } else {
        // Live entity indices: 80% of the slots [0, 1.25 n) in use.
        std::vector<id> all(n + n / 4);
        for (std::size_t k = 0; k < all.size(); ++k) {
            all[k] = static_cast<id>(k);
        }
        std::shuffle(all.begin(), all.end(), rng);
        c.absent.assign(all.begin() + static_cast<std::ptrdiff_t>(n), all.end());
        all.resize(n);
        std::sort(all.begin(), all.end());
        c.flat = std::move(all);
    }
    for (const id v : c.flat) {
        c.compact.push_back(v);
    }
    if (sparse) {
        std::uniform_int_distribution<id> any;
        while (c.absent.size() < 4096) {
            const id v = any(rng);
            if (!std::binary_search(c.flat.begin(), c.flat.end(), v)) {
                c.absent.push_back(v);
            }
        }
    }
    std::uniform_int_distribution<std::size_t> position{0, n - 1};
    std::uniform_int_distribution<id> key{0, c.flat.back()};
    c.indices.resize(1 << 14);
    for (auto& i : c.indices) {
        i = position(rng);
    }
    c.keys.resize(1 << 12);
    for (auto& k : c.keys) {
        k = key(rng);
    }
    return c;
}

// ---- kernels (noinline: callgrind attributes instructions to them) -------------------------------------

[[gnu::noinline]] id random_access_compact(const compact_id_array& a, const std::vector<std::size_t>& at) {
    id sum = 0;
    for (const auto i : at) {
        sum += a[i];
    }
    return sum;
}
[[gnu::noinline]] id random_access_flat(const std::vector<id>& a, const std::vector<std::size_t>& at) {
    id sum = 0;
    for (const auto i : at) {
        sum += a[i];
    }
    return sum;
}

[[gnu::noinline]] std::size_t lower_bound_compact(const compact_id_array& a, const std::vector<id>& keys) {
    std::size_t sum = 0;
    for (const auto k : keys) {
        sum += a.lower_bound(k);
    }
    return sum;
}
[[gnu::noinline]] std::size_t lower_bound_flat(const std::vector<id>& a, const std::vector<id>& keys) {
    std::size_t sum = 0;
    for (const auto k : keys) {
        sum += static_cast<std::size_t>(std::lower_bound(a.begin(), a.end(), k) - a.begin());
    }
    return sum;
}

[[gnu::noinline]] id iterate_compact(const compact_id_array& a) {
    id sum = 0;
    a.for_each([&sum](id v) { sum += v; });
    return sum;
}
[[gnu::noinline]] id iterate_compact_iterators(const compact_id_array& a) {
    id sum = 0;
    for (const id v : a) {
        sum += v;
    }
    return sum;
}
[[gnu::noinline]] id iterate_flat(const std::vector<id>& a) {
    id sum = 0;
    for (const id v : a) {
        sum += v;
    }
    return sum;
}

[[gnu::noinline]] void build_compact(compact_id_array& a, const std::vector<id>& values) {
    a.clear();
    for (const id v : values) {
        a.push_back(v);
    }
}
[[gnu::noinline]] void append_compact(compact_id_array& a, const std::vector<id>& values) {
    a.clear();
    a.append(values.begin(), values.end());
}
[[gnu::noinline]] void build_flat(std::vector<id>& a, const std::vector<id>& values) {
    a.clear();
    for (const id v : values) {
        a.push_back(v);
    }
}

void insert_flat(std::vector<id>& a, id v) {
    a.insert(std::lower_bound(a.begin(), a.end(), v), v);
}
void erase_flat(std::vector<id>& a, id v) {
    a.erase(std::lower_bound(a.begin(), a.end(), v));
}

// ---- the harness -----------------------------------------------------------------------------------------

template<typename Func>
double seconds(Func&& func) {
    const auto start = std::chrono::steady_clock::now();
    func();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Runs compact() and flat() in every iteration; each returns the seconds it measured (so that it can keep
/// set-up work out of the timing) and processes `ops` operations.
template<typename Compact, typename Flat>
void compare(benchmark::State& state, const column& c, double ops, Compact compact, Flat flat) {
    double compact_total = 0;
    double flat_total = 0;
    bool compact_first = true;
    for (auto _ : state) {
        double compact_time = 0;
        if (compact_first) {
            compact_time = compact();
            flat_total += flat();
        } else {
            flat_total += flat();
            compact_time = compact();
        }
        compact_first = !compact_first;
        compact_total += compact_time;
        state.SetIterationTime(compact_time);
    }
    const auto iterations = static_cast<double>(state.iterations());
    state.counters["ratio"] = compact_total / flat_total;
    state.counters["ns_per_op"] = compact_total * 1e9 / (iterations * ops);
    state.counters["flat_ns_per_op"] = flat_total * 1e9 / (iterations * ops);
    state.counters["bytes_per_id"] =
        static_cast<double>(c.compact.memory_bytes()) / static_cast<double>(c.compact.size());
}

std::size_t size_arg(const benchmark::State& state) {
    return static_cast<std::size_t>(state.range(0));
}
bool sparse_arg(const benchmark::State& state) {
    return state.range(1) != 0;
}
// Enough repetitions of a whole-column operation to time about 64K elements at once.
std::size_t reps_for(std::size_t n) {
    return std::max<std::size_t>(1, (std::size_t{1} << 16) / n);
}

void BM_RandomAccess(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    compare(
        state, c, static_cast<double>(c.indices.size()),
        [&] {
            return seconds([&] { benchmark::DoNotOptimize(random_access_compact(c.compact, c.indices)); });
        },
        [&] { return seconds([&] { benchmark::DoNotOptimize(random_access_flat(c.flat, c.indices)); }); });
}

void BM_LowerBound(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    compare(
        state, c, static_cast<double>(c.keys.size()),
        [&] { return seconds([&] { benchmark::DoNotOptimize(lower_bound_compact(c.compact, c.keys)); }); },
        [&] { return seconds([&] { benchmark::DoNotOptimize(lower_bound_flat(c.flat, c.keys)); }); });
}

void BM_Iterate(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    const auto reps = reps_for(c.flat.size());
    compare(
        state, c, static_cast<double>(reps * c.flat.size()),
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    benchmark::DoNotOptimize(iterate_compact(c.compact));
                }
            });
        },
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    benchmark::DoNotOptimize(iterate_flat(c.flat));
                }
            });
        });
}

// The same walk through begin()/end() (what a merge of two columns uses): ++ stays inside a cached run.
void BM_IterateWithIterators(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    const auto reps = reps_for(c.flat.size());
    compare(
        state, c, static_cast<double>(reps * c.flat.size()),
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    benchmark::DoNotOptimize(iterate_compact_iterators(c.compact));
                }
            });
        },
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    benchmark::DoNotOptimize(iterate_flat(c.flat));
                }
            });
        });
}

// clear() then push_back of every id, into a column that kept its memory (as a history slot reused tick
// after tick would).
void BM_PushBackBuild(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    const auto reps = reps_for(c.flat.size());
    compact_id_array compact = c.compact;
    std::vector<id> flat = c.flat;
    compare(
        state, c, static_cast<double>(reps * c.flat.size()),
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    build_compact(compact, c.flat);
                    benchmark::DoNotOptimize(compact.size());
                }
            });
        },
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    build_flat(flat, c.flat);
                    benchmark::DoNotOptimize(flat.data());
                }
            });
        });
}

// The same build with append(first, last), which encodes whole groups at once; the floor is the vector's
// push_back loop as above.
void BM_AppendBuild(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    const auto reps = reps_for(c.flat.size());
    compact_id_array compact = c.compact;
    std::vector<id> flat = c.flat;
    compare(
        state, c, static_cast<double>(reps * c.flat.size()),
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    append_compact(compact, c.flat);
                    benchmark::DoNotOptimize(compact.size());
                }
            });
        },
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    build_flat(flat, c.flat);
                    benchmark::DoNotOptimize(flat.data());
                }
            });
        });
}

// Copy-constructing (and destroying) a whole column, allocation included.
void BM_Copy(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    const auto reps = reps_for(c.flat.size());
    compare(
        state, c, static_cast<double>(reps),
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    compact_id_array copy = c.compact;
                    benchmark::DoNotOptimize(copy.size());
                }
            });
        },
        [&] {
            return seconds([&] {
                for (std::size_t r = 0; r < reps; ++r) {
                    std::vector<id> copy = c.flat;
                    benchmark::DoNotOptimize(copy.data());
                }
            });
        });
}

constexpr std::size_t updates_per_iteration = 64;

// insert() of 64 absent ids at random positions (timed), then their erase (not timed).
void BM_Insert(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    compact_id_array compact = c.compact;
    std::vector<id> flat = c.flat;
    std::size_t next = 0;
    std::vector<id> batch(updates_per_iteration);
    compare(
        state, c, static_cast<double>(updates_per_iteration),
        [&] {
            for (auto& v : batch) {
                v = c.absent[next++ % c.absent.size()];
            }
            const double t = seconds([&] {
                for (const id v : batch) {
                    benchmark::DoNotOptimize(compact.insert(v));
                }
            });
            for (const id v : batch) {
                compact.erase(v);
            }
            return t;
        },
        [&] {
            const double t = seconds([&] {
                for (const id v : batch) {
                    insert_flat(flat, v);
                }
            });
            for (const id v : batch) {
                erase_flat(flat, v);
            }
            return t;
        });
}

// erase() of 64 ids at random positions (timed), after inserting them (not timed).
void BM_Erase(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    compact_id_array compact = c.compact;
    std::vector<id> flat = c.flat;
    std::size_t next = 0;
    std::vector<id> batch(updates_per_iteration);
    compare(
        state, c, static_cast<double>(updates_per_iteration),
        [&] {
            for (auto& v : batch) {
                v = c.absent[next++ % c.absent.size()];
                compact.insert(v);
            }
            return seconds([&] {
                for (const id v : batch) {
                    benchmark::DoNotOptimize(compact.erase(v));
                }
            });
        },
        [&] {
            for (const id v : batch) {
                insert_flat(flat, v);
            }
            return seconds([&] {
                for (const id v : batch) {
                    erase_flat(flat, v);
                }
            });
        });
}

// Memory only: bytes per id of a column built by push_back (capacity included), of a copy (exact), and the
// ratio of the copy to a flat vector's 4 bytes per id.
void BM_BytesPerId(benchmark::State& state) {
    const auto& c = make_column(size_arg(state), sparse_arg(state));
    const compact_id_array copy = c.compact;
    for (auto _ : state) {
        benchmark::DoNotOptimize(copy.memory_bytes());
    }
    const auto n = static_cast<double>(c.flat.size());
    state.counters["bytes_per_id"] = static_cast<double>(c.compact.memory_bytes()) / n;
    state.counters["copy_bytes_per_id"] = static_cast<double>(copy.memory_bytes()) / n;
    state.counters["ratio"] = static_cast<double>(copy.memory_bytes()) / (n * sizeof(id));
    state.counters["sparse_groups"] = static_cast<double>(copy.sparse_group_count());
}

void sizes(benchmark::internal::Benchmark* b) {
    for (const std::int64_t n : {1000, 10000, 100000, 1000000}) {
        b->Args({n, 0});
    }
    b->Args({100000, 1}); // random 32-bit ids: every group sparse
}

BENCHMARK(BM_RandomAccess)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_LowerBound)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_Iterate)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_IterateWithIterators)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_PushBackBuild)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_AppendBuild)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_Copy)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_Insert)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_Erase)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_BytesPerId)->Apply(sizes);

// ---- callgrind probes ------------------------------------------------------------------------------------

[[gnu::noinline]] void insert_erase_compact(compact_id_array& a, const std::vector<id>& values) {
    for (const id v : values) {
        a.insert(v);
    }
    for (const id v : values) {
        a.erase(v);
    }
}
[[gnu::noinline]] void insert_erase_flat(std::vector<id>& a, const std::vector<id>& values) {
    for (const id v : values) {
        insert_flat(a, v);
    }
    for (const id v : values) {
        erase_flat(a, v);
    }
}

int probe(const std::string& kernel) {
    if (kernel == "insert_erase_1000" || kernel == "insert_erase_1000000") {
        const auto& c = make_column(kernel == "insert_erase_1000" ? 1000 : 1000000, false);
        compact_id_array compact = c.compact;
        std::vector<id> flat = c.flat;
        const std::vector<id> batch(c.absent.begin(), c.absent.begin() + 64);
        insert_erase_compact(compact, batch);
        insert_erase_flat(flat, batch);
        std::printf("%zu %zu\n", compact.size(), flat.size());
        return 0;
    }
    const bool sparse = kernel.ends_with("_sparse");
    const std::string name = sparse ? kernel.substr(0, kernel.size() - 7) : kernel;
    const auto& c = make_column(100000, sparse);
    if (name == "random_access") {
        std::printf("%u %u\n", random_access_compact(c.compact, c.indices),
                    random_access_flat(c.flat, c.indices));
    } else if (name == "lower_bound") {
        std::printf("%zu %zu\n", lower_bound_compact(c.compact, c.keys), lower_bound_flat(c.flat, c.keys));
    } else if (name == "build") {
        compact_id_array compact;
        std::vector<id> flat;
        build_compact(compact, c.flat);
        append_compact(compact, c.flat);
        build_flat(flat, c.flat);
        std::printf("%zu %zu\n", compact.size(), flat.size());
    } else if (name == "iterate") {
        std::printf("%u %u %u\n", iterate_compact(c.compact), iterate_compact_iterators(c.compact),
                    iterate_flat(c.flat));
    } else {
        std::fprintf(stderr,
                     "unknown probe %s (random_access, lower_bound, iterate, build, insert_erase_1000, "
                     "insert_erase_1000000)\n",
                     kernel.c_str());
        return 2;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--probe=", 8) == 0) {
            return probe(argv[i] + 8);
        }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
