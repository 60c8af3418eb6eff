#pragma once

// Fixed-width fields written one after another into a byte array, least significant byte first: the bytes
// the snapshot headers' CRCs cover (docs/protocol.md, 5.2 and 12.2), the same on any host.

#include <cstddef>
#include <cstdint>

namespace ecsnet::proto {

class little_endian_writer {
public:
    explicit little_endian_writer(std::uint8_t* to) noexcept
        : at_{to} {}

    /// The low `Count` bytes of `value`; the caller's array has room for them.
    template<std::size_t Count>
    void put(std::uint64_t value) noexcept {
        static_assert(Count >= 1 && Count <= 8);
        for (std::size_t i = 0; i < Count; ++i) {
            at_[i] = static_cast<std::uint8_t>(value >> (8 * i));
        }
        at_ += Count;
    }

private:
    std::uint8_t* at_;
};

} // namespace ecsnet::proto
