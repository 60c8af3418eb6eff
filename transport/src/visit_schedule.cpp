#include "ecsnet/transport/visit_schedule.hpp"

#include <algorithm>

namespace ecsnet::transport {

namespace {

// The heap's order: the earliest entry on top (std::push_heap keeps the largest by its comparison).
struct later {
    template<typename Entry>
    bool operator()(const Entry& a, const Entry& b) const noexcept {
        return a.when > b.when;
    }
};

} // namespace

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
    while (!heap_.empty() && heap_.front().when <= now) {
        const entry top = heap_.front();
        pop();
        const auto slot = connection_slot(top.id);
        if (slot >= slots_.size()) {
            continue;
        }
        auto& s = slots_[slot];
        if (s.id != top.id || s.queued != top.when) {
            continue; // stale: its connection is gone, or a later entry replaced it
        }
        if (s.due > now) { // the due time moved later since: queued again, not visited
            s.queued = s.due;
            if (s.due != never) {
                push(s.due, s.id);
            }
            continue;
        }
        s.due = never;
        s.queued = never;
        out.push_back(top.id);
    }
}

void visit_schedule::push(clock::time_point when, connection_id id) {
    heap_.push_back({when, id});
    std::push_heap(heap_.begin(), heap_.end(), later{});
    if (heap_.size() > 8 * scheduled_ + 64) {
        rebuild(); // drops the stale entries; the live one of each connection stays
    }
}

void visit_schedule::pop() noexcept {
    std::pop_heap(heap_.begin(), heap_.end(), later{});
    heap_.pop_back();
}

void visit_schedule::rebuild() {
    heap_.clear();
    for (const auto& s : slots_) {
        if (s.id != 0 && s.queued != never) {
            heap_.push_back({s.queued, s.id});
        }
    }
    std::make_heap(heap_.begin(), heap_.end(), later{});
}

} // namespace ecsnet::transport
