#pragma once

// What the live inspector (docs/inspector.md) reads, published by the tick thread for the admin endpoint's
// threads.
//
// The world: a frame is a copy of the newest tick of the snapshot history (its quantized columns: the
// server already keeps them; no registry walk), plus a summary of the clients. The tick thread publishes
// one only while someone looks (an event stream is open, or an API request came in the last few seconds)
// and at most `publish_hz` times a second, between two ticks' work (game_server::tick, after the capture):
// ONE copy shared by every reader, none when nobody watches. Frames are immutable once published
// (shared_ptr<const>); the tick thread copies into a retired frame nobody holds any more, so a steady
// state allocates nothing.
//
// Server-only components are not in the history: an entity panel's request (server_only()) queues the
// entity's index (at most `server_only_pending` at once) and the tick thread answers between two ticks
// with game_world::inspect() for those few entities only.
//
// The time series (tick duration, clients, bandwidth: one sample a second, the last 10 minutes) and the
// recent disconnects (with reasons) are kept whether or not anyone looks: a few numbers a second.
//
// Threads: publish(), add_sample(), add_disconnect() and take_spare() from the tick thread; the rest from
// any thread. One mutex guards the shared pointers and the rings; nothing holds it while copying or
// rendering.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <ecsnet/proto/history.hpp>

#include "../game_world.hpp"

namespace ecsnet::server::inspector {

/// One client as the inspector shows it.
struct client_summary {
    std::uint32_t id{};
    std::string name;
    std::string remote;
    std::string transport;
    bool playing{};
    std::optional<std::uint32_t> avatar; // entity index
    std::optional<double> rtt_ms;
    std::optional<double> loss;
    std::uint64_t bytes_sent{};
    std::uint64_t bytes_received{};
    std::optional<std::uint32_t> ticks_behind; // newest tick - newest acked
    std::uint64_t full_state_requests{};       // the client's mirror disagreed with a delta (desyncs)
    std::uint64_t inputs_received{};
    std::size_t unsent_bytes{};
};

struct disconnect_record {
    std::uint32_t id{};
    std::string name;
    std::string remote;
    std::string reason; // DisconnectReason name
    std::string message;
    std::int64_t unix_ms{};
    std::uint64_t bytes_sent{};
    std::uint64_t bytes_received{};
};

/// An entity's server-only components (game_world::inspect), read by the tick thread on request.
struct server_only_view {
    proto::tick_type tick{};
    std::uint32_t index{};
    std::optional<std::uint32_t> version; // the occupant's entity version; none when the index is free
    std::vector<inspected_component> components;
};

/// One second of the server.
struct series_sample {
    std::int64_t unix_ms{};
    double tick_ms_mean{};
    double tick_ms_max{};
    std::uint32_t ticks{};
    std::uint32_t clients{};
    double bytes_out_per_s{};
    double bytes_in_per_s{};
    std::size_t entities{};
};

/// The newest tick's replicated state, as the history holds it (columns by component), and the clients.
struct frame {
    proto::tick_type tick{};
    std::uint64_t server_time_us{};
    std::uint64_t checksum{};
    std::int64_t unix_ms{};
    double copy_ms{};                       // what taking this frame cost the tick thread
    std::vector<std::uint32_t> entities;    // sorted indices
    std::vector<std::uint32_t> generations; // parallel to entities
    struct component {
        bool ids_are_entities{true};
        std::vector<std::uint32_t> ids; // sorted, when not the entities
        std::vector<proto::field_column> fields;
    };
    std::vector<component> components;
    std::vector<client_summary> clients;
    float relevancy_radius{};
    std::uint32_t tick_rate{};

    /// Position of `index` in entities, if replicated.
    [[nodiscard]] std::optional<std::size_t> find(std::uint32_t index) const noexcept;
    /// Position of entities[at] in component c's columns, if it has the component.
    [[nodiscard]] std::optional<std::size_t> row_of(std::size_t c, std::size_t at) const noexcept;

    /// The stream event (api.hpp), rendered once by whichever reader needs it first.
    mutable std::mutex event_mutex;
    mutable std::string event;
    mutable bool event_ready{false};
};

struct feed_options {
    double publish_hz{4.0};
    /// An API request keeps frames coming this long (the first request may wait for one).
    std::chrono::milliseconds demand_keeps{3000};
    std::size_t max_streams{32};
    std::size_t series_seconds{600};
    std::size_t disconnects_kept{64};
    /// Entities whose server-only components may be waiting for the tick thread at once (more: skipped).
    std::size_t server_only_pending{8};
};

class feed {
public:
    using clock = std::chrono::steady_clock;

    explicit feed(feed_options options = {});
    feed(const feed&) = delete;
    feed& operator=(const feed&) = delete;

    [[nodiscard]] const feed_options& options() const noexcept { return options_; }

    // --- tick thread ---
    /// True when a frame should be taken now: someone looks, and the last one is 1/publish_hz old.
    [[nodiscard]] bool wants_frame(clock::time_point now) const noexcept;
    /// A frame to fill: a retired one no reader holds any more, or a new one.
    [[nodiscard]] std::shared_ptr<frame> take_spare();
    /// Copies the newest tick of `history` into `out` (its columns; no registry access).
    static void copy_newest(const proto::snapshot_history& history, frame& out);
    void publish(std::shared_ptr<frame> next, clock::time_point now);
    void add_sample(const series_sample& sample);
    void add_disconnect(disconnect_record record);
    /// True when an entity panel asked for server-only components (a relaxed load: cheap every tick).
    [[nodiscard]] bool server_only_wanted() const noexcept {
        return server_only_wanted_.load(std::memory_order_relaxed);
    }
    /// The indices asked for since the last call (at most server_only_pending).
    [[nodiscard]] std::vector<std::uint32_t> take_server_only_requests();
    void answer_server_only(server_only_view view);

    // --- any thread ---
    [[nodiscard]] std::shared_ptr<const frame> latest() const;
    /// The newest frame, asking the tick thread for one and waiting (at most `wait`) when there is none
    /// or it is older than a second.
    [[nodiscard]] std::shared_ptr<const frame> current(std::chrono::milliseconds wait);
    /// Waits (at most `wait`) for a frame newer than tick `after`; null on timeout or stop().
    [[nodiscard]] std::shared_ptr<const frame> wait_newer(proto::tick_type after,
                                                          std::chrono::milliseconds wait);
    [[nodiscard]] std::vector<series_sample> series() const;
    [[nodiscard]] std::vector<disconnect_record> disconnects() const;
    /// Asks the tick thread for `index`'s server-only components and waits (at most `wait`) for an answer
    /// read at tick `at_least` or later; nothing when it did not come in time or too many are pending.
    [[nodiscard]] std::optional<server_only_view> server_only(std::uint32_t index, proto::tick_type at_least,
                                                              std::chrono::milliseconds wait);

    /// An open event stream: counts against max_streams while it lives.
    class stream_slot {
    public:
        stream_slot() = default;
        explicit stream_slot(feed* owner) noexcept
            : owner_{owner} {}
        stream_slot(stream_slot&& other) noexcept
            : owner_{std::exchange(other.owner_, nullptr)} {}
        stream_slot& operator=(stream_slot&&) = delete;
        ~stream_slot() {
            if (owner_ != nullptr) {
                owner_->streams_.fetch_sub(1, std::memory_order_relaxed);
            }
        }
        explicit operator bool() const noexcept { return owner_ != nullptr; }

    private:
        feed* owner_{nullptr};
    };
    /// A slot, or an empty one when max_streams are open.
    [[nodiscard]] stream_slot open_stream() noexcept;
    [[nodiscard]] std::size_t open_streams() const noexcept {
        return streams_.load(std::memory_order_relaxed);
    }
    /// Wakes and ends every stream (the admin endpoint stops).
    void stop();
    [[nodiscard]] bool stopped() const noexcept { return stopped_.load(); }

private:
    void note_demand() noexcept;

    feed_options options_;
    std::chrono::nanoseconds period_;
    std::atomic<std::size_t> streams_{0};
    std::atomic<std::int64_t> demand_until_ns_{0};
    std::atomic<bool> stopped_{false};
    clock::time_point last_publish_{};

    mutable std::mutex mutex_;
    std::condition_variable published_;
    std::shared_ptr<const frame> latest_;
    std::shared_ptr<frame> retired_; // the previous frame: reused once no reader holds it
    std::deque<series_sample> series_;
    std::deque<disconnect_record> disconnects_;
    std::atomic<bool> server_only_wanted_{false};
    std::vector<std::uint32_t> server_only_pending_;
    std::deque<server_only_view> server_only_answers_; // the newest few, one per index
};

/// A field's real value (metres, radians...) from its quantized one, as the schema's quantizer decodes it.
[[nodiscard]] double dequantize(const proto::field_info& field, std::uint32_t q) noexcept;

} // namespace ecsnet::server::inspector
