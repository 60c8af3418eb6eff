#include "delta_runs.hpp"

#include <algorithm>
#include <bit>

#include "cpu_clones.hpp"

namespace ecsnet::proto {

namespace runs {

// Whole-column loops. Each is compiled once per storage type (a column stores 1, 2 or 4 bytes a value,
// state.hpp) as an overload with x86-64-v3 copies (cpu_clones.hpp: 8 lanes instead of 4 where the CPU has
// AVX2), so that a caller templated on the storage type picks its copy by overload resolution.

// out = (2 base - second) mod 2^bits over a run: the usual extrapolation (one tick ahead of a one-tick
// span), over whole columns every tick.
template<typename T>
inline void doubled_loop(const T* __restrict base, const T* __restrict second, T* __restrict out,
                         std::uint32_t n, std::uint32_t mask) {
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t b = base[k];
        out[k] = static_cast<T>((b + b - std::uint32_t{second[k]}) & mask);
    }
}

// out = (base + (base - second) x ahead) mod 2^bits over a run: extrapolation `ahead` ticks past a one-tick
// span (a client whose acks lag), over whole columns.
template<typename T>
inline void extrapolated_loop(const T* __restrict base, const T* __restrict second, T* __restrict out,
                              std::uint32_t n, std::uint32_t mask, std::uint32_t ahead) {
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t b = base[k];
        out[k] = static_cast<T>((b + (b - std::uint32_t{second[k]}) * ahead) & mask);
    }
}

// flag[k] = (first ? 0 : flag[k]) | (a[k] != b[k]) over a run: one field of a comparison of rows, the
// fields in turn.
template<typename T>
inline void difference_loop(const T* __restrict a, const T* __restrict b, std::uint32_t* __restrict flag,
                            std::uint32_t n, bool first) {
    if (first) {
        for (std::uint32_t k = 0; k < n; ++k) {
            flag[k] = a[k] != b[k] ? 1U : 0U;
        }
    } else {
        for (std::uint32_t k = 0; k < n; ++k) {
            flag[k] |= a[k] != b[k] ? 1U : 0U;
        }
    }
}

ECSNET_CPU_CLONES void doubled_run(const std::uint32_t* base, const std::uint32_t* second, std::uint32_t* out,
                                   std::uint32_t n, std::uint32_t mask) {
    doubled_loop(base, second, out, n, mask);
}
ECSNET_CPU_CLONES void doubled_run(const std::uint16_t* base, const std::uint16_t* second, std::uint16_t* out,
                                   std::uint32_t n, std::uint32_t mask) {
    doubled_loop(base, second, out, n, mask);
}
ECSNET_CPU_CLONES void doubled_run(const std::uint8_t* base, const std::uint8_t* second, std::uint8_t* out,
                                   std::uint32_t n, std::uint32_t mask) {
    doubled_loop(base, second, out, n, mask);
}
ECSNET_CPU_CLONES void extrapolated_run(const std::uint32_t* base, const std::uint32_t* second,
                                        std::uint32_t* out, std::uint32_t n, std::uint32_t mask,
                                        std::uint32_t ahead) {
    extrapolated_loop(base, second, out, n, mask, ahead);
}
ECSNET_CPU_CLONES void extrapolated_run(const std::uint16_t* base, const std::uint16_t* second,
                                        std::uint16_t* out, std::uint32_t n, std::uint32_t mask,
                                        std::uint32_t ahead) {
    extrapolated_loop(base, second, out, n, mask, ahead);
}
ECSNET_CPU_CLONES void extrapolated_run(const std::uint8_t* base, const std::uint8_t* second,
                                        std::uint8_t* out, std::uint32_t n, std::uint32_t mask,
                                        std::uint32_t ahead) {
    extrapolated_loop(base, second, out, n, mask, ahead);
}
ECSNET_CPU_CLONES void mark_differences(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* flag,
                                        std::uint32_t n, bool first) {
    difference_loop(a, b, flag, n, first);
}
ECSNET_CPU_CLONES void mark_differences(const std::uint16_t* a, const std::uint16_t* b, std::uint32_t* flag,
                                        std::uint32_t n, bool first) {
    difference_loop(a, b, flag, n, first);
}
ECSNET_CPU_CLONES void mark_differences(const std::uint8_t* a, const std::uint8_t* b, std::uint32_t* flag,
                                        std::uint32_t n, bool first) {
    difference_loop(a, b, flag, n, first);
}

// Appends to `out` the positions k in [first, first + n) where flags[k - first] != 0, in order.
ECSNET_CPU_CLONES std::size_t compact_nonzero(const std::uint32_t* flags, std::uint32_t first,
                                              std::uint32_t n, std::uint32_t* out, std::size_t count) {
    // 32 flags become the bits of a word (vector compares where the CPU has them), then each set bit is
    // one store: the cost follows the entries kept, not the entries scanned.
    std::uint32_t k = 0;
    for (; k + 32 <= n; k += 32) {
        std::uint32_t bits = 0;
        for (std::uint32_t j = 0; j < 32; ++j) {
            bits |= (flags[k + j] != 0 ? 1U : 0U) << j;
        }
        while (bits != 0) {
            out[count++] = first + k + static_cast<std::uint32_t>(std::countr_zero(bits));
            bits &= bits - 1;
        }
    }
    for (; k < n; ++k) {
        out[count] = first + k;
        count += flags[k] != 0 ? 1U : 0U;
    }
    return count;
}

} // namespace runs

using runs::align;
using runs::compact_nonzero;
using runs::mark_differences;

void align_ids(const std::vector<std::uint32_t>& target, const std::vector<std::uint32_t>& base,
               const std::vector<std::uint32_t>& breaks, std::vector<aligned_run>& runs,
               std::vector<std::uint32_t>& target_only, std::vector<std::uint32_t>& base_only) {
    align(target, base, breaks, runs, target_only, base_only);
}

void changed_positions(const std::vector<field_column>& now, const std::vector<field_column>& before,
                       const std::vector<aligned_run>& runs, detail::column_vector<std::uint32_t>& flags,
                       std::vector<std::uint32_t>& out) {
    std::size_t n = 0;
    for (const auto& r : runs) {
        n = std::max<std::size_t>(n, r.t + r.length);
    }
    flags.resize(n);
    for (std::size_t f = 0; f < now.size(); ++f) {
        now[f].visit([&](const auto& values) {
            using T = typename std::decay_t<decltype(values)>::value_type;
            const T* old_values = static_cast<const T*>(before[f].raw());
            for (const auto& r : runs) {
                mark_differences(values.data() + r.t, old_values + r.b, flags.data() + r.t, r.length, f == 0);
            }
        });
    }
    // Compact into scratch, then copy out (keeping out's capacity: a caller that keeps the list and wants
    // no spare capacity empties and shrinks it first).
    thread_local detail::column_vector<std::uint32_t> positions;
    positions.resize(n + 8);
    std::size_t count = 0;
    for (const auto& r : runs) {
        count = compact_nonzero(flags.data() + r.t, r.t, r.length, positions.data(), count);
    }
    out.assign(positions.begin(), positions.begin() + static_cast<std::ptrdiff_t>(count));
}

} // namespace ecsnet::proto
