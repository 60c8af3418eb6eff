#pragma once

// A de-duplicating work queue of entities on a sparse set (seed 004, last paragraph).
//
// push() is O(1) and ignores an entity already queued; drain() visits the queue in insertion order, and
// what a visit pushes is visited later in the same drain; then the queue is cleared in O(1). An entity is
// visited at most once per drain: pushing it again after its visit does nothing until the next drain.
// The replication layer uses it for "entities changed this tick".

#include <cstddef>

#include "capacity.hpp"
#include "entity.hpp"
#include "sparse_set.hpp"

namespace ecsnet {

template<capacity_policy Capacity = dynamic_capacity>
class work_queue {
public:
    /// Queues `e` unless it is already queued; returns whether it was added.
    bool push(entity e) { return set_.insert(e); }

    [[nodiscard]] bool contains(entity e) const noexcept { return set_.contains(e); }
    [[nodiscard]] std::size_t size() const noexcept { return set_.size(); }
    [[nodiscard]] bool empty() const noexcept { return set_.empty(); }

    /// Calls func(entity) for every queued entity in insertion order, including those func pushes, then
    /// empties the queue. func must not call drain() or clear().
    template<typename Func>
    void drain(Func func) {
        for (std::size_t pos = 0; pos < set_.size(); ++pos) {
            func(set_[pos]);
        }
        set_.clear();
    }

    void clear() noexcept { set_.clear(); }

private:
    sparse_set<Capacity> set_;
};

} // namespace ecsnet
