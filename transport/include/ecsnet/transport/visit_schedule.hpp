#pragma once

// When each connection next needs the server's timer visit (a timeout, a stalled link, a resend or an ack
// owed, a keep-alive), so that server_core::update visits the connections due rather than every connection
// every few milliseconds: a thousand connections' state (about 21 KB each) is far beyond the caches, and
// visiting each one 200 times a second to find nothing due was about 4% of a loaded server's time
// (bench/RESULTS.md, "eleventh pass"). Valve's GameNetworkingSockets schedules its connections' "thinkers"
// the same way.
//
// A timing wheel of (time, connection) entries, one bucket per millisecond over about a second (an entry
// further ahead waits in its bucket for its turn of the wheel), with lazy deletion; plus per connection
// slot its due time and the time of its one live entry, which is never later than the due time:
// - a due time that moves earlier adds an entry (the one before it goes stale, dropped when it comes up);
// - one that moves later adds nothing: when its live entry comes up, it is queued again at the new time,
//   from this dense state alone, without touching the connection.
// So a connection that receives and sends every tick costs a few appends to a bucket a tick and no visit
// (a binary heap, tried first, took 5.8 times the timer's instructions: server_transport_callgrind). Stale
// entries are bounded: past 8 per connection scheduled (plus a few), the wheel is rebuilt from the dense
// state. A connection is taken at most a millisecond after its due time (plus the caller's period).
// Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "clock.hpp"
#include "server_handler.hpp"

namespace ecsnet::transport {

class visit_schedule {
public:
    visit_schedule();

    /// The connection wants a visit at `when` (not before): the earliest time one of its timers may fire.
    void set_due(connection_id id, clock::time_point when);
    /// The connection is gone: none of its entries is due any more.
    void forget(connection_id id) noexcept;
    /// Appends to `out` the connections due at `now`, each once, taking them out of the schedule: the
    /// caller visits each and sets its due time again.
    void take_due(clock::time_point now, std::vector<connection_id>& out);

    /// Entries in the wheel, live and stale (for the tests' bound).
    [[nodiscard]] std::size_t entries() const noexcept { return entries_; }
    /// Connections with a due time.
    [[nodiscard]] std::size_t scheduled() const noexcept { return scheduled_; }

private:
    static constexpr clock::time_point never = clock::time_point::max();
    static constexpr std::size_t wheel_size = 1024; // buckets of a millisecond: a power of two

    struct entry {
        clock::time_point when;
        connection_id id;
    };
    struct slot_state {
        connection_id id{};              // the connection scheduled in this slot (0: none)
        clock::time_point due{never};    // when it wants its visit
        clock::time_point queued{never}; // the time of its live entry (<= due)
    };

    void push(clock::time_point when, connection_id id);
    std::vector<entry>& bucket_of(clock::time_point when);
    void rebuild();
    [[nodiscard]] std::size_t most_entries() const noexcept { return 8 * scheduled_ + 64; }

    std::vector<std::vector<entry>> wheel_; // by millisecond (rounded up) modulo wheel_size
    std::vector<entry> draining_;           // the bucket take_due() is going through
    std::int64_t next_ms_{0};               // the first millisecond whose bucket take_due() drains next
    bool draining_now_{false};              // in take_due(): a rebuild waits for its end
    std::size_t entries_{0};
    std::vector<slot_state> slots_;
    std::size_t scheduled_{0};
};

} // namespace ecsnet::transport
