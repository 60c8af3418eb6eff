// Linked into every test program that counts allocations (tests/CMakeLists.txt, COUNTING_ALLOCATIONS).

#include <new>

#include <gtest/gtest.h>

#include "allocation_counter.hpp"

namespace {

// Before its tests, every program linking this checks that its operator new is allocation_counter.cpp's:
// otherwise its "allocates nothing" tests would pass without counting anything.
class replacement_check final : public ::testing::Environment {
public:
    void SetUp() override {
        using namespace ecsnet::test_support;
        reset_allocation_count();
        count_allocations(true);
        void* probe = ::operator new(16); // a call, not a new-expression: never elided
        count_allocations(false);
        ::operator delete(probe);
        ASSERT_EQ(allocations_counted(), 1U) << "this program's operator new is not the counting one";
        reset_allocation_count();
    }
};

[[maybe_unused]] const auto* const registered = ::testing::AddGlobalTestEnvironment(new replacement_check);

} // namespace
