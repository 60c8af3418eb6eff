#include "ecsnet/proto/row_history.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace ecsnet::proto {

row_history::row_history(const schema_layout& layout, std::size_t depth)
    : layout_{layout}
    , stride_{header_words + layout_.width()}
    , slabs_(std::bit_ceil(std::max<std::size_t>(depth, 2)))
    , slab_mask_{slabs_.size() - 1}
    , max_values_(layout_.width(), 0)
    , on_every_row_(layout_.components(), 0)
    , previous_ids_(layout_.components())
    , ids_of_(layout_.components())
    , entry_of_(layout_.components())
    , entity_of_(layout_.components())
    , positions_(layout_.components())
    , row_(layout_.width()) {}

void row_history::grow(std::uint32_t index) {
    if (index >= records_.size()) {
        const auto size = std::max<std::size_t>(std::size_t{index} + 1, records_.size() * 2);
        records_.resize(size);
        since_.resize(size, no_tick);
        generations_.resize(size, 0);
        recent_.resize(size);
        rows_.resize(size * layout_.width(), 0);
    }
}

void row_history::replace(std::uint32_t index, const std::uint32_t* row, slab& into) {
    auto& r = records_[index];
    auto& since = since_[index];
    auto& recent = recent_[index];
    auto* current = rows_.data() + std::size_t{index} * layout_.width();
    // The line: extended when the new row is its next point (it changed on the tick before too, its
    // row then being the line's newest, the one before that read from the slab it was filed in), else a
    // new one from the row it replaces. A row changed on every tick of the line was filed at each of them.
    bool extends = false;
    if (since + 1 == into.tick && r.line_since < since && recent[0].slab_tick == since) {
        if (const auto* before = filed(since, recent[0].slot)) {
            extends = layout_.continues_line(before + header_words, current, row);
        }
    }
    if (!extends) {
        r.line_since = into.tick - 1;
    }
    const auto slot = static_cast<std::uint32_t>(into.data.size() / stride_);
    into.data.push_back(since);
    into.data.push_back(recent[0].slab_tick); // the chain, for versions older than the record keeps
    into.data.push_back(recent[0].slot);
    into.data.push_back(index);
    into.data.insert(into.data.end(), current, current + layout_.width());
    if (index >= into.slot_of.size()) {
        into.slot_of.resize(records_.size());
    }
    into.slot_of[index] = slot;
    std::copy_backward(recent.begin(), recent.end() - 1, recent.end());
    recent[0] = version_ref{since, into.tick, slot};
    since = into.tick;
    std::memcpy(current, row, layout_.width() * sizeof(std::uint32_t));
    r.term = layout_.checksum_term(index, generations_[index], current);
}

void row_history::update(const snapshot_history& history) {
    const auto& state = history.newest();
    const auto tick = state.tick;
    const auto& entities = state.flat(entities_);
    const auto generations = history.newest_generations();
    locate_entries(state, entities);
    mark_possible_changes(state, entities);
    take_max_values(state);

    auto& into = slabs_[tick & slab_mask_];
    into.tick = tick;
    into.data.clear();
    tick_ = tick;

    const auto width = layout_.width();
    if (!entities.empty()) {
        grow(entities.back()); // the entities are sorted
    }
    next_alive_.clear();
    removed_.clear();
    std::size_t old = 0;
    for (std::size_t p = 0; p < entities.size(); ++p) {
        const auto index = entities[p];
        while (old < alive_.size() && alive_[old] < index) {
            removed_.push_back(alive_[old]);
            since_[alive_[old++]] = no_tick;
        }
        if (old < alive_.size() && alive_[old] == index) {
            ++old;
        }
        const auto generation = generations[p];
        const bool occupied = since_[index] != no_tick;
        if (occupied && generations_[index] == generation) {
            if (maybe_changed_[p] != 0) {
                gather(state, p);
                if (!layout_.equal(row_.data(), current(index))) {
                    replace(index, row_.data(), into);
                }
            }
        } else {
            // A new occupant: its history starts now.
            if (occupied) {
                removed_.push_back(index);
            }
            gather(state, p);
            auto& r = records_[index];
            r = record{};
            recent_[index] = recent_refs{};
            generations_[index] = generation;
            r.born = tick;
            r.line_since = tick;
            since_[index] = tick;
            std::memcpy(rows_.data() + std::size_t{index} * width, row_.data(),
                        width * sizeof(std::uint32_t));
            r.term = layout_.checksum_term(index, generation, row_.data());
        }
        next_alive_.push_back(index);
    }
    while (old < alive_.size()) {
        removed_.push_back(alive_[old]);
        since_[alive_[old++]] = no_tick;
    }
    alive_.swap(next_alive_);
    for (std::size_t c = 0; c < on_every_row_.size(); ++c) {
        on_every_row_[c] = state.components[c].ids_are_entities ? 1 : 0;
        if (on_every_row_[c] == 0) {
            previous_ids_[c].swap(ids_of_[c]);
        }
    }
}

void row_history::locate_entries(const replicated_state& state, std::span<const std::uint32_t> entities) {
    for (std::size_t c = 0; c < layout_.components(); ++c) {
        const auto& component = state.components[c];
        if (component.ids_are_entities) {
            continue;
        }
        auto& ids = ids_of_[c];
        flatten(component.own_ids, ids);
        auto& entry_of = entry_of_[c];
        auto& entity_of = entity_of_[c];
        entry_of.assign(entities.size(), row_layout::absent);
        entity_of.assign(ids.size(), 0);
        std::size_t p = 0;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            while (p < entities.size() && entities[p] < ids[i]) {
                ++p;
            }
            if (p == entities.size()) {
                break; // not in a consistent state: every id of a component is an entity
            }
            entry_of[p] = static_cast<std::uint32_t>(i);
            entity_of[i] = static_cast<std::uint32_t>(p);
        }
    }
}

void row_history::mark_possible_changes(const replicated_state& state,
                                        std::span<const std::uint32_t> entities) {
    // Most rows keep their value from one tick to the next (82% of the arena's 11,000 entities): when the
    // state lists its changes against the tick these rows are of (snapshot_history::record_changes), only
    // the rows it names are gathered and compared, not every row.
    const bool listed =
        tick_ != no_tick && state.written_since == tick_ && state.written.size() == layout_.components();
    maybe_changed_.assign(entities.size(), listed ? 0 : 1);
    if (!listed) {
        return;
    }
    auto* maybe = maybe_changed_.data();
    // Those that do not continue from that tick (new occupants, or back after an absence).
    std::size_t next = 0;
    for (const auto& run : state.continuing) {
        std::fill(maybe + next, maybe + run.t, std::uint8_t{1});
        next = run.t + run.length;
    }
    std::fill(maybe + next, maybe + entities.size(), std::uint8_t{1});
    // Those whose values changed.
    for (std::size_t c = 0; c < layout_.components(); ++c) {
        const bool by_entity = state.components[c].ids_are_entities;
        const auto& entity_of = entity_of_[c];
        for (const auto at : state.written[c]) {
            maybe[by_entity ? at : entity_of[at]] = 1;
        }
    }
    // Those that gained or lost a component: the entities in its ids now or at the rows' tick, not in both.
    // None where every entity had it then and has it now (most components).
    for (std::size_t c = 0; c < layout_.components(); ++c) {
        const bool by_entity = state.components[c].ids_are_entities;
        if (by_entity && on_every_row_[c] != 0) {
            continue;
        }
        const auto& now = by_entity ? entities : std::span<const std::uint32_t>{ids_of_[c]};
        const auto& then = on_every_row_[c] != 0 ? std::span<const std::uint32_t>{alive_}
                                                 : std::span<const std::uint32_t>{previous_ids_[c]};
        std::size_t a = 0;
        std::size_t b = 0;
        auto cursor = entities.begin();
        const auto mark = [&](std::uint32_t index) {
            cursor = std::lower_bound(cursor, entities.end(), index);
            if (cursor != entities.end() && *cursor == index) {
                maybe[cursor - entities.begin()] = 1;
            }
        };
        while (a < now.size() || b < then.size()) {
            if (b == then.size() || (a < now.size() && now[a] < then[b])) {
                mark(now[a++]);
            } else if (a == now.size() || then[b] < now[a]) {
                mark(then[b++]);
            } else {
                ++a;
                ++b;
            }
        }
    }
}

void row_history::gather(const replicated_state& state, std::size_t p) {
    for (std::size_t c = 0; c < layout_.components(); ++c) {
        positions_[c] =
            state.components[c].ids_are_entities ? static_cast<std::uint32_t>(p) : entry_of_[c][p];
    }
    layout_.gather_row(state, positions_.data(), row_.data());
}

void row_history::take_max_values(const replicated_state& state) {
    // Per field, the largest value of its column: an entity without the component counts as 0 there, as in
    // its row.
    std::fill(max_values_.begin(), max_values_.end(), 0U);
    for (std::size_t c = 0; c < layout_.components(); ++c) {
        const auto& fields = state.components[c].fields;
        const auto n = state.size(c);
        for (std::size_t f = 0; f < fields.size(); ++f) {
            fields[f].visit([&](const auto& values) {
                std::uint32_t largest = 0;
                for (std::size_t k = 0; k < n; ++k) {
                    largest = std::max<std::uint32_t>(largest, values[k]);
                }
                max_values_[layout_.offset(c) + f] = largest;
            });
        }
    }
}

const std::uint32_t* row_history::at(std::uint32_t index, tick_type at) const noexcept {
    if (!alive(index) || at > tick_) {
        return nullptr;
    }
    if (at >= since_[index]) {
        return current(index);
    }
    // The versions the record keeps, newest first: the one of `at` is found without touching the slabs of
    // those in between (a newer version's slab forgotten means this one's is too: slabs are reused in
    // tick order).
    const auto& recent = recent_[index];
    for (const auto& v : recent) {
        if (v.slab_tick == no_tick) {
            return nullptr;
        }
        if (at >= v.since) {
            const auto* version = filed(v.slab_tick, v.slot);
            return version == nullptr ? nullptr : version + header_words;
        }
        if (v.since == no_tick) {
            return nullptr;
        }
    }
    // Older than every version the record keeps: an entity that changes (nearly) every tick, asked for by
    // a client whose base is many ticks old (a long round trip). The value of `at` is the one replaced at
    // the first change after it, most often at + 1: that slab's map finds it at once.
    if (at < records_[index].born) {
        return nullptr; // before this occupant (a version of an earlier one must not be found below)
    }
    if (const auto* version = replaced_at(at + 1, index)) {
        return version + header_words;
    }
    const auto* version = filed(recent.back().slab_tick, recent.back().slot);
    if (version == nullptr) {
        return nullptr;
    }
    // Older still: the chain from the oldest the record keeps.
    auto previous_tick = version[1];
    auto previous_slot = version[2];
    while (previous_tick != no_tick) {
        version = filed(previous_tick, previous_slot);
        if (version == nullptr) {
            return nullptr;
        }
        if (at >= version[0]) {
            return version + header_words;
        }
        if (version[0] == no_tick) {
            return nullptr;
        }
        previous_tick = version[1];
        previous_slot = version[2];
    }
    return nullptr;
}

const std::uint32_t* row_history::filed(tick_type slab_tick, std::uint32_t slot) const noexcept {
    const auto& s = slabs_[slab_tick & slab_mask_];
    if (s.tick != slab_tick) {
        return nullptr; // that slab was reused: forgotten
    }
    return s.data.data() + std::size_t{slot} * stride_;
}

const std::uint32_t* row_history::replaced_at(tick_type tick, std::uint32_t index) const noexcept {
    const auto& s = slabs_[tick & slab_mask_];
    if (s.tick != tick || index >= s.slot_of.size()) {
        return nullptr;
    }
    // The map is never cleared: an entry left from an earlier tick of the slab names a slot past its end
    // or another entity's version.
    const auto at = std::size_t{s.slot_of[index]} * stride_;
    if (at >= s.data.size() || s.data[at + 3] != index) { // word 3: the version's entity index
        return nullptr;
    }
    return s.data.data() + at;
}

std::size_t row_history::memory_bytes() const noexcept {
    std::size_t bytes = records_.capacity() * sizeof(record) + since_.capacity() * sizeof(tick_type) +
                        generations_.capacity() * 4 + recent_.capacity() * sizeof(recent_refs) +
                        rows_.capacity() * 4 + alive_.capacity() * 4;
    for (const auto& s : slabs_) {
        bytes += (s.data.capacity() + s.slot_of.capacity()) * 4;
    }
    return bytes;
}

} // namespace ecsnet::proto
