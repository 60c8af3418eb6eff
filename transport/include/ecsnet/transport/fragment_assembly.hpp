#pragma once

// One message being put back together from its fragments (a reliable block, or an unreliable message over
// one body): the message's bytes, which fragments arrived, how many. The buffer keeps its capacity between
// messages (release() gives it back), so a steady stream of fragmented messages does not allocate.
// start() takes sizes a reader has already checked against the limits (chunk.hpp): it allocates exactly
// the announced total.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "chunk.hpp"

namespace ecsnet::transport {

class fragment_assembly {
public:
    void start(std::uint32_t total_bytes, std::uint32_t fragment_bytes) {
        total_ = total_bytes;
        fragment_bytes_ = fragment_bytes;
        count_ = fragment_count(total_bytes, fragment_bytes);
        received_count_ = 0;
        if (data_.capacity() < total_bytes) {
            // Exactly the announced size (vector's growth could double it, past the reassembly budget).
            std::vector<std::byte>{}.swap(data_);
            data_.reserve(total_bytes);
        }
        if (data_.size() < total_bytes) {
            data_.resize(
                total_bytes); // zero-fills only what the buffer never held: every byte is overwritten
        }
        received_.assign((count_ + 63) / 64, 0);
    }

    [[nodiscard]] bool matches(std::uint32_t total_bytes, std::uint32_t fragment_bytes) const noexcept {
        return total_ == total_bytes && fragment_bytes_ == fragment_bytes;
    }
    [[nodiscard]] bool has(std::uint32_t index) const noexcept {
        return index < count_ && ((received_[index / 64] >> (index % 64)) & 1U) != 0;
    }
    /// Stores fragment `index` (its length checked by the reader); false when it was already there.
    bool add(std::uint32_t index, std::span<const std::byte> data) noexcept {
        if (index >= count_ || has(index) || data.size() != fragment_length(total_, fragment_bytes_, index)) {
            return false;
        }
        std::memcpy(data_.data() + std::size_t{index} * fragment_bytes_, data.data(), data.size());
        received_[index / 64] |= std::uint64_t{1} << (index % 64);
        ++received_count_;
        return true;
    }

    [[nodiscard]] bool complete() const noexcept { return count_ > 0 && received_count_ == count_; }
    [[nodiscard]] std::uint32_t count() const noexcept { return count_; }
    [[nodiscard]] std::uint32_t received() const noexcept { return received_count_; }
    [[nodiscard]] std::uint32_t total_bytes() const noexcept { return total_; }
    [[nodiscard]] std::uint32_t fragment_size() const noexcept { return fragment_bytes_; }
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_.data(), total_}; }
    /// The buffer, to move a completed message out (its size may exceed total_bytes(); start() sizes it
    /// again).
    [[nodiscard]] std::vector<std::byte>& buffer() noexcept { return data_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return data_.capacity(); }

    /// The first fragment not received (count() when complete).
    [[nodiscard]] std::uint32_t first_missing() const noexcept {
        for (std::size_t w = 0; w < received_.size(); ++w) {
            if (received_[w] != ~std::uint64_t{0}) {
                for (std::uint32_t b = 0; b < 64; ++b) {
                    const auto index = static_cast<std::uint32_t>(w * 64 + b);
                    if (index >= count_ || ((received_[w] >> b) & 1U) == 0) {
                        return index < count_ ? index : count_;
                    }
                }
            }
        }
        return count_;
    }

    /// Writes the fragment-ack bitmap after first_missing() (bit j: fragment first_missing + 1 + j) into
    /// `out` (max_fragment_ack_bitmap_bytes), trimmed of trailing zero bytes; returns its length.
    [[nodiscard]] std::size_t ack_bitmap(std::uint32_t first_missing,
                                         std::span<std::byte> out) const noexcept {
        std::size_t length = 0;
        for (std::size_t byte = 0; byte < out.size(); ++byte) {
            unsigned value = 0;
            for (unsigned bit = 0; bit < 8; ++bit) {
                const auto index = first_missing + 1 + byte * 8 + bit;
                if (index < count_ && has(static_cast<std::uint32_t>(index))) {
                    value |= 1U << bit;
                }
            }
            out[byte] = std::byte{static_cast<unsigned char>(value)};
            if (value != 0) {
                length = byte + 1;
            }
        }
        return length;
    }

    /// Forgets the message and frees the buffer.
    void release() noexcept {
        std::vector<std::byte>{}.swap(data_);
        received_.clear();
        total_ = fragment_bytes_ = count_ = received_count_ = 0;
    }
    /// Forgets the message, keeping the buffer (and its size: the next message overwrites it).
    void clear() noexcept {
        received_.clear();
        total_ = fragment_bytes_ = count_ = received_count_ = 0;
    }

private:
    std::vector<std::byte> data_;
    std::vector<std::uint64_t> received_;
    std::uint32_t total_{0};
    std::uint32_t fragment_bytes_{0};
    std::uint32_t count_{0};
    std::uint32_t received_count_{0};
};

} // namespace ecsnet::transport
