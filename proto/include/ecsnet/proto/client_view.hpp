#pragma once

// The server's side of one client's interest-managed view (docs/protocol.md, "Interest-managed
// snapshots"): the views it sent, which one the client acked, and the writing of each tick's ViewSnapshot
// as a delta from the newest acked view.
//
// Each tick the server passes the client's relevant entities (sorted by index, with their priority
// weights) and the bits its budget allows. The delta from the base view holds:
//   - left:     entities of the base no longer relevant (or destroyed), always sent;
//   - entered:  relevant entities the base lacks, sent whole;
//   - changed:  entities whose value differs from their reference (entity_row.hpp), coded per entity;
//   - refreshed: entities whose base value the server has forgotten, sent whole again;
//   - deferred: changed entities the budget held back: they keep their last value, and the client shows its
//               reference (its linear extrapolation, for moving entities), so a moving entity held back
//               keeps moving as predicted instead of stopping.
// Everything else advances to the tick by its reference (unchanged entities, and moving ones whose motion
// the extrapolation predicts exactly), at no cost.
//
// Budget: what was sent in a view newer than the base (still in flight) is sent again whatever the budget
// (otherwise the client's view would step back when that view arrives and then this one), and so is a
// refresh; optional content
// (new changes and entries) is admitted by priority, weight x ticks waiting, while the budget lasts, the
// first one even if it alone exceeds it, so every tick makes progress. The caller keeps the budget's
// account (a token bucket in bits, on what was really sent).
//
// Serialize once: entity bits come from the shared view_encoder; a client's own bits are the lists.
// Cost per client and tick: O(relevant entities + base entries), plus a cached code per moving entity.
// Not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ecsnet/v1/envelope.pb.h"
#include "recycling_queue.hpp"
#include "view_encoder.hpp"
#include "view_frame.hpp"

namespace ecsnet::proto {

struct view_write_report {
    tick_type tick{};
    bool full_state{};
    std::optional<tick_type> base;
    std::size_t relevant{};
    std::size_t view_size{}; // entities in the new view
    std::size_t left{};
    std::size_t entered{};
    std::size_t changed{};
    std::size_t refreshed{};
    std::size_t deferred{};  // changed entities held back by the budget
    std::size_t waiting{};   // relevant entities not entered yet (budget)
    std::size_t mandatory{}; // entities sent again because they are in flight
    std::size_t body_bits{};
    std::size_t shared_bits{}; // of which copied from the shared encoder
};

class client_view {
public:
    explicit client_view(view_encoder& encoder, std::size_t max_frames = 64);

    /// The client's Ack: `tick` is its newest applied view; a full-state request forgets every base.
    /// Only noted: the views it retires are looked up when the next one is prepared, their records are cold
    /// when the ack arrives (a thousand clients' acks come between two writes of one) and warm then.
    void on_ack(tick_type tick, bool full_state_requested);
    /// Forgets every view (a new connection).
    void reset();
    /// Writes the next views with another encoder (of the same rows; tables versions distinct from the
    /// first's): the next view carries that encoder's tables, since its base's version differs.
    void use_encoder(view_encoder& encoder) noexcept { encoder_ = &encoder; }
    [[nodiscard]] const view_encoder& encoder() const noexcept { return *encoder_; }

    /// The newest acked view the server still keeps (the base of the next snapshot), or nullptr.
    [[nodiscard]] const view_frame* base() const noexcept;
    /// The newest view sent, or nullptr.
    [[nodiscard]] const view_frame* newest() const noexcept {
        return frames_.empty() ? nullptr : &frames_.back();
    }
    /// Views kept for reuse, in flight or not (what the most views in flight at once made it keep, until
    /// a long calm gives the surplus back).
    [[nodiscard]] std::size_t frames_kept() const noexcept { return frames_.capacity(); }

    /// Ask for what write() reads first without waiting for it, ahead of it: a server writing a thousand
    /// clients' views one after the other finds each one's state cold in cache. Two steps, some time apart:
    /// prefetch_records() asks for the records of the base and newest views (and the entities waiting to
    /// enter), prefetch_entries() for the first lines of the base's entries, which its record points to (so
    /// the records should have arrived: ask for them a client earlier; the newest view is read at a few
    /// places only, found from the base's). prefetch_entries() first settles the acks noted since the last
    /// write, which read those records.
    void prefetch_records() const noexcept;
    void prefetch_entries() noexcept;

    /// Writes the ViewSnapshot of the encoder's tick into `out` (an Envelope) and keeps the new view.
    /// `relevant`: sorted by index; a member no longer alive with its generation in the encoder's rows (a set
    /// made a few ticks ago) is skipped, as if not relevant. `weights`: their priority weights (parallel,
    /// > 0). `budget_bits`: what optional content may take (<= 0: only what is in flight).
    view_write_report write(std::span<const net_entity> relevant, std::span<const float> weights,
                            std::int64_t budget_bits, std::int64_t time_offset_us, v1::Envelope& out);

private:
    struct waiting_entry {
        std::uint32_t index{};
        tick_type since{};
    };

    void settle_acks() noexcept;
    void drop_oldest() noexcept;
    void release_calm_surplus();

    view_encoder* encoder_;
    std::size_t max_frames_;
    // Sent views, oldest first. A dropped view's buffers serve the next ones: a fresh buffer per view was a
    // malloc and a zero-fill of a few kilobytes per client per tick, and with a few spare ones only, every
    // burst of acks freed views that the next ticks allocated again.
    recycling_queue<view_frame> frames_;
    std::size_t most_in_flight_{0}; // the most views kept at once since the last release_calm_surplus()
    std::uint32_t writes_since_release_{0};
    std::optional<tick_type> acked_;
    // Acks noted and not yet settled (settle_acks()): a few, in their order; one more settles them first.
    std::array<tick_type, 4> unsettled_acks_{};
    std::uint8_t unsettled_count_{0};
    std::vector<waiting_entry> waiting_;      // relevant entities not entered yet, and since when
    std::vector<waiting_entry> next_waiting_; // the next waiting_, while it is made
    // The rest of what write() works in (candidates, lists, the body) is the thread's, shared by every
    // client written on it (client_view.cpp): per client it was a few kilobytes cold in cache every tick.
};

/// The header check of a ViewSnapshot (CRC-16/CCITT-FALSE, docs/protocol.md): tick (u32), flags (u8:
/// 1 = full state, 2 = checksum present), baseline_gap (u32), time_offset_us (i64), body length (u32) and
/// the view checksum (u64), little-endian.
[[nodiscard]] std::uint16_t view_header_check(tick_type tick, bool full_state, bool has_checksum,
                                              std::uint32_t baseline_gap, std::int64_t time_offset_us,
                                              std::uint32_t body_size, std::uint64_t checksum) noexcept;

} // namespace ecsnet::proto
