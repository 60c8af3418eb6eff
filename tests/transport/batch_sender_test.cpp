// batch_sender over two sockets on 127.0.0.1: every datagram submitted arrives once, whole and in the order
// submitted, while a second thread receives; the batches are bounded and recycled; stop() sends what is
// queued, and what the socket refuses is counted lost.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

#include "ecsnet/transport/batch_sender.hpp"
#include "loopback_socket_pair.hpp"

namespace batch_sender_test {

namespace {

using asio::ip::udp;
using ecsnet::transport::batch_sender;
using ecsnet::transport::outgoing_batch;

using socket_pair = ecsnet::transport::testing::loopback_socket_pair;

// Receives on a thread of its own (while the test sends) until `count` datagrams came or five seconds
// passed.
class receiver_thread {
public:
    receiver_thread(udp::socket& socket, std::size_t count)
        : thread_{[this, &socket, count] {
            got_ = ecsnet::transport::testing::receive_all(socket, count, std::chrono::seconds{5});
        }} {}

    /// Waits for the thread, then what it received.
    std::vector<std::vector<std::uint8_t>> join() {
        thread_.join();
        return std::move(got_);
    }

private:
    std::vector<std::vector<std::uint8_t>> got_;
    std::thread thread_;
};

std::vector<std::uint8_t> random_datagram(std::mt19937& random, std::size_t number) {
    std::vector<std::uint8_t> datagram(2 + random() % 600);
    for (auto& b : datagram) {
        b = static_cast<std::uint8_t>(random());
    }
    datagram[0] = static_cast<std::uint8_t>(number);
    datagram[1] = static_cast<std::uint8_t>(number >> 8);
    return datagram;
}

TEST(BatchSender, EveryDatagramSubmittedArrivesOnceWholeAndInOrder) {
    socket_pair sockets{4 << 20};
    const auto to = sockets.receiver.local_endpoint();
    std::mt19937 random{11};
    constexpr std::size_t batches = 40;
    std::vector<std::vector<std::uint8_t>> sent;
    for (std::size_t b = 0; b < batches; ++b) {
        const std::size_t count = 1 + random() % outgoing_batch::capacity;
        for (std::size_t i = 0; i < count; ++i) {
            sent.push_back(random_datagram(random, sent.size()));
        }
    }
    receiver_thread receiver{sockets.receiver, sent.size()};
    batch_sender sender{sockets.sender.native_handle()};
    std::size_t next = 0;
    while (next < sent.size()) {
        auto batch = sender.take_empty();
        if (!batch) { // every batch in flight: wait for the thread rather than send from here
            std::this_thread::sleep_for(std::chrono::microseconds{100});
            continue;
        }
        ASSERT_TRUE(batch->empty());
        const std::size_t count = std::min(1 + random() % outgoing_batch::capacity, sent.size() - next);
        for (std::size_t i = 0; i < count; ++i) {
            ASSERT_TRUE(batch->add(to, sent[next++]));
        }
        sender.submit(std::move(batch));
        if (random() % 4 == 0) {
            std::this_thread::sleep_for(std::chrono::microseconds{random() % 300});
        }
    }
    sender.stop();
    EXPECT_EQ(sender.take_lost(), 0U);
    EXPECT_EQ(sender.datagrams_sent(), sent.size());
    EXPECT_EQ(receiver.join(), sent);
}

TEST(BatchSender, AtMostMaxBatchesExistAndThoseSentAreRecycled) {
    socket_pair sockets{4 << 20};
    const auto to = sockets.receiver.local_endpoint();
    receiver_thread receiver{sockets.receiver, 3};
    batch_sender sender{sockets.sender.native_handle(), 3};
    std::vector<std::unique_ptr<outgoing_batch>> taken;
    for (int i = 0; i < 3; ++i) {
        taken.push_back(sender.take_empty());
        ASSERT_NE(taken.back(), nullptr);
    }
    EXPECT_EQ(sender.take_empty(), nullptr); // all three in the owner's hands
    const std::vector<std::uint8_t> small(8, 5);
    for (auto& batch : taken) {
        ASSERT_TRUE(batch->add(to, small));
        sender.submit(std::move(batch));
    }
    sender.stop(); // sends all three, and keeps them for reuse
    EXPECT_EQ(receiver.join().size(), 3U);
    std::vector<outgoing_batch*> again;
    for (int i = 0; i < 3; ++i) {
        auto batch = sender.take_empty();
        ASSERT_NE(batch, nullptr);
        EXPECT_TRUE(batch->empty());
        again.push_back(batch.release());
    }
    EXPECT_EQ(sender.take_empty(), nullptr);
    for (auto* batch : again) {
        sender.submit(std::unique_ptr<outgoing_batch>{batch}); // empty: simply recycled
    }
    EXPECT_NE(sender.take_empty(), nullptr);
}

TEST(BatchSender, AfterStopASubmittedBatchIsSentFromTheCaller) {
    socket_pair sockets{4 << 20};
    const auto to = sockets.receiver.local_endpoint();
    batch_sender sender{sockets.sender.native_handle()};
    sender.stop();
    sender.stop(); // idempotent
    auto batch = sender.take_empty();
    ASSERT_NE(batch, nullptr);
    const std::vector<std::uint8_t> small(8, 6);
    ASSERT_TRUE(batch->add(to, small));
    ASSERT_TRUE(batch->add(to, small));
    sender.submit(std::move(batch));
    receiver_thread receiver{sockets.receiver, 2};
    EXPECT_EQ(receiver.join().size(), 2U);
    EXPECT_EQ(sender.datagrams_sent(), 0U); // not by the thread
    EXPECT_EQ(sender.take_lost(), 0U);
}

TEST(BatchSender, WhatTheSocketRefusesIsCountedLostAndTheRestStillGoes) {
    socket_pair sockets{4 << 20};
    const auto to = sockets.receiver.local_endpoint();
    // An IPv6 destination on an IPv4 socket: sendmmsg refuses that datagram alone.
    const udp::endpoint unreachable{asio::ip::make_address("::1"), to.port()};
    receiver_thread receiver{sockets.receiver, 4};
    batch_sender sender{sockets.sender.native_handle()};
    auto batch = sender.take_empty();
    ASSERT_NE(batch, nullptr);
    const std::vector<std::uint8_t> small(8, 7);
    for (const auto& destination : {to, unreachable, to, unreachable, to, to}) {
        ASSERT_TRUE(batch->add(destination, small));
    }
    sender.submit(std::move(batch));
    sender.stop();
    EXPECT_EQ(sender.take_lost(), 2U);
    EXPECT_EQ(sender.take_lost(), 0U); // taken once
    EXPECT_EQ(receiver.join().size(), 4U);
}

} // namespace

} // namespace batch_sender_test
