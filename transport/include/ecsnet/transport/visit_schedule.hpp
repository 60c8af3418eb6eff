#pragma once

// When each connection next needs the server's timer visit (a timeout, a stalled link, a resend or an ack
// owed, a keep-alive), so that server_core::update visits the connections due rather than every connection
// every few milliseconds: a thousand connections' state (about 21 KB each) is far beyond the caches, and
// visiting each one 200 times a second to find nothing due was about 4% of a loaded server's time
// (bench/RESULTS.md, "eleventh pass"). Valve's GameNetworkingSockets schedules its connections' "thinkers"
// the same way.
//
// A binary min-heap of (time, connection) entries with lazy deletion, plus per connection slot its due
// time and the time of its one live entry, which is never later than the due time:
// - a due time that moves earlier pushes an entry (the one before it goes stale, dropped when it comes up);
// - one that moves later pushes nothing: when its live entry comes up, it is pushed again at the new time,
//   from this dense state alone, without touching the connection.
// So a connection that receives and sends every tick costs a couple of heap operations a tick and no
// visit. Stale entries are bounded: past 8 per slot in use (plus a few), the heap is rebuilt from the dense
// state. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "clock.hpp"
#include "server_handler.hpp"

namespace ecsnet::transport {

class visit_schedule {
public:
    /// The connection wants a visit at `when` (not before): the earliest time one of its timers may fire.
    void set_due(connection_id id, clock::time_point when);
    /// The connection is gone: none of its entries is due any more.
    void forget(connection_id id) noexcept;
    /// Appends to `out` the connections due at `now`, each once, taking them out of the schedule: the
    /// caller visits each and sets its due time again.
    void take_due(clock::time_point now, std::vector<connection_id>& out);

    /// Heap entries, live and stale (for the tests' bound).
    [[nodiscard]] std::size_t entries() const noexcept { return heap_.size(); }
    /// Connections with a due time.
    [[nodiscard]] std::size_t scheduled() const noexcept { return scheduled_; }

private:
    static constexpr clock::time_point never = clock::time_point::max();

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
    void pop() noexcept;
    void rebuild();

    std::vector<entry> heap_; // a min-heap by `when`
    std::vector<slot_state> slots_;
    std::size_t scheduled_{0};
};

} // namespace ecsnet::transport
