#pragma once

// The receive side of the redundant channel: delivers each id once, in increasing order. A run carries the
// sender's pending messages from its oldest; ids below the next expected one were delivered already (or are
// older than one delivered) and are dropped; a gap (the sender's window overflowed while its packets were
// lost) is skipped and counted.

#include <cstddef>
#include <cstdint>

#include "chunk.hpp"
#include "reliable_receiver.hpp"
#include "sequence.hpp"

namespace ecsnet::transport {

class redundant_receiver {
public:
    void accept(const message_run& run, const delivery& out, std::uint64_t& skipped) {
        std::uint32_t i = 0;
        for_each_message(run, [&](std::span<const std::byte> message) {
            const auto id = static_cast<sequence_t>(run.first_id + i++);
            if (sequence_less_than(id, next_)) {
                return;
            }
            skipped += sequence_distance(id, next_);
            next_ = static_cast<sequence_t>(id + 1);
            out(channel::redundant, message);
        });
    }

    /// The next id expected (every id before it was delivered or skipped).
    [[nodiscard]] sequence_t next_expected() const noexcept { return next_; }

private:
    sequence_t next_{0};
};

} // namespace ecsnet::transport
