#pragma once

// Little-endian reading and writing over fixed buffers, for the transport's binary formats. The writer
// is given a buffer big enough by construction (the formats have fixed maximum sizes); the reader checks
// every read against what is left and remembers the first failure, so a parser reads field after field
// and checks ok() once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "ecsnet/transport/address.hpp"

namespace ecsnet::transport::detail {

class wire_writer {
public:
    explicit wire_writer(std::span<std::uint8_t> buffer) noexcept
        : buffer_{buffer} {}

    void u8(std::uint8_t value) noexcept { put(&value, 1); }
    void u16(std::uint16_t value) noexcept { uint_le(value, 2); }
    void u32(std::uint32_t value) noexcept { uint_le(value, 4); }
    void u64(std::uint64_t value) noexcept { uint_le(value, 8); }
    void bytes(std::span<const std::uint8_t> data) noexcept { put(data.data(), data.size()); }
    void address(const net_address& address) noexcept {
        u8(static_cast<std::uint8_t>(address.family));
        bytes(std::span{address.ip}.first(address.family == address_family::ipv4 ? 4 : 16));
        u16(address.port);
    }

    [[nodiscard]] std::size_t position() const noexcept { return position_; }
    /// Whether every write fitted (a write past the end writes nothing and sets this false).
    [[nodiscard]] bool ok() const noexcept { return ok_; }

private:
    void uint_le(std::uint64_t value, std::size_t size) noexcept {
        std::uint8_t bytes[8];
        for (std::size_t i = 0; i < size; ++i) {
            bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
        }
        put(bytes, size);
    }
    void put(const std::uint8_t* data, std::size_t size) noexcept {
        if (!ok_ || buffer_.size() - position_ < size) {
            ok_ = false;
            return;
        }
        std::copy_n(data, size, buffer_.data() + position_);
        position_ += size;
    }

    std::span<std::uint8_t> buffer_;
    std::size_t position_{0};
    bool ok_{true};
};

class wire_reader {
public:
    explicit wire_reader(std::span<const std::uint8_t> buffer) noexcept
        : buffer_{buffer} {}

    std::uint8_t u8() noexcept { return static_cast<std::uint8_t>(uint_le(1)); }
    std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(uint_le(2)); }
    std::uint32_t u32() noexcept { return static_cast<std::uint32_t>(uint_le(4)); }
    std::uint64_t u64() noexcept { return uint_le(8); }
    /// The next `size` bytes (empty, and the reader failed, when fewer are left).
    std::span<const std::uint8_t> bytes(std::size_t size) noexcept {
        if (!ok_ || remaining() < size) {
            ok_ = false;
            return {};
        }
        const auto out = buffer_.subspan(position_, size);
        position_ += size;
        return out;
    }
    template<std::size_t N>
    void copy_to(std::array<std::uint8_t, N>& out) noexcept {
        const auto in = bytes(N);
        if (ok_) {
            std::copy(in.begin(), in.end(), out.begin());
        }
    }
    /// An address of type 1 (IPv4) or 2 (IPv6); fails on any other type.
    net_address address() noexcept {
        net_address out;
        const auto type = u8();
        if (type == static_cast<std::uint8_t>(address_family::ipv4)) {
            const auto ip = bytes(4);
            if (ok_) {
                out = net_address::ipv4({ip[0], ip[1], ip[2], ip[3]}, 0);
            }
        } else if (type == static_cast<std::uint8_t>(address_family::ipv6)) {
            const auto ip = bytes(16);
            if (ok_) {
                out.family = address_family::ipv6;
                std::copy(ip.begin(), ip.end(), out.ip.begin());
            }
        } else {
            ok_ = false;
        }
        out.port = u16();
        return out;
    }
    /// Whether the bytes from here to the end are all zero (fixed-size formats pad with zeros).
    [[nodiscard]] bool rest_is_zero() const noexcept {
        const auto rest = buffer_.subspan(std::min(position_, buffer_.size()));
        return std::all_of(rest.begin(), rest.end(), [](std::uint8_t b) { return b == 0; });
    }

    [[nodiscard]] std::size_t remaining() const noexcept { return buffer_.size() - position_; }
    [[nodiscard]] std::size_t position() const noexcept { return position_; }
    [[nodiscard]] bool ok() const noexcept { return ok_; }

private:
    std::uint64_t uint_le(std::size_t size) noexcept {
        const auto in = bytes(size);
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < in.size(); ++i) {
            value |= std::uint64_t{in[i]} << (8 * i);
        }
        return value;
    }

    std::span<const std::uint8_t> buffer_;
    std::size_t position_{0};
    bool ok_{true};
};

} // namespace ecsnet::transport::detail
