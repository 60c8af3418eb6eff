#pragma once

// Lag compensation's memory: where every hit-testable entity was (ground-plane position and radius) at each
// of the last few ticks, and the query a shot needs, "the first entity a ray hits, as the world was at
// server time t".
//
// Time is the client's: a frame carries the server time of its tick (the server_time_us of the snapshot
// the client received for that tick), and a query at time t blends the two frames around t exactly as the
// client's interpolation blends the two states around its render time (client/interpolation.hpp): the
// newest frame at or before t and the oldest after it, alpha = (t - before) / (after - before); an entity
// present in the later frame only is where that frame has it; t past the newest frame (or before the
// oldest) uses that frame alone. An entity gone from the later frame is not hit-testable any more.
//
// Layout: a ring of frames, each a packed array of 20-byte records (entity, position, radius, and the
// record's slot in the previous frame, found while recording through an index -> slot table), so that
// interpolation needs no search. Frames keep their capacity when reused: no allocation per tick once the
// entity count has peaked. Memory: 20 bytes per hit-testable entity per frame kept, plus 4 bytes per
// entity index ever recorded (the table).
// Complexity: record O(1) per entity; raycast O(entities in the frame), most rejected in a few float
// operations (the ray's distance to a record's centre, widened by how far any entity moved that tick);
// position_of O(entities).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <ecsnet/ecs/entity.hpp>

namespace ecsnet::server {

/// One entity in one frame.
struct hit_record {
    entity target{null_entity};
    std::uint32_t previous{}; // slot of the same entity in the previous frame, or no_previous
    float x{};
    float y{};
    float radius{};
};

/// A ray on the ground plane: from (x, y) along (dir_x, dir_y) (normalised by the query), up to `range`.
struct hit_ray {
    float x{};
    float y{};
    float dir_x{};
    float dir_y{};
    float range{};
};

struct ray_hit {
    entity target{null_entity};
    float distance{}; // from the ray's origin to where it enters the target's circle
    float x{};        // the target's centre at the query's time
    float y{};
};

class hit_history {
public:
    static constexpr std::uint32_t no_previous = 0xFFFFFFFFU;

    /// Keeps the last `frames` ticks (at least 2).
    explicit hit_history(std::size_t frames);

    /// Starts the frame of `tick`, at server time `server_time_us`, forgetting the oldest beyond capacity.
    /// Times must increase from frame to frame.
    void begin_frame(std::uint64_t tick, std::int64_t server_time_us);
    /// Records `target` at (x, y) with `radius` in the current frame (each entity once per frame).
    void add(entity target, float x, float y, float radius);

    [[nodiscard]] std::size_t capacity() const noexcept { return frames_.size(); }
    [[nodiscard]] std::size_t size() const noexcept { return count_; }
    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
    [[nodiscard]] std::uint64_t newest_tick() const noexcept { return newest().tick; }
    [[nodiscard]] std::int64_t newest_time_us() const noexcept { return newest().time_us; }
    [[nodiscard]] std::int64_t oldest_time_us() const noexcept { return frame_at(0).time_us; }
    /// Records in the newest frame.
    [[nodiscard]] std::size_t newest_size() const noexcept { return newest().records.size(); }

    /// The first entity other than `ignore` that `ray` enters, as the world was at `time_us` (see the header
    /// comment); an origin inside a circle hits it at distance 0. Nothing when empty or nothing is hit.
    [[nodiscard]] std::optional<ray_hit> raycast(std::int64_t time_us, const hit_ray& ray,
                                                 entity ignore = null_entity) const noexcept;
    /// Where `target` was at `time_us`, blended as raycast does; nothing if it was not hit-testable then.
    struct position {
        float x{};
        float y{};
    };
    [[nodiscard]] std::optional<position> position_of(entity target, std::int64_t time_us) const noexcept;

    /// Heap bytes held (frames' capacity and the index table).
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    struct frame {
        std::uint64_t tick{};
        std::int64_t time_us{};
        std::vector<hit_record> records;
        float max_step{}; // the largest |dx| + |dy| of a record from its previous one: bounds the blend
    };
    /// The two frames around a time, as interpolation_window.
    struct window {
        const frame* before{};
        const frame* after{};
        double alpha{};
    };

    [[nodiscard]] const frame& frame_at(std::size_t i) const noexcept { // i-th oldest
        return frames_[(head_ + frames_.size() - count_ + 1 + i) % frames_.size()];
    }
    [[nodiscard]] const frame& newest() const noexcept { return frames_[head_]; }
    [[nodiscard]] window find_window(std::int64_t time_us) const noexcept;
    /// A record's position at the window's time (`record` is in the window's later frame when it has one).
    [[nodiscard]] position blend(const window& w, const hit_record& record) const noexcept;
    [[nodiscard]] const frame& sampled(const window& w) const noexcept {
        return w.after ? *w.after : *w.before;
    }

    std::vector<frame> frames_;
    std::size_t head_{};
    std::size_t count_{};
    std::size_t previous_{}; // the frame before the newest (when count_ >= 2)
    std::vector<std::uint32_t>
        slot_of_index_; // entity index -> its slot in the newest frame (if it is there)
};

} // namespace ecsnet::server
