#pragma once

// Counts a program's allocations: allocation_counter.cpp replaces the global operator new (on malloc) and
// counts its calls while counting is on. Linked only into the programs that prove some code allocates
// nothing (ecsnet_add_tests_in_folder's COUNTING_ALLOCATIONS, and bench/transport_bench): the replacement
// is the whole program's, and every other test keeps the sanitizers' own operator new, which tells new
// from new[] and from malloc. The test programs also link allocation_counter_check.cpp, which checks before
// their tests that the replacement is in place.

#include <cstddef>

namespace ecsnet::test_support {

/// Starts (true) or stops (false) counting; the count is kept while stopped.
void count_allocations(bool on) noexcept;
/// Sets the count to zero.
void reset_allocation_count() noexcept;
/// The calls of operator new counted so far.
[[nodiscard]] std::size_t allocations_counted() noexcept;

} // namespace ecsnet::test_support
