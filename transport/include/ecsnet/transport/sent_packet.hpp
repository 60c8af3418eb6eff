#pragma once

// What the link remembers of each packet it sent, until its fate is known: when it left (RTT samples),
// whether it carried data (only those count for loss), and references to the reliable and redundant content
// it carried, so that its ack (or its loss) is passed on to the channels in O(contents). Kept in a
// sequence_buffer of the last 256 packets; a body holds at most max_packet_contents references (the writer
// starts a new body when they run out), so a record has a fixed size and sending allocates nothing.

#include <array>
#include <cstddef>
#include <cstdint>

#include "clock.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

inline constexpr std::size_t max_packet_contents = 8;
inline constexpr std::size_t sent_packet_window = 256;

enum class content_kind : std::uint8_t {
    reliable_run,   // id: first message id, value: count
    block_fragment, // id: block message id, value: fragment index
    redundant,      // id: newest redundant id carried (the run is every pending one up to it)
};

struct content_ref {
    content_kind kind{};
    sequence_t id{};
    std::uint16_t value{};
};

struct sent_packet {
    clock::time_point sent_at{};
    std::uint32_t bytes{};
    bool carries_data{}; // any chunk other than fragment acks: counts for loss, makes the peer owe an ack
    bool acked{};
    bool covered{};       // some ack window received covered it (if never acked, it is then known lost)
    bool lost_declared{}; // its content was already handed back for resending
    bool finalized{};     // its fate was counted (loss estimate)
    std::uint8_t content_count{};
    std::array<content_ref, max_packet_contents> contents{};
};

} // namespace ecsnet::transport
