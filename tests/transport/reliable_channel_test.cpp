// The reliable channel's two sides on their own: send limits, acks, timers and losses on the send side;
// ordering, duplicates, windows, the held-bytes budget, blocks and fragment acks on the receive side.

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ecsnet/transport/reliable_receiver.hpp"
#include "ecsnet/transport/reliable_sender.hpp"

namespace ecsnet::transport::reliable_channel_test {
namespace {

using namespace std::chrono_literals;

const clock::time_point t0{std::chrono::hours{1}};

std::vector<std::byte> msg(std::size_t n, int fill) {
    return std::vector<std::byte>(n, static_cast<std::byte>(fill));
}

reliable_sender_config small_config() {
    reliable_sender_config c;
    c.max_queue_bytes = 10000;
    c.window = 8;
    c.max_message_bytes = 9000;
    c.max_whole_bytes = 1000;
    c.fragment_bytes = 1000;
    return c;
}

TEST(ReliableSender, RefusesWhatIsTooBigOrDoesNotFit) {
    reliable_sender sender{small_config()};
    EXPECT_EQ(sender.push(msg(9001, 1), t0), send_status::too_big);
    EXPECT_EQ(sender.push(msg(9000, 1), t0), send_status::queued);     // a block
    EXPECT_EQ(sender.push(msg(1001, 1), t0), send_status::queue_full); // 10,001 bytes
    EXPECT_EQ(sender.push(msg(1000, 1), t0), send_status::queued);
    EXPECT_EQ(sender.queued_bytes(), 10000U);
    // The id window: 8 messages at most.
    reliable_sender many{small_config()};
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(many.push(msg(1, i), t0), send_status::queued);
    }
    EXPECT_EQ(many.push(msg(1, 9), t0), send_status::queue_full);
}

TEST(ReliableSender, AcksFreeTheQueueInOrder) {
    reliable_sender sender{small_config()};
    for (int i = 0; i < 4; ++i) {
        sender.push(msg(100, i), t0 + std::chrono::milliseconds{i});
    }
    EXPECT_EQ(sender.oldest_queued_at(), t0);
    sender.on_run_acked(1, 2); // ids 1 and 2: nothing leaves until 0 is acked
    EXPECT_EQ(sender.size(), 4U);
    EXPECT_EQ(sender.queued_bytes(), 400U);
    sender.on_run_acked(0, 1);
    EXPECT_EQ(sender.size(), 1U);
    EXPECT_EQ(sender.front_id(), 3);
    EXPECT_EQ(sender.oldest_queued_at(), t0 + 3ms);
    sender.on_run_acked(3, 1);
    EXPECT_EQ(sender.size(), 0U);
    EXPECT_FALSE(sender.oldest_queued_at());
    sender.on_run_acked(3, 1); // a late ack of something gone: nothing happens
    EXPECT_EQ(sender.queued_bytes(), 0U);
}

TEST(ReliableSender, ResendsOnTheTimerOrWhenItsPacketIsLost) {
    reliable_sender sender{small_config()};
    sender.push(msg(10, 0), t0);
    auto& state = sender.at(0).state;
    EXPECT_TRUE(reliable_sender::due(state, t0, 100ms)); // never sent
    EXPECT_FALSE(sender.mark_sent(state, t0, 5));
    EXPECT_FALSE(reliable_sender::due(state, t0 + 99ms, 100ms));
    EXPECT_TRUE(reliable_sender::due(state, t0 + 100ms, 100ms));
    EXPECT_TRUE(sender.mark_sent(state, t0 + 100ms, 9)); // a resend
    sender.on_run_lost(0, 1, 5);                         // packet 5 is not its last transmission: ignored
    EXPECT_FALSE(reliable_sender::due(state, t0 + 101ms, 100ms));
    sender.on_run_lost(0, 1, 9);
    EXPECT_TRUE(reliable_sender::due(state, t0 + 101ms, 100ms));
    const auto due = sender.next_due(t0 + 101ms, 100ms);
    EXPECT_FALSE(due.unsent);
    EXPECT_EQ(due.resend, t0 + 101ms);
}

TEST(ReliableSender, BlocksAreAckedFragmentByFragment) {
    reliable_sender sender{small_config()};
    sender.push(msg(50, 1), t0);
    sender.push(msg(2500, 2), t0); // id 1: a block of 3 fragments
    EXPECT_TRUE(sender.ensure_block());
    EXPECT_EQ(sender.block_id(), 1);
    EXPECT_EQ(sender.block_fragment_count(), 3U);
    EXPECT_EQ(sender.block_fragment(2).size(), 500U);
    for (std::uint32_t i = 0; i < 3; ++i) {
        sender.mark_fragment_sent(i, t0, static_cast<sequence_t>(10 + i));
    }
    // A fragment ack: fragment 0 and 2 arrived (first missing 1, bit 0 = fragment 2).
    const std::array<std::byte, 1> bitmap{std::byte{1}};
    const fragment_ack ack{1, 1, bitmap};
    EXPECT_EQ(sender.check_fragment_ack(ack), receive_error::none);
    sender.on_fragment_ack(ack);
    EXPECT_TRUE(sender.fragment_state(0).acked);
    EXPECT_FALSE(sender.fragment_state(1).acked);
    EXPECT_TRUE(sender.fragment_state(2).acked);
    // Naming a fragment the block does not have: refused.
    const std::array<std::byte, 1> past{std::byte{2}}; // fragment 3
    EXPECT_EQ(sender.check_fragment_ack(fragment_ack{1, 1, past}), receive_error::bad_fragment_ack);
    EXPECT_EQ(sender.check_fragment_ack(fragment_ack{1, 4, {}}), receive_error::bad_fragment_ack);
    EXPECT_EQ(sender.check_fragment_ack(fragment_ack{7, 900, {}}),
              receive_error::none); // not this block: ignored
    // The last fragment acked by its packet: the block is acked, and leaves after message 0.
    sender.on_fragment_acked(1, 1);
    EXPECT_FALSE(sender.block_active());
    EXPECT_EQ(sender.size(), 2U);
    sender.on_run_acked(0, 1);
    EXPECT_EQ(sender.size(), 0U);
}

TEST(ReliableSender, FragmentsOvertakenByThreeTransmissionsAreLost) {
    reliable_sender_config c = small_config();
    c.fragment_bytes = 100;
    reliable_sender sender{c};
    sender.push(msg(1500, 1), t0); // 15 fragments
    ASSERT_TRUE(sender.ensure_block());
    for (std::uint32_t i = 0; i < 15; ++i) {
        sender.mark_fragment_sent(i, t0, static_cast<sequence_t>(i));
    }
    // Fragments 0..9 arrived except 2: 2 was sent 7 transmissions before the newest acked one.
    const std::array<std::byte, 1> bitmap{std::byte{0x7F}}; // fragments 3..9
    sender.on_fragment_ack(fragment_ack{0, 2, bitmap});
    EXPECT_TRUE(sender.fragment_state(2).resend_now);
    EXPECT_FALSE(sender.fragment_state(10).resend_now); // sent after the newest acked one
    EXPECT_FALSE(sender.fragment_state(14).resend_now);
}

struct collected {
    std::vector<std::vector<std::byte>> messages;
    std::size_t delivered{0};
    std::array<std::uint64_t, channel_count> per_channel{};
    deliver_function fn = [this](channel ch, std::span<const std::byte> m) {
        EXPECT_EQ(ch, channel::reliable);
        messages.emplace_back(m.begin(), m.end());
    };
    delivery out() { return delivery{fn, delivered, per_channel}; }
};

TEST(ReliableReceiver, DeliversInOrderExactlyOnce) {
    reliable_receiver receiver{16, 100000};
    collected got;
    reliable_receiver::body_check check;
    EXPECT_EQ(receiver.check_message(2, 10, check), receive_error::none);
    receiver.accept_message(2, msg(10, 2), got.out());
    receiver.accept_message(1, msg(10, 1), got.out());
    EXPECT_TRUE(got.messages.empty());
    EXPECT_EQ(receiver.buffered_bytes(), 20U);
    receiver.accept_message(0, msg(10, 0), got.out());
    ASSERT_EQ(got.messages.size(), 3U);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(got.messages[static_cast<std::size_t>(i)], msg(10, i));
    }
    EXPECT_EQ(receiver.buffered_bytes(), 0U);
    receiver.accept_message(1, msg(10, 1), got.out()); // a resend of a delivered message
    receiver.accept_message(4, msg(10, 4), got.out());
    receiver.accept_message(4, msg(10, 4), got.out()); // a duplicate of a held one
    EXPECT_EQ(receiver.buffered_bytes(), 10U);
    EXPECT_EQ(got.messages.size(), 3U);
    EXPECT_EQ(receiver.expected(), 3);
}

TEST(ReliableReceiver, RefusesIdsBeyondItsWindowAndMoreThanItsBudget) {
    reliable_receiver receiver{16, 1000};
    reliable_receiver::body_check check;
    EXPECT_EQ(receiver.check_message(16, 1, check), receive_error::message_id_out_of_window);
    EXPECT_EQ(receiver.check_message(15, 1, check), receive_error::none);
    EXPECT_EQ(receiver.check_message(65535, 1, check), receive_error::none); // behind: already delivered
    EXPECT_EQ(receiver.check_message(1, 600, check), receive_error::none);
    EXPECT_EQ(receiver.check_message(2, 400, check), receive_error::reliable_buffer_full); // 1 + 600 + 400
    fragment frag;
    frag.id = 3;
    frag.total_bytes = 5000;
    frag.fragment_bytes = 1000;
    frag.count = 5;
    reliable_receiver::body_check other;
    EXPECT_EQ(receiver.check_fragment(frag, other),
              receive_error::reliable_buffer_full); // a 5,000-byte block
}

TEST(ReliableReceiver, AssemblesABlockAndAcksItsFragments) {
    reliable_receiver receiver{16, 100000};
    collected got;
    const auto block = msg(2500, 9);
    const auto piece = [&](std::uint32_t index) {
        fragment f;
        f.id = 0;
        f.total_bytes = 2500;
        f.fragment_bytes = 1000;
        f.count = 3;
        f.index = index;
        f.data = std::span<const std::byte>{block}.subspan(index * 1000, fragment_length(2500, 1000, index));
        return f;
    };
    reliable_receiver::body_check check;
    EXPECT_EQ(receiver.check_fragment(piece(2), check), receive_error::none);
    receiver.accept_fragment(piece(2), got.out());
    EXPECT_TRUE(receiver.fragment_ack_owed());
    std::array<std::byte, max_fragment_ack_bytes> buffer{};
    byte_writer out{buffer};
    receiver.write_fragment_ack(out);
    EXPECT_FALSE(receiver.fragment_ack_owed());
    // type, id 0, first missing 0, bitmap of 1 byte: bit 1 = fragment 2.
    const std::vector<std::byte> expected{std::byte{0x03}, std::byte{0}, std::byte{0},
                                          std::byte{0},    std::byte{1}, std::byte{2}};
    EXPECT_EQ(std::vector<std::byte>(out.written().begin(), out.written().end()), expected);
    // Another block id, or the same one with other sizes, while this one is incomplete: refused.
    auto other = piece(0);
    other.id = 1;
    reliable_receiver::body_check check2;
    EXPECT_EQ(receiver.check_fragment(other, check2), receive_error::block_conflict);
    auto resized = piece(0);
    resized.fragment_bytes = 500;
    resized.count = 5;
    EXPECT_EQ(receiver.check_fragment(resized, check2), receive_error::inconsistent_fragments);
    EXPECT_EQ(receiver.check_message(0, 10, check2), receive_error::block_conflict);
    receiver.accept_fragment(piece(0), got.out());
    receiver.accept_fragment(piece(1), got.out());
    ASSERT_EQ(got.messages.size(), 1U);
    EXPECT_EQ(got.messages[0], block);
    EXPECT_EQ(receiver.buffered_bytes(), 0U);
    // A late fragment of the delivered block: acked as complete (first missing = count, no bitmap).
    receiver.accept_fragment(piece(1), got.out());
    byte_writer out2{buffer};
    receiver.write_fragment_ack(out2);
    const std::vector<std::byte> complete{std::byte{0x03}, std::byte{0}, std::byte{0}, std::byte{3},
                                          std::byte{0}};
    EXPECT_EQ(std::vector<std::byte>(out2.written().begin(), out2.written().end()), complete);
    EXPECT_EQ(got.messages.size(), 1U);
}

} // namespace
} // namespace ecsnet::transport::reliable_channel_test
