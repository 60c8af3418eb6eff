// Delegates, signals, sinks and connections.

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/delegate.hpp>
#include <ecsnet/ecs/sigh.hpp>

namespace sigh_test {

namespace {

int twice(int value) {
    return value * 2;
}

struct Counter {
    int total = 0;
    void add(int value) { total += value; }
    int offset(int value) const { return total + value; }
};

void add_to(Counter& counter, int value) {
    counter.total += value * 10;
}

TEST(Delegate, BindsFreeAndMemberFunctions) {
    auto free = ecsnet::delegate<int(int)>::create<&twice>();
    EXPECT_EQ(free(21), 42);
    Counter counter{5};
    auto member = ecsnet::delegate<int(int)>::create<&Counter::offset>(counter);
    EXPECT_EQ(member(1), 6);
    EXPECT_EQ(member.payload(), &counter);
    EXPECT_FALSE(ecsnet::delegate<int(int)>{});
}

TEST(Sigh, PublishesToListenersInConnectionOrder) {
    ecsnet::sigh<void(int)> signal;
    ecsnet::sink sink{signal};
    Counter counter;
    std::vector<int> order;
    sink.connect<&Counter::add>(counter);
    sink.connect<&add_to>(counter);
    sink.connect([&order](int v) { order.push_back(v); });
    signal.publish(2);
    EXPECT_EQ(counter.total, 22);
    EXPECT_EQ(order, std::vector<int>{2});
    EXPECT_EQ(signal.size(), 3U);
}

TEST(Sigh, ConnectionsDisconnectOnceAndScopedOnesOnDestruction) {
    ecsnet::sigh<void(int)> signal;
    ecsnet::sink sink{signal};
    int calls = 0;
    auto conn = sink.connect([&calls](int) { ++calls; });
    {
        ecsnet::scoped_connection scoped = sink.connect([&calls](int) { calls += 100; });
        signal.publish(0);
        EXPECT_EQ(calls, 101);
    }
    signal.publish(0);
    EXPECT_EQ(calls, 102);
    conn.release();
    conn.release(); // harmless
    signal.publish(0);
    EXPECT_EQ(calls, 102);
    EXPECT_TRUE(signal.empty());
}

TEST(Sigh, OwnedCallablesAreDestroyedWhenDisconnected) {
    auto token = std::make_shared<int>(0);
    ecsnet::sigh<void()> signal;
    auto conn = ecsnet::sink{signal}.connect([token] {});
    EXPECT_EQ(token.use_count(), 2);
    conn.release();
    EXPECT_EQ(token.use_count(), 1);
}

TEST(Sigh, ListenersMayConnectAndDisconnectWhilePublishing) {
    ecsnet::sigh<void(int)> signal;
    ecsnet::sink sink{signal};
    std::vector<int> seen;
    ecsnet::connection second;
    sink.connect([&](int v) {
        seen.push_back(v);
        second.release(); // the next listener is skipped from now on
        if (v == 1) {
            sink.connect([&seen](int w) { seen.push_back(100 + w); }); // called in this publish too
        }
    });
    second = sink.connect([&seen](int v) { seen.push_back(-v); });
    signal.publish(1);
    EXPECT_EQ(seen, (std::vector<int>{1, 101}));
    EXPECT_EQ(signal.size(), 2U); // the disconnected slot was compacted away
}

} // namespace

} // namespace sigh_test
