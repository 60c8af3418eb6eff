#pragma once

// This thread's CPU time in seconds: what the benchmarks that compare a subject with the tick's own work
// measure, since the machines are shared and wall time counts the other tenants.

#include <ctime>

namespace ecsnet::bench {

inline double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// The whole process's CPU time in seconds (every thread): what work spread over workers costs.
inline double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace ecsnet::bench
