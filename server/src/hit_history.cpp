#include "ecsnet/server/hit_history.hpp"

#include <algorithm>
#include <cmath>

namespace ecsnet::server {

hit_history::hit_history(std::size_t frames)
    : frames_(std::max<std::size_t>(frames, 2)) {}

void hit_history::begin_frame(std::uint64_t tick, std::int64_t server_time_us) {
    head_ = (head_ + 1) % frames_.size();
    count_ = std::min(count_ + 1, frames_.size());
    auto& f = frames_[head_];
    f.tick = tick;
    f.time_us = server_time_us;
    f.records.clear(); // keeps its capacity
    f.max_step = 0.0F;
    // Found once here, not per add(): the ring's modulo was a division per record, a third of add().
    previous_ = (head_ + frames_.size() - 1) % frames_.size();
    if (count_ >= 2) {
        // Sized after the previous frame, with room for a few spawns: growing by doubling would leave up to
        // half of every frame unused.
        const auto previous = frames_[previous_].records.size();
        if (f.records.capacity() < previous) {
            f.records.reserve(previous + previous / 16);
        }
    }
}

void hit_history::add(entity target, float x, float y, float radius) {
    const auto index = to_index(target);
    if (index >= slot_of_index_.size()) {
        slot_of_index_.resize(std::max<std::size_t>(index + 1, slot_of_index_.size() * 2), no_previous);
    }
    auto& current = frames_[head_];
    // The table still holds the slot this index had when the previous frame was recorded, or an older one:
    // it is the same entity's only if the previous frame has that very entity there.
    std::uint32_t previous = no_previous;
    if (count_ >= 2) {
        const auto& before = frames_[previous_].records;
        const auto slot = slot_of_index_[index];
        if (slot < before.size() && before[slot].target == target) {
            previous = slot;
            current.max_step =
                std::max(current.max_step, std::fabs(x - before[slot].x) + std::fabs(y - before[slot].y));
        }
    }
    slot_of_index_[index] = static_cast<std::uint32_t>(current.records.size());
    current.records.push_back(hit_record{target, previous, x, y, radius});
}

hit_history::window hit_history::find_window(std::int64_t time_us) const noexcept {
    window w;
    // Newest first: shots look a few frames back at most.
    for (std::size_t i = count_; i-- > 0;) {
        const auto& f = frame_at(i);
        if (f.time_us <= time_us) {
            w.before = &f;
            break;
        }
        w.after = &f;
    }
    if (w.before != nullptr && w.after != nullptr) {
        w.alpha = static_cast<double>(time_us - w.before->time_us) /
                  static_cast<double>(w.after->time_us - w.before->time_us);
    }
    return w;
}

hit_history::position hit_history::blend(const window& w, const hit_record& record) const noexcept {
    if (w.after == nullptr || w.before == nullptr || record.previous == no_previous) {
        return {record.x, record.y};
    }
    // As the client's fixed_point interpolation: from + (to - from) * alpha, in double.
    const auto& from = w.before->records[record.previous];
    return {static_cast<float>(from.x + (static_cast<double>(record.x) - from.x) * w.alpha),
            static_cast<float>(from.y + (static_cast<double>(record.y) - from.y) * w.alpha)};
}

std::optional<ray_hit> hit_history::raycast(std::int64_t time_us, const hit_ray& ray,
                                            entity ignore) const noexcept {
    const double length = std::hypot(ray.dir_x, ray.dir_y);
    if (count_ == 0 || !(length > 1e-9) || !std::isfinite(length) || !(ray.range >= 0.0F)) {
        return std::nullopt;
    }
    const double dx = ray.dir_x / length;
    const double dy = ray.dir_y / length;
    const auto w = find_window(time_us);
    // Broad phase, in float on the sampled frame's own record: a blended centre is within `margin` of it.
    const float margin = (w.before != nullptr && w.after != nullptr ? w.after->max_step : 0.0F) + 0.01F;
    const auto fdx = static_cast<float>(dx);
    const auto fdy = static_cast<float>(dy);
    std::optional<ray_hit> nearest;
    for (const auto& record : sampled(w).records) {
        const float rx = record.x - ray.x;
        const float ry = record.y - ray.y;
        const float reach = record.radius + margin;
        const float along = rx * fdx + ry * fdy;
        if (std::fabs(rx * fdy - ry * fdx) > reach || along < -reach || along > ray.range + reach ||
            record.target == ignore) {
            continue;
        }
        const auto at = blend(w, record);
        // Ray against circle: |o + s d - c|^2 = r^2, the smaller root s >= 0.
        const double mx = ray.x - static_cast<double>(at.x);
        const double my = ray.y - static_cast<double>(at.y);
        const double b = mx * dx + my * dy;
        const double c = mx * mx + my * my - static_cast<double>(record.radius) * record.radius;
        if (c > 0.0 && b > 0.0) {
            continue; // outside and pointing away
        }
        const double discriminant = b * b - c;
        if (discriminant < 0.0) {
            continue;
        }
        const double s = std::max(0.0, -b - std::sqrt(discriminant));
        if (s > ray.range || (nearest && s >= nearest->distance)) {
            continue;
        }
        nearest = ray_hit{record.target, static_cast<float>(s), at.x, at.y};
    }
    return nearest;
}

std::optional<hit_history::position> hit_history::position_of(entity target,
                                                              std::int64_t time_us) const noexcept {
    if (count_ == 0) {
        return std::nullopt;
    }
    const auto w = find_window(time_us);
    for (const auto& record : sampled(w).records) {
        if (record.target == target) {
            return blend(w, record);
        }
    }
    return std::nullopt;
}

std::size_t hit_history::memory_bytes() const noexcept {
    std::size_t bytes =
        frames_.capacity() * sizeof(frame) + slot_of_index_.capacity() * sizeof(std::uint32_t);
    for (const auto& f : frames_) {
        bytes += f.records.capacity() * sizeof(hit_record);
    }
    return bytes;
}

} // namespace ecsnet::server
