#pragma once

// Rows (entity_row.hpp) shared between the views a client keeps: a view that leaves an entity as it was
// refers to the same rows as its base instead of copying them, so applying a view costs a few words per
// unchanged entity and a row per changed one. Each row slot counts the views that refer to it and returns
// to a free list at zero. Each slot also keeps the checksum term of its row for its entity.
//
// Pointers from row() stay valid until the next allocate() that grows the pool: reserve() first to keep
// them valid through a batch of allocations.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ecsnet::proto {

class row_pool {
public:
    static constexpr std::uint32_t none = 0xFFFFFFFFU;

    explicit row_pool(std::size_t width = 1)
        : width_{width} {}

    [[nodiscard]] std::size_t width() const noexcept { return width_; }

    /// Room for `count` more rows without moving the pool. Grows geometrically: a mirror reserves for its
    /// worst case on every apply, and an exact reserve would move the whole pool each time.
    void reserve(std::size_t count) {
        const auto spare = free_.size();
        if (count <= spare) {
            return;
        }
        const auto needed = rows_.size() + (count - spare) * width_;
        if (needed > rows_.capacity()) {
            rows_.reserve(std::max(needed, 2 * rows_.capacity()));
        }
    }

    /// A new slot holding `row` (width() values), referred to once.
    std::uint32_t allocate(const std::uint32_t* row, std::uint64_t term) {
        std::uint32_t slot;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            slot = static_cast<std::uint32_t>(counts_.size());
            rows_.resize(rows_.size() + width_);
            counts_.push_back(0);
            terms_.push_back(0);
        }
        std::memcpy(rows_.data() + std::size_t{slot} * width_, row, width_ * sizeof(std::uint32_t));
        counts_[slot] = 1;
        terms_[slot] = term;
        return slot;
    }

    void retain(std::uint32_t slot) noexcept {
        if (slot != none) {
            ++counts_[slot];
        }
    }
    void release(std::uint32_t slot) {
        if (slot != none && --counts_[slot] == 0) {
            free_.push_back(slot);
        }
    }

    [[nodiscard]] const std::uint32_t* row(std::uint32_t slot) const noexcept {
        return rows_.data() + std::size_t{slot} * width_;
    }
    [[nodiscard]] std::uint64_t term(std::uint32_t slot) const noexcept { return terms_[slot]; }

    /// Slots in use.
    [[nodiscard]] std::size_t used() const noexcept { return counts_.size() - free_.size(); }
    void clear() noexcept {
        rows_.clear();
        counts_.clear();
        terms_.clear();
        free_.clear();
    }

private:
    std::size_t width_;
    std::vector<std::uint32_t> rows_;
    std::vector<std::uint32_t> counts_;
    std::vector<std::uint64_t> terms_;
    std::vector<std::uint32_t> free_;
};

} // namespace ecsnet::proto
