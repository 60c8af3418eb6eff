#pragma once

// The candidates pass of apply_delta (delta.hpp), for one component: the entries of the new state that may
// differ from the baseline's are the delta's changed entries and, when fields are extrapolated, the entries
// the baseline itself wrote (they keep moving with no residual). The pass walks the union of the two lists
// through the aligned runs and handles each candidate as a row: every field whose change-mask bit is set
// gets its residual added to the reference the new column already holds, the row's new position is kept
// in `written` if any field differs from the baseline (an extrapolation can cancel out), and its checksum
// terms are summed. No candidate list is written and read back, and there is no pass per field.
//
// A row needs the fields' storage types (1, 2 or 4 bytes). A schema instantiates the pass for each declared
// component with its types known at compile time (typed_candidates, through
// component_codec::candidates_kernel()); with a layout alone (a test's, or any caller without a schema),
// dynamic_candidates does the same walk reading each field's width at run time (a switch per field: the
// same pass with a run-time switch for every component cost 40% more instructions in that pass).
//
// Complexity: O(runs + candidates x fields).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "aligned_run.hpp"

namespace ecsnet::proto {

/// What the candidates pass of one component reads and writes (apply_delta fills it in).
struct candidate_pass {
    /// The runs of the new id column: target positions t, baseline positions b.
    std::span<const aligned_run> runs;
    /// Increasing baseline positions of the baseline's written entries (those in no run are dropped).
    std::span<const std::uint32_t> written_before;
    /// Increasing baseline positions of the changed entries, and their change masks (bit f: field f).
    std::span<const std::uint32_t> changed;
    std::span<const std::uint32_t> change_masks;
    /// Per field: the new column (holding the references), the baseline's column, the residuals in
    /// order and how many there are (one per change mask with the field's bit), the value mask, the
    /// storage bytes (1, 2 or 4) and the checksum weight.
    std::size_t fields{};
    void* const* now{};
    const void* const* before{};
    const std::uint32_t* const* residuals{};
    const std::size_t* residual_counts{};
    const std::uint32_t* value_masks{};
    const unsigned* widths{};
    const std::uint64_t* weights{};
    /// Entity weights by index (checksum.hpp) and the ids of the new column, by position.
    const std::uint64_t* entity_weights{};
    const std::uint32_t* ids{};
    /// Out: the new positions of the candidates that differ from the baseline, in order, in
    /// written[0, written_count) (grown as needed, never shrunk: a buffer kept from call to call is not
    /// zeroed again), and the sum of their checksum terms added to `sum`.
    std::vector<std::uint32_t>* written{};
    std::size_t written_count{};
    std::uint64_t sum{};
};

enum class candidate_outcome {
    done,
    /// A changed entry is in no run (its entity does not keep the component): the delta is inconsistent.
    changed_outside_runs,
    /// The kernel was instantiated for other storage types than the pass's columns have.
    wrong_types
};

using candidate_kernel = candidate_outcome (*)(candidate_pass& pass);

namespace detail {

// The walk shared by both kernels: Row(at, b, change, total) handles one candidate (new position `at`,
// baseline position `b`, change mask, 0 for an entry only in written_before), adds its checksum term
// factor to `total` and says whether it differs from the baseline. `row` is taken by value and copied
// into a local whose address does not escape, so that its column pointers and cursors can live in
// registers (through a reference or the by-value parameter's memory, every store into a column could
// alias them: the copy saved 0.5 M instructions on the standard scene's decode).
template<typename Row>
candidate_outcome walk_candidates(candidate_pass& pass, Row row) {
    auto handle = row;
    auto& written = *pass.written;
    if (const auto most = pass.written_before.size() + pass.changed.size(); written.size() < most) {
        written.resize(most);
    }
    auto* __restrict out = written.data();
    const auto* w = pass.entity_weights;
    const auto* id_of = pass.ids;
    std::size_t count = 0;
    std::uint64_t sum = 0;
    const auto visit = [&](std::uint32_t b, std::uint32_t at, std::uint32_t change) {
        std::uint64_t total = 0;
        const bool differs = handle(at, b, change, total);
        out[count] = at;
        count += differs ? 1 : 0;
        sum += w[id_of[at]] * total; // 0 for an entry that does not differ
    };
    // The changed entries drive the walk; the baseline's written ones mostly coincide with them (what moved
    // keeps moving), and the few others are visited on the way, with no change. Each list keeps its own run:
    // a written entry in no run is dropped, a changed one is an error.
    const auto* pa = pass.written_before.data();
    const auto* const ea = pa + pass.written_before.size();
    const auto* const runs_end = pass.runs.data() + pass.runs.size();
    const auto* ra = pass.runs.data();
    const auto visit_written_only = [&](std::uint32_t b) {
        while (ra != runs_end && ra->b + ra->length <= b) {
            ++ra;
        }
        if (ra != runs_end && b >= ra->b) {
            visit(b, b + (ra->t - ra->b), 0);
        }
    };
    const auto* rc = pass.runs.data();
    std::uint32_t run_begin = 0;
    std::uint32_t run_end = 0; // the current run of the changed entries: [run_begin, run_end)
    std::uint32_t shift = 0;
    const auto n = pass.changed.size();
    const auto* changed = pass.changed.data();
    const auto* masks = pass.change_masks.data();
    for (std::size_t k = 0; k < n; ++k) {
        const auto b = changed[k];
        while (pa != ea && *pa < b) {
            visit_written_only(*pa++);
        }
        pa += pa != ea && *pa == b ? 1 : 0;
        if (b >= run_end) {
            while (rc != runs_end && rc->b + rc->length <= b) {
                ++rc;
            }
            if (rc == runs_end || b < rc->b) {
                return candidate_outcome::changed_outside_runs;
            }
            run_begin = rc->b;
            run_end = rc->b + rc->length;
            shift = rc->t - rc->b; // modulo 2^32
        } else if (b < run_begin) {
            return candidate_outcome::changed_outside_runs; // between two runs
        }
        visit(b, b + shift, masks[k]);
    }
    while (pa != ea) {
        visit_written_only(*pa++);
    }
    pass.written_count = count;
    pass.sum += sum;
    return candidate_outcome::done;
}

// One field of one row: value = reference (+ residual), difference with the baseline into differs/total.
// `change` is the row's change bit for the field (0 or 1). A field whose residuals are neither rare nor
// nearly everywhere (`dense`: x and y of the moving entities, changed in about 2 rows of 3) is added
// without a branch on that bit, which would be mispredicted about one row in three; the others branch.
template<typename T>
inline void candidate_field(T* __restrict now, const T* __restrict before, const std::uint32_t*& next,
                            const std::uint32_t* end, bool dense, std::uint32_t mask, std::uint64_t weight,
                            std::uint32_t change, std::uint32_t at, std::uint32_t b, std::uint64_t& differs,
                            std::uint64_t& total) noexcept {
    std::uint32_t value = now[at];
    if (dense) {
        const std::uint32_t r = next != end ? *next : 0U; // read ahead, never past the end
        value = (value + (r & (0U - change))) & mask;
        now[at] = static_cast<T>(value);
        next += change;
    } else if (change != 0) {
        value = (value + *next++) & mask;
        now[at] = static_cast<T>(value);
    }
    const auto d = std::uint64_t{value} - std::uint64_t{before[b]};
    differs |= d;
    total += d * weight;
}

template<typename... T, std::size_t... I>
candidate_outcome typed_candidates_impl(candidate_pass& pass, std::index_sequence<I...>) {
    const std::tuple<T*...> now{static_cast<T*>(pass.now[I])...};
    const std::tuple<const T*...> before{static_cast<const T*>(pass.before[I])...};
    std::array<const std::uint32_t*, sizeof...(T)> next{pass.residuals[I]...};
    const std::array<const std::uint32_t*, sizeof...(T)> end{
        (pass.residuals[I] + pass.residual_counts[I])...};
    const std::array<std::uint32_t, sizeof...(T)> mask{pass.value_masks[I]...};
    const std::array<std::uint64_t, sizeof...(T)> weight{pass.weights[I]...};
    // Dense: residuals in more than 1/8 and fewer than 7/8 of the changed rows.
    const auto rows = pass.changed.size();
    const std::array<bool, sizeof...(T)> dense{
        (8 * pass.residual_counts[I] > rows && 8 * pass.residual_counts[I] < 7 * rows)...};
    return walk_candidates(pass, [now, before, next, end, dense, mask,
                                  weight](std::uint32_t at, std::uint32_t b, std::uint32_t change,
                                          std::uint64_t& total) mutable {
        std::uint64_t differs = 0;
        (candidate_field(std::get<I>(now), std::get<I>(before), next[I], end[I], dense[I], mask[I], weight[I],
                         (change >> I) & 1U, at, b, differs, total),
         ...);
        return differs != 0;
    });
}

} // namespace detail

/// The candidates pass with the fields' storage types T... known at compile time.
template<typename... T>
candidate_outcome typed_candidates(candidate_pass& pass) {
    if (pass.fields != sizeof...(T)) {
        return candidate_outcome::wrong_types;
    }
    std::size_t f = 0;
    if (!((pass.widths[f++] == sizeof(T)) && ...)) {
        return candidate_outcome::wrong_types;
    }
    return detail::typed_candidates_impl<T...>(pass, std::index_sequence_for<T...>{});
}

/// The candidates pass for any layout: each field's storage width is read at run time.
candidate_outcome dynamic_candidates(candidate_pass& pass);

} // namespace ecsnet::proto
