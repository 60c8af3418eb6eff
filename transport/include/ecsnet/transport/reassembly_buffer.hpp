#pragma once

// Reassembly of unreliable messages sent in fragments, with bounded memory: at most `max_groups` messages
// in progress and `max_bytes` of buffers (those kept for reuse included), each message's buffer allocated
// once at its announced size (already checked against max_message_bytes by the reader). A fragment of a
// new message that does not fit evicts the oldest message in progress if that one is older (by group id),
// else it is dropped; a message incomplete `timeout` after its first fragment is dropped. Every message
// lost this way is counted once (dropped()). Ids of the last 64 messages finished (delivered, evicted,
// timed out) are remembered, so a late fragment of one of them is ignored instead of starting it again.
//
// A lost fragment loses its own message only; nothing here ever fails the link.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "chunk.hpp"
#include "clock.hpp"
#include "fragment_assembly.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

struct reassembly_limits {
    std::size_t max_bytes{1 << 20};
    std::size_t max_groups{16};
    clock::duration timeout{std::chrono::seconds{1}};
};

class reassembly_buffer {
public:
    explicit reassembly_buffer(reassembly_limits limits);

    /// Whether `frag` agrees (total and fragment size) with the message of its id in progress, if any. A
    /// body carrying one that does not is refused (inconsistent_fragments) before anything is added.
    [[nodiscard]] bool consistent(const fragment& frag) const noexcept;

    /// Adds a fragment received at `now`. Returns the message when this fragment completes it (the view
    /// stays valid until the next add() or expire()).
    std::optional<std::span<const std::byte>> add(const fragment& frag, clock::time_point now);

    /// Drops the messages incomplete for `timeout` or longer.
    void expire(clock::time_point now);

    /// Messages lost to the limits or the timeout.
    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
    /// Bytes of buffers held (in progress, and kept for reuse).
    [[nodiscard]] std::size_t held_bytes() const noexcept;
    [[nodiscard]] std::size_t in_progress() const noexcept { return active_; }
    [[nodiscard]] const reassembly_limits& limits() const noexcept { return limits_; }

private:
    struct group {
        fragment_assembly assembly;
        clock::time_point started{};
        sequence_t id{};
        bool active{false};
    };

    void release_completed() noexcept;
    void finish(group& g, bool dropped) noexcept;
    [[nodiscard]] bool recently_finished(sequence_t id) const noexcept;
    [[nodiscard]] group* find(sequence_t id) noexcept;
    [[nodiscard]] const group* find(sequence_t id) const noexcept;
    /// A slot for a new message of `total` bytes with id `id`, making room by evicting older ones; nullptr
    /// when the new message must be dropped.
    [[nodiscard]] group* make_room(sequence_t id, std::uint32_t total);

    reassembly_limits limits_;
    std::vector<group> groups_;
    std::array<sequence_t, 64> finished_{};
    std::size_t finished_count_{0};
    std::size_t finished_next_{0};
    group* completed_{nullptr};
    std::size_t active_{0};
    std::uint64_t dropped_{0};
};

} // namespace ecsnet::transport
