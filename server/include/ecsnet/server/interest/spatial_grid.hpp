#pragma once

// A uniform 2D grid of ids with positions: "which ids are within r of (x, y)" for interest management
// (issue 15). The server moves every replicated entity in it once a tick and queries it once per client
// relevancy update.
//
// Layout. Each cell holds a dense array of entries {x, y, id, generation} (16 bytes; removal swaps the last
// entry in), so a query streams through contiguous memory. Each id has a record {cell, slot} in an ECS
// storage (a sparse set keyed by the id plus the packed records, storage.hpp), so move() finds its entry in
// O(1). The position lives in the entry only.
//
// Unlike Unreal's ReplicationGraph grid, which puts each actor in every cell its cull distance covers and
// has a connection read the one cell it stands in, an id here sits in exactly one cell and a query reads
// the cells its circle covers: all our queries share one radius, the memory stays bounded by ids + cells,
// and a move touches at most two cells. As with its dynamic actors, a move that stays in its cell (the
// common case) only rewrites the position: cell index, compare, two stores. A static entity costs nothing
// per tick: just never move it.
//
// Bounds. The grid covers [min_x, max_x] x [min_y, max_y]; a position outside is kept exact and filed in
// the nearest border cell, so it is still found by any circle that reaches it (border cells reach to
// infinity on their outer sides). NaN coordinates are filed in cell (0, 0) and are never within any radius.
//
// Queries are exact. A cell the circle misses is skipped; a cell entirely inside the circle reports each of
// its ids with its squared distance and no comparison; a cell the circle's edge crosses tests each id. The
// "entirely inside" and "missed" tests are conservative (the cell widened by more than the rounding of the
// cell index, the radius narrowed or widened by more than the rounding of a squared distance), so a query
// reports exactly the ids with distance_squared(center, position) <= radius * radius, as a scan of every id
// would, bit for bit.
//
// Memory: a cell keeps at least 4 entries of capacity once used and gives back half its capacity when a
// quarter is in use, so the cells never hold more than 4 entries per id plus 4 per cell.
//
// Ids are world entity indices, at most ecsnet::entity_traits::max_index. Not thread-safe; queries from
// several threads at once are fine while nothing changes the grid.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <ecsnet/ecs/config.hpp>
#include <ecsnet/ecs/entity.hpp>
#include <ecsnet/ecs/storage.hpp>

namespace ecsnet::server::interest {

using id_type = std::uint32_t;
/// Tells successive occupants of one id apart: every insertion gets a new generation (0 is "not in the
/// grid"). A relevancy set remembers the generation it saw, so an id destroyed and re-used between two of
/// its updates leaves and re-enters instead of silently standing for a different entity.
using generation_type = std::uint32_t;

struct grid_bounds {
    float min_x;
    float min_y;
    float max_x;
    float max_y;
};

struct grid_position {
    float x;
    float y;
};

struct grid_entry {
    float x;
    float y;
    id_type id;
    generation_type generation;
};

/// The one formula for squared distances: the grid's queries and any reference that must agree with them
/// bit for bit use it (built without FMA contraction, as the project's default x86-64 target is).
[[nodiscard]] inline float distance_squared(float ax, float ay, float bx, float by) noexcept {
    const float dx = ax - bx;
    const float dy = ay - by;
    return dx * dx + dy * dy;
}

class spatial_grid {
public:
    /// The largest id: world entity indices (index 0xFFFFF is the null entity's).
    static constexpr id_type max_id = entity_traits::max_index;
    /// A guard against a cell size far too small for the bounds (2^24 cells are 400 MiB of empty lists).
    static constexpr std::size_t max_cells = std::size_t{1} << 22;
    /// Capacity a used cell keeps however empty it gets, so ids crossing a border do not allocate.
    static constexpr std::size_t min_cell_capacity = 4;

    /// Throws std::invalid_argument for bounds that are not finite with min < max, a cell size that is not
    /// positive and finite, or more than max_cells cells.
    spatial_grid(grid_bounds bounds, float cell_size)
        : bounds_{bounds}
        , cell_size_{cell_size} {
        const auto finite = [](float v) { return std::isfinite(v); };
        if (!finite(bounds.min_x) || !finite(bounds.min_y) || !finite(bounds.max_x) ||
            !finite(bounds.max_y) || !(bounds.min_x < bounds.max_x) || !(bounds.min_y < bounds.max_y)) {
            throw std::invalid_argument("spatial_grid bounds must be finite with min < max");
        }
        if (!(cell_size > 0.0f) || !finite(cell_size)) {
            throw std::invalid_argument("spatial_grid cell size must be positive and finite");
        }
        const double columns = std::ceil((double{bounds.max_x} - bounds.min_x) / cell_size);
        const double rows = std::ceil((double{bounds.max_y} - bounds.min_y) / cell_size);
        if (columns * rows > static_cast<double>(max_cells)) {
            throw std::invalid_argument("spatial_grid would have more than " + std::to_string(max_cells) +
                                        " cells: use a larger cell size");
        }
        columns_ = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(columns));
        rows_ = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(rows));
        inverse_cell_size_ = 1.0f / cell_size;
        last_column_ = static_cast<float>(columns_ - 1);
        last_row_ = static_cast<float>(rows_ - 1);
        cells_.resize(std::size_t{columns_} * rows_);

        // Cell edges for queries, widened by far more than the rounding of a cell index (a few units in the
        // last place of the coordinates): an entry lies inside its cell's widened edges whatever the
        // rounding. Border cells reach to infinity outwards, since they hold every position beyond.
        const float magnitude = std::max({std::fabs(bounds.min_x), std::fabs(bounds.max_x),
                                          std::fabs(bounds.min_y), std::fabs(bounds.max_y), cell_size});
        const float slack = magnitude * 0x1p-18f;
        const auto edges = [&](std::uint32_t count, float origin, std::vector<float>& low,
                               std::vector<float>& high) {
            low.resize(count);
            high.resize(count);
            for (std::uint32_t i = 0; i < count; ++i) {
                low[i] = origin + static_cast<float>(i) * cell_size - slack;
                high[i] = origin + static_cast<float>(i + 1) * cell_size + slack;
            }
            low.front() = -std::numeric_limits<float>::infinity();
            high.back() = std::numeric_limits<float>::infinity();
        };
        edges(columns_, bounds.min_x, column_low_, column_high_);
        edges(rows_, bounds.min_y, row_low_, row_high_);
    }

    /// Adds `id` at (x, y); returns false (and changes nothing) if it is already in the grid. Throws
    /// std::out_of_range for an id above max_id; std::bad_alloc leaves the grid as it was.
    bool insert(id_type id, float x, float y) {
        if (id > max_id) {
            throw std::out_of_range("spatial_grid id " + std::to_string(id) +
                                    " above the largest entity index");
        }
        const entity key = to_entity(id);
        if (records_.contains(key)) {
            return false;
        }
        const std::uint32_t cell = cell_of(x, y);
        auto& list = cells_[cell];
        list.push_back({x, y, id, next_generation_});
        try {
            records_.emplace(key, record{cell, static_cast<std::uint32_t>(list.size() - 1)});
        } catch (...) {
            list.pop_back();
            throw;
        }
        next_generation_ =
            next_generation_ == std::numeric_limits<generation_type>::max() ? 1 : next_generation_ + 1;
        return true;
    }

    /// Moves an id that is in the grid to (x, y). O(1): within its cell, the position is rewritten; into
    /// another cell, its entry moves over (which may allocate; std::bad_alloc leaves it where it was).
    void move(id_type id, float x, float y) {
        ECSNET_ASSERT(contains(id), "spatial_grid::move of an id not in the grid");
        record& rec = records_.get(to_entity(id));
        const std::uint32_t cell = cell_of(x, y);
        if (cell == rec.cell) [[likely]] {
            grid_entry& entry = cells_[cell][rec.slot];
            entry.x = x;
            entry.y = y;
            return;
        }
        relocate(rec, cell, x, y);
    }

    /// Removes `id`; returns whether it was in the grid.
    bool erase(id_type id) noexcept {
        if (!contains(id)) {
            return false;
        }
        const entity key = to_entity(id);
        const record rec = records_.get(key);
        remove_entry(rec.cell, rec.slot);
        records_.erase(key);
        return true;
    }

    /// Removes every id. O(cells); the cells keep their capacity.
    void clear() noexcept {
        for (auto& list : cells_) {
            list.clear();
        }
        records_.clear();
    }

    [[nodiscard]] bool contains(id_type id) const noexcept {
        return id <= max_id && records_.contains(to_entity(id));
    }
    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }

    /// The position of an id that is in the grid, as last given (not clamped to the bounds).
    [[nodiscard]] grid_position position_of(id_type id) const noexcept {
        const grid_entry& entry = entry_of(id);
        return {entry.x, entry.y};
    }

    /// The generation of the id's current occupant, or 0 when it is not in the grid.
    [[nodiscard]] generation_type generation_of(id_type id) const noexcept {
        return contains(id) ? entry_of(id).generation : 0;
    }

    /// Calls f(id, distance_squared) for every id with distance_squared(x, y, position) <= radius * radius.
    /// A negative or NaN radius, or a center that is not finite, finds nothing. Order: by cell, row by row.
    /// f must not change the grid.
    template<typename Func>
    void query_circle(float x, float y, float radius, Func&& f) const {
        query_circle_entries(x, y, radius, [&f](const grid_entry& entry, float d2) { f(entry.id, d2); });
    }

    /// query_circle, passing f(const grid_entry&, distance_squared): the position and generation too.
    template<typename Func>
    void query_circle_entries(float x, float y, float radius, Func&& f) const {
        if (!(radius >= 0.0f) || !std::isfinite(x) || !std::isfinite(y) || records_.empty()) {
            return;
        }
        const float r2 = radius * radius;
        // A cell is entirely inside when its farthest widened corner is within the radius less a relative
        // margin (2^-16) far above the rounding of a squared distance (a few 2^-24): then every id it holds
        // has distance_squared <= r2 as computed. Only for finite radii (an infinite one tests every id).
        const float inside_limit = std::isfinite(r2) ? r2 * (1.0f - 0x1p-16f) : -1.0f;
        // Likewise a cell is skipped only when its nearest widened point is beyond the radius plus a margin.
        const float outside_limit = r2 * (1.0f + 0x1p-16f);
        const std::uint32_t column_first = column_of(x - radius);
        const std::uint32_t column_last = column_of(x + radius);
        const std::uint32_t row_first = row_of(y - radius);
        const std::uint32_t row_last = row_of(y + radius);
        for (std::uint32_t row = row_first; row <= row_last; ++row) {
            const float dy_near = std::max({row_low_[row] - y, y - row_high_[row], 0.0f});
            const float dy_far = std::max(y - row_low_[row], row_high_[row] - y);
            const auto* line = cells_.data() + std::size_t{row} * columns_;
            for (std::uint32_t column = column_first; column <= column_last; ++column) {
                const auto& list = line[column];
                if (list.empty()) {
                    continue;
                }
                const float dx_near = std::max({column_low_[column] - x, x - column_high_[column], 0.0f});
                if (dx_near * dx_near + dy_near * dy_near > outside_limit) {
                    continue;
                }
                const float dx_far = std::max(x - column_low_[column], column_high_[column] - x);
                if (dx_far * dx_far + dy_far * dy_far <= inside_limit) {
                    for (const grid_entry& entry : list) {
                        f(entry, distance_squared(x, y, entry.x, entry.y));
                    }
                } else {
                    for (const grid_entry& entry : list) {
                        const float d2 = distance_squared(x, y, entry.x, entry.y);
                        if (d2 <= r2) {
                            f(entry, d2);
                        }
                    }
                }
            }
        }
    }

    [[nodiscard]] const grid_bounds& bounds() const noexcept { return bounds_; }
    [[nodiscard]] float cell_size() const noexcept { return cell_size_; }
    [[nodiscard]] std::uint32_t columns() const noexcept { return columns_; }
    [[nodiscard]] std::uint32_t rows() const noexcept { return rows_; }
    [[nodiscard]] std::size_t cell_count() const noexcept { return cells_.size(); }

    /// The cell a position is filed in: row * columns() + column, clamped to the border cells.
    [[nodiscard]] std::uint32_t cell_of(float x, float y) const noexcept {
        return row_of(y) * columns_ + column_of(x);
    }

    /// The ids filed in a cell, in storage order (for tests and debugging views).
    [[nodiscard]] const std::vector<grid_entry>& cell_entries(std::uint32_t cell) const noexcept {
        ECSNET_ASSERT(cell < cells_.size(), "cell out of range");
        return cells_[cell];
    }

    /// Entries of capacity held by all cells (the memory bound: <= 4 * (size() + cell_count())).
    [[nodiscard]] std::size_t entry_capacity() const noexcept {
        std::size_t total = 0;
        for (const auto& list : cells_) {
            total += list.capacity();
        }
        return total;
    }

private:
    struct record {
        std::uint32_t cell;
        std::uint32_t slot;
    };

    [[nodiscard]] static entity to_entity(id_type id) noexcept { return entity_traits::construct(id, 0); }

    [[nodiscard]] const grid_entry& entry_of(id_type id) const noexcept {
        ECSNET_ASSERT(contains(id), "id not in the spatial grid");
        const record& rec = records_.get(to_entity(id));
        return cells_[rec.cell][rec.slot];
    }

    [[nodiscard]] std::uint32_t column_of(float x) const noexcept {
        return clamp_index((x - bounds_.min_x) * inverse_cell_size_, last_column_);
    }
    [[nodiscard]] std::uint32_t row_of(float y) const noexcept {
        return clamp_index((y - bounds_.min_y) * inverse_cell_size_, last_row_);
    }
    // NaN and anything below 0 give 0, anything above `last` gives last. maxss/minss return their second
    // operand on NaN, which is the rule wanted; GCC compiles the portable form to branches.
    [[nodiscard]] static std::uint32_t clamp_index(float scaled, float last) noexcept {
#if defined(__SSE2__)
        const __m128 clamped = _mm_min_ss(_mm_max_ss(_mm_set_ss(scaled), _mm_setzero_ps()), _mm_set_ss(last));
        return static_cast<std::uint32_t>(_mm_cvttss_si32(clamped));
#else
        const float low = scaled > 0.0f ? scaled : 0.0f;
        return static_cast<std::uint32_t>(low < last ? low : last);
#endif
    }

    ECSNET_NOINLINE void relocate(record& rec, std::uint32_t cell, float x, float y) {
        auto& target = cells_[cell];
        const std::uint32_t old_cell = rec.cell;
        const std::uint32_t old_slot = rec.slot;
        grid_entry moved = cells_[old_cell][old_slot];
        moved.x = x;
        moved.y = y;
        target.push_back(moved); // the only step that can throw: nothing has changed yet
        rec.cell = cell;
        rec.slot = static_cast<std::uint32_t>(target.size() - 1);
        remove_entry(old_cell, old_slot);
    }

    // Swap-remove from a cell, keeping the record of the entry moved into the hole in step.
    void remove_entry(std::uint32_t cell, std::uint32_t slot) noexcept {
        auto& list = cells_[cell];
        if (slot + 1 != list.size()) {
            list[slot] = list.back();
            records_.get(to_entity(list[slot].id)).slot = slot;
        }
        list.pop_back();
        if (list.capacity() > min_cell_capacity && list.size() * 4 <= list.capacity()) {
            shrink(list);
        }
    }

    // Halves a cell's capacity once a quarter is in use: memory follows the ids without reallocating at
    // every border crossing (a list must halve its size again, or double it, before the next change).
    static void shrink(std::vector<grid_entry>& list) noexcept {
        try {
            std::vector<grid_entry> smaller;
            smaller.reserve(std::max(min_cell_capacity, list.capacity() / 2));
            smaller.assign(list.begin(), list.end());
            list.swap(smaller);
        } catch (const std::bad_alloc&) {
            // Keeping the larger block is always correct.
        }
    }

    grid_bounds bounds_;
    float cell_size_;
    float inverse_cell_size_{};
    float last_column_{};
    float last_row_{};
    std::uint32_t columns_{};
    std::uint32_t rows_{};
    std::vector<std::vector<grid_entry>> cells_;
    std::vector<float> column_low_;
    std::vector<float> column_high_;
    std::vector<float> row_low_;
    std::vector<float> row_high_;
    storage<record> records_;
    generation_type next_generation_{1};
};

} // namespace ecsnet::server::interest
