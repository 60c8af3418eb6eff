#pragma once

// A link: one connection's reliability over plaintext packet bodies (docs/protocol.md section 9). The
// security layer hands it every decrypted body (receive) and encrypts every body it writes (write_packets)
// into one datagram; the owner queues messages (send) on three channels (channel.hpp) and reads what the
// link measured (stats). No sockets, no clock: time is passed in, so two links and a net_simulator make a
// deterministic test of the whole protocol.
//
// What a link does per body:
//  - writing: a header (its sequence, the acks of the peer's packets: newest + 32-bit field + ack delay),
//    then chunks in priority order: the fragment ack owed (first body of a call), pending redundant messages
//    (oldest first; first body of a call, and in later bodies what room is left), reliable messages due
//    (new ones and resends whose timer expired or whose packet was declared lost), block fragments due,
//    then every queued unreliable message (whole, or in fragments). A body that cannot take the next item
//    is sent and a new one started. Each body sent is remembered (sent_packet.hpp) until its fate is known.
//  - receiving: everything is checked first (header, every chunk, every limit, every id against its
//    window); a body with any error is refused whole and changes nothing. Then its acks are applied (RTT
//    sample, loss, channels' acks, fast-retransmit), and its messages delivered.
//
// Costs: an ack field is O(1): it touches only the (at most 32) sent records whose state it changes, each
// in O(its contents), usually one or two. A body written or received allocates nothing in the steady state
// (buffers are reused; bench/transport_bench.cpp counts) except reliable messages (queued, or held after a
// gap) and reassembly buffers bigger than any before. About 2,200 instructions per packet for a game's
// typical tick (bench/RESULTS.md). One link is about 20 kB plus its queues.
//
// Not thread-safe. sink must not call back into this link; deliver may call this link's send() (not its
// receive or write_packets). Both may use other links freely. Code with `using namespace
// ecsnet::transport` that names `link` unqualified also sees POSIX link(2) from <unistd.h>: write
// `transport::link` there.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "channel.hpp"
#include "chunk.hpp"
#include "clock.hpp"
#include "link_config.hpp"
#include "link_stats.hpp"
#include "loss_estimator.hpp"
#include "packet_header.hpp"
#include "reassembly_buffer.hpp"
#include "receive_result.hpp"
#include "received_packets.hpp"
#include "redundant_receiver.hpp"
#include "redundant_sender.hpp"
#include "reliable_receiver.hpp"
#include "reliable_sender.hpp"
#include "rtt_estimator.hpp"
#include "sent_packet.hpp"
#include "sequence_buffer.hpp"
#include "token_bucket.hpp"
#include "unreliable_queue.hpp"

namespace ecsnet::transport {

class link {
public:
    /// Throws std::invalid_argument when the config is out of range (see link_config.hpp).
    explicit link(link_config config = {});

    /// Queues a message (copied). Never blocks. too_big: above the channel's limit; queue_full: see
    /// send_status. A redundant message never gets queue_full: it pushes out the oldest pending one.
    send_status send(channel ch, std::span<const std::byte> message, clock::time_point now);

    /// Writes the bodies due now (new messages, resends, fragment acks, or an ack-only body when acks are
    /// owed): sink(body) once per body, each at most max_body_bytes. Returns the number of bodies written
    /// (0 when nothing is due).
    std::size_t write_packets(clock::time_point now, body_sink sink);

    /// A received body (already decrypted and authenticated). Delivers complete messages:
    /// deliver(channel, message). A malformed body is refused whole: nothing is delivered, no state
    /// changes, and the error says why (counted in stats().refused).
    receive_result receive(std::span<const std::byte> body, clock::time_point now,
                           const deliver_function& deliver);

    /// Asks for the state receive() reads without waiting for it (see server_connection::prefetch_receive).
    void prefetch_receive() const noexcept;
    /// Likewise for what send() and write_packets() read and write (see server_connection::prefetch_send).
    void prefetch_send() const noexcept;

    /// Whether write_packets(now) would write anything.
    [[nodiscard]] bool wants_to_send(clock::time_point now) const;
    /// When wants_to_send becomes true (<= now when it is already), or nullopt when nothing is pending:
    /// the owner's timer for resends and acks while idle.
    [[nodiscard]] std::optional<clock::time_point> next_send_time(clock::time_point now) const;

    /// How long the oldest unacked reliable message has waited since send() (0 when none): past the owner's
    /// limit, the peer stopped acking (the owner disconnects it).
    [[nodiscard]] clock::duration oldest_unacked_reliable_age(clock::time_point now) const;
    /// When the oldest unacked reliable message was sent (nullopt when none): its age's origin.
    [[nodiscard]] std::optional<clock::time_point> oldest_unacked_reliable_since() const;

    [[nodiscard]] const link_stats& stats() const noexcept { return stats_; }
    [[nodiscard]] const link_config& config() const noexcept { return config_; }
    /// Reliable bytes queued or in flight (what max_reliable_queue_bytes bounds).
    [[nodiscard]] std::size_t reliable_queued_bytes() const noexcept { return reliable_out_.queued_bytes(); }
    [[nodiscard]] std::size_t redundant_pending() const noexcept { return redundant_out_.pending(); }
    /// The current resend timeout (RTO).
    [[nodiscard]] clock::duration resend_timeout() const noexcept;
    /// Largest message sent whole; bigger reliable ones are blocks, bigger unreliable ones are fragmented.
    [[nodiscard]] std::size_t max_whole_message_bytes() const noexcept { return max_whole_bytes_; }
    /// Bytes of each fragment but the last (both channels).
    [[nodiscard]] std::uint32_t fragment_bytes() const noexcept { return fragment_bytes_; }

private:
    struct body_builder;

    [[nodiscard]] bool acks_due(clock::time_point now) const noexcept;
    /// No packet acked for 4 resend timeouts while reliable data waits: resend only probes.
    [[nodiscard]] bool probing(clock::time_point now, clock::duration rto) const noexcept;
    /// When reliable data (new, resent or probe) may go out next, pacing included.
    [[nodiscard]] std::optional<clock::time_point> reliable_due(clock::time_point now,
                                                                clock::duration rto) const;
    void apply_acks(const packet_header& header, clock::time_point now);
    /// What one ack-field bit says about packet `sequence` (n: its bit's position).
    void apply_ack_bit(sequence_t sequence, std::uint16_t n, bool acked, const packet_header& header,
                       clock::time_point now);
    void content_acked(const sent_packet& packet);
    void content_lost(const sent_packet& packet, sequence_t sequence);
    void finalize(sent_packet& packet, sequence_t sequence);
    void record_sent(const body_builder& body, clock::time_point now);
    /// Checks a whole body; on success `header` holds its header and `chunks_at` where its chunks start.
    [[nodiscard]] receive_error check_body(std::span<const std::byte> body, packet_header& header,
                                           std::size_t& chunks_at, bool& carries_data) const;

    link_config config_;
    std::size_t max_whole_bytes_;
    std::uint32_t fragment_bytes_;
    chunk_limits limits_;

    sequence_buffer<sent_packet, sent_packet_window> sent_;
    sequence_t next_sequence_{0};
    bool any_acked_{false};
    sequence_t newest_acked_{0};
    sequence_t unfinalized_{0}; // oldest sequence whose ack window may still be open
    // What ack fields already said about the last 64 packets sent (bit i: sequence next_sequence_ - 1 - i),
    // so that a field only touches the records whose state it changes (O(changes), not O(32)). The
    // records' own flags remain the truth; these only skip work.
    std::uint64_t acked_mask_{0};
    std::uint64_t covered_mask_{0};
    std::uint64_t lost_mask_{0};

    received_packets received_;
    std::uint32_t acks_owed_{0}; // data-carrying packets received since the last body sent
    clock::time_point ack_owed_since_{};

    clock::time_point last_progress_{}; // a packet newly acked, or reliable data queued on an empty queue
    clock::time_point last_probe_{};

    rtt_estimator rtt_;
    loss_estimator loss_;
    token_bucket pacing_;

    reliable_sender reliable_out_;
    reliable_receiver reliable_in_;
    unreliable_queue unreliable_out_;
    reassembly_buffer reassembly_;
    redundant_sender redundant_out_;
    redundant_receiver redundant_in_;

    link_stats stats_;
    std::vector<std::byte> body_; // the body being written
};

} // namespace ecsnet::transport
