#include "ecsnet/proto/mirror.hpp"

#include <algorithm>
#include <stdexcept>

#include "ecsnet/proto/envelope.hpp"

namespace ecsnet::proto {

mirror::mirror(const schema& schema, mirror_options options)
    : mirror{schema, nullptr, options} {}

mirror::mirror(const schema& schema, ecsnet::registry& registry, mirror_options options)
    : mirror{schema, &registry, options} {}

mirror::mirror(const schema& schema, ecsnet::registry* external, mirror_options options)
    : schema_{&schema}
    , options_{options}
    , weights_{schema.layout()}
    , registry_{external != nullptr ? *external : own_registry_} {
    if (options_.depth < 2) {
        throw std::invalid_argument("a mirror keeps at least 2 ticks");
    }
    if (options_.tick_rate == 0) {
        throw std::invalid_argument("tick rate must be positive");
    }
    scratch_ = std::make_unique<replicated_state>(schema.layout());
    for (std::size_t c = 0; c < schema.size(); ++c) {
        kernels_.push_back(schema.codec(c).candidates_kernel());
    }
    registry_.prepare<net_id>();
}

mirror::~mirror() = default;

void mirror::welcome(const v1::ServerWelcome& welcome) {
    if (welcome.tick_rate() != 0) {
        options_.tick_rate = welcome.tick_rate();
    }
}

std::optional<tick_type> mirror::newest_tick() const noexcept {
    if (states_.empty()) {
        return std::nullopt;
    }
    return states_.back()->tick;
}

const replicated_state* mirror::newest_state() const noexcept {
    return states_.empty() ? nullptr : states_.back().get();
}

const replicated_state* mirror::state(tick_type tick) const noexcept {
    for (auto it = states_.rbegin(); it != states_.rend(); ++it) {
        if ((*it)->tick == tick) {
            return it->get();
        }
        if ((*it)->tick < tick) {
            break;
        }
    }
    return nullptr;
}

v1::Ack mirror::make_ack() const {
    v1::Ack ack;
    if (!states_.empty()) {
        ack.set_tick(states_.back()->tick);
    }
    ack.set_full_state_requested(full_state_needed_ || states_.empty());
    return ack;
}

entity mirror::find(net_entity id) const noexcept {
    if (id.index >= locals_.size()) {
        return null_entity;
    }
    const auto local = locals_[id.index];
    return local != null_entity && local_generations_[id.index] == id.generation ? local : null_entity;
}

entity mirror::find_index(std::uint32_t index) const noexcept {
    return index < locals_.size() ? locals_[index] : null_entity;
}

void mirror::clear() {
    for (auto& local : locals_) {
        if (local != null_entity && registry_.valid(local)) {
            registry_.destroy(local);
        }
        local = null_entity;
    }
    std::fill(local_generations_.begin(), local_generations_.end(), 0U);
    for (auto& state : states_) {
        spare_.push_back(std::move(state));
    }
    states_.clear();
    keep_from_ = 0;
    full_state_needed_ = false;
}

std::size_t mirror::memory_bytes() const noexcept {
    std::size_t bytes = scratch_->memory_bytes() + locals_.capacity() * sizeof(entity) +
                        local_generations_.capacity() * sizeof(std::uint32_t);
    for (const auto& state : states_) {
        bytes += state->memory_bytes();
    }
    for (const auto& state : spare_) {
        bytes += state->memory_bytes();
    }
    return bytes;
}

result<applied_snapshot> mirror::refuse(errc code, std::string message, bool need_full) {
    if (need_full) {
        full_state_needed_ = true;
    }
    return make_error(code, std::move(message));
}

result<applied_snapshot> mirror::apply_envelope(std::string_view envelope_bytes) {
    if (auto decoded = decode_canonical_envelope(envelope_bytes, v1::Envelope::kSnapshot, "snapshot",
                                                 envelope_, canonical_);
        !decoded) {
        return decoded.error_value();
    }
    return apply(envelope_.snapshot());
}

result<applied_snapshot> mirror::apply(const v1::Snapshot& s) {
    applied_snapshot report;
    const tick_type tick = s.tick();
    if (!states_.empty() && tick <= states_.back()->tick) {
        return refuse(errc::stale_snapshot,
                      "snapshot of tick " + std::to_string(tick) + " is not newer than " +
                          std::to_string(states_.back()->tick),
                      false);
    }
    const bool full = s.full_state();
    const bool has_checksum = s.has_checksum();
    const std::string& columns = s.columns();
    if (!s.has_check() || s.check() > 0xFFFFU) {
        return refuse(errc::bad_header, "snapshot without a valid header check", false);
    }
    if (full ? (s.baseline_gap() != 0 || s.extrapolation_gap() != 0 || !has_checksum)
             : (columns.empty() ? (has_checksum || s.extrapolation_gap() != 0) : !has_checksum)) {
        return refuse(errc::bad_header, "inconsistent snapshot header (full state, gaps, checksum, columns)",
                      false);
    }
    const replicated_state* baseline = nullptr;
    const replicated_state* second = nullptr;
    extrapolation x;
    if (!full) {
        const std::uint64_t gap = s.baseline_gap();
        if (gap + 1 > tick) {
            return refuse(errc::bad_header, "baseline before tick 0", false);
        }
        const auto baseline_tick = static_cast<tick_type>(tick - 1 - gap);
        baseline = state(baseline_tick);
        if (baseline == nullptr) {
            return refuse(errc::unknown_baseline,
                          "baseline tick " + std::to_string(baseline_tick) + " is not kept", true);
        }
        report.baseline = baseline_tick;
        x.ahead = tick - baseline_tick;
        if (s.extrapolation_gap() != 0) {
            if (s.extrapolation_gap() > baseline_tick) {
                return refuse(errc::bad_header, "second baseline before tick 0", false);
            }
            const auto second_tick = baseline_tick - s.extrapolation_gap();
            second = state(second_tick);
            if (second == nullptr) {
                return refuse(errc::unknown_baseline,
                              "second baseline tick " + std::to_string(second_tick) + " is not kept", true);
            }
            report.second = second_tick;
            x.span = s.extrapolation_gap();
        }
    }
    snapshot_header header;
    header.tick = tick;
    header.full_state = full;
    header.has_checksum = has_checksum;
    header.baseline_gap = s.baseline_gap();
    header.extrapolation_gap = s.extrapolation_gap();
    header.time_offset_us = s.time_offset_us();
    header.columns_size = static_cast<std::uint32_t>(columns.size());
    header.checksum = has_checksum ? s.checksum() : baseline->checksum;
    if (header_check(header) != s.check()) {
        return refuse(errc::header_check_failed, "snapshot header check failed", false);
    }

    // Everything below works on scratch memory: the mirror is untouched until the commit.
    if (auto read = read_delta(schema_->layout(), columns, full, delta_, options_.limits); !read) {
        return refuse(read.code(), std::string{read.message()}, false);
    }
    if (!full && !columns.empty() && delta_.empty() && second == nullptr) {
        return refuse(errc::malformed_columns, "columns describing no change", false);
    }
    const bool idle = !full && columns.empty();
    auto& next = *scratch_;
    if (idle) {
        next = *baseline;
        next.written_since = baseline->tick; // nothing differs from it
        for (auto& list : next.written) {
            list.clear();
        }
        next.continuing.clear(); // every entity continues
        if (const auto n = static_cast<std::uint32_t>(next.entity_count()); n != 0) {
            next.continuing.push_back({0, 0, aligned_run::no_second, n});
        }
    } else if (auto built = apply_delta(schema_->layout(), baseline, second, x, delta_, next, work_, weights_,
                                        options_.limits, kernels_);
               !built) {
        return refuse(built.code(), std::string{built.message()}, false);
    }
    next.tick = tick;
    next.server_time_us =
        std::uint64_t{tick} * 1000000U / options_.tick_rate + static_cast<std::uint64_t>(s.time_offset_us());
    // apply_delta summed the baseline's checksum and the contribution of every change; now and then (and
    // for every full state, where that sum is already complete) the whole state is summed again.
    if (has_checksum) {
        if (next.checksum != s.checksum()) {
            return refuse(errc::checksum_mismatch, "state checksum mismatch at tick " + std::to_string(tick),
                          true);
        }
        if (!full && options_.full_check_interval != 0 &&
            since_full_check_ + 1 >= options_.full_check_interval) {
            if (state_checksum(weights_, next) != s.checksum()) {
                return refuse(errc::checksum_mismatch,
                              "state checksum mismatch at tick " + std::to_string(tick) + " (full check)",
                              true);
            }
            since_full_check_ = 0;
        } else {
            ++since_full_check_;
        }
    }

    // Commit.
    report.tick = tick;
    report.server_time_us = next.server_time_us;
    report.full_state = full;
    const auto* from = newest_state();
    if (idle && from == baseline) {
        // Nothing changed.
    } else if (!idle && from != nullptr && from == baseline) {
        update_registry_from_effects(*from, next, report);
    } else {
        update_registry(from, next, report);
    }
    states_.push_back(std::move(scratch_));
    // Keep what the server may still use: a delta's baselines bound the server's future ones from below
    // (they only move forward); a full state tells nothing. At most `depth` states. The warmest released
    // buffer becomes the next scratch.
    if (report.baseline) {
        keep_from_ = std::max(keep_from_, report.second ? *report.second : *report.baseline);
    }
    std::size_t drop = 0;
    while (drop + 1 < states_.size() &&
           (states_[drop]->tick < keep_from_ || states_.size() - drop > options_.depth)) {
        ++drop;
    }
    for (std::size_t n = 0; n < drop; ++n) {
        spare_.push_back(std::move(states_[n]));
    }
    states_.erase(states_.begin(), states_.begin() + static_cast<std::ptrdiff_t>(drop));
    if (spare_.empty()) {
        scratch_ = std::make_unique<replicated_state>(schema_->layout());
    } else {
        scratch_ = std::move(spare_.back());
        spare_.pop_back();
    }
    while (spare_.size() > 2) { // beyond a couple, released buffers are cold anyway: free them
        spare_.erase(spare_.begin());
    }
    full_state_needed_ = false;
    return report;
}

void mirror::make_room(const std::vector<std::uint32_t>& indices) {
    if (!indices.empty() && indices.back() >= locals_.size()) {
        locals_.resize(std::size_t{indices.back()} + 1, null_entity);
        local_generations_.resize(locals_.size(), 0);
        touched_.resize(locals_.size(), 0);
    }
}

void mirror::destroy_local(std::uint32_t index, applied_snapshot& report) {
    auto& local = locals_[index];
    if (local != null_entity && registry_.valid(local)) {
        registry_.destroy(local);
        ++report.entities_destroyed;
    }
    local = null_entity;
    local_generations_[index] = 0;
}

void mirror::create_local(std::uint32_t index, std::uint32_t generation, applied_snapshot& report) {
    const auto e = registry_.create();
    locals_[index] = e;
    local_generations_[index] = generation;
    touched_[index] = 1;
    created_.push_back(e);
    created_ids_.push_back({index, generation});
    ++report.entities_created;
}

// Arrivals are announced once their components are in place.
void mirror::announce_created() {
    for (std::size_t n = 0; n < created_.size(); ++n) {
        registry_.emplace<net_id>(created_[n], net_id{created_ids_[n]});
    }
    for (const auto id : created_ids_) {
        touched_[id.index] = 0;
    }
    created_.clear();
    created_ids_.clear();
}

bool mirror::verify() const {
    const auto* newest = newest_state();
    return newest == nullptr || state_checksum(weights_, *newest) == newest->checksum;
}

void mirror::update_registry_from_effects(const replicated_state& from, const replicated_state& to,
                                          applied_snapshot& report) {
    const auto& effects = work_.effects;
    const auto& et = to.flat(to_ids_); // apply_delta left the new state's entities flattened
    const auto& eb = from.flat(work_.base_entities);
    make_room(et);
    for (const auto pos : effects.destroyed) {
        destroy_local(eb[pos], report);
    }
    for (const auto pos : effects.created) {
        create_local(et[pos], to.generations[pos], report);
    }
    const auto& layout = schema_->layout();
    for (std::size_t c = 0; c < layout.size(); ++c) {
        const auto& eff = effects.components[c];
        const auto& codec = schema_->codec(c);
        if (!eff.removed.empty()) {
            const auto* base_ids = &eb;
            if (!from.components[c].ids_are_entities) {
                flatten(from.ids(c), from_ids_);
                base_ids = &from_ids_;
            }
            for (const auto pos : eff.removed) {
                const auto local = locals_[(*base_ids)[pos]];
                if (registry_.valid(local)) {
                    codec.remove(registry_, local);
                    ++report.components_written;
                }
            }
        }
        if (eff.written.empty() && eff.added.empty()) {
            continue;
        }
        const std::vector<std::uint32_t>* ids = &et;
        if (!to.components[c].ids_are_entities) {
            flatten(to.ids(c), values_);
            ids = &values_;
        }
        row_columns_.clear();
        for (const auto& column : to.components[c].fields) {
            row_columns_.push_back(column.raw());
        }
        for (const auto* positions : {&eff.added, &eff.written}) {
            // Written entries are survivors: they have the component (a game that removed it on a mirrored
            // entity only loses the update).
            codec.write_rows(
                registry_,
                {locals_.data(), ids->data(), positions->data(), positions->size(), row_columns_.data()},
                positions == &eff.written);
            report.components_written += positions->size();
        }
    }
    announce_created();
}

void mirror::update_registry(const replicated_state* from, const replicated_state& to,
                             applied_snapshot& report) {
    // Entities: destroy those gone or replaced, create those new or replacing.
    from_ids_.clear();
    const auto& ef = from != nullptr ? from->flat(from_ids_) : from_ids_;
    const auto& et = to.flat(to_ids_);
    make_room(et);
    replaced_.clear();
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < ef.size() || j < et.size()) {
        if (j == et.size() || (i < ef.size() && ef[i] < et[j])) {
            destroy_local(ef[i++], report);
        } else if (i == ef.size() || et[j] < ef[i]) {
            create_local(et[j], to.generations[j], report);
            ++j;
        } else {
            const auto index = et[j];
            if (from->generations[i] != to.generations[j] || locals_[index] == null_entity) {
                destroy_local(index, report);
                create_local(index, to.generations[j], report);
                replaced_.push_back(index);
            }
            ++i;
            ++j;
        }
    }

    // Components: align the two id columns (a replaced entity breaks the runs, so that its row counts as
    // new), compare the values along the runs a column at a time, and write the rows that are new or
    // differ.
    const auto& layout = schema_->layout();
    // A component's ids: the entities' (already flat) or its own, flattened into `scratch`.
    const auto ids_of = [](const replicated_state& state, std::size_t c,
                           const std::vector<std::uint32_t>& entities,
                           std::vector<std::uint32_t>& scratch) -> const std::vector<std::uint32_t>& {
        if (state.components[c].ids_are_entities) {
            return entities;
        }
        flatten(state.ids(c), scratch);
        return scratch;
    };
    for (std::size_t c = 0; c < layout.size(); ++c) {
        const auto& codec = schema_->codec(c);
        const auto& to_fields = to.components[c].fields;
        const auto& from_ids = from != nullptr ? ids_of(*from, c, ef, values_) : ef;
        const auto& ids = ids_of(to, c, et, own_ids_);
        align_ids(ids, from_ids, replaced_, runs_, added_, gone_);
        for (const auto pos : gone_) {
            // Gone from this component: removed, unless the entity itself went (or was replaced).
            const auto index = from_ids[pos];
            if (index < locals_.size() && touched_[index] == 0 && locals_[index] != null_entity &&
                registry_.valid(locals_[index])) {
                codec.remove(registry_, locals_[index]);
                ++report.components_written;
            }
        }
        if (from != nullptr && !runs_.empty()) {
            changed_positions(to_fields, from->components[c].fields, runs_, flags_, differing_);
        } else {
            differing_.clear();
        }
        row_positions_.resize(added_.size() + differing_.size());
        std::merge(added_.begin(), added_.end(), differing_.begin(), differing_.end(),
                   row_positions_.begin());
        row_columns_.clear();
        for (const auto& column : to_fields) {
            row_columns_.push_back(column.raw());
        }
        codec.write_rows(registry_, {locals_.data(), ids.data(), row_positions_.data(), row_positions_.size(),
                                     row_columns_.data()});
        report.components_written += row_positions_.size();
    }
    announce_created();
}

} // namespace ecsnet::proto
