// Unreliable reassembly with bounded memory (reassembly_buffer.hpp).

#include "ecsnet/transport/reassembly_buffer.hpp"

#include <algorithm>

namespace ecsnet::transport {

reassembly_buffer::reassembly_buffer(reassembly_limits limits)
    : limits_{limits}
    , groups_(std::max<std::size_t>(limits.max_groups, 1)) {}

bool reassembly_buffer::consistent(const fragment& frag) const noexcept {
    const auto* g = find(frag.id);
    return g == nullptr || g->assembly.matches(frag.total_bytes, frag.fragment_bytes);
}

std::optional<std::span<const std::byte>> reassembly_buffer::add(const fragment& frag,
                                                                 clock::time_point now) {
    release_completed();
    auto* g = find(frag.id);
    if (g == nullptr) {
        if (recently_finished(frag.id)) {
            return std::nullopt;
        }
        g = make_room(frag.id, frag.total_bytes);
        if (g == nullptr) {
            ++dropped_;
            // Its other fragments are ignored too (and it is counted once).
            finished_[finished_next_] = frag.id;
            finished_next_ = (finished_next_ + 1) % finished_.size();
            finished_count_ = std::min(finished_count_ + 1, finished_.size());
            return std::nullopt;
        }
        g->assembly.start(frag.total_bytes, frag.fragment_bytes);
        g->id = frag.id;
        g->started = now;
        g->active = true;
        ++active_;
    }
    if (!g->assembly.matches(frag.total_bytes, frag.fragment_bytes) ||
        !g->assembly.add(frag.index, frag.data)) {
        return std::nullopt;
    }
    if (!g->assembly.complete()) {
        return std::nullopt;
    }
    completed_ = g;
    return g->assembly.bytes();
}

void reassembly_buffer::expire(clock::time_point now) {
    release_completed();
    if (active_ == 0) {
        return;
    }
    for (auto& g : groups_) {
        if (g.active && now - g.started >= limits_.timeout) {
            finish(g, true);
        }
    }
}

std::size_t reassembly_buffer::held_bytes() const noexcept {
    std::size_t bytes = 0;
    for (const auto& g : groups_) {
        bytes += g.assembly.capacity();
    }
    return bytes;
}

void reassembly_buffer::release_completed() noexcept {
    if (completed_ != nullptr) {
        finish(*completed_, false);
        completed_ = nullptr;
    }
}

void reassembly_buffer::finish(group& g, bool dropped) noexcept {
    if (dropped) {
        ++dropped_;
    }
    finished_[finished_next_] = g.id;
    finished_next_ = (finished_next_ + 1) % finished_.size();
    finished_count_ = std::min(finished_count_ + 1, finished_.size());
    g.active = false;
    --active_;
    // Keep the buffer for the next message unless that would hold more than the limit.
    if (held_bytes() > limits_.max_bytes) {
        g.assembly.release();
    } else {
        g.assembly.clear();
    }
}

bool reassembly_buffer::recently_finished(sequence_t id) const noexcept {
    return std::find(finished_.begin(), finished_.begin() + static_cast<std::ptrdiff_t>(finished_count_),
                     id) != finished_.begin() + static_cast<std::ptrdiff_t>(finished_count_);
}

reassembly_buffer::group* reassembly_buffer::find(sequence_t id) noexcept {
    for (auto& g : groups_) {
        if (g.active && g.id == id) {
            return &g;
        }
    }
    return nullptr;
}

const reassembly_buffer::group* reassembly_buffer::find(sequence_t id) const noexcept {
    for (const auto& g : groups_) {
        if (g.active && g.id == id) {
            return &g;
        }
    }
    return nullptr;
}

reassembly_buffer::group* reassembly_buffer::make_room(sequence_t id, std::uint32_t total) {
    if (total > limits_.max_bytes) {
        return nullptr;
    }
    // The oldest message in progress, if older than the new one: the one to evict when short of room.
    const auto oldest_older = [&]() -> group* {
        group* oldest = nullptr;
        for (auto& g : groups_) {
            if (g.active && sequence_less_than(g.id, id) &&
                (oldest == nullptr || sequence_less_than(g.id, oldest->id))) {
                oldest = &g;
            }
        }
        return oldest;
    };
    // A free slot: the one whose kept buffer fits best, else any.
    group* slot = nullptr;
    for (auto& g : groups_) {
        if (!g.active && (slot == nullptr || (slot->assembly.capacity() < total &&
                                              g.assembly.capacity() > slot->assembly.capacity()))) {
            slot = &g;
        }
    }
    if (slot == nullptr) {
        auto* victim = oldest_older();
        if (victim == nullptr) {
            return nullptr;
        }
        finish(*victim, true);
        slot = victim;
    }
    // Memory: the others' buffers plus this one's new size within max_bytes.
    const auto others = [&] { return held_bytes() - slot->assembly.capacity(); };
    const auto needed = [&] { return std::max<std::size_t>(slot->assembly.capacity(), total); };
    if (others() + needed() > limits_.max_bytes) {
        for (auto& g : groups_) {
            if (!g.active && &g != slot) {
                g.assembly.release();
            }
        }
    }
    if (others() + needed() > limits_.max_bytes && slot->assembly.capacity() > total) {
        slot->assembly.release(); // its kept buffer is bigger than needed: allocate exactly
    }
    while (others() + needed() > limits_.max_bytes) {
        auto* victim = oldest_older();
        if (victim == nullptr) {
            return nullptr;
        }
        finish(*victim, true);
        victim->assembly.release();
    }
    return slot;
}

} // namespace ecsnet::transport
