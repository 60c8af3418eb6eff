#pragma once

// One client's inputs waiting for their tick (issue 17: prediction). A client that predicts sends each input
// for the server tick it simulated it at (Input.client_tick), a little ahead of the server; the server keeps
// them here and applies, at each tick, the input for that tick: the same input at the same tick as the
// client's prediction, so both compute the same state.
//
//   - early (client_tick up to max_lead ticks after the next tick): kept until its tick;
//   - for the next tick: applied at it;
//   - late (client_tick already past): applied at the next tick, in sequence order, and counted (a
//     client that does not predict sends its inputs for the tick it sees, so they are all late: they are
//     applied as they were before there was a buffer, each once);
//   - further ahead than max_lead: refused and counted (a client cannot queue commands into the future);
//   - more than max_per_tick for one tick: refused and counted (a flood cannot grow the buffer).
// A tick with no input of the client repeats its newest one (client_input::repeated: movement goes on,
// one-shot actions must not fire again) and counts as "ran dry": the client's inputs arrived too late.
//
// How early inputs arrive (the slack: client_tick minus the next tick, at arrival) is kept as the smallest
// over the last second: the server sends it to the client (InputStatus.lead_ticks), which adapts how far
// ahead it runs so that its inputs arrive about a tick early (Overwatch's rule).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ecsnet/proto/state.hpp>
#include <ecsnet/transport/function_ref.hpp>

#include "game_world.hpp"

namespace ecsnet::server {

class input_buffer {
public:
    /// How far ahead of the server an input may be, in ticks.
    static constexpr std::int64_t max_lead = 32;
    /// Inputs kept for one tick.
    static constexpr std::size_t max_per_tick = 32;

    enum class verdict { kept, late, future, flood };

    /// An input (with its owned payload) received while `next_tick` is the tick the server runs next.
    /// `ticks_per_second` sets the window of the lead measure.
    verdict offer(const client_input& input, std::string payload, proto::tick_type next_tick,
                  std::uint32_t ticks_per_second);

    /// Calls `apply` with every input due at `tick` (the late ones first, in sequence order), or, when none
    /// is and an input was ever applied, with the newest one again (repeated = true: "ran dry"). Returns
    /// whether the client ran dry. `apply` is borrowed for the call (the tick's lambda captures more than a
    /// std::function holds without allocating: that was an allocation per client per tick).
    bool take(proto::tick_type tick, transport::function_ref<void(const client_input&)> apply);

    /// The smallest slack over the last second (ticks early; negative: late), if an input arrived in it.
    [[nodiscard]] std::optional<std::int32_t> lead() const noexcept;
    /// The newest input applied (not repeated): its sequence and client tick (0 and 0: none yet).
    [[nodiscard]] std::uint32_t applied_sequence() const noexcept { return applied_sequence_; }
    [[nodiscard]] std::uint32_t applied_client_tick() const noexcept { return applied_client_tick_; }
    [[nodiscard]] std::uint64_t ran_dry() const noexcept { return ran_dry_; }
    [[nodiscard]] std::size_t waiting() const noexcept { return waiting_.size(); }
    /// Asks for the inputs waiting (what take() reads first) without waiting for them. Only a hint.
    void prefetch() const noexcept { __builtin_prefetch(waiting_.data()); }

private:
    struct waiting_input {
        proto::tick_type due{}; // the tick it is applied at
        client_input input;
        std::string payload;
    };

    std::vector<waiting_input> waiting_; // in arrival (= sequence) order
    std::optional<waiting_input> newest_applied_;
    std::uint32_t applied_sequence_{};
    std::uint32_t applied_client_tick_{};
    std::uint64_t ran_dry_{};
    // The smallest slack of the current window and of the one before (a window is a second of ticks).
    proto::tick_type window_start_{};
    std::optional<std::int32_t> window_min_;
    std::optional<std::int32_t> previous_window_min_;
};

} // namespace ecsnet::server
