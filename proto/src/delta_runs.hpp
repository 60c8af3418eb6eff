#pragma once

// Internal to the codec: what the delta's encoder (delta_encode.cpp) and its applier (delta_apply.cpp) share.
// Id columns aligned into runs of equal ids, the references and residuals of a run computed a field at a
// time, and the positions whose rows changed found and compacted. The whole-column loops are in
// delta_runs.cpp, compiled for two CPU levels (cpu_clones.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ecsnet/proto/delta.hpp"

namespace ecsnet::proto::runs {

constexpr auto no_second = aligned_run::no_second;
constexpr std::uint32_t no_bound = 0xFFFFFFFFU;

template<typename F>
void with_values(const field_column& column, F&& f) {
    column.visit([&](const auto& values) { f(values.data()); });
}

// Advances `at` in a sorted list to the first element >= id; true if it equals id.
template<typename List>
inline bool seek(const List& list, std::size_t& at, std::uint32_t id) noexcept {
    while (at < list.size() && list[at] < id) {
        ++at;
    }
    return at < list.size() && list[at] == id;
}

// Length of the common prefix of a[0..n) and b[0..n), all below `bound` (a is sorted).
inline std::size_t common_prefix(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                 std::uint32_t bound) noexcept {
    std::size_t k = 0;
    while (k + 16 <= n && a[k + 15] < bound && std::memcmp(a + k, b + k, 16 * sizeof(std::uint32_t)) == 0) {
        k += 16;
    }
    while (k < n && a[k] == b[k] && a[k] < bound) {
        ++k;
    }
    return k;
}

// Aligns a target id column with a base one (both sorted): equal ids not in `breaks` (new occupants) form
// runs; the other target positions go to target_only, the other base positions to base_only.
template<typename Breaks>
void align(const std::vector<std::uint32_t>& tt, const std::vector<std::uint32_t>& tb, const Breaks& breaks,
           std::vector<aligned_run>& runs, std::vector<std::uint32_t>& target_only,
           std::vector<std::uint32_t>& base_only) {
    runs.clear();
    target_only.clear();
    base_only.clear();
    std::size_t i = 0;
    std::size_t j = 0;
    std::size_t br = 0;
    while (i < tt.size() && j < tb.size()) {
        const auto a = tt[i];
        const auto b = tb[j];
        if (a == b) {
            if (seek(breaks, br, a)) {
                target_only.push_back(static_cast<std::uint32_t>(i++));
                base_only.push_back(static_cast<std::uint32_t>(j++));
                continue;
            }
            const auto bound = br < breaks.size() ? breaks[br] : no_bound;
            const auto n =
                common_prefix(tt.data() + i, tb.data() + j, std::min(tt.size() - i, tb.size() - j), bound);
            runs.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), no_second,
                            static_cast<std::uint32_t>(n)});
            i += n;
            j += n;
        } else if (a < b) {
            target_only.push_back(static_cast<std::uint32_t>(i++));
        } else {
            base_only.push_back(static_cast<std::uint32_t>(j++));
        }
    }
    for (; i < tt.size(); ++i) {
        target_only.push_back(static_cast<std::uint32_t>(i));
    }
    for (; j < tb.size(); ++j) {
        base_only.push_back(static_cast<std::uint32_t>(j));
    }
}

// Splits runs so that each one is either wholly present in the second baseline's column `tp` (same ids,
// none in `fresh`: same occupants) or wholly absent from it.
inline void split_by_second(const std::vector<std::uint32_t>& tt, const std::vector<aligned_run>& in,
                            const std::vector<std::uint32_t>& tp, const std::vector<std::uint32_t>& fresh,
                            std::vector<aligned_run>& out) {
    out.clear();
    std::size_t k = 0;
    std::size_t fr = 0;
    const auto matched = [&](std::uint32_t id) {
        while (k < tp.size() && tp[k] < id) {
            ++k;
        }
        const bool is_fresh = seek(fresh, fr, id);
        return k < tp.size() && tp[k] == id && !is_fresh;
    };
    for (const auto& r : in) {
        std::uint32_t pos = 0;
        while (pos < r.length) {
            const auto start = pos;
            if (matched(tt[r.t + pos])) {
                const auto p_start = static_cast<std::uint32_t>(k);
                const auto bound = fr < fresh.size() ? fresh[fr] : no_bound;
                const auto n = common_prefix(tt.data() + r.t + pos, tp.data() + k,
                                             std::min<std::size_t>(r.length - pos, tp.size() - k), bound);
                pos += static_cast<std::uint32_t>(n);
                k += n;
                out.push_back({r.t + start, r.b + start, p_start, pos - start});
            } else {
                do {
                    ++pos;
                } while (pos < r.length && !matched(tt[r.t + pos]));
                out.push_back({r.t + start, r.b + start, no_second, pos - start});
            }
        }
    }
}

// Composes runs t -> b (`outer`) with runs b -> p (`inner`: their t side is positions in the middle state,
// their b side positions in the third): the outer runs, split where inner ones begin and end, with p set
// inside inner runs and no_second outside. What split_by_second finds by comparing id lists, in O(runs)
// when the middle state kept its continuing runs (state.hpp).
inline void compose_runs(const std::vector<aligned_run>& outer, const std::vector<aligned_run>& inner,
                         std::vector<aligned_run>& out) {
    out.clear();
    std::size_t j = 0;
    for (const auto& r : outer) {
        const std::uint32_t last = r.b + r.length;
        std::uint32_t b = r.b;
        while (b < last) {
            while (j < inner.size() && inner[j].t + inner[j].length <= b) {
                ++j;
            }
            std::uint32_t end = last;
            std::uint32_t p = no_second;
            if (j < inner.size() && inner[j].t <= b) {
                end = std::min(last, inner[j].t + inner[j].length);
                p = inner[j].b + (b - inner[j].t);
            } else if (j < inner.size()) {
                end = std::min(last, inner[j].t);
            }
            out.push_back({r.t + (b - r.b), b, p, end - b});
            b = end;
        }
    }
}

// The positions in [0, n) that no run covers, on the target side (t) or the base side (b): the created or
// destroyed entries of an alignment. Runs are in increasing order on both sides.
inline void outside_runs(const std::vector<aligned_run>& runs, std::size_t n, bool target_side,
                         std::vector<std::uint32_t>& out) {
    out.clear();
    std::uint32_t at = 0;
    for (const auto& r : runs) {
        const auto first = target_side ? r.t : r.b;
        for (; at < first; ++at) {
            out.push_back(at);
        }
        at = first + r.length;
    }
    for (; at < n; ++at) {
        out.push_back(at);
    }
}

// Whole-column loops, one overload per storage type (a column stores 1, 2 or 4 bytes a value, state.hpp),
// each with x86-64-v3 copies (delta_runs.cpp, cpu_clones.hpp), so that a caller templated on the storage
// type picks its copy by overload resolution.

// out = (2 base - second) mod 2^bits over a run: the usual extrapolation (one tick ahead of a one-tick span).
void doubled_run(const std::uint32_t* base, const std::uint32_t* second, std::uint32_t* out, std::uint32_t n,
                 std::uint32_t mask);
void doubled_run(const std::uint16_t* base, const std::uint16_t* second, std::uint16_t* out, std::uint32_t n,
                 std::uint32_t mask);
void doubled_run(const std::uint8_t* base, const std::uint8_t* second, std::uint8_t* out, std::uint32_t n,
                 std::uint32_t mask);
// out = (base + (base - second) x ahead) mod 2^bits over a run: `ahead` ticks past a one-tick span.
void extrapolated_run(const std::uint32_t* base, const std::uint32_t* second, std::uint32_t* out,
                      std::uint32_t n, std::uint32_t mask, std::uint32_t ahead);
void extrapolated_run(const std::uint16_t* base, const std::uint16_t* second, std::uint16_t* out,
                      std::uint32_t n, std::uint32_t mask, std::uint32_t ahead);
void extrapolated_run(const std::uint8_t* base, const std::uint8_t* second, std::uint8_t* out,
                      std::uint32_t n, std::uint32_t mask, std::uint32_t ahead);
// flag[k] = (first ? 0 : flag[k]) | (a[k] != b[k]) over a run: one field of a comparison of rows.
void mark_differences(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* flag, std::uint32_t n,
                      bool first);
void mark_differences(const std::uint16_t* a, const std::uint16_t* b, std::uint32_t* flag, std::uint32_t n,
                      bool first);
void mark_differences(const std::uint8_t* a, const std::uint8_t* b, std::uint32_t* flag, std::uint32_t n,
                      bool first);

// The reference of every entry of a run, for one field.
template<typename T>
inline void reference_run(const T* __restrict base, const T* __restrict second, T* __restrict out,
                          std::uint32_t n, bool extrapolated, extrapolation x, unsigned bits) {
    const auto mask = bit_mask(bits);
    if (!extrapolated) {
        std::memcpy(out, base, n * sizeof(T));
    } else if (x.span == 1 && x.ahead == 1) { // the usual case: 2b - p, no multiplication
        doubled_run(base, second, out, n, mask);
    } else if (x.span == 1) {
        extrapolated_run(base, second, out, n, mask, x.ahead);
    } else {
        for (std::uint32_t k = 0; k < n; ++k) {
            out[k] = static_cast<T>(extrapolate(base[k], second[k], bits, x));
        }
    }
}

// residual[k] = (target - reference) mod 2^bits over a run; masks[k] gets bit `bit` where it is not 0.
template<typename T>
inline void residual_run(const T* __restrict target, const T* __restrict base, const T* __restrict second,
                         std::uint32_t* __restrict residual, std::uint32_t* __restrict masks, std::uint32_t n,
                         bool extrapolated, extrapolation x, unsigned bits, unsigned bit, bool first) {
    const auto mask = bit_mask(bits);
    const auto keep = first ? 0U : 0xFFFFFFFFU;
    if (!extrapolated) {
        for (std::uint32_t k = 0; k < n; ++k) {
            const auto r = (std::uint32_t{target[k]} - std::uint32_t{base[k]}) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    } else if (x.span == 1 && x.ahead == 1) {
        for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint32_t b = base[k];
            const auto r = (std::uint32_t{target[k]} - (b + b - std::uint32_t{second[k]})) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    } else if (x.span == 1) {
        const std::uint32_t a = x.ahead;
        for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint32_t b = base[k];
            const auto r = (std::uint32_t{target[k]} - (b + (b - std::uint32_t{second[k]}) * a)) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    } else {
        for (std::uint32_t k = 0; k < n; ++k) {
            const auto r = (std::uint32_t{target[k]} - extrapolate(base[k], second[k], bits, x)) & mask;
            residual[k] = r;
            masks[k] = (masks[k] & keep) | (static_cast<std::uint32_t>(r != 0) << bit);
        }
    }
}

// Maps increasing baseline positions to new-column positions through the runs (sorted on both sides);
// false if one is in none (unless drop_missing: then it is left out).
template<typename Out>
bool map_through_runs(const std::vector<aligned_run>& runs, const std::vector<std::uint32_t>& base_positions,
                      Out& out, bool drop_missing) {
    out.resize(base_positions.size());
    auto* to = out.data();
    std::size_t count = 0;
    const auto* pos = base_positions.data();
    const auto* const end = pos + base_positions.size();
    for (const auto& r : runs) {
        if (pos == end) {
            break;
        }
        if (*pos < r.b) {
            if (!drop_missing) {
                return false;
            }
            while (pos != end && *pos < r.b) {
                ++pos;
            }
        }
        const std::uint32_t last = r.b + r.length;
        const std::uint32_t shift = r.t - r.b; // modulo 2^32
        for (; pos != end && *pos < last; ++pos) {
            to[count++] = *pos + shift;
        }
    }
    if (pos != end && !drop_missing) {
        return false;
    }
    out.resize(count);
    return true;
}

// Cuts sorted target positions (all inside runs) into one segment per run they fall in: within a segment,
// a position's baseline and second-baseline positions are the position plus a constant.
inline void segment_candidates(const std::vector<aligned_run>& runs,
                               const detail::column_vector<std::uint32_t>& at,
                               std::vector<candidate_segment>& out) {
    out.clear();
    const auto n = static_cast<std::uint32_t>(at.size());
    std::uint32_t k = 0;
    for (const auto& r : runs) {
        if (k == n) {
            break;
        }
        const std::uint32_t last = r.t + r.length;
        if (at[k] >= last) {
            continue;
        }
        const auto begin = k;
        while (k < n && at[k] < last) {
            ++k;
        }
        out.push_back({begin, k, r.b - r.t, r.p - r.t, r.p != no_second});
    }
}

// For one field over the candidate positions `at` (cut in segments): the residual of each, the non-zero
// ones written in order to `kept` (how many is returned), and bit `bit` of masks[k] set where it is not 0
// (the masks are started by field 0).
template<typename T>
std::size_t candidate_residuals(const T* target, const T* base, const T* second, const std::uint32_t* at,
                                const std::vector<candidate_segment>& segments, extrapolation x,
                                unsigned bits, unsigned bit, std::uint32_t* __restrict kept,
                                std::uint32_t* __restrict masks) {
    const auto mask = bit_mask(bits);
    std::size_t count = 0;
    const auto keep = [&](std::uint32_t k, std::uint32_t r) {
        const std::uint32_t nonzero = r != 0 ? 1U : 0U;
        kept[count] = r;
        count += nonzero;
        masks[k] = (bit == 0 ? 0U : masks[k]) | (nonzero << bit);
    };
    for (const auto& seg : segments) {
        if (second == nullptr || !seg.second) {
            for (auto k = seg.begin; k < seg.end; ++k) {
                const auto pos = at[k];
                keep(k, (std::uint32_t{target[pos]} - std::uint32_t{base[pos + seg.to_b]}) & mask);
            }
        } else if (x.ahead == 1 && x.span == 1) {
            for (auto k = seg.begin; k < seg.end; ++k) {
                const auto pos = at[k];
                const std::uint32_t b = base[pos + seg.to_b];
                keep(k,
                     (std::uint32_t{target[pos]} - (b + b - std::uint32_t{second[pos + seg.to_p]})) & mask);
            }
        } else {
            for (auto k = seg.begin; k < seg.end; ++k) {
                const auto pos = at[k];
                const auto reference = extrapolate(base[pos + seg.to_b], second[pos + seg.to_p], bits, x);
                keep(k, (std::uint32_t{target[pos]} - reference) & mask);
            }
        }
    }
    return count;
}

inline bool has_linear(const std::vector<field_info>& fields) noexcept {
    return std::any_of(fields.begin(), fields.end(),
                       [](const auto& f) { return f.predict == prediction::linear; });
}

// Appends to `out` the positions k in [first, first + n) where flags[k - first] != 0, in order; returns the
// new count (`out` has room for n more).
std::size_t compact_nonzero(const std::uint32_t* flags, std::uint32_t first, std::uint32_t n,
                            std::uint32_t* out, std::size_t count);

} // namespace ecsnet::proto::runs
