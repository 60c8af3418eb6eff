#include "ecsnet/transport/visit_schedule.hpp"

#include <algorithm>

namespace ecsnet::transport {

namespace {

// A time's bucket: its millisecond, rounded up, so that every entry of a bucket whose millisecond has
// begun is due (a time within that millisecond is not past it, but it is not before its start either).
std::int64_t bucket_ms(clock::time_point when) noexcept {
    return std::chrono::ceil<std::chrono::milliseconds>(when.time_since_epoch()).count();
}

std::int64_t floor_ms(clock::time_point when) noexcept {
    return std::chrono::floor<std::chrono::milliseconds>(when.time_since_epoch()).count();
}

} // namespace

visit_schedule::visit_schedule()
    : wheel_(wheel_size) {}

void visit_schedule::set_due(connection_id id, clock::time_point when) {
    const auto slot = connection_slot(id);
    if (slot >= slots_.size()) {
        slots_.resize(std::size_t{slot} + 1);
    }
    auto& s = slots_[slot];
    if (s.id != id) { // a new connection in this slot: what its predecessor queued is stale
        if (s.id == 0) {
            ++scheduled_;
        }
        s = slot_state{id, never, never};
    }
    s.due = when;
    if (when < s.queued) {
        s.queued = when;
        push(when, id);
    }
}

void visit_schedule::forget(connection_id id) noexcept {
    const auto slot = connection_slot(id);
    if (slot < slots_.size() && slots_[slot].id == id) {
        slots_[slot] = slot_state{};
        --scheduled_;
    }
}

void visit_schedule::take_due(clock::time_point now, std::vector<connection_id>& out) {
    const auto now_ms = floor_ms(now);
    // The buckets of the milliseconds begun since the last call, each once even after a long pause (an
    // entry of a later turn of the wheel stays in its bucket); the current millisecond's again next time,
    // for what is queued due meanwhile goes there.
    const auto last = std::min(now_ms, next_ms_ + static_cast<std::int64_t>(wheel_size) - 1);
    draining_now_ = true;
    for (auto ms = next_ms_; ms <= last; ++ms) {
        auto& bucket = wheel_[static_cast<std::size_t>(ms) & (wheel_size - 1)];
        if (bucket.empty()) {
            continue;
        }
        draining_.swap(bucket); // entries queued again below may land in this same bucket
        for (const auto& e : draining_) {
            --entries_;
            const auto slot = connection_slot(e.id);
            if (slot >= slots_.size() || slots_[slot].id != e.id || slots_[slot].queued != e.when) {
                continue; // stale: its connection is gone, or an earlier entry replaced it
            }
            if (bucket_ms(e.when) > now_ms) { // a later turn of the wheel
                push(e.when, e.id);
                continue;
            }
            auto& s = slots_[slot];
            if (s.due > now) { // the due time moved later since: queued again, not visited
                s.queued = s.due;
                if (s.due != never) {
                    push(s.due, s.id);
                }
                continue;
            }
            s.due = never;
            s.queued = never;
            out.push_back(e.id);
        }
        draining_.clear();
    }
    draining_now_ = false;
    next_ms_ = std::max(next_ms_, now_ms);
    if (entries_ > most_entries()) {
        rebuild();
    }
}

void visit_schedule::push(clock::time_point when, connection_id id) {
    bucket_of(when).push_back({when, id});
    if (++entries_ > most_entries() && !draining_now_) {
        rebuild(); // drops the stale entries; the live one of each connection stays
    }
}

std::vector<visit_schedule::entry>& visit_schedule::bucket_of(clock::time_point when) {
    // A time whose bucket was drained already goes in the next one drained.
    const auto ms = std::max(bucket_ms(when), next_ms_);
    return wheel_[static_cast<std::size_t>(ms) & (wheel_size - 1)];
}

void visit_schedule::rebuild() {
    for (auto& bucket : wheel_) {
        bucket.clear();
    }
    entries_ = 0;
    for (const auto& s : slots_) {
        if (s.id != 0 && s.queued != never) {
            bucket_of(s.queued).push_back({s.queued, s.id});
            ++entries_;
        }
    }
}

} // namespace ecsnet::transport
