#pragma once

// A map from a remote address to a value, flat: the server finds the connection of every datagram it
// receives by its source address, and std::unordered_map's bucket, node and key were a chain of cold
// misses per lookup for each of a thousand clients every tick (1.7% of the server's samples at 600 clients,
// more than the lookup's instructions explain). Here a lookup reads the slot its hash names and, on a
// collision, the next ones: open addressing with linear probing, at most half full, each slot holding the
// address, the hash's low 32 bits (compared first, and the slot's home) and the value.
//
// The hash is keyed (net_address_hash: SipHash with a per-process random key), because source addresses
// are chosen by whoever sends: with a known hash, addresses that all probe the same run would make every
// lookup walk it. Erasing shifts the run back into the freed slot (no tombstones), so a table that sees
// clients come and go for weeks never degrades.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "address.hpp"

namespace ecsnet::transport {

template<typename Value, typename Hash = net_address_hash>
class address_table {
public:
    /// The value of `address`, or null. Unset addresses are never keys.
    [[nodiscard]] const Value* find(const net_address& address) const noexcept {
        if (size_ == 0 || !address.is_set()) {
            return nullptr;
        }
        const auto at = locate(address, tag_of(address));
        return slots_[at].key.is_set() ? &slots_[at].value : nullptr;
    }

    /// Sets the value of `address`, inserting it if absent. Throws std::invalid_argument for an unset one.
    void insert_or_assign(const net_address& address, Value value) {
        if (!address.is_set()) {
            throw std::invalid_argument("address_table: an unset address cannot be a key");
        }
        if (2 * (size_ + 1) > slots_.size()) {
            grow();
        }
        const auto tag = tag_of(address);
        auto& slot = slots_[locate(address, tag)];
        if (!slot.key.is_set()) {
            slot.key = address;
            slot.tag = tag;
            ++size_;
        }
        slot.value = std::move(value);
    }

    /// Removes `address`; returns whether it was there.
    bool erase(const net_address& address) noexcept {
        if (size_ == 0 || !address.is_set()) {
            return false;
        }
        auto hole = locate(address, tag_of(address));
        if (!slots_[hole].key.is_set()) {
            return false;
        }
        // Backward shift: every later member of the run whose home is not in (hole, it] moves into the
        // hole, which moves to where it was, until the run ends.
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t next = (hole + 1) & mask; slots_[next].key.is_set(); next = (next + 1) & mask) {
            const std::size_t home = slots_[next].tag & mask;
            if (((next - home) & mask) >= ((next - hole) & mask)) { // its home is at or before the hole
                slots_[hole] = std::move(slots_[next]);
                hole = next;
            }
        }
        slots_[hole] = slot{};
        --size_;
        return true;
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

private:
    struct slot {
        net_address key; // unset: a free slot
        std::uint32_t tag{};
        Value value{};
    };

    static std::uint32_t tag_of(const net_address& address) noexcept {
        return static_cast<std::uint32_t>(Hash{}(address));
    }

    // The slot holding `address`, or the free slot ending its run (where it would go).
    [[nodiscard]] std::size_t locate(const net_address& address, std::uint32_t tag) const noexcept {
        const std::size_t mask = slots_.size() - 1;
        std::size_t at = tag & mask;
        while (slots_[at].key.is_set() && (slots_[at].tag != tag || slots_[at].key != address)) {
            at = (at + 1) & mask;
        }
        return at;
    }

    void grow() {
        std::vector<slot> old(std::max<std::size_t>(16, 2 * slots_.size()));
        old.swap(slots_);
        const std::size_t mask = slots_.size() - 1;
        for (auto& s : old) {
            if (s.key.is_set()) {
                std::size_t at = s.tag & mask;
                while (slots_[at].key.is_set()) {
                    at = (at + 1) & mask;
                }
                slots_[at] = std::move(s);
            }
        }
    }

    std::vector<slot> slots_; // empty, or a power of two at least twice size_
    std::size_t size_{0};
};

} // namespace ecsnet::transport
