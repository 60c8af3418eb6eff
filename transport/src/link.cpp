// The link (link.hpp): packing bodies, acks, checking and applying received bodies.

#include "ecsnet/transport/link.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <stdexcept>
#include <string>

#include "ecsnet/transport/delivery.hpp"
#include "prefetch.hpp"

namespace ecsnet::transport {

namespace {

/// A packet whose bit is clear while one this many sequences newer was acked is declared lost.
constexpr std::uint16_t packet_reorder_threshold = 3;
/// No packet acked for this many resend timeouts while reliable data waits: the peer is silent (or every
/// packet is lost); resend one probe per timeout instead of everything due (a dead peer costs little).
/// Not sooner: on a lossy link with little traffic, acks can be missing for an RTO or two.
constexpr int probe_after_timeouts = 4;
/// Sequences an ack field covers: `ack` and the 31 before it.
constexpr std::uint16_t ack_field_span = 32;

void require(bool ok, const char* what) {
    if (!ok) {
        throw std::invalid_argument(std::string{"link_config: "} + what);
    }
}

/// Largest message sent whole: a fresh body holds the header and one run of one message of this size.
std::size_t whole_limit(const link_config& c) {
    return c.max_body_bytes - max_header_bytes - run_header_bytes -
           varint_size(static_cast<std::uint32_t>(c.max_body_bytes));
}

/// Bytes of each fragment: a fresh body holds the header and one fragment chunk of the largest header.
std::uint32_t fragment_size(const link_config& c) {
    const auto chunk_header = 1 + 2 + varint_size(static_cast<std::uint32_t>(c.max_message_bytes)) +
                              varint_size(static_cast<std::uint32_t>(c.max_body_bytes)) +
                              varint_size(static_cast<std::uint32_t>(c.max_fragments));
    return static_cast<std::uint32_t>(c.max_body_bytes - max_header_bytes - chunk_header);
}

const link_config& checked(const link_config& c) {
    require(c.max_body_bytes >= 128 && c.max_body_bytes <= 65535, "max_body_bytes must be 128 to 65,535");
    require(c.max_message_bytes >= 1 && c.max_message_bytes <= max_varint_value,
            "max_message_bytes must be 1 to 2^28 - 1");
    require(c.max_fragments >= 1 && c.max_fragments <= 65535, "max_fragments must be 1 to 65,535");
    require(fragment_count(static_cast<std::uint32_t>(c.max_message_bytes), fragment_size(c)) <=
                c.max_fragments,
            "max_message_bytes needs more than max_fragments fragments");
    require(c.max_reliable_queue_bytes >= c.max_message_bytes,
            "max_reliable_queue_bytes must be at least max_message_bytes");
    require(c.max_unreliable_queue_bytes >= c.max_message_bytes,
            "max_unreliable_queue_bytes must be at least max_message_bytes");
    require(c.reliable_window >= 1 && c.reliable_window <= 16384, "reliable_window must be 1 to 16,384");
    require(c.redundant_window >= 1 && c.redundant_window <= 4096, "redundant_window must be 1 to 4,096");
    // One redundant message must fit in a first body after the header and a fragment ack.
    require(c.max_redundant_message_bytes + max_header_bytes + max_fragment_ack_bytes + run_header_bytes +
                    varint_size(static_cast<std::uint32_t>(c.max_body_bytes)) <=
                c.max_body_bytes,
            "max_redundant_message_bytes does not fit in a body");
    require(c.max_reassembly_bytes >= 1, "max_reassembly_bytes must be positive");
    require(c.max_reassembly_groups >= 1 && c.max_reassembly_groups <= 1024,
            "max_reassembly_groups must be 1 to 1,024");
    require(c.reassembly_timeout.count() > 0, "reassembly_timeout must be positive");
    require(c.max_sequence_jump >= received_packets::window && c.max_sequence_jump < 0x8000U,
            "max_sequence_jump must be 1,024 to 32,767");
    require(c.initial_rtt.count() > 0, "initial_rtt must be positive");
    require(c.min_resend_delay.count() > 0 && c.max_resend_delay >= c.min_resend_delay,
            "resend delays must be positive, min <= max");
    require(c.max_ack_delay.count() >= 0, "max_ack_delay must not be negative");
    require(c.reliable_send_rate == 0 || c.reliable_send_burst >= 1, "reliable_send_burst must be positive");
    require(c.loss_smoothing > 0.0 && c.loss_smoothing <= 1.0, "loss_smoothing must be in (0, 1]");
    return c;
}

} // namespace

// The body being written: its bytes, the content it carries (for its sent_packet record), and the open
// message run, if any.
struct link::body_builder {
    explicit body_builder(std::span<std::byte> buffer) noexcept
        : out{buffer} {}

    byte_writer out;
    sequence_t sequence{};
    bool open{false};
    bool first{true};         // the first body of this write_packets call
    bool carries_data{false}; // anything but acks
    bool has_fragment_ack{false};
    std::size_t fragment_chunks{0};
    std::uint8_t content_count{0};
    std::array<content_ref, max_packet_contents> contents{};

    run_writer run;
    std::uint8_t run_ref{0};

    [[nodiscard]] bool refs_full() const noexcept { return content_count == max_packet_contents; }
    void add_ref(content_ref ref) noexcept { contents[content_count++] = ref; }
    void close_run() noexcept {
        if (run.open()) {
            contents[run_ref].value = static_cast<std::uint16_t>(run.count());
            run.finish(out);
        }
    }
};

link::link(link_config config)
    : config_{checked(config)}
    , max_whole_bytes_{whole_limit(config_)}
    , fragment_bytes_{fragment_size(config_)}
    , limits_{static_cast<std::uint32_t>(config_.max_body_bytes),
              static_cast<std::uint32_t>(config_.max_message_bytes),
              static_cast<std::uint32_t>(config_.max_redundant_message_bytes),
              static_cast<std::uint32_t>(config_.max_fragments)}
    , rtt_{config_.initial_rtt}
    , loss_{config_.loss_smoothing}
    , pacing_{config_.reliable_send_rate, config_.reliable_send_burst}
    , reliable_out_{reliable_sender_config{config_.max_reliable_queue_bytes, config_.reliable_window,
                                           config_.max_message_bytes, max_whole_bytes_, fragment_bytes_}}
    , reliable_in_{config_.reliable_window, config_.max_reliable_queue_bytes}
    , unreliable_out_{config_.max_unreliable_queue_bytes, config_.max_message_bytes, max_whole_bytes_}
    , reassembly_{reassembly_limits{config_.max_reassembly_bytes, config_.max_reassembly_groups,
                                    config_.reassembly_timeout}}
    , redundant_out_{config_.redundant_window, config_.max_redundant_message_bytes}
    , body_(config_.max_body_bytes) {
    stats_.rtt = std::chrono::duration_cast<std::chrono::microseconds>(rtt_.smoothed());
    stats_.rtt_var = std::chrono::duration_cast<std::chrono::microseconds>(rtt_.variance());
}

send_status link::send(channel ch, std::span<const std::byte> message, clock::time_point now) {
    send_status status = send_status::too_big;
    switch (ch) {
    case channel::reliable:
        if (reliable_out_.size() == 0) {
            last_progress_ = now; // nothing was waiting for an ack: the silence before does not count
        }
        status = reliable_out_.push(message, now);
        break;
    case channel::unreliable:
        status = unreliable_out_.push(message);
        break;
    case channel::redundant:
        status = redundant_out_.push(message, stats_.redundant_overflow, now);
        break;
    }
    if (status == send_status::queued) {
        ++stats_.messages_sent[static_cast<std::size_t>(ch)];
    }
    return status;
}

clock::duration link::resend_timeout() const noexcept {
    return std::chrono::duration_cast<clock::duration>(
        rtt_.resend_timeout(config_.min_resend_delay, config_.max_resend_delay));
}

bool link::acks_due(clock::time_point now) const noexcept {
    return acks_owed_ >= 2 || (acks_owed_ == 1 && now - ack_owed_since_ >= config_.max_ack_delay);
}

bool link::probing(clock::time_point now, clock::duration rto) const noexcept {
    return reliable_out_.size() > 0 && now - last_progress_ >= probe_after_timeouts * rto;
}

std::optional<clock::time_point> link::reliable_due(clock::time_point now, clock::duration rto) const {
    if (reliable_out_.size() == 0) {
        return std::nullopt; // nothing queued, no block in flight either (its message stays queued until
                             // acked)
    }
    const auto due = reliable_out_.next_due(now, rto);
    std::optional<clock::time_point> when;
    if (due.unsent) {
        when = now;
    }
    if (due.resend) {
        auto resend = *due.resend;
        if (probing(now, rto)) {
            resend = std::max(resend, last_probe_ + rto);
        }
        if (!when || resend < *when) {
            when = resend;
        }
    }
    if (when) {
        when = std::max(*when, pacing_.when_allowed(now));
    }
    return when;
}

std::optional<clock::time_point> link::next_send_time(clock::time_point now) const {
    std::optional<clock::time_point> earliest;
    const auto consider = [&](clock::time_point when) {
        if (!earliest || when < *earliest) {
            earliest = when;
        }
    };
    if (!unreliable_out_.empty() || reliable_in_.fragment_ack_owed() || acks_owed_ >= 2 ||
        redundant_out_.has_unsent()) {
        return now;
    }
    if (acks_owed_ == 1) {
        consider(ack_owed_since_ + std::chrono::duration_cast<clock::duration>(config_.max_ack_delay));
    }
    // Resends only: a link with nothing awaiting an ack (the server's usual state between its ticks, visited
    // by every timer run) needs no resend timeout.
    if (redundant_out_.pending() > 0 || reliable_out_.size() > 0) {
        const auto rto = resend_timeout();
        if (redundant_out_.pending() > 0) {
            consider(redundant_out_.last_sent() + redundant_out_.resend_timeout(rto));
        }
        if (const auto reliable = reliable_due(now, rto)) {
            consider(*reliable);
        }
    }
    if (earliest && *earliest < now) {
        earliest = now;
    }
    return earliest;
}

bool link::wants_to_send(clock::time_point now) const {
    const auto when = next_send_time(now);
    return when && *when <= now;
}

clock::duration link::oldest_unacked_reliable_age(clock::time_point now) const {
    const auto since = oldest_unacked_reliable_since();
    return since ? now - *since : clock::duration::zero();
}

std::optional<clock::time_point> link::oldest_unacked_reliable_since() const {
    return reliable_out_.oldest_queued_at();
}

// ---------------------------------------------------------------------------------------------------------
// Writing

std::size_t link::write_packets(clock::time_point now, body_sink sink) {
    reassembly_.expire(now);
    stats_.messages_dropped = reassembly_.dropped();
    const auto rto = resend_timeout();
    const bool ack_due = acks_due(now) || reliable_in_.fragment_ack_owed();
    const bool redundant_due = redundant_out_.pending() > 0 &&
                               (redundant_out_.has_unsent() ||
                                now - redundant_out_.last_sent() >= redundant_out_.resend_timeout(rto));
    const auto reliable_when = reliable_due(now, rto);
    const bool reliable_now = reliable_when && *reliable_when <= now;
    // Without acks for several timeouts, timer resends are limited to one probe per resend timeout: the
    // oldest message or fragment due (as TCP resends only its first segment on a timeout).
    const bool probe_mode = probing(now, rto);
    bool probe_sent = false;
    const auto may_resend = [&](const reliable_sender::send_state& state) {
        if (!state.sent || !probe_mode) {
            return true;
        }
        if (probe_sent || now - last_probe_ < rto) {
            return false;
        }
        probe_sent = true;
        last_probe_ = now;
        return true;
    };
    if (!ack_due && !redundant_due && !reliable_now && unreliable_out_.empty()) {
        return 0;
    }

    body_builder body{body_};
    std::size_t written = 0;

    // Pending redundant messages, oldest first, as many as fit (up to one run).
    const auto write_redundant = [&] {
        const auto pending = std::min(redundant_out_.pending(), max_run_messages);
        if (pending == 0 || body.refs_full() || body.out.remaining() < run_header_bytes + 1) {
            return;
        }
        std::size_t room = body.out.remaining() - run_header_bytes;
        std::size_t count = 0;
        while (count < pending) {
            const auto size = run_writer::message_size(redundant_out_.message(count).size());
            if (size > room) {
                break;
            }
            room -= size;
            ++count;
        }
        if (count == 0) {
            return;
        }
        run_writer run;
        run.begin(body.out, chunk_type::redundant, redundant_out_.first_id());
        for (std::size_t i = 0; i < count; ++i) {
            run.add(body.out, redundant_out_.message(i));
        }
        run.finish(body.out);
        body.add_ref(
            {content_kind::redundant, static_cast<sequence_t>(redundant_out_.first_id() + count - 1), 0});
        body.carries_data = true;
        redundant_out_.mark_sent(count, now);
    };

    const auto open = [&] {
        body.out.truncate(0);
        body.sequence = next_sequence_;
        body.open = true;
        body.carries_data = false;
        body.has_fragment_ack = false;
        body.fragment_chunks = 0;
        body.content_count = 0;
        packet_header header;
        header.sequence = body.sequence;
        if (received_.any()) {
            header.has_ack = true;
            header.ack = received_.newest();
            header.ack_bits = received_.ack_bits();
            header.ack_delay = to_ack_delay_units(now - received_.newest_time());
        }
        write_header(body.out, header);
        if (body.first) {
            if (reliable_in_.fragment_ack_owed()) {
                reliable_in_.write_fragment_ack(body.out);
                body.has_fragment_ack = true;
            }
            write_redundant();
        }
    };

    const auto finish = [&] {
        body.close_run();
        if (!body.first) {
            write_redundant(); // in the room left
        }
        if (body.carries_data || ack_due || body.has_fragment_ack) {
            record_sent(body, now);
            ++written;
            sink(body.out.written());
        }
        body.open = false;
        body.first = false;
    };

    // Room for `size` more bytes (and a content reference, a fragment chunk), in this body or a new one.
    const auto make_room = [&](std::size_t size, bool needs_ref, bool is_fragment) {
        if (!body.open) {
            open();
        }
        if (body.out.remaining() < size || (needs_ref && body.refs_full()) ||
            (is_fragment && body.fragment_chunks == max_fragment_chunks_per_body)) {
            finish();
            open();
        }
    };

    open();

    // Reliable messages due, in id order, in runs of consecutive ids.
    if (reliable_now) {
        for (std::size_t i = 0; i < reliable_out_.size(); ++i) {
            auto& entry = reliable_out_.at(i);
            if (entry.block || !reliable_sender::due(entry.state, now, rto)) {
                continue;
            }
            if (!pacing_.allows(now)) {
                break;
            }
            if (!may_resend(entry.state)) {
                continue;
            }
            const auto id = static_cast<sequence_t>(reliable_out_.front_id() + i);
            const auto size = run_writer::message_size(entry.data.size());
            const bool extends = body.run.open() && body.run.next_id() == id &&
                                 body.run.count() < max_run_messages && body.out.remaining() >= size;
            std::size_t chunk_bytes = size;
            if (!extends) {
                body.close_run();
                make_room(run_header_bytes + size, true, false);
                body.run_ref = body.content_count;
                body.add_ref({content_kind::reliable_run, id, 0});
                body.run.begin(body.out, chunk_type::reliable, id);
                chunk_bytes += run_header_bytes;
            }
            body.run.add(body.out, entry.data);
            body.carries_data = true;
            if (reliable_out_.mark_sent(entry.state, now, body.sequence)) {
                ++stats_.resends;
            }
            pacing_.consume(chunk_bytes, now);
        }
        body.close_run();
    }

    // Fragments of the block in flight.
    if (reliable_now && reliable_out_.ensure_block()) {
        const auto total = reliable_out_.block_total_bytes();
        const auto id = reliable_out_.block_id();
        for (std::uint32_t index = 0;
             index < reliable_out_.block_fragment_count() && reliable_out_.block_active(); ++index) {
            if (!reliable_sender::due(reliable_out_.fragment_state(index), now, rto)) {
                continue;
            }
            if (!pacing_.allows(now)) {
                break;
            }
            if (!may_resend(reliable_out_.fragment_state(index))) {
                continue;
            }
            const auto size = fragment_chunk_size(total, fragment_bytes_, index);
            make_room(size, true, true);
            write_fragment(body.out, chunk_type::reliable_fragment, id, total, fragment_bytes_, index,
                           reliable_out_.block_fragment(index));
            body.add_ref({content_kind::block_fragment, id, static_cast<std::uint16_t>(index)});
            ++body.fragment_chunks;
            body.carries_data = true;
            if (reliable_out_.mark_fragment_sent(index, now, body.sequence)) {
                ++stats_.resends;
            }
            pacing_.consume(size, now);
        }
    }

    // Every queued unreliable message.
    for (const auto& item : unreliable_out_.items()) {
        const auto bytes = unreliable_out_.bytes(item);
        if (!item.fragmented) {
            make_room(unreliable_chunk_size(bytes.size()), false, false);
            write_unreliable(body.out, bytes);
            body.carries_data = true;
            continue;
        }
        const auto count = fragment_count(item.size, fragment_bytes_);
        for (std::uint32_t index = 0; index < count; ++index) {
            make_room(fragment_chunk_size(item.size, fragment_bytes_, index), false, true);
            const auto offset = std::size_t{index} * fragment_bytes_;
            write_fragment(body.out, chunk_type::unreliable_fragment, item.group, item.size, fragment_bytes_,
                           index, bytes.subspan(offset, fragment_length(item.size, fragment_bytes_, index)));
            ++body.fragment_chunks;
            body.carries_data = true;
        }
    }
    unreliable_out_.clear();

    if (body.open) {
        finish();
    }
    return written;
}

void link::record_sent(const body_builder& body, clock::time_point now) {
    sequence_t evicted = 0;
    if (auto* old = sent_.occupant(body.sequence, evicted); old != nullptr && !old->finalized) {
        finalize(*old, evicted);
    }
    auto* record = sent_.insert(body.sequence);
    record->sent_at = now;
    record->bytes = static_cast<std::uint32_t>(body.out.size());
    record->carries_data = body.carries_data;
    record->acked = false;
    record->covered = false;
    record->lost_declared = false;
    record->finalized = false;
    record->content_count = body.content_count;
    std::copy_n(body.contents.begin(), body.content_count, record->contents.begin());

    ++next_sequence_;
    acked_mask_ <<= 1;
    covered_mask_ <<= 1;
    lost_mask_ <<= 1;
    acks_owed_ = 0; // the header carried them
    ++stats_.packets_sent;
    stats_.bytes_sent += body.out.size();
    if (!body.carries_data) {
        ++stats_.ack_only_sent;
    }
}

// ---------------------------------------------------------------------------------------------------------
// Acks

void link::content_acked(const sent_packet& packet) {
    for (std::size_t i = 0; i < packet.content_count; ++i) {
        const auto& ref = packet.contents[i];
        switch (ref.kind) {
        case content_kind::reliable_run:
            reliable_out_.on_run_acked(ref.id, ref.value);
            break;
        case content_kind::block_fragment:
            reliable_out_.on_fragment_acked(ref.id, ref.value);
            break;
        case content_kind::redundant:
            redundant_out_.on_acked(ref.id);
            break;
        }
    }
}

void link::content_lost(const sent_packet& packet, sequence_t sequence) {
    for (std::size_t i = 0; i < packet.content_count; ++i) {
        const auto& ref = packet.contents[i];
        switch (ref.kind) {
        case content_kind::reliable_run:
            reliable_out_.on_run_lost(ref.id, ref.value, sequence);
            break;
        case content_kind::block_fragment:
            reliable_out_.on_fragment_lost(ref.id, ref.value, sequence);
            break;
        case content_kind::redundant:
            break; // it rides in every body anyway
        }
    }
}

// A packet's fate is settled: acked (counted when the ack came), or its ack window has passed. Never acked
// but covered by an ack field received: lost. Never covered (the ack fields jumped over it, e.g. after a
// burst of more than 32 packets): unknown, left out of the loss estimate.
void link::finalize(sent_packet& packet, sequence_t sequence) {
    packet.finalized = true;
    if (packet.acked || !packet.covered) {
        return;
    }
    if (!packet.lost_declared) {
        packet.lost_declared = true;
        content_lost(packet, sequence);
    }
    if (packet.carries_data) {
        loss_.add(true);
        ++stats_.packets_lost;
        stats_.loss = loss_.value();
    }
}

void link::apply_ack_bit(sequence_t sequence, std::uint16_t n, bool acked, const packet_header& header,
                         clock::time_point now) {
    auto* packet = sent_.find(sequence);
    if (packet == nullptr) {
        return;
    }
    packet->covered = true;
    if (acked) {
        if (packet->acked) {
            return;
        }
        packet->acked = true;
        ++stats_.packets_acked;
        last_progress_ = now;
        if (n == 0) {
            const auto delay = std::chrono::duration_cast<std::chrono::nanoseconds>(
                header.ack_delay * std::chrono::nanoseconds{ack_delay_unit});
            rtt_.add_sample(now - packet->sent_at, delay);
            stats_.rtt = std::chrono::duration_cast<std::chrono::microseconds>(rtt_.smoothed());
            stats_.rtt_var = std::chrono::duration_cast<std::chrono::microseconds>(rtt_.variance());
            stats_.min_rtt = std::chrono::duration_cast<std::chrono::microseconds>(rtt_.min_rtt());
        }
        if (!packet->finalized) {
            packet->finalized = true;
            if (packet->carries_data) {
                loss_.add(false);
                stats_.loss = loss_.value();
            }
        }
        content_acked(*packet);
    } else if (n >= packet_reorder_threshold && !packet->acked && !packet->lost_declared) {
        packet->lost_declared = true;
        content_lost(*packet, sequence);
    }
}

void link::apply_acks(const packet_header& header, clock::time_point now) {
    if (!header.has_ack) {
        return;
    }
    // How far `ack` is behind the newest packet sent (check_body refused acks of packets not sent).
    const auto behind = sequence_distance(static_cast<sequence_t>(next_sequence_ - 1), header.ack);
    if (behind < 32) {
        // In the masks' coordinates (bit i: sequence next_sequence_ - 1 - i), the field's bit n is bit
        // behind + n. Only bits that change something are visited.
        const std::uint64_t field = std::uint64_t{header.ack_bits} << behind;
        const std::uint64_t span = std::uint64_t{0xFFFFFFFF} << behind;
        const std::uint64_t recent = std::uint64_t{(1U << packet_reorder_threshold) - 1} << behind;
        const std::uint64_t newly_acked = field & ~acked_mask_;
        const std::uint64_t newly_covered = span & ~covered_mask_;
        const std::uint64_t newly_lost = span & ~field & ~recent & ~acked_mask_ & ~lost_mask_;
        for (std::uint64_t todo = newly_acked | newly_covered | newly_lost; todo != 0; todo &= todo - 1) {
            const auto i = static_cast<std::uint16_t>(std::countr_zero(todo));
            const auto n = static_cast<std::uint16_t>(i - behind);
            apply_ack_bit(static_cast<sequence_t>(next_sequence_ - 1 - i), n, ((field >> i) & 1U) != 0,
                          header, now);
        }
        acked_mask_ |= newly_acked;
        covered_mask_ |= span;
        lost_mask_ |= newly_lost;
    } else {
        for (std::uint16_t n = 0; n < ack_field_span; ++n) {
            apply_ack_bit(static_cast<sequence_t>(header.ack - n), n, ((header.ack_bits >> n) & 1U) != 0,
                          header, now);
        }
    }
    if (!any_acked_ || sequence_greater_than(header.ack, newest_acked_)) {
        any_acked_ = true;
        newest_acked_ = header.ack;
        // Settle the packets whose ack window has now passed (each sequence once).
        while (sequence_distance(newest_acked_, unfinalized_) >= ack_field_span &&
               sequence_distance(newest_acked_, unfinalized_) < 0x8000U) {
            if (auto* packet = sent_.find(unfinalized_); packet != nullptr && !packet->finalized) {
                finalize(*packet, unfinalized_);
            }
            ++unfinalized_;
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Receiving

receive_error link::check_body(std::span<const std::byte> body, packet_header& header, std::size_t& chunks_at,
                               bool& carries_data) const {
    byte_reader in{body};
    if (const auto error = read_header(in, header); error != receive_error::none) {
        return error;
    }
    chunks_at = in.position();
    switch (received_.check(header.sequence, config_.max_sequence_jump)) {
    case received_packets::verdict::fresh:
        break;
    case received_packets::verdict::duplicate:
        return receive_error::duplicate;
    case received_packets::verdict::stale:
        return receive_error::stale;
    case received_packets::verdict::too_far_ahead:
        return receive_error::sequence_out_of_window;
    }
    if (header.has_ack) {
        // An ack of a sequence this link has not sent yet (next_sequence_ - 1 is the newest sent).
        const auto newest_sent = static_cast<sequence_t>(next_sequence_ - 1);
        if (stats_.packets_sent == 0 || sequence_greater_than(header.ack, newest_sent)) {
            return receive_error::ack_out_of_window;
        }
    }

    reliable_receiver::body_check reliable_check;
    struct group_seen {
        sequence_t id;
        std::uint32_t total_bytes;
        std::uint32_t fragment_bytes;
    };
    std::array<group_seen, max_fragment_chunks_per_body> groups; // only [0, group_count) is read: not zeroed
    std::size_t group_count = 0;
    std::size_t fragment_chunks = 0;
    carries_data = false;
    chunk c;
    while (!in.empty()) {
        if (const auto error = read_chunk(in, limits_, c); error != receive_error::none) {
            return error;
        }
        receive_error error = receive_error::none;
        switch (c.type) {
        case chunk_type::reliable: {
            carries_data = true;
            std::uint32_t i = 0;
            for_each_message(c.run, [&](std::span<const std::byte> message) {
                if (error == receive_error::none) {
                    error = reliable_in_.check_message(static_cast<sequence_t>(c.run.first_id + i),
                                                       message.size(), reliable_check);
                }
                ++i;
            });
            break;
        }
        case chunk_type::reliable_fragment:
            carries_data = true;
            error = ++fragment_chunks > max_fragment_chunks_per_body
                        ? receive_error::too_many_fragments
                        : reliable_in_.check_fragment(c.frag, reliable_check);
            break;
        case chunk_type::unreliable_fragment: {
            carries_data = true;
            if (++fragment_chunks > max_fragment_chunks_per_body) {
                error = receive_error::too_many_fragments;
                break;
            }
            if (!reassembly_.consistent(c.frag)) {
                error = receive_error::inconsistent_fragments;
                break;
            }
            const auto seen =
                std::find_if(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(group_count),
                             [&](const group_seen& g) { return g.id == c.frag.id; });
            if (seen != groups.begin() + static_cast<std::ptrdiff_t>(group_count)) {
                if (seen->total_bytes != c.frag.total_bytes ||
                    seen->fragment_bytes != c.frag.fragment_bytes) {
                    error = receive_error::inconsistent_fragments;
                }
            } else {
                groups[group_count++] = {c.frag.id, c.frag.total_bytes, c.frag.fragment_bytes};
            }
            break;
        }
        case chunk_type::fragment_ack:
            error = reliable_out_.check_fragment_ack(c.ack);
            break;
        case chunk_type::unreliable:
        case chunk_type::redundant:
            carries_data = true;
            break;
        }
        if (error != receive_error::none) {
            return error;
        }
    }
    return receive_error::none;
}

receive_result link::receive(std::span<const std::byte> body, clock::time_point now,
                             const deliver_function& deliver) {
    receive_result result;
    bool carries_data = false;
    packet_header header;
    std::size_t chunks_at = 0;
    result.error = body.size() > config_.max_body_bytes ? receive_error::body_too_big
                                                        : check_body(body, header, chunks_at, carries_data);
    if (result.error != receive_error::none) {
        ++stats_.packets_refused;
        ++stats_.refused[static_cast<std::size_t>(result.error)];
        return result;
    }

    // Checked: apply. Nothing below can fail.
    apply_acks(header, now);
    received_.record(header.sequence, now);
    ++stats_.packets_received;
    stats_.bytes_received += body.size();
    if (carries_data) {
        if (acks_owed_ == 0) {
            ack_owed_since_ = now;
        }
        ++acks_owed_;
    }

    const delivery out{deliver, result.delivered, stats_.messages_delivered};
    byte_reader in{body.subspan(chunks_at)};
    chunk c;
    while (!in.empty()) {
        static_cast<void>(read_chunk(in, limits_, c));
        switch (c.type) {
        case chunk_type::reliable: {
            std::uint32_t i = 0;
            for_each_message(c.run, [&](std::span<const std::byte> message) {
                reliable_in_.accept_message(static_cast<sequence_t>(c.run.first_id + i++), message, out);
            });
            break;
        }
        case chunk_type::reliable_fragment:
            reliable_in_.accept_fragment(c.frag, out);
            break;
        case chunk_type::fragment_ack:
            reliable_out_.on_fragment_ack(c.ack);
            break;
        case chunk_type::unreliable:
            out(channel::unreliable, c.message);
            break;
        case chunk_type::unreliable_fragment:
            if (const auto message = reassembly_.add(c.frag, now)) {
                out(channel::unreliable, *message);
            }
            break;
        case chunk_type::redundant:
            redundant_in_.accept(c.run, out, stats_.redundant_skipped);
            break;
        }
    }
    reassembly_.expire(now);
    stats_.messages_dropped = reassembly_.dropped();
    return result;
}

void link::prefetch_receive() const noexcept {
    // What a body's check reads (the limits), then the sequences, ack masks, received packets and the
    // round-trip estimate. Nothing here may read the link's own members to decide what to ask for (the
    // record of the newest packet sent, say): that read would wait for the very line this is to spare.
    detail::prefetch_members(config_, limits_);
    detail::prefetch_members(next_sequence_, rtt_);
}

void link::prefetch_send() const noexcept {
    // The limits, then everything from the sequences to the body being written: the acks a body carries,
    // the pacing, the channels' queues and the counts; and the record the next packet sent takes. That one
    // lies where next_sequence_ says, so this waits for that line (called a few connections ahead, while
    // the one before is sent, the wait overlaps with that work).
    detail::prefetch_members(config_, limits_);
    detail::prefetch_members(next_sequence_, body_);
    sent_.prefetch(next_sequence_);
}

} // namespace ecsnet::transport
