#pragma once

// Hot loops compiled twice, for x86-64-v3 (AVX2, BMI1/2, LZCNT: the CPUs most servers and players have
// had since about 2015) and for the baseline x86-64, the right copy chosen once at load time (GCC's
// target_clones, an ifunc). The build still runs on any x86-64; where the CPU has them, loops get 8-lane
// vectors and bit-stream reads get single-instruction shifts, masks and bit counts. Instruction counts in
// bench/RESULTS.md are of the x86-64-v3 copies (valgrind runs the copy the CPU selects).
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define ECSNET_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ECSNET_CPU_CLONES
#endif
