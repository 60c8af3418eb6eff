#pragma once

// Replay protection for one direction of a connection (docs/protocol.md, section 10.8): a packet whose
// sequence was already received, or is `size` or more below the newest one received, is dropped.
//
// Two steps, so that a forged packet cannot move the window: check() before decrypting (cheap, refuses
// duplicates and old packets without any crypto), accept() only once the packet has authenticated.
// The window is 256 bits, bit i saying whether sequence newest - i was received; a newer packet shifts
// them by how far it moves the newest. O(1) per packet (four 64-bit words).

#include <array>
#include <cstddef>
#include <cstdint>

namespace ecsnet::transport {

class replay_window {
public:
    static constexpr std::uint64_t size = 256;

    /// Whether a packet with this sequence may be new: not received yet and not too old.
    [[nodiscard]] bool check(std::uint64_t sequence) const noexcept {
        if (!any_ || sequence > newest_) {
            return true;
        }
        const auto age = newest_ - sequence;
        return age < size && ((bits_[age / 64] >> (age % 64)) & 1U) == 0;
    }

    /// Records an authenticated packet's sequence (call only after check() said true and it decrypted).
    void accept(std::uint64_t sequence) noexcept {
        if (!any_) {
            any_ = true;
            newest_ = sequence;
            bits_ = {1, 0, 0, 0};
            return;
        }
        if (sequence > newest_) {
            shift(sequence - newest_);
            newest_ = sequence;
            bits_[0] |= 1U;
            return;
        }
        const auto age = newest_ - sequence;
        if (age < size) {
            bits_[age / 64] |= std::uint64_t{1} << (age % 64);
        }
    }

    /// The newest sequence accepted (0 before any).
    [[nodiscard]] std::uint64_t newest() const noexcept { return newest_; }

private:
    static constexpr std::size_t words = size / 64;

    // Moves every bit `distance` places towards the old end; bits past the end fall off.
    void shift(std::uint64_t distance) noexcept {
        if (distance >= size) {
            bits_ = {};
            return;
        }
        const auto word_shift = static_cast<std::size_t>(distance / 64);
        const auto bit_shift = static_cast<unsigned>(distance % 64);
        for (std::size_t w = words; w-- > 0;) {
            std::uint64_t value = 0;
            if (w >= word_shift) {
                value = bits_[w - word_shift] << bit_shift;
                if (bit_shift != 0 && w > word_shift) {
                    value |= bits_[w - word_shift - 1] >> (64 - bit_shift);
                }
            }
            bits_[w] = value;
        }
    }

    std::array<std::uint64_t, size / 64> bits_{};
    std::uint64_t newest_{0};
    bool any_{false};
};

} // namespace ecsnet::transport
