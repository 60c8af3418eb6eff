// The candidates pass of apply_delta (candidates.hpp), differentially: the kernel compiled for a
// component's storage types and the one reading them at run time against a plain model (the union of the
// two lists through the runs, then a row at a time), on random runs, lists, columns and residuals, with
// runs that skip positions, written entries outside the runs, and changed entries outside them (refused).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "ecsnet/proto/candidates.hpp"

namespace ecsnet::proto::candidates_test {
namespace {

struct random_case {
    std::vector<unsigned> widths;
    std::vector<std::uint32_t> value_masks;
    std::vector<std::uint64_t> weights;
    std::vector<aligned_run> runs;
    std::vector<std::uint32_t> written_before;
    std::vector<std::uint32_t> changed;
    std::vector<std::uint32_t> change_masks;
    std::vector<std::vector<std::uint32_t>> now;    // per field, by new position
    std::vector<std::vector<std::uint32_t>> before; // per field, by baseline position
    std::vector<std::vector<std::uint32_t>> residuals;
    std::vector<std::uint32_t> ids; // by new position
    std::vector<std::uint64_t> entity_weights;
    std::size_t base_size{};
    std::size_t new_size{};
};

unsigned bits_of(unsigned width) {
    return width == 4 ? 20U : width == 2 ? 12U : 7U;
}

random_case make_case(std::mt19937_64& rng, const std::vector<unsigned>& widths, bool allow_outside) {
    const auto below = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
    random_case c;
    c.widths = widths;
    for (const auto width : widths) {
        c.value_masks.push_back((1U << bits_of(width)) - 1U);
        c.weights.push_back(rng() | 1U);
    }
    // Runs: increasing on both sides, with gaps (entries gone from the baseline, entries new to the target).
    std::uint32_t t = 0;
    std::uint32_t b = 0;
    const auto nruns = below(6);
    for (std::size_t r = 0; r < nruns; ++r) {
        b += static_cast<std::uint32_t>(below(4));
        t += static_cast<std::uint32_t>(below(4));
        const auto length = static_cast<std::uint32_t>(1 + below(40));
        c.runs.push_back({t, b, aligned_run::no_second, length});
        t += length;
        b += length;
    }
    c.base_size = b + below(3);
    c.new_size = t + below(3);
    // Both lists over baseline positions; the written one may stray outside the runs, the changed one only
    // when allowed.
    const auto in_runs = [&](std::uint32_t pos) {
        return std::any_of(c.runs.begin(), c.runs.end(),
                           [&](const aligned_run& r) { return pos >= r.b && pos < r.b + r.length; });
    };
    // Each field changed in about half the changed rows (the kernels add its residuals without a branch),
    // in few of them or in nearly all (with a branch).
    std::vector<std::uint64_t> per_sixteen(widths.size());
    for (auto& p : per_sixteen) {
        const auto shape = below(3);
        p = shape == 0 ? 8 : shape == 1 ? 1 : 15;
    }
    for (std::uint32_t pos = 0; pos < c.base_size; ++pos) {
        if (below(3) == 0) {
            c.written_before.push_back(pos);
        }
        if (below(3) == 0 && (in_runs(pos) || (allow_outside && below(8) == 0))) {
            c.changed.push_back(pos);
            std::uint32_t mask = 0;
            for (std::size_t f = 0; f < widths.size(); ++f) {
                mask |= below(16) < per_sixteen[f] ? 1U << f : 0U;
            }
            c.change_masks.push_back(mask == 0 ? 1U : mask);
        }
    }
    c.now.resize(widths.size());
    c.before.resize(widths.size());
    c.residuals.resize(widths.size());
    for (std::size_t f = 0; f < widths.size(); ++f) {
        const auto mask = c.value_masks[f];
        // Values often equal to the baseline's, so that rows that do not differ occur.
        for (std::size_t i = 0; i < c.base_size; ++i) {
            c.before[f].push_back(static_cast<std::uint32_t>(below(4)) & mask);
        }
        for (std::size_t i = 0; i < c.new_size; ++i) {
            c.now[f].push_back(static_cast<std::uint32_t>(below(4)) & mask);
        }
        // Half the fields not extrapolated: their references are the baseline's values.
        if (below(2) == 0) {
            for (const auto& r : c.runs) {
                std::copy_n(c.before[f].begin() + r.b, r.length, c.now[f].begin() + r.t);
            }
        }
        for (const auto m : c.change_masks) {
            if (((m >> f) & 1U) != 0) {
                c.residuals[f].push_back(below(2) == 0 ? 0 : static_cast<std::uint32_t>(rng()) & mask);
            }
        }
    }
    for (std::size_t i = 0; i < c.new_size; ++i) {
        c.ids.push_back(static_cast<std::uint32_t>(i * 3 + below(3)));
    }
    for (std::size_t i = 0; i < 3 * c.new_size + 3; ++i) {
        c.entity_weights.push_back(rng() | 1U);
    }
    return c;
}

struct pass_result {
    candidate_outcome outcome{};
    std::vector<std::uint32_t> written;
    std::uint64_t sum{};
    std::vector<std::vector<std::uint32_t>> now;
};

// The model: the union as a set, mapped through the runs, then one row at a time.
pass_result model(random_case c) {
    pass_result out;
    const auto run_of = [&](std::uint32_t pos) -> std::optional<aligned_run> {
        for (const auto& r : c.runs) {
            if (pos >= r.b && pos < r.b + r.length) {
                return r;
            }
        }
        return std::nullopt;
    };
    for (const auto pos : c.changed) {
        if (!run_of(pos)) {
            out.outcome = candidate_outcome::changed_outside_runs;
            return out;
        }
    }
    std::set<std::uint32_t> all(c.changed.begin(), c.changed.end());
    for (const auto pos : c.written_before) {
        if (run_of(pos)) {
            all.insert(pos);
        }
    }
    std::vector<std::size_t> next(c.widths.size(), 0);
    for (const auto pos : all) {
        const auto r = *run_of(pos);
        const auto at = pos - r.b + r.t;
        const auto it = std::find(c.changed.begin(), c.changed.end(), pos);
        const auto change =
            it == c.changed.end() ? 0U : c.change_masks[static_cast<std::size_t>(it - c.changed.begin())];
        bool differs = false;
        std::uint64_t total = 0;
        for (std::size_t f = 0; f < c.widths.size(); ++f) {
            auto value = c.now[f][at];
            if (((change >> f) & 1U) != 0) {
                value = (value + c.residuals[f][next[f]++]) & c.value_masks[f];
                c.now[f][at] = value;
            }
            const auto d = std::uint64_t{value} - std::uint64_t{c.before[f][pos]};
            differs = differs || d != 0;
            total += d * c.weights[f];
        }
        if (differs) {
            out.written.push_back(at);
        }
        out.sum += c.entity_weights[c.ids[at]] * total;
    }
    out.outcome = candidate_outcome::done;
    out.now = c.now;
    return out;
}

// Typed storage for the kernels: each field's column in its own width.
struct typed_columns {
    std::vector<std::vector<std::uint8_t>> u8;
    std::vector<std::vector<std::uint16_t>> u16;
    std::vector<std::vector<std::uint32_t>> u32;
    std::vector<void*> pointers;

    typed_columns(const std::vector<std::vector<std::uint32_t>>& values, const std::vector<unsigned>& widths)
        : u8(widths.size())
        , u16(widths.size())
        , u32(widths.size()) {
        for (std::size_t f = 0; f < widths.size(); ++f) {
            for (const auto v : values[f]) {
                if (widths[f] == 1) {
                    u8[f].push_back(static_cast<std::uint8_t>(v));
                } else if (widths[f] == 2) {
                    u16[f].push_back(static_cast<std::uint16_t>(v));
                } else {
                    u32[f].push_back(v);
                }
            }
            // A zero-length column still needs a pointer: one spare element.
            u8[f].push_back(0);
            u16[f].push_back(0);
            u32[f].push_back(0);
            pointers.push_back(widths[f] == 1   ? static_cast<void*>(u8[f].data())
                               : widths[f] == 2 ? static_cast<void*>(u16[f].data())
                                                : static_cast<void*>(u32[f].data()));
        }
    }

    [[nodiscard]] std::vector<std::vector<std::uint32_t>> values(const std::vector<unsigned>& widths,
                                                                 std::size_t n) const {
        std::vector<std::vector<std::uint32_t>> out(widths.size());
        for (std::size_t f = 0; f < widths.size(); ++f) {
            for (std::size_t i = 0; i < n; ++i) {
                out[f].push_back(widths[f] == 1 ? u8[f][i] : widths[f] == 2 ? u16[f][i] : u32[f][i]);
            }
        }
        return out;
    }
};

pass_result run_kernel(const random_case& c, candidate_kernel kernel) {
    typed_columns now{c.now, c.widths};
    typed_columns before{c.before, c.widths};
    std::vector<const void*> before_pointers(before.pointers.begin(), before.pointers.end());
    std::vector<const std::uint32_t*> residuals;
    std::vector<std::size_t> residual_counts;
    for (const auto& r : c.residuals) {
        residuals.push_back(r.data());
        residual_counts.push_back(r.size());
    }
    std::vector<std::uint32_t> written{7, 7, 7}; // stale content from an earlier call
    candidate_pass pass;
    pass.runs = c.runs;
    pass.written_before = c.written_before;
    pass.changed = c.changed;
    pass.change_masks = c.change_masks;
    pass.fields = c.widths.size();
    pass.now = now.pointers.data();
    pass.before = before_pointers.data();
    pass.residuals = residuals.data();
    pass.residual_counts = residual_counts.data();
    pass.value_masks = c.value_masks.data();
    pass.widths = c.widths.data();
    pass.weights = c.weights.data();
    pass.entity_weights = c.entity_weights.data();
    pass.ids = c.ids.data();
    pass.written = &written;
    pass.sum = 0;
    pass_result out;
    out.outcome = kernel(pass);
    out.written.assign(written.begin(), written.begin() + static_cast<std::ptrdiff_t>(pass.written_count));
    out.sum = pass.sum;
    out.now = now.values(c.widths, c.new_size);
    return out;
}

void expect_same(const pass_result& expected, const pass_result& got, const char* which, int round) {
    ASSERT_EQ(expected.outcome, got.outcome) << which << ", round " << round;
    if (expected.outcome != candidate_outcome::done) {
        return;
    }
    ASSERT_EQ(expected.written, got.written) << which << ", round " << round;
    ASSERT_EQ(expected.sum, got.sum) << which << ", round " << round;
    ASSERT_EQ(expected.now, got.now) << which << ", round " << round;
}

template<typename... T>
void check_shape(std::uint64_t seed, int rounds) {
    std::mt19937_64 rng{seed};
    const std::vector<unsigned> widths{static_cast<unsigned>(sizeof(T))...};
    int refused = 0;
    for (int round = 0; round < rounds; ++round) {
        const auto c = make_case(rng, widths, round % 4 == 3);
        const auto expected = model(c);
        refused += expected.outcome == candidate_outcome::changed_outside_runs ? 1 : 0;
        expect_same(expected, run_kernel(c, &typed_candidates<T...>), "typed", round);
        expect_same(expected, run_kernel(c, &dynamic_candidates), "dynamic", round);
    }
    EXPECT_GT(refused, 0) << "no case with a changed entry outside the runs";
}

TEST(CandidatePass, TypedAndDynamicKernelsAgreeWithTheModel) {
    check_shape<std::uint32_t, std::uint32_t, std::uint32_t, std::uint16_t>(1, 2000);
    check_shape<std::uint16_t>(2, 1000);
    check_shape<std::uint8_t, std::uint32_t, std::uint16_t, std::uint8_t, std::uint32_t>(3, 1000);
}

TEST(CandidatePass, TypedKernelRefusesOtherStorageTypes) {
    std::mt19937_64 rng{4};
    const auto c = make_case(rng, {4, 2}, false);
    EXPECT_EQ(run_kernel(c, &typed_candidates<std::uint32_t, std::uint32_t>).outcome,
              candidate_outcome::wrong_types);
    EXPECT_EQ(run_kernel(c, &typed_candidates<std::uint32_t>).outcome, candidate_outcome::wrong_types);
    EXPECT_EQ(run_kernel(c, &typed_candidates<std::uint32_t, std::uint16_t>).outcome,
              candidate_outcome::done);
}

} // namespace
} // namespace ecsnet::proto::candidates_test
