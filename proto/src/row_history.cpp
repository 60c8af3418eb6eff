#include "ecsnet/proto/row_history.hpp"

#include <algorithm>
#include <cstring>

namespace ecsnet::proto {

row_history::row_history(const schema_layout& layout, std::size_t depth)
    : layout_{layout}
    , weights_{layout}
    , stride_{3 + layout_.width()}
    , slabs_(std::max<std::size_t>(depth, 2))
    , max_values_(layout_.width(), 0) {}

void row_history::grow(std::uint32_t index) {
    if (index >= records_.size()) {
        const auto size = std::max<std::size_t>(std::size_t{index} + 1, records_.size() * 2);
        records_.resize(size);
        rows_.resize(size * layout_.width(), 0);
    }
}

void row_history::replace(std::uint32_t index, const std::uint32_t* row, slab& into) {
    auto& r = records_[index];
    auto* current = rows_.data() + std::size_t{index} * layout_.width();
    const auto slot = static_cast<std::uint32_t>(into.data.size() / stride_);
    into.data.push_back(r.since);
    into.data.push_back(r.previous_tick);
    into.data.push_back(r.previous_slot);
    into.data.insert(into.data.end(), current, current + layout_.width());
    r.previous_tick = into.tick;
    r.previous_slot = slot;
    r.since = into.tick;
    std::memcpy(current, row, layout_.width() * sizeof(std::uint32_t));
    r.term = layout_.checksum_term(weights_, index, r.generation, current);
}

void row_history::update(const snapshot_history& history) {
    const auto& state = history.newest();
    const auto tick = state.tick;
    const auto& entities = state.flat(entities_);
    const auto generations = history.newest_generations();
    layout_.gather(state, entities, gathered_, positions_);

    auto& into = slabs_[tick % slabs_.size()];
    into.tick = tick;
    into.data.clear();
    tick_ = tick;

    const auto width = layout_.width();
    std::fill(max_values_.begin(), max_values_.end(), 0U);
    next_alive_.clear();
    std::size_t old = 0;
    for (std::size_t p = 0; p < entities.size(); ++p) {
        const auto index = entities[p];
        const auto* row = gathered_.data() + p * width;
        for (std::size_t at = layout_.presence_words(); at < width; ++at) {
            max_values_[at] = std::max(max_values_[at], row[at]);
        }
        while (old < alive_.size() && alive_[old] < index) {
            records_[alive_[old++]].alive = false;
        }
        if (old < alive_.size() && alive_[old] == index) {
            ++old;
        }
        grow(index);
        auto& r = records_[index];
        const auto generation = generations[p];
        if (r.alive && r.generation == generation) {
            if (!layout_.equal(row, current(index))) {
                replace(index, row, into);
            }
        } else {
            // A new occupant: its history starts now.
            r = record{};
            r.alive = true;
            r.generation = generation;
            r.since = tick;
            std::memcpy(rows_.data() + std::size_t{index} * width, row, width * sizeof(std::uint32_t));
            r.term = layout_.checksum_term(weights_, index, generation, row);
        }
        next_alive_.push_back(index);
    }
    while (old < alive_.size()) {
        records_[alive_[old++]].alive = false;
    }
    alive_.swap(next_alive_);
}

const std::uint32_t* row_history::at(std::uint32_t index, tick_type at) const noexcept {
    if (!alive(index) || at > tick_) {
        return nullptr;
    }
    const auto& r = records_[index];
    if (at >= r.since) {
        return current(index);
    }
    auto previous_tick = r.previous_tick;
    auto previous_slot = r.previous_slot;
    while (previous_tick != no_tick) {
        const auto& s = slabs_[previous_tick % slabs_.size()];
        if (s.tick != previous_tick) {
            return nullptr; // that slab was reused: forgotten
        }
        const auto* version = s.data.data() + std::size_t{previous_slot} * stride_;
        if (at >= version[0]) {
            return version + 3;
        }
        if (version[0] == no_tick) {
            return nullptr;
        }
        previous_tick = version[1];
        previous_slot = version[2];
    }
    return nullptr;
}

std::size_t row_history::memory_bytes() const noexcept {
    std::size_t bytes = records_.capacity() * sizeof(record) + rows_.capacity() * 4 + alive_.capacity() * 4;
    for (const auto& s : slabs_) {
        bytes += s.data.capacity() * 4;
    }
    return bytes;
}

} // namespace ecsnet::proto
