#include "ecsnet/proto/history.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ecsnet::proto {

snapshot_history::snapshot_history(const schema& schema, registry& reg, history_options options)
    : schema_{&schema}
    , registry_{&reg}
    , options_{options}
    , weights_{schema.layout()} {
    if (options_.depth < 2) {
        throw std::invalid_argument("a snapshot history keeps at least 2 ticks");
    }
    if (options_.tick_rate == 0) {
        throw std::invalid_argument("tick rate must be positive");
    }
    ring_.resize(options_.depth);
    for (auto& state : ring_) {
        state.reset(schema.layout());
    }
    entered_.resize(options_.depth);
    bitmaps_.resize(schema.size());
    for (std::size_t c = 0; c < schema.size(); ++c) {
        connections_.emplace_back(schema.codec(c).on_destroy(reg).connect(
            [this, c](registry& r, entity e) { on_component_destroyed(r, e, c); }));
    }
}

snapshot_history::~snapshot_history() = default;

tick_type snapshot_history::oldest_tick() const noexcept {
    return ring_[(head_ + ring_.size() + 1 - count_) % ring_.size()].tick;
}

const replicated_state* snapshot_history::find(tick_type tick) const noexcept {
    for (std::size_t n = 0; n < count_; ++n) {
        const auto& state = ring_[(head_ + ring_.size() - n) % ring_.size()];
        if (state.tick == tick) {
            return &state;
        }
        if (state.tick < tick) {
            return nullptr;
        }
    }
    return nullptr;
}

std::uint64_t snapshot_history::nominal_time_us(tick_type tick) const noexcept {
    return std::uint64_t{tick} * 1000000U / options_.tick_rate;
}

void snapshot_history::grow_tables(std::uint32_t index) {
    // A multiple of 64 (whole bitmap words), at least 1.5 times the old size.
    auto size = std::max<std::size_t>(std::size_t{index} + 1, records_.size() + records_.size() / 2);
    size = (size + 63) / 64 * 64;
    records_.resize(size);
    entity_of_.resize(size, null_entity);
    position_of_.resize(size, 0);
    const auto first = weight_of_.size();
    weight_of_.resize(size);
    for (auto i = first; i < size; ++i) {
        weight_of_[i] = entity_weight(static_cast<std::uint32_t>(i));
    }
}

snapshot_history::index_record& snapshot_history::record_of(std::uint32_t index) {
    if (index >= records_.size()) {
        grow_tables(index);
    }
    return records_[index];
}

void snapshot_history::on_component_destroyed(const registry& reg, entity e, std::size_t component) {
    // The entity leaves replication when this was its last declared component.
    for (std::size_t c = 0; c < schema_->size(); ++c) {
        if (c != component && schema_->codec(c).contained(reg, e)) {
            return;
        }
    }
    const auto index = to_index(e);
    if (index < records_.size()) {
        records_[index].vacated = true;
    }
}

std::uint32_t snapshot_history::next_generation(const index_record& record, entity e) const noexcept {
    if (!record.ever_seen && !record.pending) {
        return to_version(e);
    }
    if (record.last == e) {
        return record.generation + (entity_traits::version_mask + 1); // the same entity, entering again
    }
    // A new occupant: move forward by the version's difference, so the low 12 bits stay the version.
    auto step = (to_version(e) - to_version(record.last)) & entity_traits::version_mask;
    if (step == 0) {
        step = entity_traits::version_mask + 1;
    }
    return record.generation + step;
}

net_entity snapshot_history::to_net(entity e) {
    const auto index = to_index(e);
    if (!registry_->valid(e)) {
        return {index, to_version(e)};
    }
    auto& record = record_of(index);
    if (record.last == e && (record.pending || (record.ever_seen && previous_tick_ &&
                                                record.seen == *previous_tick_ && !record.vacated))) {
        return {index, record.generation};
    }
    const auto generation = next_generation(record, e);
    record.last = e;
    record.generation = generation;
    record.pending = true;
    record.vacated = false;
    return {index, generation};
}

void snapshot_history::restore_generation(entity e, std::uint32_t generation) {
    if (count_ != 0 || previous_tick_) {
        throw std::invalid_argument("restore_generation after a capture");
    }
    if (!registry_->valid(e) || (generation & entity_traits::version_mask) != to_version(e)) {
        throw std::invalid_argument("restore_generation: generation " + std::to_string(generation) +
                                    " does not belong to entity " + std::to_string(to_integral(e)));
    }
    auto& record = record_of(to_index(e));
    record.last = e;
    record.generation = generation;
    record.pending = true; // the first capture keeps it (as for to_net)
    record.vacated = false;
}

void snapshot_history::capture(tick_type tick, std::uint64_t server_time_us) {
    if (count_ != 0 && tick <= newest_tick()) {
        throw std::invalid_argument("capture of tick " + std::to_string(tick) + " after tick " +
                                    std::to_string(newest_tick()));
    }
    const auto& layout = schema_->layout();
    const auto components = schema_->size();

    // 1. Scatter each pool's entities into a bitmap by index (and their union).
    std::size_t words = records_.size() / 64;
    union_.assign(words, 0);
    for (std::size_t c = 0; c < components; ++c) {
        bitmaps_[c].assign(words, 0);
    }
    for (std::size_t c = 0; c < components; ++c) {
        auto& bitmap = bitmaps_[c];
        for (const auto e : schema_->codec(c).pool_entities(*registry_)) {
            const auto index = to_index(e);
            if (index >= records_.size()) { // a new highest index: grow every table
                grow_tables(index);
                words = records_.size() / 64;
                union_.resize(words, 0);
                for (auto& other : bitmaps_) {
                    other.resize(words, 0);
                }
            }
            bitmap[index / 64] |= std::uint64_t{1} << (index % 64);
            entity_of_[index] = e;
        }
    }
    for (std::size_t c = 0; c < components; ++c) {
        for (std::size_t w = 0; w < words; ++w) {
            union_[w] |= bitmaps_[c][w];
        }
    }

    // 2. The slot: evict the oldest tick if the ring is full.
    const auto slot = count_ == 0 ? head_ : (head_ + 1) % ring_.size();
    auto& state = ring_[slot];
    state.reset(layout);
    state.tick = tick;
    state.server_time_us = server_time_us;
    auto& entered = entered_[slot];
    entered.clear();
    previous_generations_.swap(generations_);
    generations_.clear();

    // 3. Entities in index order, with their identity. Capacities are reserved exactly (plus a little), not
    // grown by doubling: a history holds 32 of these, and the entity count hovers around its size.
    std::size_t expected = 0;
    for (std::size_t w = 0; w < words; ++w) {
        expected += static_cast<std::size_t>(std::popcount(union_[w]));
    }
    if (state.flat_entities.capacity() < expected) {
        state.flat_entities.reserve(expected + expected / 256 + 16);
    }
    for (std::size_t w = 0; w < words; ++w) {
        for (auto bits = union_[w]; bits != 0; bits &= bits - 1) {
            const auto index =
                static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
            const auto e = entity_of_[index];
            auto& record = records_[index];
            const bool continuing = record.ever_seen && previous_tick_ && record.seen == *previous_tick_ &&
                                    record.last == e && !record.vacated && !record.pending;
            if (!continuing) {
                if (!(record.pending && record.last == e && !record.vacated)) {
                    record.generation = next_generation(record, e);
                }
                record.last = e;
                entered.push_back(index);
            }
            record.ever_seen = true;
            record.pending = false;
            record.vacated = false;
            record.seen = tick;
            state.flat_entities.push_back(index);
            generations_.push_back(record.generation);
        }
    }
    state.entities.reserve(state.flat_entities.size());
    state.entities.append(state.flat_entities.begin(), state.flat_entities.end());
    state.flat_valid = true;
    // Older states keep their flat ids only while they are likely baselines: memory stays ~2 bytes per id.
    if (count_ >= flat_cache_ticks) {
        auto& old = ring_[(slot + ring_.size() - flat_cache_ticks) % ring_.size()];
        old.flat_valid = false;
        old.flat_entities.clear();
        old.flat_entities.shrink_to_fit();
    }

    // 4. Per component: its ids (shared with the entities when equal), then its quantized fields.
    for (std::size_t c = 0; c < components; ++c) {
        const auto& bitmap = bitmaps_[c];
        auto& component = state.components[c];
        component.ids_are_entities = bitmap == union_;
        const auto pool = schema_->codec(c).pool_entities(*registry_);
        for (std::uint32_t p = 0; p < pool.size(); ++p) {
            position_of_[to_index(pool[p])] = p;
        }
        order_.clear();
        if (component.ids_are_entities) {
            for (const auto index : state.flat_entities) {
                order_.push_back(position_of_[index]);
            }
        } else {
            ids_.clear();
            for (std::size_t w = 0; w < words; ++w) {
                for (auto bits = bitmap[w]; bits != 0; bits &= bits - 1) {
                    const auto index =
                        static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
                    order_.push_back(position_of_[index]);
                    ids_.push_back(index);
                }
            }
            component.own_ids.reserve(ids_.size());
            component.own_ids.append(ids_.begin(), ids_.end());
        }
        columns_.clear();
        for (auto& column : component.fields) {
            column.reserve(order_.size() + order_.size() / 256 + 16);
            column.resize(order_.size());
            columns_.push_back(column.raw());
        }
        schema_->codec(c).quantize_rows(*registry_, order_.data(), order_.size(), columns_.data());
    }

    if (!record_changes(state, slot)) {
        state.checksum = checksum_of(state);
    }
    // Indices that left replication are simply not seen at this tick (record.seen stays older): their next
    // occupant, even the same entity, enters anew.
    head_ = slot;
    count_ = std::min(count_ + 1, ring_.size());
    previous_tick_ = tick;
}

bool snapshot_history::record_changes(replicated_state& state, std::size_t slot) {
    // What changed since the previous tick, per component: the positions (in this tick's columns) of the
    // entries that continue from it with other values. snapshot_encoder codes 1-tick deltas from these
    // lists instead of comparing whole columns. Older ticks drop them (memory), like their flat ids.
    // The state's checksum follows from the previous one and these changes (most entities keep their
    // values from one tick to the next: summing every term again was a tenth of a capture).
    if (count_ == 0) {
        return false;
    }
    const auto& previous = ring_[head_];
    if (!previous.flat_valid) {
        return false;
    }
    const auto& entered = entered_[slot];
    // The continuing entities, kept with the state: the encoder composes them with the previous tick's
    // instead of aligning entity lists again (delta_runs.hpp, compose_runs).
    auto& entity_runs = state.continuing;
    align_ids(state.flat_entities, previous.flat_entities, entered, entity_runs, entities_only_,
              entities_gone_);
    std::uint64_t checksum = previous.checksum;
    for (const auto p : entities_only_) {
        checksum += weight_of_[state.flat_entities[p]] * weights_.identity(generations_[p]);
    }
    for (const auto p : entities_gone_) {
        checksum -= weight_of_[previous.flat_entities[p]] * weights_.identity(previous_generations_[p]);
    }
    for (std::size_t c = 0; c < state.components.size(); ++c) {
        const auto& now = state.components[c];
        const auto& before = previous.components[c];
        const std::vector<aligned_run>* runs = &entity_runs;
        const std::vector<std::uint32_t>* new_ids = &state.flat_entities;
        const std::vector<std::uint32_t>* old_ids = &previous.flat_entities;
        const std::vector<std::uint32_t>* only = &entities_only_;
        const std::vector<std::uint32_t>* gone = &entities_gone_;
        if (!now.ids_are_entities || !before.ids_are_entities) {
            if (!now.ids_are_entities) {
                flatten(now.own_ids, ids_);
                new_ids = &ids_;
            }
            if (!before.ids_are_entities) {
                flatten(before.own_ids, old_ids_);
                old_ids = &old_ids_;
            }
            align_ids(*new_ids, *old_ids, entered, own_runs_, scratch_only_, scratch_gone_);
            runs = &own_runs_;
            only = &scratch_only_;
            gone = &scratch_gone_;
        }
        // The history keeps these lists for a few ticks: no spare capacity.
        auto& written = state.written[c];
        written.clear();
        written.shrink_to_fit();
        changed_positions(now.fields, before.fields, *runs, differs_, written);

        const auto& w = weights_.components[c];
        const auto term = [&w](const component_state& component, std::uint32_t at) {
            std::uint64_t sum = w.presence;
            for (std::size_t f = 0; f < component.fields.size(); ++f) {
                sum += std::uint64_t{component.fields[f].get(at)} * w.fields[f];
            }
            return sum;
        };
        for (const auto at : *only) {
            checksum += weight_of_[(*new_ids)[at]] * term(now, at);
        }
        for (const auto at : *gone) {
            checksum -= weight_of_[(*old_ids)[at]] * term(before, at);
        }
        // The changed entries, each against its place in the previous tick (runs and positions ascend).
        auto run = runs->begin();
        for (const auto at : written) {
            while (at >= run->t + run->length) {
                ++run;
            }
            const auto was = run->b + (at - run->t);
            checksum += weight_of_[(*new_ids)[at]] * (term(now, at) - term(before, was));
        }
    }
    state.checksum = checksum;
    state.written_since = previous.tick;
    // Only the newest tick (the target) and the one before (its 1-tick-old baseline) are read for these.
    if (count_ >= change_cache_ticks) {
        auto& old = ring_[(slot + ring_.size() - change_cache_ticks) % ring_.size()];
        old.written_since.reset();
        for (auto& list : old.written) {
            list.clear();
            list.shrink_to_fit();
        }
        old.continuing.clear();
        old.continuing.shrink_to_fit();
    }
    return true;
}

std::uint64_t snapshot_history::checksum_of(const replicated_state& state) {
    // As state_checksum(), with the entity weights from a table rather than hashed again.
    std::uint64_t total = 0;
    const auto& ids = state.flat_entities;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        total += weight_of_[ids[i]] * weights_.identity(generations_[i]);
    }
    for (std::size_t c = 0; c < state.components.size(); ++c) {
        const auto& component = state.components[c];
        const std::vector<std::uint32_t>* column_ids = &ids;
        if (!component.ids_are_entities) {
            flatten(component.own_ids, ids_);
            column_ids = &ids_;
        }
        const auto n = column_ids->size();
        sums_.assign(n, weights_.components[c].presence);
        for (std::size_t f = 0; f < component.fields.size(); ++f) {
            const auto weight = weights_.components[c].fields[f];
            component.fields[f].visit([&](const auto& values) {
                for (std::size_t k = 0; k < n; ++k) {
                    sums_[k] += std::uint64_t{values[k]} * weight;
                }
            });
        }
        for (std::size_t k = 0; k < n; ++k) {
            total += weight_of_[(*column_ids)[k]] * sums_[k];
        }
    }
    return total;
}

void snapshot_history::entered_since(tick_type after, std::vector<std::uint32_t>& out) const {
    out.clear();
    for (std::size_t n = 0; n < count_; ++n) {
        const auto slot = (head_ + ring_.size() - n) % ring_.size();
        if (ring_[slot].tick <= after) {
            break;
        }
        const auto& list = entered_[slot];
        if (n == 0) {
            out = list;
            continue;
        }
        // Union of sorted lists (they are short: the entities spawned per tick).
        std::vector<std::uint32_t> merged;
        merged.reserve(out.size() + list.size());
        std::set_union(out.begin(), out.end(), list.begin(), list.end(), std::back_inserter(merged));
        out.swap(merged);
    }
    // Keep only the newest tick's entities (an index may have entered, then left again).
    const auto& now = newest();
    std::erase_if(out, [&now](std::uint32_t index) { return !now.entity_ids().contains(index); });
}

std::size_t snapshot_history::state_bytes() const noexcept {
    std::size_t bytes = 0;
    for (const auto& state : ring_) {
        bytes += state.memory_bytes();
    }
    for (const auto& list : entered_) {
        bytes += list.capacity() * sizeof(std::uint32_t);
    }
    return bytes;
}

std::size_t snapshot_history::memory_bytes() const noexcept {
    std::size_t bytes = state_bytes() + records_.capacity() * sizeof(index_record) +
                        weight_of_.capacity() * sizeof(std::uint64_t) + ids_.capacity() * 4 +
                        sums_.capacity() * 8 +
                        (generations_.capacity() + previous_generations_.capacity()) * sizeof(std::uint32_t) +
                        union_.capacity() * 8 + entity_of_.capacity() * sizeof(entity) +
                        position_of_.capacity() * 4 + order_.capacity() * 4;
    for (const auto& bitmap : bitmaps_) {
        bytes += bitmap.capacity() * 8;
    }
    return bytes;
}

} // namespace ecsnet::proto
