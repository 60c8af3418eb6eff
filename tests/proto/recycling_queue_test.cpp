// recycling_queue against std::deque (a randomized differential test), and what it is for: a popped
// element's object, buffers and all, is what a later push_back() hands back.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/proto/recycling_queue.hpp"

namespace recycling_queue_test {

namespace {

using ecsnet::proto::recycling_queue;
using item = std::vector<std::uint32_t>;

void expect_same(const recycling_queue<item>& queue, const std::deque<item>& model, int step) {
    ASSERT_EQ(queue.size(), model.size()) << "step " << step;
    ASSERT_EQ(queue.empty(), model.empty()) << "step " << step;
    ASSERT_GE(queue.capacity(), queue.size()) << "step " << step;
    for (std::size_t i = 0; i < model.size(); ++i) {
        ASSERT_EQ(queue[i], model[i]) << "step " << step << ", element " << i;
    }
    if (!model.empty()) {
        ASSERT_EQ(queue.front(), model.front()) << "step " << step;
        ASSERT_EQ(queue.back(), model.back()) << "step " << step;
    }
}

TEST(RecyclingQueue, BehavesAsADequeUnderRandomOperations) {
    std::mt19937 random{17};
    for (int run = 0; run < 20; ++run) {
        recycling_queue<item> queue;
        std::deque<item> model;
        std::uint32_t next = 0;
        for (int step = 0; step < 2'000; ++step) {
            const auto op = random() % 100;
            if (op < 45) { // push, with contents of a random length (the slot may hold an older element's)
                item value(random() % 6);
                for (auto& v : value) {
                    v = next++;
                }
                queue.push_back() = value;
                model.push_back(value);
            } else if (op < 80) {
                if (!model.empty()) {
                    queue.pop_front();
                    model.pop_front();
                }
            } else if (op < 85) {
                if (!model.empty()) {
                    queue.pop_back();
                    model.pop_back();
                }
            } else if (op < 88) {
                queue.clear();
                model.clear();
            } else if (op < 93) {
                const std::size_t keep = random() % 8;
                queue.release_spare(keep);
                ASSERT_LE(queue.capacity(), std::max(model.size(), keep)) << "step " << step;
            } else if (op < 97) {
                queue.reserve(model.size() + random() % 5);
            } else if (!model.empty()) { // change an element in place
                const auto i = random() % model.size();
                queue[i].push_back(next);
                model[i].push_back(next++);
            }
            expect_same(queue, model, step);
        }
    }
}

TEST(RecyclingQueue, APushReusesTheObjectAPopLeftInItsSlot) {
    recycling_queue<item> queue;
    queue.reserve(2);
    ASSERT_EQ(queue.capacity(), 2U);
    queue.push_back().assign(1'000, 7);
    queue.push_back().assign(1'000, 8);
    const auto* first_buffer = queue.front().data();
    queue.pop_front();
    queue.pop_front();
    const auto& again = queue.push_back(); // the first slot's turn again, as the ring wraps
    EXPECT_EQ(queue.capacity(), 2U) << "no slot was added: there were free ones";
    EXPECT_EQ(again.data(), first_buffer) << "the buffer of the element popped from that slot";
    EXPECT_EQ(again.size(), 1'000U) << "handed back as the pop left it, for the caller to refill";
}

TEST(RecyclingQueue, ReferencesStayValidWhilePushesFitTheReservation) {
    recycling_queue<item> queue;
    queue.push_back().assign(3, 1);
    queue.reserve(10);
    const auto* first = &queue.front();
    for (int i = 0; i < 9; ++i) {
        queue.push_back();
    }
    EXPECT_EQ(&queue.front(), first);
    EXPECT_EQ(queue.front(), item(3, 1));
}

TEST(RecyclingQueue, ReleasingSpareSlotsKeepsTheElementsInOrder) {
    recycling_queue<item> queue;
    for (std::uint32_t i = 0; i < 40; ++i) {
        queue.push_back() = item{i};
    }
    for (int i = 0; i < 37; ++i) {
        queue.pop_front();
    }
    ASSERT_GE(queue.capacity(), 40U);
    queue.release_spare(0);
    EXPECT_EQ(queue.capacity(), 3U);
    ASSERT_EQ(queue.size(), 3U);
    EXPECT_EQ(queue[0], item{37});
    EXPECT_EQ(queue[2], item{39});
    queue.release_spare(8); // never grows
    EXPECT_EQ(queue.capacity(), 3U);
}

} // namespace

} // namespace recycling_queue_test
