// outgoing_batch and incoming_batch over two sockets on 127.0.0.1: every datagram queued arrives once,
// whole and in order, however the batches split them; what cannot be queued or sent is reported.

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

#include "ecsnet/transport/datagram_batch.hpp"
#include "loopback_socket_pair.hpp"

namespace datagram_batch_test {

namespace {

using asio::ip::udp;
using ecsnet::transport::incoming_batch;
using ecsnet::transport::max_datagram_bytes;
using ecsnet::transport::outgoing_batch;

using socket_pair = ecsnet::transport::testing::loopback_socket_pair;
using ecsnet::transport::testing::receive_all;

TEST(DatagramBatch, EveryDatagramQueuedArrivesOnceWholeAndInOrderAcrossManyBatches) {
    socket_pair sockets;
    const auto to = sockets.receiver.local_endpoint();
    std::mt19937 random{7};
    std::vector<std::vector<std::uint8_t>> sent;
    outgoing_batch batch;
    std::size_t lost = 0;
    for (std::size_t i = 0; i < 3 * outgoing_batch::capacity + 5; ++i) {
        std::vector<std::uint8_t> datagram(1 + random() % max_datagram_bytes);
        for (auto& b : datagram) {
            b = static_cast<std::uint8_t>(random());
        }
        datagram[0] = static_cast<std::uint8_t>(i);
        if (batch.full()) {
            lost += batch.flush(sockets.sender);
        }
        ASSERT_TRUE(batch.add(to, datagram));
        sent.push_back(std::move(datagram));
    }
    EXPECT_EQ(batch.size(), 5U);
    lost += batch.flush(sockets.sender);
    EXPECT_TRUE(batch.empty());
    EXPECT_EQ(lost, 0U);

    const auto got = receive_all(sockets.receiver, sent.size());
    EXPECT_EQ(got, sent);
}

TEST(DatagramBatch, ABatchTakesAtMostItsCapacityAndNoDatagramBiggerThanTheTransportsLargest) {
    socket_pair sockets;
    const auto to = sockets.receiver.local_endpoint();
    outgoing_batch batch;
    const std::vector<std::uint8_t> too_big(max_datagram_bytes + 1, 1);
    EXPECT_FALSE(batch.add(to, too_big));
    EXPECT_TRUE(batch.empty());
    const std::vector<std::uint8_t> small(8, 2);
    for (std::size_t i = 0; i < outgoing_batch::capacity; ++i) {
        ASSERT_TRUE(batch.add(to, small));
    }
    EXPECT_TRUE(batch.full());
    EXPECT_FALSE(batch.add(to, small));
    EXPECT_EQ(batch.flush(sockets.sender), 0U);
    EXPECT_EQ(receive_all(sockets.receiver, outgoing_batch::capacity).size(), outgoing_batch::capacity);
}

TEST(DatagramBatch, WhatAClosedSocketCannotSendIsCountedLostAndTheBatchEmptied) {
    socket_pair sockets;
    const auto to = sockets.receiver.local_endpoint();
    outgoing_batch batch;
    const std::vector<std::uint8_t> small(8, 3);
    ASSERT_TRUE(batch.add(to, small));
    ASSERT_TRUE(batch.add(to, small));
    sockets.sender.close();
    EXPECT_EQ(batch.flush(sockets.sender), 2U);
    EXPECT_TRUE(batch.empty());
    EXPECT_EQ(batch.flush(sockets.sender), 0U);
}

TEST(DatagramBatch, AheadIsToldEachNextSenderBeforeTheDatagramInFrontOfItIsHandled) {
    // Three senders take turns: each call of `ahead` must name the sender of the datagram handled next,
    // and come before the one in front of it, never after the batch's last.
    socket_pair sockets;
    asio::io_context& io = sockets.io;
    std::vector<udp::socket> senders;
    for (int i = 0; i < 3; ++i) {
        senders.emplace_back(io, udp::endpoint{asio::ip::make_address("127.0.0.1"), 0});
    }
    const auto to = sockets.receiver.local_endpoint();
    constexpr std::size_t count = 10;
    for (std::size_t i = 0; i < count; ++i) {
        const std::array<std::uint8_t, 1> datagram{static_cast<std::uint8_t>(i)};
        senders[i % senders.size()].send_to(asio::buffer(datagram), to);
    }
    incoming_batch incoming;
    std::vector<udp::endpoint> handled;
    std::vector<udp::endpoint> announced;     // by `ahead`, in order
    std::size_t announced_before_handled = 0; // announcements made when the announced one was next
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{1};
    while (handled.size() < count && std::chrono::steady_clock::now() < deadline) {
        const auto first = handled.size();
        const auto n = incoming.receive(
            sockets.receiver,
            [&](std::span<const std::uint8_t> datagram, const udp::endpoint& from) {
                ASSERT_EQ(datagram.size(), 1U);
                EXPECT_EQ(datagram[0], handled.size());
                handled.push_back(from);
            },
            [&](const udp::endpoint& next) {
                announced.push_back(next);
                announced_before_handled += handled.size() + 1 == announced.size() + first ? 1 : 0;
            });
        if (n == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds{1});
        } else {
            // One announcement per datagram of the batch but its first.
            EXPECT_EQ(announced.size(), handled.size() - first - 1);
            for (std::size_t k = 0; k < announced.size(); ++k) {
                EXPECT_EQ(announced[k], handled[first + k + 1]);
            }
            EXPECT_EQ(announced_before_handled, announced.size());
            announced.clear();
            announced_before_handled = 0;
        }
    }
    ASSERT_EQ(handled.size(), count);
    for (std::size_t i = 0; i < count; ++i) {
        EXPECT_EQ(handled[i], senders[i % senders.size()].local_endpoint());
    }
}

TEST(DatagramBatch, NothingWaitingReceivesNothing) {
    socket_pair sockets;
    incoming_batch incoming;
    std::size_t calls = 0;
    EXPECT_EQ(incoming.receive(sockets.receiver, [&](auto, const auto&) { ++calls; }), 0U);
    EXPECT_EQ(calls, 0U);
}

} // namespace

} // namespace datagram_batch_test
