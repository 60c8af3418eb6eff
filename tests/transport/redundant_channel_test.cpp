// The redundant channel's two sides: the window (oldest dropped and counted), acks retiring every message
// up to the newest carried, and the receiver's once-in-order delivery with gaps counted.

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ecsnet/transport/redundant_receiver.hpp"
#include "ecsnet/transport/redundant_sender.hpp"

namespace ecsnet::transport::redundant_channel_test {
namespace {

std::vector<std::byte> msg(int fill, std::size_t n = 4) {
    return std::vector<std::byte>(n, static_cast<std::byte>(fill));
}

TEST(RedundantSender, KeepsTheLastWindowAndCountsWhatFallsOut) {
    redundant_sender sender{3, 16};
    std::uint64_t overflow = 0;
    EXPECT_EQ(sender.push(msg(0, 17), overflow, clock::time_point{}), send_status::too_big);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(sender.push(msg(i), overflow, clock::time_point{}), send_status::queued);
    }
    EXPECT_EQ(overflow, 2U);
    EXPECT_EQ(sender.pending(), 3U);
    EXPECT_EQ(sender.first_id(), 2);
    EXPECT_EQ(std::vector<std::byte>(sender.message(0).begin(), sender.message(0).end()), msg(2));
    EXPECT_TRUE(sender.has_unsent());
    sender.mark_sent(3, clock::time_point{});
    EXPECT_FALSE(sender.has_unsent());
    sender.on_acked(3); // a packet carrying ids up to 3 was acked: 2 and 3 retire
    EXPECT_EQ(sender.pending(), 1U);
    EXPECT_EQ(sender.first_id(), 4);
    sender.on_acked(1); // older: nothing
    EXPECT_EQ(sender.pending(), 1U);
    sender.push(msg(5), overflow, clock::time_point{});
    EXPECT_TRUE(sender.has_unsent());
}

// While the stream flows the next push carries the pending messages again: the timer waits for one and a
// half of the usual interval between pushes (a long pause counting as 250 ms), never less than the link's.
TEST(RedundantSender, TheResendTimeoutWaitsForTheStreamsNextPush) {
    using namespace std::chrono_literals;
    redundant_sender sender{8, 16};
    std::uint64_t overflow = 0;
    clock::time_point now{std::chrono::hours{1}};
    EXPECT_EQ(sender.resend_timeout(20ms), 20ms); // no interval known yet
    for (int i = 0; i < 40; ++i) {
        sender.push(msg(i), overflow, now);
        now += 33ms;
        sender.on_acked(sender.first_id()); // keep the window from filling
    }
    EXPECT_EQ(sender.push_interval(), 33ms);
    EXPECT_EQ(sender.resend_timeout(20ms), 49500us);
    EXPECT_EQ(sender.resend_timeout(80ms), 80ms);
    // A pause of a minute counts as 250 ms.
    now += std::chrono::minutes{1};
    sender.push(msg(1), overflow, now);
    EXPECT_EQ(sender.push_interval(), 60125us); // (7 x 33 + 250) / 8 ms
}

TEST(RedundantReceiver, DeliversEachIdOnceInOrderAndCountsGaps) {
    // Runs as bodies carry them: [0..2], [1..3] (repeats), [6..7] (4 and 5 fell out of the sender's window).
    std::array<std::byte, 64> buffer{};
    const auto run_of = [&](sequence_t first, int count) {
        byte_writer out{buffer};
        run_writer run;
        run.begin(out, chunk_type::redundant, first);
        for (int i = 0; i < count; ++i) {
            const auto m = msg(first + i);
            run.add(out, m);
        }
        run.finish(out);
        byte_reader in{out.written()};
        chunk c;
        EXPECT_EQ(read_chunk(in, chunk_limits{1175, 1000, 16, 16}, c), receive_error::none);
        return c.run;
    };
    redundant_receiver receiver;
    std::vector<int> got;
    std::size_t delivered = 0;
    std::array<std::uint64_t, channel_count> per_channel{};
    const deliver_function fn = [&](channel ch, std::span<const std::byte> m) {
        EXPECT_EQ(ch, channel::redundant);
        got.push_back(static_cast<int>(m[0]));
    };
    const delivery out{fn, delivered, per_channel};
    std::uint64_t skipped = 0;
    receiver.accept(run_of(0, 3), out, skipped);
    receiver.accept(run_of(1, 3), out, skipped);
    receiver.accept(run_of(6, 2), out, skipped);
    receiver.accept(run_of(2, 3), out, skipped); // late: all older than 7
    EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3, 6, 7}));
    EXPECT_EQ(skipped, 2U);
    EXPECT_EQ(receiver.next_expected(), 8);
    EXPECT_EQ(per_channel[static_cast<std::size_t>(channel::redundant)], 6U);
}

} // namespace
} // namespace ecsnet::transport::redundant_channel_test
