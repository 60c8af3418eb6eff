#pragma once

// id -> slot for one client's relevant set: open addressing, linear probing, Fibonacci hashing, at most half
// full, deletion by backward shift (no tombstones, so lookups never slow down with churn).
//
// Why not the ECS core's sparse set: its sparse array is paged by id, 16 KiB a page. A client's ~200
// relevant ids scattered over a world of 100,000 ids touch ~25 pages (400 KiB), a thousand clients 400 MiB.
// Here a client pays 8 bytes per slot of a table at most four times its largest size: a few KiB.
//
// O(1) expected find, insert and erase; no allocation once the table has grown to the largest size seen
// (reserve() grows it ahead). Keys are ids below 2^32 - 1 (the all-ones value marks an empty slot).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <ecsnet/ecs/config.hpp>

namespace ecsnet::server::interest {

class id_slot_map {
public:
    using key_type = std::uint32_t;
    using value_type = std::uint32_t;
    static constexpr value_type npos = ~value_type{};

    /// The value of `key`, or npos.
    [[nodiscard]] value_type find(key_type key) const noexcept {
        if (size_ == 0) {
            return npos;
        }
        for (std::size_t at = home(key);; at = (at + 1) & mask_) {
            const entry& e = table_[at];
            if (e.key == key) {
                return e.value;
            }
            if (e.key == empty_key) {
                return npos;
            }
        }
    }

    [[nodiscard]] bool contains(key_type key) const noexcept { return find(key) != npos; }

    /// Adds key -> value unless `key` is present (then returns false and changes nothing). May grow the
    /// table (std::bad_alloc leaves the map as it was).
    bool insert(key_type key, value_type value) {
        ECSNET_ASSERT(key != empty_key, "the all-ones key marks empty slots");
        reserve(size_ + 1);
        std::size_t at = home(key);
        for (; table_[at].key != empty_key; at = (at + 1) & mask_) {
            if (table_[at].key == key) {
                return false;
            }
        }
        table_[at] = {key, value};
        ++size_;
        return true;
    }

    /// Sets the value of a key that is present.
    void assign(key_type key, value_type value) noexcept {
        ECSNET_ASSERT(contains(key), "id_slot_map::assign of an absent key");
        std::size_t at = home(key);
        while (table_[at].key != key) {
            at = (at + 1) & mask_;
        }
        table_[at].value = value;
    }

    /// Removes `key`; returns whether it was present.
    bool erase(key_type key) noexcept {
        if (size_ == 0) {
            return false;
        }
        std::size_t hole = home(key);
        for (; table_[hole].key != key; hole = (hole + 1) & mask_) {
            if (table_[hole].key == empty_key) {
                return false;
            }
        }
        // Backward shift: pull later entries of the probe run into the hole unless that would put them before
        // their home slot (cyclically), so every key stays reachable from its home without tombstones.
        for (std::size_t next = (hole + 1) & mask_; table_[next].key != empty_key;
             next = (next + 1) & mask_) {
            const std::size_t want = home(table_[next].key);
            // `next` may move to `hole` iff its home is not cyclically within (hole, next].
            const bool home_after_hole = ((next - want) & mask_) < ((next - hole) & mask_);
            if (!home_after_hole) {
                table_[hole] = table_[next];
                hole = next;
            }
        }
        table_[hole].key = empty_key;
        --size_;
        return true;
    }

    /// Removes every key; O(capacity), the table is kept.
    void clear() noexcept {
        for (auto& e : table_) {
            e.key = empty_key;
        }
        size_ = 0;
    }

    /// Grows the table so that `count` keys fit without growing again.
    void reserve(std::size_t count) {
        if (count * 2 <= table_.size()) {
            return;
        }
        rehash(std::bit_ceil(std::max<std::size_t>(count * 2, min_capacity)));
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// Slots in the table (twice the keys it can hold).
    [[nodiscard]] std::size_t capacity() const noexcept { return table_.size(); }

private:
    static constexpr key_type empty_key = ~key_type{};
    static constexpr std::size_t min_capacity = 16;

    struct entry {
        key_type key;
        value_type value;
    };

    // Fibonacci hashing: the top bits of key * 2^32 / phi spread consecutive ids over the table.
    [[nodiscard]] std::size_t home(key_type key) const noexcept {
        return static_cast<std::size_t>((key * 0x9E3779B9u) >> shift_);
    }

    ECSNET_NOINLINE void rehash(std::size_t capacity) {
        std::vector<entry> table(capacity, entry{empty_key, 0});
        std::vector<entry> old = std::move(table_);
        table_ = std::move(table);
        mask_ = capacity - 1;
        shift_ = 32 - static_cast<unsigned>(std::countr_zero(capacity));
        for (const entry& e : old) {
            if (e.key != empty_key) {
                std::size_t at = home(e.key);
                while (table_[at].key != empty_key) {
                    at = (at + 1) & mask_;
                }
                table_[at] = e;
            }
        }
    }

    std::vector<entry> table_;
    std::size_t mask_{};
    unsigned shift_{32};
    std::size_t size_{};
};

} // namespace ecsnet::server::interest
