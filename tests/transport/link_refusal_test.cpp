// Every kind of bad body link::receive must refuse, each in its own test. For each: the error names the
// reason (and stats count it), nothing is delivered, nothing is allocated, and nothing changes: a twin link
// given the same history but not the bad body behaves identically afterwards (byte-identical bodies written,
// identical messages delivered) while the conversation goes on.

#include <gtest/gtest.h>

#include <vector>

#include "allocation_counter.hpp"
#include "ecsnet/transport/link.hpp"
#include "link_harness.hpp"

namespace ecsnet::transport::link_refusal_test {
namespace {

using namespace testing;

// A body written by hand: a header without acks, then raw bytes and chunks.
class body_builder {
public:
    explicit body_builder(sequence_t sequence) {
        bytes_.push_back(std::byte{0});
        put_u16(sequence);
    }
    body_builder& raw(std::initializer_list<int> values) {
        for (int v : values) {
            bytes_.push_back(static_cast<std::byte>(v));
        }
        return *this;
    }
    body_builder& put_u16(std::uint16_t v) {
        bytes_.push_back(static_cast<std::byte>(v & 0xFF));
        bytes_.push_back(static_cast<std::byte>(v >> 8));
        return *this;
    }
    body_builder& varint(std::uint32_t v) {
        while (v >= 0x80) {
            bytes_.push_back(static_cast<std::byte>((v & 0x7F) | 0x80));
            v >>= 7;
        }
        bytes_.push_back(static_cast<std::byte>(v));
        return *this;
    }
    body_builder& run(chunk_type type, sequence_t first, const std::vector<bytes>& messages) {
        raw({static_cast<int>(type)}).put_u16(first).raw({static_cast<int>(messages.size())});
        for (const auto& m : messages) {
            varint(static_cast<std::uint32_t>(m.size()));
            bytes_.insert(bytes_.end(), m.begin(), m.end());
        }
        return *this;
    }
    body_builder& frag(chunk_type type, sequence_t id, std::uint32_t total, std::uint32_t size,
                       std::uint32_t index) {
        raw({static_cast<int>(type)}).put_u16(id).varint(total).varint(size).varint(index);
        const auto length = fragment_length(total, size, index);
        bytes_.insert(bytes_.end(), length, std::byte{0x5A});
        return *this;
    }
    body_builder& unreliable(std::size_t size) {
        raw({static_cast<int>(chunk_type::unreliable)}).varint(static_cast<std::uint32_t>(size));
        bytes_.insert(bytes_.end(), size, std::byte{0x33});
        return *this;
    }
    [[nodiscard]] const bytes& get() const { return bytes_; }
    [[nodiscard]] bytes truncated(std::size_t n) const {
        return {bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(n)};
    }

private:
    bytes bytes_;
};

class LinkRefusal : public ::testing::Test {
protected:
    void SetUp() override { start(link_config{}); }

    // A peer and two identical links (victim, twin) that receive the same bodies from it. The history leaves
    // state everywhere: messages held after gaps, a block and an unreliable message half assembled,
    // redundant messages, acks owed; the peer has heard back from the victim.
    void start(const link_config& config, bool victim_sends_block = false) {
        peer_ = std::make_unique<link>(config);
        victim_ = std::make_unique<link>(config);
        twin_ = std::make_unique<link>(config);
        for (int i = 0; i < 6; ++i) {
            peer_->send(channel::reliable, as_bytes(make_message(static_cast<std::uint64_t>(i), 50 + 10 * i)),
                        now_);
            peer_->send(channel::redundant, as_bytes(make_message(100 + static_cast<std::uint64_t>(i), 20)),
                        now_);
        }
        peer_->send(channel::reliable, as_bytes(make_message(7, 5000)), now_);
        peer_->send(channel::unreliable, as_bytes(make_message(8, 4000)), now_);
        if (victim_sends_block) {
            victim_->send(channel::reliable, as_bytes(make_message(9, 5000)), now_);
            twin_->send(channel::reliable, as_bytes(make_message(9, 5000)), now_);
        }
        // The peer's bodies, every third lost: the block lacks fragments 0 and 3, the unreliable message its
        // fragment 1. Victim and twin answer (their acks do not reach the peer yet, so nothing is resent).
        std::size_t n = 0;
        peer_->write_packets(now_, [&](std::span<const std::byte> body) {
            if (n++ % 3 != 1) {
                deliver_to_both(body);
            }
        });
        step(5ms, false);
    }

    void deliver_to_both(std::span<const std::byte> body) {
        const auto a = victim_->receive(body, now_, collect(victim_got_));
        const auto b = twin_->receive(body, now_, collect(twin_got_));
        EXPECT_EQ(a.error, b.error);
    }

    static deliver_function collect(std::vector<delivered_message>& into) {
        return [&into](channel ch, std::span<const std::byte> m) {
            into.push_back({ch, bytes(m.begin(), m.end())});
        };
    }

    // Time passes; victim and twin write (their bodies must be identical; the victim's go to the peer), the
    // peer writes to both.
    void step(clock::duration dt, bool to_peer = true) {
        now_ += dt;
        std::vector<bytes> from_victim;
        std::vector<bytes> from_twin;
        victim_->write_packets(
            now_, [&](std::span<const std::byte> b) { from_victim.emplace_back(b.begin(), b.end()); });
        twin_->write_packets(
            now_, [&](std::span<const std::byte> b) { from_twin.emplace_back(b.begin(), b.end()); });
        ASSERT_EQ(from_victim, from_twin) << "the victim diverged from its twin";
        for (const auto& b : from_victim) {
            if (to_peer) {
                peer_->receive(b, now_, nullptr);
            }
        }
        peer_->write_packets(now_, [&](std::span<const std::byte> body) { deliver_to_both(body); });
    }

    // The peer's next packet sequence: a bad body using it would make the peer's real one a duplicate.
    sequence_t next_peer_sequence() const { return static_cast<sequence_t>(peer_->stats().packets_sent); }

    // The checks every refusal must pass.
    void expect_refused(const bytes& body, receive_error reason) {
        const auto refused_before = victim_->stats().refused_for(reason);
        const auto delivered_before = victim_got_.size();
        test_support::reset_allocation_count();
        test_support::count_allocations(true);
        const auto result = victim_->receive(body, now_, collect(victim_got_));
        test_support::count_allocations(false);
        EXPECT_EQ(result.error, reason) << "got " << to_string(result.error);
        EXPECT_FALSE(result.ok());
        EXPECT_EQ(result.delivered, 0U);
        EXPECT_EQ(victim_got_.size(), delivered_before);
        EXPECT_EQ(test_support::allocations_counted(), 0U) << "a refused body allocated";
        EXPECT_EQ(victim_->stats().refused_for(reason), refused_before + 1);
        // The conversation goes on, with new messages both ways; the victim stays the twin's double.
        for (int i = 0; i < 60 && !HasFatalFailure(); ++i) {
            if (i % 10 == 0) {
                peer_->send(channel::reliable,
                            as_bytes(make_message(1000 + static_cast<std::uint64_t>(i), 300)), now_);
                peer_->send(channel::unreliable,
                            as_bytes(make_message(2000 + static_cast<std::uint64_t>(i), 3000)), now_);
                peer_->send(channel::redundant,
                            as_bytes(make_message(3000 + static_cast<std::uint64_t>(i), 20)), now_);
            }
            step(5ms);
        }
        ASSERT_EQ(victim_got_.size(), twin_got_.size());
        for (std::size_t i = 0; i < victim_got_.size(); ++i) {
            EXPECT_EQ(victim_got_[i].ch, twin_got_[i].ch);
            EXPECT_EQ(victim_got_[i].data, twin_got_[i].data);
        }
        EXPECT_GT(victim_got_.size(), 10U);
    }

    std::unique_ptr<link> peer_;
    std::unique_ptr<link> victim_;
    std::unique_ptr<link> twin_;
    std::vector<delivered_message> victim_got_;
    std::vector<delivered_message> twin_got_;
    clock::time_point now_{std::chrono::hours{1}};
};

TEST_F(LinkRefusal, BodyAboveTheMaximumSize) {
    body_builder b{next_peer_sequence()};
    b.unreliable(1175 - 3 - 3 + 1); // 1,176 bytes
    ASSERT_EQ(b.get().size(), 1176U);
    expect_refused(b.get(), receive_error::body_too_big);
}

TEST_F(LinkRefusal, TruncatedHeader) {
    body_builder b{next_peer_sequence()};
    expect_refused(b.truncated(0), receive_error::truncated);
    expect_refused(b.truncated(2), receive_error::truncated);
}

TEST_F(LinkRefusal, TruncatedChunk) {
    body_builder b{next_peer_sequence()};
    b.unreliable(10).run(chunk_type::reliable, 0, {bytes(5)});
    expect_refused(b.truncated(b.get().size() - 8), receive_error::truncated); // inside the run's header
}

TEST_F(LinkRefusal, BadHeader) {
    bytes body = body_builder{next_peer_sequence()}.unreliable(10).get();
    body[0] = std::byte{0x80}; // a reserved bit
    expect_refused(body, receive_error::bad_header);
}

TEST_F(LinkRefusal, PaddedVarint) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::unreliable), 0x81, 0x00, 1});
    expect_refused(b.get(), receive_error::bad_varint);
}

TEST_F(LinkRefusal, UnknownChunkType) {
    for (int type : {0x00, 0x07, 0xFF}) {
        body_builder b{next_peer_sequence()};
        b.unreliable(5).raw({type, 1, 2, 3});
        expect_refused(b.get(), receive_error::unknown_chunk);
    }
}

TEST_F(LinkRefusal, EmptyRun) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::redundant), 0, 0, 0});
    expect_refused(b.get(), receive_error::empty_run);
}

TEST_F(LinkRefusal, MessageLengthPastTheEnd) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::unreliable)}).varint(500).raw({1, 2, 3});
    expect_refused(b.get(), receive_error::length_past_end);
}

TEST_F(LinkRefusal, RunMessageLengthPastTheEnd) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::reliable), 6, 0, 2, 1, 9}).varint(300).raw({1});
    expect_refused(b.get(), receive_error::length_past_end);
}

TEST_F(LinkRefusal, FragmentPastTheEnd) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::unreliable_fragment)})
        .put_u16(40)
        .varint(3000)
        .varint(1000)
        .varint(0)
        .raw({1});
    expect_refused(b.get(), receive_error::length_past_end);
}

TEST_F(LinkRefusal, FragmentIndexNotBelowCount) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::unreliable_fragment)})
        .put_u16(40)
        .varint(3000)
        .varint(1000)
        .varint(3);
    expect_refused(b.get(), receive_error::bad_fragment);
}

TEST_F(LinkRefusal, AbsurdFragmentCount) {
    // 200 kB in 10-byte fragments: 20,000 fragments (limit 1,024), refused before anything is allocated.
    body_builder b{next_peer_sequence()};
    b.frag(chunk_type::unreliable_fragment, 40, 200000, 10, 0);
    expect_refused(b.get(), receive_error::bad_fragment);
}

TEST_F(LinkRefusal, AbsurdMessageSize) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::reliable_fragment)})
        .put_u16(6)
        .varint(100'000'000)
        .varint(1000)
        .varint(0);
    expect_refused(b.get(), receive_error::message_too_big);
}

TEST_F(LinkRefusal, RedundantMessageAboveItsLimit) {
    body_builder b{next_peer_sequence()};
    b.run(chunk_type::redundant, 6, {bytes(257)});
    expect_refused(b.get(), receive_error::message_too_big);
}

TEST_F(LinkRefusal, InconsistentFragmentsWithinABody) {
    body_builder b{next_peer_sequence()};
    b.frag(chunk_type::unreliable_fragment, 40, 300, 100, 0)
        .frag(chunk_type::unreliable_fragment, 40, 310, 100, 1);
    expect_refused(b.get(), receive_error::inconsistent_fragments);
}

TEST_F(LinkRefusal, FragmentInconsistentWithTheMessageInProgress) {
    // The peer's 4,000-byte unreliable message (group 0) is half assembled; another total for group 0.
    body_builder b{next_peer_sequence()};
    b.frag(chunk_type::unreliable_fragment, 0, 4100, 1000, 3);
    expect_refused(b.get(), receive_error::inconsistent_fragments);
}

TEST_F(LinkRefusal, BlockFragmentInconsistentWithTheBlockInProgress) {
    // The peer's 5,000-byte block (message 6) is half assembled; another fragment size for it.
    body_builder b{next_peer_sequence()};
    b.frag(chunk_type::reliable_fragment, 6, 5000, 700, 1);
    expect_refused(b.get(), receive_error::inconsistent_fragments);
}

TEST_F(LinkRefusal, ASecondBlockWhileOneIsIncomplete) {
    body_builder b{next_peer_sequence()};
    b.frag(chunk_type::reliable_fragment, 8, 3000, 1000, 0);
    expect_refused(b.get(), receive_error::block_conflict);
}

TEST_F(LinkRefusal, TooManyFragmentsInOneBody) {
    body_builder b{next_peer_sequence()};
    for (std::uint16_t id = 100; id < 100 + 65; ++id) {
        b.frag(chunk_type::unreliable_fragment, id, 2, 1, 0);
    }
    expect_refused(b.get(), receive_error::too_many_fragments);
}

TEST_F(LinkRefusal, SequenceFarAheadOfTheWindow) {
    body_builder b{static_cast<sequence_t>(next_peer_sequence() + 5000)};
    b.unreliable(10);
    expect_refused(b.get(), receive_error::sequence_out_of_window);
}

TEST_F(LinkRefusal, StaleSequence) {
    body_builder b{static_cast<sequence_t>(next_peer_sequence() - 1100)};
    b.unreliable(10);
    expect_refused(b.get(), receive_error::stale);
}

TEST_F(LinkRefusal, DuplicatePacket) {
    // The peer's first body again (it was delivered).
    body_builder b{0};
    b.unreliable(10);
    expect_refused(b.get(), receive_error::duplicate);
}

TEST_F(LinkRefusal, AckOfAPacketNeverSent) {
    const auto sent = victim_->stats().packets_sent;
    ASSERT_GT(sent, 0U);
    // flags: ack, no ack-field bytes (all 0xFF); ack = the victim's next sequence (not sent yet); delay 0.
    body_builder b{next_peer_sequence()};
    bytes body = b.get();
    body[0] = std::byte{0x01};
    body.push_back(static_cast<std::byte>(sent & 0xFF));
    body.push_back(static_cast<std::byte>((sent >> 8) & 0xFF));
    body.push_back(std::byte{0});
    expect_refused(body, receive_error::ack_out_of_window);
}

TEST_F(LinkRefusal, ReliableIdFarAheadOfTheWindow) {
    body_builder b{next_peer_sequence()};
    b.run(chunk_type::reliable, 6 + 5000, {bytes(10)}); // the next expected is 6 (the block)
    expect_refused(b.get(), receive_error::message_id_out_of_window);
}

TEST_F(LinkRefusal, BlockIdFarAheadOfTheWindow) {
    body_builder b{next_peer_sequence()};
    b.frag(chunk_type::reliable_fragment, 6 + 2000, 3000, 1000, 0);
    expect_refused(b.get(), receive_error::message_id_out_of_window);
}

TEST_F(LinkRefusal, ReliableBytesAboveTheBudget) {
    link_config config;
    config.max_message_bytes = 1000;
    config.max_reliable_queue_bytes = 1000;
    start(config);
    // 1,100 bytes out of order (ids 20 and 21, within the window) when the budget is 1,000 in all.
    body_builder b{next_peer_sequence()};
    b.run(chunk_type::reliable, 20, {bytes(550), bytes(550)});
    expect_refused(b.get(), receive_error::reliable_buffer_full);
}

TEST_F(LinkRefusal, FragmentAckNamingFragmentsPastTheBlock) {
    start(link_config{}, true); // the victim is sending a 5,000-byte block (id 0, 5 fragments)
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::fragment_ack), 0, 0, 3, 1,
           0x04}); // first missing 3, bit 2 = fragment 6
    expect_refused(b.get(), receive_error::bad_fragment_ack);
}

TEST_F(LinkRefusal, FragmentAckWithPadding) {
    body_builder b{next_peer_sequence()};
    b.raw({static_cast<int>(chunk_type::fragment_ack), 0, 0, 1, 2, 0x01, 0x00});
    expect_refused(b.get(), receive_error::bad_fragment_ack);
}

TEST(LinkRefusalKinds, EveryReasonHasAName) {
    for (std::size_t i = 0; i < receive_error_count; ++i) {
        EXPECT_NE(to_string(static_cast<receive_error>(i)), "unknown") << i;
    }
    EXPECT_FALSE(receive_result{receive_error::duplicate}.malformed());
    EXPECT_FALSE(receive_result{receive_error::stale}.malformed());
    EXPECT_TRUE(receive_result{receive_error::truncated}.malformed());
    EXPECT_FALSE(receive_result{}.malformed());
}

} // namespace
} // namespace ecsnet::transport::link_refusal_test
