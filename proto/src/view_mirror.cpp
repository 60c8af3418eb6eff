#include "ecsnet/proto/view_mirror.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>
#include <stdexcept>

#include "ecsnet/proto/bit_lists.hpp"
#include "ecsnet/proto/client_view.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/view_coding.hpp"

namespace ecsnet::proto {

namespace {

enum action : std::uint8_t { advance = 0, deferred = 1, changed = 2, refreshed = 3, gone = 4 };

// How many entries ahead the merges ask for rows (a few entries' work covers a miss).
constexpr std::size_t prefetch_distance = 4;

bool mark(std::vector<std::uint8_t>& actions, const std::vector<std::uint32_t>& positions, action what) {
    for (const auto p : positions) {
        if (actions[p] != advance) {
            return false;
        }
        actions[p] = what;
    }
    return true;
}

} // namespace

view_mirror::view_mirror(const schema& schema, view_mirror_options options)
    : view_mirror{schema, nullptr, options} {}

view_mirror::view_mirror(const schema& schema, ecsnet::registry& registry, view_mirror_options options)
    : view_mirror{schema, &registry, options} {}

view_mirror::view_mirror(const schema& schema, ecsnet::registry* external, view_mirror_options options)
    : schema_{&schema}
    , options_{options}
    , layout_{schema.layout()}
    , weights_{schema.layout()}
    , registry_{external != nullptr ? *external : own_registry_}
    , pool_{layout_.width()}
    , reference_(layout_.width()) {
    if (options_.depth < 2) {
        throw std::invalid_argument("a view mirror keeps at least 2 views");
    }
    if (options_.tick_rate == 0) {
        throw std::invalid_argument("tick rate must be positive");
    }
    if (schema.size() > max_view_components) {
        throw std::invalid_argument("interest-managed views support at most 64 components");
    }
    registry_.prepare<net_id>();
}

void view_mirror::welcome(const v1::ServerWelcome& welcome) {
    if (welcome.tick_rate() != 0) {
        options_.tick_rate = welcome.tick_rate();
    }
}

result<applied_snapshot> view_mirror::refuse(errc code, std::string message, bool need_full) {
    if (need_full) {
        full_state_needed_ = true;
    }
    return make_error(code, std::move(message));
}

std::optional<tick_type> view_mirror::newest_tick() const noexcept {
    if (frames_.empty()) {
        return std::nullopt;
    }
    return frames_.back().tick;
}

const replicated_state* view_mirror::newest_state() const {
    if (frames_.empty()) {
        return nullptr;
    }
    if (!columns_valid_) {
        to_state(columns_);
        columns_valid_ = true;
    }
    return &columns_;
}

v1::Ack view_mirror::make_ack() const {
    v1::Ack ack;
    if (!frames_.empty()) {
        ack.set_tick(frames_.back().tick);
    }
    ack.set_full_state_requested(full_state_needed_ || frames_.empty());
    return ack;
}

const view_mirror::frame* view_mirror::find_frame(tick_type tick) const noexcept {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
        if (it->tick == tick) {
            return &*it;
        }
        if (it->tick < tick) {
            break;
        }
    }
    return nullptr;
}

entity view_mirror::find(net_entity id) const noexcept {
    if (id.index >= locals_.size() || local_generations_[id.index] != id.generation) {
        return null_entity;
    }
    return locals_[id.index];
}

entity view_mirror::find_index(std::uint32_t index) const noexcept {
    return index < locals_.size() ? locals_[index] : null_entity;
}

removal_reason view_mirror::removal_reason_of(entity local) const noexcept {
    return local == removing_ ? removing_reason_ : removal_reason::none;
}

std::size_t view_mirror::size() const noexcept {
    return frames_.empty() ? 0 : frames_.back().entries.size();
}

std::vector<std::pair<net_entity, std::vector<std::uint32_t>>> view_mirror::contents() const {
    std::vector<std::pair<net_entity, std::vector<std::uint32_t>>> out;
    if (frames_.empty()) {
        return out;
    }
    const auto width = layout_.width();
    for (const auto& e : frames_.back().entries) {
        const auto* row = pool_.row(e.shown_slot());
        out.emplace_back(net_entity{e.index, e.generation}, std::vector<std::uint32_t>(row, row + width));
    }
    return out;
}

std::uint64_t view_mirror::checksum_of(const frame& f) const {
    std::uint64_t sum = 0;
    for (const auto& e : f.entries) {
        sum += layout_.checksum_term(weights_, e.index, e.generation, pool_.row(e.shown_slot()));
    }
    return sum;
}

void view_mirror::release(frame& f) {
    for (const auto& e : f.entries) {
        pool_.release(e.values);
        pool_.release(e.before);
        pool_.release(e.shown);
    }
    // The entries stay, stale: a released frame is only the next apply's buffer, which writes every entry
    // it keeps (clearing them made that apply construct a whole view's entries again).
}

bool view_mirror::verify() const {
    if (frames_.empty()) {
        return true;
    }
    const auto& f = frames_.back();
    if (checksum_of(f) != f.checksum) {
        return false;
    }
    // And the registry shows exactly the frame.
    std::vector<std::uint32_t> values(layout_.width());
    for (const auto& e : f.entries) {
        const auto local = find(net_entity{e.index, e.generation});
        if (local == null_entity || local != e.local) {
            return false;
        }
        const auto* shown = pool_.row(e.shown_slot());
        for (std::size_t c = 0; c < schema_->size(); ++c) {
            const auto& codec = schema_->codec(c);
            if (row_layout::has(shown, c) != codec.contained(registry_, local)) {
                return false;
            }
            if (row_layout::has(shown, c)) {
                codec.quantize_one(registry_, local, values.data());
                if (std::memcmp(values.data(), shown + layout_.offset(c), layout_.fields(c) * 4) != 0) {
                    return false;
                }
            }
        }
    }
    return true;
}

void view_mirror::clear() {
    if (!frames_.empty()) {
        for (const auto& e : frames_.back().entries) {
            if (const auto local = find(net_entity{e.index, e.generation}); local != null_entity) {
                removing_ = local;
                removing_reason_ = removal_reason::out_of_relevancy;
                registry_.destroy(local);
            }
        }
    }
    removing_ = null_entity;
    removing_reason_ = removal_reason::none;
    std::fill(locals_.begin(), locals_.end(), null_entity);
    std::fill(local_generations_.begin(), local_generations_.end(), 0U);
    frames_.clear();
    scratch_.entries.clear();
    pool_.clear();
    columns_valid_ = false;
    full_state_needed_ = false;
}

result<applied_snapshot> view_mirror::apply_envelope(std::string_view envelope_bytes) {
    if (auto decoded = decode_canonical_envelope(envelope_bytes, v1::Envelope::kViewSnapshot, "view snapshot",
                                                 envelope_, canonical_);
        !decoded) {
        return decoded.error_value();
    }
    return apply(envelope_.view_snapshot());
}

result<applied_snapshot> view_mirror::apply(const v1::ViewSnapshot& s) {
    applied_snapshot report;
    const tick_type tick = s.tick();
    if (!frames_.empty() && tick <= frames_.back().tick) {
        return refuse(errc::stale_snapshot,
                      "view of tick " + std::to_string(tick) + " is not newer than " +
                          std::to_string(frames_.back().tick),
                      false);
    }
    if (!s.has_check() || s.check() > 0xFFFFU) {
        return refuse(errc::bad_header, "view snapshot without a valid header check", false);
    }
    const bool full = s.full_state();
    const auto gap = s.baseline_gap();
    if (full && (gap != 0 || !s.has_checksum())) {
        return refuse(errc::bad_header, "a full view has a checksum and no baseline gap", false);
    }
    const frame* base = nullptr;
    if (!full) {
        if (gap >= tick) {
            return refuse(errc::bad_header, "baseline gap beyond tick 0", false);
        }
        base = find_frame(tick - 1 - gap);
        if (base == nullptr) {
            return refuse(errc::unknown_baseline,
                          "view of tick " + std::to_string(tick) + " is based on tick " +
                              std::to_string(tick - 1 - gap) + ", which this client does not keep",
                          true);
        }
    }
    const std::uint64_t expected = s.has_checksum() ? s.checksum() : base->checksum;
    const auto& body = s.body();
    if (view_header_check(tick, full, s.has_checksum(), gap, s.time_offset_us(),
                          static_cast<std::uint32_t>(body.size()), expected) != s.check()) {
        return refuse(errc::header_check_failed, "view snapshot header check failed", false);
    }

    // ---- the body ----
    bit_reader in{body};
    auto& next = scratch_;
    const std::size_t base_size = base != nullptr ? base->entries.size() : 0;
    const std::uint64_t max_position = base_size == 0 ? 0 : base_size - 1;
    if (in.get_bit()) {
        if (!next.tables.read(layout_, in)) {
            return refuse(errc::malformed_columns, "bad view tables", false);
        }
    } else if (base != nullptr) {
        next.tables = base->tables;
    } else {
        return refuse(errc::malformed_columns, "a full view without its tables", false);
    }
    if (!read_ascending(in, left_, base_size, max_position)) {
        return refuse(errc::malformed_columns, "bad list of entities that left", false);
    }
    destroyed_.resize(left_.size());
    for (auto& d : destroyed_) {
        d = in.get_bit() ? 1 : 0;
    }
    if (!read_ascending(in, entered_, options_.max_entities, max_net_index) ||
        !read_ascending(in, refreshed_, base_size, max_position) ||
        !read_ascending(in, deferred_, base_size, max_position) ||
        !read_ascending(in, changed_, base_size, max_position)) {
        return refuse(errc::malformed_columns, "bad entity lists", false);
    }
    action_.assign(base_size, advance);
    if (!mark(action_, left_, gone) || !mark(action_, refreshed_, refreshed) ||
        !mark(action_, deferred_, deferred) || !mark(action_, changed_, changed)) {
        return refuse(errc::inconsistent_delta, "an entity is in two lists of one view", false);
    }
    if (base_size - left_.size() + entered_.size() > options_.max_entities) {
        return refuse(errc::limit_exceeded, "view larger than the entity limit", false);
    }
    const auto width = layout_.width();
    // Rows read: entered, then refreshed, then changed.
    rows_.resize((entered_.size() + refreshed_.size() + changed_.size()) * width);
    generations_.resize(entered_.size() + refreshed_.size());
    std::size_t row = 0;
    for (std::size_t i = 0; i < entered_.size(); ++i, ++row) {
        if (!read_entity_row(layout_, next.tables, in, generations_[row], rows_.data() + row * width)) {
            return refuse(errc::malformed_columns, "bad entering entity", false);
        }
    }
    for (std::size_t i = 0; i < refreshed_.size(); ++i, ++row) {
        if (!read_entity_row(layout_, next.tables, in, generations_[row], rows_.data() + row * width) ||
            generations_[row] != base->entries[refreshed_[i]].generation) {
            return refuse(errc::malformed_columns, "bad refreshed entity", false);
        }
    }
    // The reference of a base entry at this tick: its last value, unless it extrapolates to another (an
    // entity with no value before, most of them: no arithmetic). The row returned is the last value itself
    // whenever the two are equal, so that a pointer compare tells.
    const auto reference_of = [&](const entry& e) -> const std::uint32_t* {
        const auto* values = pool_.row(e.values);
        if (!layout_.extrapolates(e.tick, e.previous, tick)) {
            return values;
        }
        const bool moved = layout_.reference(values, pool_.row(e.before), tick - e.tick, e.tick - e.previous,
                                             reference_.data());
        return moved ? reference_.data() : values;
    };
    // The rows of the entries `distance` places ahead in `positions`, asked for before they are read: a
    // bot's mirror is cold when its next view comes (hundreds of mirrors in a process), and the rows are
    // scattered over the pool.
    const auto prefetch_rows = [&](const std::vector<std::uint32_t>& positions, std::size_t at) {
        if (at + prefetch_distance < positions.size()) {
            const auto& ahead = base->entries[positions[at + prefetch_distance]];
            __builtin_prefetch(pool_.row(ahead.values));
            if (ahead.before != row_pool::none) {
                __builtin_prefetch(pool_.row(ahead.before));
            }
        }
    };
    for (std::size_t i = 0; i < changed_.size(); ++i, ++row) {
        prefetch_rows(changed_, i);
        const auto& e = base->entries[changed_[i]];
        if (!read_entity_update(layout_, next.tables, pool_.row(e.values), reference_of(e), in,
                                rows_.data() + row * width)) {
            return refuse(errc::malformed_columns, "bad entity update", false);
        }
    }
    if (!in.at_padded_end()) {
        return refuse(errc::malformed_columns, "bits left after the view's last entity", false);
    }

    // ---- the new view ----
    // Entries are written in place; rows are new slots only for what changed (the pool is reserved for the
    // worst case first, so the rows of the base stay where they are).
    next.tick = tick;
    const std::size_t capacity = base_size - left_.size() + entered_.size();
    pool_.reserve(2 * capacity);
    if (next.entries.size() < capacity) {
        next.entries.resize(capacity);
    }
    std::size_t count = 0;
    const auto new_row = [&](const entry& e, const std::uint32_t* row) {
        return pool_.allocate(row, layout_.checksum_term(e.index, e.generation, row));
    };
    // A row reference_of(e) made from e's last value: its term follows from that value's (most entities a
    // view holds move, and each is extrapolated every snapshot).
    const auto new_reference_row = [&](const entry& e, const std::uint32_t* reference) {
        return pool_.allocate(
            reference, layout_.reference_term(pool_.term(e.values), e.index, pool_.row(e.values), reference));
    };
    // The new view's checksum, from the base's: only the entries whose shown row changes move it (a sum
    // modulo 2^64 of per-entity terms), so the others' terms are never read.
    std::uint64_t checksum = base != nullptr ? base->checksum : 0;
    // Based on the newest view, what the registry will have to change should the view be taken
    // (registry_edit): an entry about to take place `count` that shows another row than it did, or that
    // enters. Written through a cursor into room for every entry.
    const bool list_edits = base != nullptr && base == &frames_.back();
    if (list_edits && edits_.size() < capacity) {
        edits_.resize(capacity);
    }
    registry_edit* edit = edits_.data();
    const auto reshown = [&](const entry& before, const entry& after) {
        if (before.shown_slot() != after.shown_slot()) {
            checksum += pool_.term(after.shown_slot()) - pool_.term(before.shown_slot());
            if (list_edits) {
                *edit++ = {static_cast<std::uint32_t>(count), before.shown_slot()};
            }
        }
    };
    std::size_t in_entered = 0;
    std::size_t in_refreshed = 0;
    std::size_t in_changed = 0;
    const auto enter_until = [&](std::uint32_t index, bool inclusive) {
        while (in_entered < entered_.size() &&
               (entered_[in_entered] < index || (inclusive && entered_[in_entered] == index))) {
            entry e{entered_[in_entered], generations_[in_entered], tick, no_tick};
            e.values = new_row(e, rows_.data() + in_entered * width);
            checksum += pool_.term(e.values);
            if (list_edits) {
                *edit++ = {static_cast<std::uint32_t>(count), row_pool::none};
            }
            next.entries[count++] = e;
            ++in_entered;
        }
    };
    // As for the changed entries: the rows of the entry a few places ahead of `p`, when it will read them
    // (only an entry with a value before extrapolates; the others keep their slots unread).
    const auto prefetch_ahead = [&](std::size_t p) {
        if (p + prefetch_distance < base_size) {
            const auto& ahead = base->entries[p + prefetch_distance];
            if (ahead.before != row_pool::none) {
                __builtin_prefetch(pool_.row(ahead.values));
                __builtin_prefetch(pool_.row(ahead.before));
            }
        }
    };
    bool consistent = true;
    for (std::size_t p = 0; p < base_size && consistent; ++p) {
        // Most of a view: entities with no value before and nothing shown but their value, which this view
        // leaves alone (they advance, with nothing to extrapolate). They stay as they are, their rows shared,
        // stepped over in a loop of their own without the general case's dispatch.
        {
            const std::uint32_t next_entering =
                in_entered < entered_.size() ? entered_[in_entered] : 0xFFFFFFFFU;
            const entry* still = base->entries.data();
            entry* out = next.entries.data();
            for (; p < base_size; ++p) {
                if (action_[p] != advance || still[p].previous != no_tick ||
                    still[p].shown != row_pool::none || still[p].index >= next_entering) {
                    break;
                }
                prefetch_ahead(p);
                pool_.retain(still[p].values);
                out[count++] = still[p];
            }
            if (p == base_size) {
                break;
            }
        }
        const auto& e = base->entries[p];
        prefetch_ahead(p);
        // An index leaving (its old occupant) may enter again (a new one): after the left entry.
        if (in_entered < entered_.size() && entered_[in_entered] <= e.index) {
            enter_until(e.index, action_[p] == gone);
        }
        if (in_entered < entered_.size() && entered_[in_entered] == e.index) {
            consistent = false;
            break;
        }
        switch (action_[p]) {
        case gone:
            checksum -= pool_.term(e.shown_slot());
            break;
        case deferred: {
            // It keeps its last value, and shows its reference at this tick.
            auto held = e;
            pool_.retain(held.values);
            pool_.retain(held.before);
            const auto* reference = reference_of(e);
            held.shown = reference == pool_.row(e.values) ? row_pool::none : new_reference_row(e, reference);
            reshown(e, held);
            next.entries[count++] = held;
            break;
        }
        case refreshed: {
            entry fresh{e.index, e.generation, tick, no_tick};
            fresh.local = e.local;
            fresh.values = new_row(fresh, rows_.data() + (entered_.size() + in_refreshed++) * width);
            reshown(e, fresh);
            next.entries[count++] = fresh;
            break;
        }
        case changed: {
            entry updated{e.index, e.generation, tick, e.tick};
            updated.local = e.local;
            updated.values =
                new_row(updated, rows_.data() + (entered_.size() + refreshed_.size() + in_changed++) * width);
            updated.before = e.values;
            pool_.retain(updated.before);
            reshown(e, updated);
            next.entries[count++] = updated;
            break;
        }
        default: {
            const auto* reference = reference_of(e);
            if (reference == pool_.row(e.values)) {
                // Its reference is its last value: it keeps that value and its tick (showing it), and
                // forgets the value before, which no reference will use.
                auto same = e;
                same.previous = no_tick;
                same.before = row_pool::none;
                same.shown = row_pool::none;
                pool_.retain(same.values);
                reshown(e, same);
                next.entries[count++] = same;
            } else {
                // It moved as predicted: its reference is its new last value.
                entry moved{e.index, e.generation, tick, e.tick};
                moved.local = e.local;
                moved.values = new_reference_row(e, reference);
                moved.before = e.values;
                pool_.retain(moved.before);
                reshown(e, moved);
                next.entries[count++] = moved;
            }
            break;
        }
        }
    }
    if (consistent) {
        enter_until(0xFFFFFFFFU, true);
    }
    next.entries.resize(count);
    if (!consistent) {
        release(next);
        return refuse(errc::inconsistent_delta, "an entity enters a view that holds it", false);
    }
    next.checksum = checksum;
    if (next.checksum != expected) {
        release(next);
        return refuse(errc::checksum_mismatch,
                      "view of tick " + std::to_string(tick) + " differs from the server's (checksum)", true);
    }
    next.server_time_us = static_cast<std::uint64_t>(std::uint64_t{tick} * 1000000ULL / options_.tick_rate +
                                                     static_cast<std::uint64_t>(s.time_offset_us()));

    // ---- only now: the registry ----
    left_reason_.resize(std::max<std::size_t>(left_reason_.size(), locals_.size()), removal_reason::none);
    for (std::size_t i = 0; i < left_.size(); ++i) {
        const auto index = base->entries[left_[i]].index;
        if (index < left_reason_.size()) {
            left_reason_[index] =
                destroyed_[i] != 0 ? removal_reason::destroyed : removal_reason::out_of_relevancy;
        }
    }
    const frame* from = frames_.empty() ? nullptr : &frames_.back();
    update_registry(from, next,
                    list_edits ? std::optional{std::span<const registry_edit>{edits_.data(), edit}}
                               : std::nullopt,
                    report);
    for (std::size_t i = 0; i < left_.size(); ++i) {
        const auto index = base->entries[left_[i]].index;
        if (index < left_reason_.size()) {
            left_reason_[index] = removal_reason::none;
        }
    }

    report.tick = tick;
    report.server_time_us = next.server_time_us;
    report.full_state = full;
    if (base != nullptr) {
        report.baseline = base->tick;
    }
    const auto base_tick = base != nullptr ? std::optional{base->tick} : std::nullopt;
    // Keep the new view; drop those older than its base (a base only moves forward), and the oldest
    // beyond the depth. Dropped frames' buffers are reused.
    frame spare;
    frames_.push_back(std::move(next));
    const auto drop_front = [&] {
        release(frames_.front());
        spare = std::move(frames_.front());
        frames_.pop_front();
    };
    if (base_tick) {
        while (!frames_.empty() && frames_.front().tick < *base_tick) {
            drop_front();
        }
    }
    while (frames_.size() > options_.depth) {
        drop_front();
    }
    scratch_ = std::move(spare);
    columns_valid_ = false;
    full_state_needed_ = false;
    return report;
}

bool view_mirror::write_row(entity local, const std::uint32_t* before, const std::uint32_t* after) {
    const bit_set has = presence_of(layout_, after);
    bit_set removed = 0;
    bit_set written = has;
    if (before != nullptr) {
        // What it had and still has is written only if its values differ: one pass over the row finds
        // those, not a compare per component.
        const bit_set had = presence_of(layout_, before);
        removed = had & ~has;
        written = has & (~had | layout_.differing_components(before, after));
    }
    // In component order, as a game's signals see them.
    for (auto rest = removed | written; rest != 0; rest &= rest - 1) {
        const auto c = static_cast<std::size_t>(std::countr_zero(rest));
        if (((removed >> c) & 1U) != 0) {
            schema_->codec(c).remove(registry_, local);
        } else {
            schema_->codec(c).write(registry_, local, after + layout_.offset(c));
        }
    }
    return (removed | written) != 0;
}

void view_mirror::update_registry(const frame* from, frame& to,
                                  std::optional<std::span<const registry_edit>> edits,
                                  applied_snapshot& report) {
    if (!to.entries.empty() && to.entries.back().index >= locals_.size()) {
        locals_.resize(std::size_t{to.entries.back().index} + 1, null_entity);
        local_generations_.resize(locals_.size(), 0);
        left_reason_.resize(locals_.size(), removal_reason::none);
    }
    // Spans, not the vectors: their bounds stay in registers, where the vectors' own are reloaded after every
    // call into the registry (nothing here resizes either).
    const std::span<const entry> old_entries =
        from != nullptr ? std::span<const entry>{from->entries} : std::span<const entry>{};
    const std::span<entry> new_entries{to.entries};
    std::vector<std::pair<entity, net_entity>> created;
    const auto destroy = [&](const entry& e) {
        const auto local = e.local;
        if (local != null_entity && registry_.valid(local)) {
            removing_ = local;
            const auto reason = left_reason_[e.index];
            removing_reason_ = reason == removal_reason::none ? removal_reason::out_of_relevancy : reason;
            registry_.destroy(local);
            removing_ = null_entity;
            removing_reason_ = removal_reason::none;
            ++report.entities_destroyed;
        }
        locals_[e.index] = null_entity;
        local_generations_[e.index] = 0;
    };
    const auto create = [&](entry& e, const std::uint32_t* shown) {
        const auto local = registry_.create();
        e.local = local;
        locals_[e.index] = local;
        local_generations_[e.index] = e.generation;
        write_row(local, nullptr, shown);
        created.emplace_back(local, net_entity{e.index, e.generation});
        ++report.entities_created;
    };
    // An entity still in the view that shows another row than `before_slot`.
    const auto rewrite = [&](entry& e, std::uint32_t before_slot) {
        if (write_row(e.local, pool_.row(before_slot), pool_.row(e.shown_slot()))) {
            ++report.components_written;
        } else {
            // The same row in another slot: views based on different bases (acks late by k ticks make k + 1
            // interleaved chains) hold their own copies of every entity. The new view takes the registry's
            // slot (same row, same checksum term), so that the chains share their rows and the next merges
            // compare nothing.
            auto& slot = e.shown != row_pool::none ? e.shown : e.values;
            pool_.retain(before_slot);
            pool_.release(slot);
            slot = before_slot;
        }
    };
    if (edits) {
        // The view is based on the newest: apply listed what changes (most of a view does not), and its
        // entries carry their registry entities. Departures first: an index may leave and enter at once.
        for (const auto p : left_) {
            destroy(old_entries[p]);
        }
        for (const auto& edit : *edits) {
            auto& e = new_entries[edit.position];
            if (edit.before_slot == row_pool::none) {
                create(e, pool_.row(e.shown_slot()));
            } else {
                rewrite(e, edit.before_slot);
            }
        }
    } else {
        // A merge of the two views by index.
        std::size_t i = 0;
        std::size_t j = 0;
        while (i < old_entries.size() || j < new_entries.size()) {
            // As in apply: the rows of an entity a few places ahead, when the merge will compare them (they
            // are cold: that view was not the base apply just read).
            if (i + prefetch_distance < old_entries.size() && j + prefetch_distance < new_entries.size()) {
                const auto before_slot = old_entries[i + prefetch_distance].shown_slot();
                const auto after_slot = new_entries[j + prefetch_distance].shown_slot();
                if (before_slot != after_slot) {
                    __builtin_prefetch(pool_.row(before_slot));
                    __builtin_prefetch(pool_.row(after_slot));
                }
            }
            const auto old_index = i < old_entries.size() ? old_entries[i].index : 0xFFFFFFFFU;
            const auto new_index = j < new_entries.size() ? new_entries[j].index : 0xFFFFFFFFU;
            if (old_index < new_index) {
                destroy(old_entries[i++]);
            } else if (new_index < old_index) {
                create(new_entries[j], pool_.row(new_entries[j].shown_slot()));
                ++j;
            } else if (old_entries[i].generation != new_entries[j].generation) {
                destroy(old_entries[i++]);
                create(new_entries[j], pool_.row(new_entries[j].shown_slot()));
                ++j;
            } else {
                // The same slot is the same row: most entities, at the cost of one compare.
                new_entries[j].local = old_entries[i].local;
                const auto before_slot = old_entries[i].shown_slot();
                if (before_slot != new_entries[j].shown_slot()) {
                    rewrite(new_entries[j], before_slot);
                }
                ++i;
                ++j;
            }
        }
    }
    // Arrivals are announced once their components are in place.
    for (const auto& [local, id] : created) {
        registry_.emplace<net_id>(local, net_id{id});
    }
}

void view_mirror::to_state(replicated_state& out) const {
    out.reset(schema_->layout());
    if (frames_.empty()) {
        return;
    }
    const auto& f = frames_.back();
    out.tick = f.tick;
    out.checksum = f.checksum;
    out.server_time_us = f.server_time_us;
    std::vector<std::uint32_t> ids;
    for (const auto& e : f.entries) {
        out.entities.push_back(e.index);
        out.generations.push_back(e.generation);
    }
    for (std::size_t c = 0; c < schema_->size(); ++c) {
        auto& component = out.components[c];
        ids.clear();
        for (const auto& e : f.entries) {
            if (row_layout::has(pool_.row(e.shown_slot()), c)) {
                ids.push_back(e.index);
            }
        }
        component.ids_are_entities = ids.size() == f.entries.size();
        if (!component.ids_are_entities) {
            component.own_ids.append(ids.begin(), ids.end());
        }
        for (std::size_t fi = 0; fi < layout_.fields(c); ++fi) {
            auto& column = component.fields[fi];
            column.resize(ids.size());
            std::size_t k = 0;
            for (const auto& e : f.entries) {
                const auto* row = pool_.row(e.shown_slot());
                if (row_layout::has(row, c)) {
                    column.set(k++, row[layout_.offset(c) + fi]);
                }
            }
        }
    }
}

} // namespace ecsnet::proto
