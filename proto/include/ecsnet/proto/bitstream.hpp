#pragma once

// Bit-level writer and reader of the packed snapshot columns (docs/protocol.md, "Bit stream").
//
// Bit j of a stream is bit (j mod 8) of byte (j / 8): values are written least significant bit first.
// Exp-Golomb codes of order k (eg_k) code a number n >= 0: with m = n + 2^k and z = bit_width(m) - 1 - k,
// z zero bits, one 1 bit, then the z + k low bits of m. Small numbers take few bits (eg_0(0) is one bit),
// large ones about twice their width.
//
// The reader never reads outside its buffer (its input and zero padding) and never throws: reading past
// the end, or an exp-Golomb code longer than 40 bits, sets a sticky failure flag and returns 0 from then
// on; callers check ok() at the end of each section. A cursor (cursor_type) tells a read past the end only
// when it is given back with seek(): until then its values are meaningless.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ecsnet::proto {

[[nodiscard]] constexpr std::uint64_t byteswap64(std::uint64_t v) noexcept {
    v = ((v & 0x00FF00FF00FF00FFULL) << 8) | ((v >> 8) & 0x00FF00FF00FF00FFULL);
    v = ((v & 0x0000FFFF0000FFFFULL) << 16) | ((v >> 16) & 0x0000FFFF0000FFFFULL);
    return (v << 32) | (v >> 32);
}

#if defined(__GNUC__)
#define ECSNET_PROTO_INLINE inline __attribute__((always_inline))
#else
#define ECSNET_PROTO_INLINE inline
#endif

class bit_writer {
public:
    void clear() noexcept {
        words_.clear();
        acc_ = 0;
        fill_ = 0;
    }

    /// Appends the `bits` low bits of `value` (bits <= 64; the higher bits of value must be zero).
    ECSNET_PROTO_INLINE void put(std::uint64_t value, unsigned bits) {
        auto c = cursor();
        put(c, value, bits);
        seek(c);
    }

    ECSNET_PROTO_INLINE void put_bit(bool bit) { put(bit ? 1U : 0U, 1); }

    /// The pending bits as a local value for hot loops, which the compiler keeps in registers (the writer's
    /// own members are stored and reloaded around every word it appends). Take one with cursor(), write
    /// through the cursor overloads, then give it back with seek() before using the writer directly again.
    struct cursor_type {
        std::uint64_t acc;
        unsigned fill;
    };
    [[nodiscard]] cursor_type cursor() const noexcept { return {acc_, fill_}; }
    void seek(const cursor_type& c) noexcept {
        acc_ = c.acc;
        fill_ = c.fill;
    }

    /// put() at a cursor.
    ECSNET_PROTO_INLINE void put(cursor_type& c, std::uint64_t value, unsigned bits) {
        if (bits == 0) {
            return;
        }
        c.acc |= value << c.fill;
        const unsigned total = c.fill + bits;
        if (total >= 64) {
            words_.push_back(c.acc);
            const unsigned carried = total - 64; // bits of value that did not fit
            c.acc = carried == 0 ? 0 : value >> (bits - carried);
            c.fill = carried;
        } else {
            c.fill = total;
        }
    }

    /// put_eg() at a cursor.
    ECSNET_PROTO_INLINE void put_eg(cursor_type& c, std::uint64_t n, unsigned k) {
        const std::uint64_t m = n + (std::uint64_t{1} << k);
        const auto width = static_cast<unsigned>(std::bit_width(m));
        const unsigned zeros = width - 1 - k;
        const unsigned low_bits = width - 1;
        const std::uint64_t low = m & ((std::uint64_t{1} << low_bits) - 1);
        if (2 * zeros + 1 + k <= 64) {
            put(c, ((low << 1) | 1U) << zeros, 2 * zeros + 1 + k);
        } else {
            put(c, 0, zeros);
            put(c, 1, 1);
            put(c, low, low_bits);
        }
    }

    /// Exp-Golomb code of order k (k <= 31) of n (n < 2^40).
    ECSNET_PROTO_INLINE void put_eg(std::uint64_t n, unsigned k) {
        auto c = cursor();
        put_eg(c, n, k);
        seek(c);
    }

    /// Bits written so far.
    [[nodiscard]] std::size_t bit_size() const noexcept { return words_.size() * 64 + fill_; }

    /// Up to 64 bits of what was written, from bit `from` (from + count <= bit_size(), count <= 64).
    [[nodiscard]] std::uint64_t peek(std::size_t from, unsigned count) const noexcept {
        if (count == 0) {
            return 0;
        }
        const auto word_at = [this](std::size_t w) { return w < words_.size() ? words_[w] : acc_; };
        const std::size_t w = from / 64;
        const unsigned shift = static_cast<unsigned>(from % 64);
        std::uint64_t value = word_at(w) >> shift;
        if (shift != 0 && shift + count > 64) {
            value |= word_at(w + 1) << (64 - shift);
        }
        return count == 64 ? value : value & ((std::uint64_t{1} << count) - 1);
    }

    /// Appends bits [from, from + count) of another writer's stream (what a shared encoding is copied with).
    void append(const bit_writer& source, std::size_t from, std::size_t count) {
        auto c = cursor();
        while (count >= 64) {
            put(c, source.peek(from, 64), 64);
            from += 64;
            count -= 64;
        }
        put(c, source.peek(from, static_cast<unsigned>(count)), static_cast<unsigned>(count));
        seek(c);
    }

    /// Appends the stream to `out`, padded with zero bits to a whole byte.
    void append_to(std::string& out) const {
        const auto at = out.size();
        out.resize(at + (bit_size() + 7) / 8);
        auto* dst = out.data() + at;
        for (auto word : words_) {
            if constexpr (std::endian::native == std::endian::big) {
                word = byteswap64(word);
            }
            std::memcpy(dst, &word, 8);
            dst += 8;
        }
        for (unsigned b = 0; b < fill_; b += 8) {
            *dst++ = static_cast<char>(static_cast<std::uint8_t>(acc_ >> b));
        }
    }

private:
    std::vector<std::uint64_t> words_;
    std::uint64_t acc_{};
    unsigned fill_{};
};

class bit_reader {
public:
    /// Reads `bytes` (copied into an internal buffer with zero padding for 8-byte loads, see cursor_type).
    explicit bit_reader(std::string_view bytes)
        : buffer_(bytes.size() + padding_bytes, 0)
        , size_bits_{bytes.size() * 8} {
        // Bounded by the buffer itself, which also tells GCC's -Wstringop-overflow the copy fits.
        const std::size_t count = std::min(bytes.size(), buffer_.size() - padding_bytes);
        if (count > 0) {
            std::memcpy(buffer_.data(), bytes.data(), count);
        }
    }

    [[nodiscard]] bool ok() const noexcept { return !failed_; }
    [[nodiscard]] std::size_t position() const noexcept { return pos_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return size_bits_ - pos_; }
    /// Marks the stream as failed: nothing is left to read (remaining() is 0 from now on).
    void fail() noexcept {
        failed_ = true;
        size_bits_ = pos_;
    }

    /// The next `bits` bits (bits <= 57).
    ECSNET_PROTO_INLINE std::uint64_t get(unsigned bits) noexcept {
        if (bits == 0) {
            return 0;
        }
        if (bits > size_bits_ - pos_) {
            fail();
            return 0;
        }
        return get_known(bits);
    }

    /// The next `bits` bits (1 <= bits <= 57), which the caller knows are there (bits <= remaining()).
    ECSNET_PROTO_INLINE std::uint64_t get_known(unsigned bits) noexcept {
        const std::uint64_t value = peek() & ((std::uint64_t{1} << bits) - 1);
        pos_ += bits;
        return value;
    }

    bool get_bit() noexcept { return get(1) != 0; }

    /// An exp-Golomb code of order k (k <= 31); codes longer than 40 bits of payload are refused.
    ECSNET_PROTO_INLINE std::uint64_t get_eg(unsigned k) noexcept {
        // Fast path, 64 bits or more left (never after a failure, which leaves nothing): one load. With
        // zeros + k <= 28 the code has at most 57 bits, all in the window (window 0: zeros = 64, slow path).
        if (size_bits_ - pos_ >= 64) [[likely]] {
            const std::uint64_t window = peek();
            const auto zeros = static_cast<unsigned>(std::countr_zero(window));
            const unsigned payload = zeros + k;
            if (payload <= 28) [[likely]] {
                pos_ += payload + zeros + 1;
                const std::uint64_t low = (window >> (zeros + 1)) & ((std::uint64_t{1} << payload) - 1);
                return (low | (std::uint64_t{1} << payload)) - (std::uint64_t{1} << k);
            }
        }
        return get_eg_slow(k);
    }

    /// A copy of the reading position for hot loops: a local value the compiler keeps in registers, where
    /// the reader's own members are reloaded and stored again around every store the loop makes. Take one
    /// with cursor(), read through the reader's cursor overloads, then give it back with seek() before
    /// using the reader directly again.
    ///
    /// get_eg() at a cursor does not count the bits left: seek() checks, once for the whole loop, that the
    /// cursor did not pass the end. Reading past the end stays inside the buffer: the padding is zero, so
    /// a fast-path code (a 1 bit among the window's first 29) starts before the end, and takes at most 57
    /// bits; the next window then starts less than 57 bits past the end, and 8 bytes from there are still
    /// padding. (A window of padding alone has no 1 bit: the slow path, which checks, refuses it.)
    ///
    /// A cursor also holds the bits from its position on in a register (`bits`, the low `avail` of them
    /// loaded), where exp-Golomb codes are taken from until they run short: a code's position depends on
    /// the code before, and reading each from memory put a load (about 5 cycles) in that chain.
    struct cursor_type {
        const std::uint8_t* data;
        std::size_t pos;
        std::uint64_t bits;
        unsigned avail;
    };
    [[nodiscard]] cursor_type cursor() const noexcept {
        return {buffer_.data(), pos_, peek(buffer_.data(), pos_), 64U - static_cast<unsigned>(pos_ & 7U)};
    }
    /// Takes the cursor's position; past the end, the reader fails.
    void seek(const cursor_type& c) noexcept {
        pos_ = c.pos;
        if (pos_ > size_bits_) [[unlikely]] {
            fail();
        }
    }

    /// get_known() at a cursor (it reads memory, and leaves the cursor's register bits to be loaded again).
    ECSNET_PROTO_INLINE static std::uint64_t get_known(cursor_type& c, unsigned bits) noexcept {
        const std::uint64_t value = peek(c.data, c.pos) & ((std::uint64_t{1} << bits) - 1);
        c.pos += bits;
        c.avail = 0;
        return value;
    }

    /// get_eg() at a cursor: the same fast path on the cursor's register bits (loaded again when they run
    /// short), without counting the bits left (see cursor_type), and the reader's slow path otherwise
    /// (which may fail the reader).
    ECSNET_PROTO_INLINE std::uint64_t get_eg(cursor_type& c, unsigned k) noexcept {
        auto zeros = static_cast<unsigned>(std::countr_zero(c.bits));
        auto length = 2 * zeros + 1 + k;
        if (zeros + k > 28 || length > c.avail) [[unlikely]] {
            c.bits = peek(c.data, c.pos);
            c.avail = 64U - static_cast<unsigned>(c.pos & 7U);
            zeros = static_cast<unsigned>(std::countr_zero(c.bits));
            length = 2 * zeros + 1 + k;
            if (zeros + k > 28) { // a long code, or none in the window
                pos_ = c.pos;
                const auto value = get_eg_slow(k);
                c.pos = pos_;
                c.avail = 0;
                return value;
            }
        }
        // At most 28 + 1 + 28 = 57 bits, all loaded (64 - (pos mod 8) >= 57 after a load).
        const unsigned payload = zeros + k;
        const std::uint64_t low = (c.bits >> (zeros + 1)) & ((std::uint64_t{1} << payload) - 1);
        c.bits >>= length;
        c.avail -= length;
        c.pos += length;
        return (low | (std::uint64_t{1} << payload)) - (std::uint64_t{1} << k);
    }

    std::uint64_t get_eg_slow(unsigned k) noexcept {
        if (failed_ || pos_ >= size_bits_) {
            fail();
            return 0;
        }
        const std::uint64_t window = peek();
        if (window == 0) {
            fail();
            return 0;
        }
        const auto zeros = static_cast<unsigned>(std::countr_zero(window));
        if (zeros + k > 40 || zeros + 1 > size_bits_ - pos_) {
            fail();
            return 0;
        }
        pos_ += zeros + 1;
        const std::uint64_t low = get(zeros + k);
        if (failed_) {
            return 0;
        }
        return ((std::uint64_t{1} << (zeros + k)) | low) - (std::uint64_t{1} << k);
    }

    /// True when what is left is padding: fewer than 8 bits, all zero.
    [[nodiscard]] bool at_padded_end() const noexcept {
        if (failed_) {
            return false;
        }
        const auto left = size_bits_ - pos_;
        return left < 8 && (left == 0 || (peek() & ((std::uint64_t{1} << left) - 1)) == 0);
    }

private:
    // 57 or more valid bits starting at pos_ (pos_ <= size_bits_, so the load stays in the padding).
    [[nodiscard]] std::uint64_t peek() const noexcept { return peek(buffer_.data(), pos_); }
    ECSNET_PROTO_INLINE static std::uint64_t peek(const std::uint8_t* data, std::size_t pos) noexcept {
        std::uint64_t word;
        std::memcpy(&word, data + (pos >> 3), 8);
        if constexpr (std::endian::native == std::endian::big) {
            word = byteswap64(word);
        }
        return word >> (pos & 7U);
    }

    // Zero bytes after the input: 8 for any load at a position up to the end, 8 more for a cursor's reads
    // past it (cursor_type).
    static constexpr std::size_t padding_bytes = 16;

    std::vector<std::uint8_t> buffer_;
    std::size_t size_bits_;
    std::size_t pos_{};
    bool failed_{false};
};

/// Zigzag map of a signed number to an unsigned one: 0, -1, 1, -2, 2... -> 0, 1, 2, 3, 4...
[[nodiscard]] constexpr std::uint64_t zigzag(std::int64_t v) noexcept {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
[[nodiscard]] constexpr std::int64_t unzigzag(std::uint64_t u) noexcept {
    return static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1U);
}
/// A `bits`-wide two's complement value, sign-extended.
[[nodiscard]] constexpr std::int64_t sign_extend(std::uint32_t v, unsigned bits) noexcept {
    const unsigned shift = 64U - bits;
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(v) << shift) >> shift;
}

} // namespace ecsnet::proto
