#pragma once

// Bytes in and out of a link body: little-endian 8/16-bit integers, varints and byte runs, over std::byte
// spans. The writer is used by the link on buffers whose room it has computed, so it checks with asserts
// only; the reader is used on untrusted bodies and never reads past its span: every get reports failure.
//
// Varints are LEB128 (7 bits a byte, least significant group first, high bit = more follows), at most 4
// bytes (values below 2^28), and canonical: the last byte of a varint longer than one byte is never 0 (so
// every value has exactly one encoding and a receiver can refuse padded ones).

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace ecsnet::transport {

inline constexpr std::size_t max_varint_bytes = 4;
inline constexpr std::uint32_t max_varint_value = (std::uint32_t{1} << 28) - 1;

/// Bytes the varint of `value` takes (value <= max_varint_value).
[[nodiscard]] constexpr std::size_t varint_size(std::uint32_t value) noexcept {
    std::size_t n = 1;
    while (value >= 0x80U) {
        value >>= 7;
        ++n;
    }
    return n;
}

class byte_writer {
public:
    explicit byte_writer(std::span<std::byte> out) noexcept
        : out_{out} {}

    void put_u8(std::uint8_t value) noexcept {
        assert(remaining() >= 1);
        out_[size_++] = std::byte{value};
    }
    void put_u16(std::uint16_t value) noexcept {
        put_u8(static_cast<std::uint8_t>(value & 0xFFU));
        put_u8(static_cast<std::uint8_t>(value >> 8));
    }
    void put_varint(std::uint32_t value) noexcept {
        assert(value <= max_varint_value);
        while (value >= 0x80U) {
            put_u8(static_cast<std::uint8_t>((value & 0x7FU) | 0x80U));
            value >>= 7;
        }
        put_u8(static_cast<std::uint8_t>(value));
    }
    void put_bytes(std::span<const std::byte> bytes) noexcept {
        assert(remaining() >= bytes.size());
        if (!bytes.empty()) {
            std::memcpy(out_.data() + size_, bytes.data(), bytes.size());
        }
        size_ += bytes.size();
    }
    /// Overwrites a byte already written (a count known only at the end of a run).
    void patch_u8(std::size_t at, std::uint8_t value) noexcept {
        assert(at < size_);
        out_[at] = std::byte{value};
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return out_.size() - size_; }
    [[nodiscard]] std::span<const std::byte> written() const noexcept { return out_.first(size_); }
    /// Forgets everything after the first `size` bytes (a body whose last chunk is withdrawn).
    void truncate(std::size_t size) noexcept {
        assert(size <= size_);
        size_ = size;
    }

private:
    std::span<std::byte> out_;
    std::size_t size_{0};
};

enum class varint_status : std::uint8_t { ok, truncated, too_long, not_minimal };

class byte_reader {
public:
    explicit byte_reader(std::span<const std::byte> in) noexcept
        : in_{in} {}

    [[nodiscard]] bool get_u8(std::uint8_t& value) noexcept {
        if (pos_ >= in_.size()) {
            return false;
        }
        value = static_cast<std::uint8_t>(in_[pos_++]);
        return true;
    }
    [[nodiscard]] bool get_u16(std::uint16_t& value) noexcept {
        if (remaining() < 2) {
            return false;
        }
        value = static_cast<std::uint16_t>(
            static_cast<std::uint16_t>(in_[pos_]) |
            static_cast<std::uint16_t>(static_cast<std::uint16_t>(in_[pos_ + 1]) << 8));
        pos_ += 2;
        return true;
    }
    [[nodiscard]] varint_status get_varint(std::uint32_t& value) noexcept {
        std::uint32_t result = 0;
        for (std::size_t i = 0; i < max_varint_bytes; ++i) {
            std::uint8_t byte = 0;
            if (!get_u8(byte)) {
                return varint_status::truncated;
            }
            result |= static_cast<std::uint32_t>(byte & 0x7FU) << (7 * i);
            if ((byte & 0x80U) == 0) {
                if (byte == 0 && i > 0) {
                    return varint_status::not_minimal;
                }
                value = result;
                return varint_status::ok;
            }
        }
        return varint_status::too_long;
    }
    /// The next `n` bytes (a view into the input), or false when fewer remain.
    [[nodiscard]] bool get_bytes(std::size_t n, std::span<const std::byte>& bytes) noexcept {
        if (remaining() < n) {
            return false;
        }
        bytes = in_.subspan(pos_, n);
        pos_ += n;
        return true;
    }

    [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - pos_; }
    [[nodiscard]] bool empty() const noexcept { return pos_ == in_.size(); }
    [[nodiscard]] std::size_t position() const noexcept { return pos_; }
    /// The bytes read since `position` (an earlier position()).
    [[nodiscard]] std::span<const std::byte> read_since(std::size_t position) const noexcept {
        return in_.subspan(position, pos_ - position);
    }

private:
    std::span<const std::byte> in_;
    std::size_t pos_{0};
};

} // namespace ecsnet::transport
