#pragma once

// Interpolation: a replicated component at a render time, between the two applied snapshots around it.
//
// A game renders the world slightly in the past (render time = estimated server time - delay, 100 ms by
// default) so that two snapshots usually surround the moment it draws; each field is then blended by its
// schema encoding:
//   fixed_point  linearly, in real units (metres...)
//   angle        along the shorter arc, in radians in [0, 2pi)
//   integer, boolean  step: the earlier snapshot's value until the later snapshot's time
// When only one side exists (render time before the oldest state kept or after the newest, or the entity
// present in one of the two states only), the value of the side that exists is used as is.
//
// The mirror keeps only the states the server may still use as baselines (about 3, proto/mirror.hpp), too
// few to reach 100 ms back, so a state_buffer keeps copies of the last few applied states for interpolation:
// one copy per applied snapshot, O(entities), reusing the memory of the state it replaces (no allocation
// once warm). find_window() locates the pair once per frame, O(states kept); sample() then costs two binary
// searches per state and component (O(log n)). Undeclared members of the component keep the mirror's
// current values.
//
// Invalidation: a window points into the buffer's states, so it is valid until the next snapshot is
// applied (the next poll(), or the client's next handler on an application io_context).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ecsnet/ecs/entity.hpp"
#include "ecsnet/proto/replica.hpp"
#include "ecsnet/proto/schema.hpp"
#include "ecsnet/proto/state.hpp"

namespace ecsnet::client {

/// Copies of the last `capacity` applied states, oldest first (ticks and server times increase).
class state_buffer {
public:
    explicit state_buffer(std::size_t capacity = 10)
        : capacity_{capacity} {}

    /// Keeps a copy of `state` (its tick, server time, checksum, entities, generations and component
    /// columns), forgetting the oldest beyond capacity(). Does nothing when capacity() is 0.
    void push(const proto::replicated_state& state);
    /// Forgets every state (their memory is kept for reuse).
    void clear() noexcept;

    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// The i-th oldest state kept (i < size()).
    [[nodiscard]] const proto::replicated_state& operator[](std::size_t i) const noexcept {
        return *slots_[(first_ + i) % slots_.size()];
    }
    [[nodiscard]] const proto::replicated_state& oldest() const noexcept { return (*this)[0]; }
    [[nodiscard]] const proto::replicated_state& newest() const noexcept { return (*this)[size_ - 1]; }
    /// Heap bytes held by the copies.
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    std::size_t capacity_;
    std::vector<std::unique_ptr<proto::replicated_state>> slots_; // a ring, grown up to capacity_
    std::size_t first_{};
    std::size_t size_{};
};

/// The two applied states around a render time.
struct interpolation_window {
    /// The newest state at or before the render time (null if the render time precedes every state).
    const proto::replicated_state* before{};
    /// The oldest state after the render time (null if the render time is at or past the newest state).
    const proto::replicated_state* after{};
    /// Where the render time falls: 0 at `before`, 1 at `after`.
    double alpha{};

    [[nodiscard]] bool empty() const noexcept { return before == nullptr && after == nullptr; }
};

/// The window of `render_time_us` among the states of `states`. O(states kept).
[[nodiscard]] interpolation_window find_window(const state_buffer& states, std::int64_t render_time_us);

/// A field's value in the units component_codec::assign() takes: the real value of fixed_point and angle
/// fields, the quantized value of the others.
[[nodiscard]] double decode_field(const proto::field_info& field, std::uint32_t quantized) noexcept;

/// One field blended between two quantized values (see the header comment), at `alpha` in [0, 1].
[[nodiscard]] double interpolate_field(const proto::field_info& field, std::uint32_t before,
                                       std::uint32_t after, double alpha) noexcept;

/// The row of entity `id` in component `component`'s columns of `state`, if the state holds that
/// component for that very entity (same index and generation).
[[nodiscard]] std::optional<std::size_t> find_row(const proto::replicated_state& state, std::size_t component,
                                                  proto::net_entity id);

/// Writes into `out` (an object of the component's C++ type) the interpolated declared fields of component
/// `component` of entity `id`. Returns false, leaving `out` untouched, when neither state of the window
/// holds it.
bool sample_into(const proto::schema& schema, const interpolation_window& window, std::size_t component,
                 proto::net_entity id, void* out);

/// Component T of the mirrored entity `local` at the window's time: the mirror's current component with
/// its declared fields interpolated. Nothing if T is not replicated, `local` is not a mirrored entity, or
/// neither the window nor the registry has the component.
template<typename T>
[[nodiscard]] std::optional<T> sample(const proto::replica& mirror, const interpolation_window& window,
                                      entity local) {
    const auto component = mirror.replicated_schema().template index_of<T>();
    const auto id = mirror.net_of(local);
    if (!component || !id) {
        return std::nullopt;
    }
    const T* current = mirror.registry().template try_get<T>(local);
    T value = current != nullptr ? *current : T{};
    if (!sample_into(mirror.replicated_schema(), window, *component, *id, &value) && current == nullptr) {
        return std::nullopt;
    }
    return value;
}

} // namespace ecsnet::client
