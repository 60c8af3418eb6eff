#pragma once

// Quantizers: how a replicated field's C++ value becomes an unsigned integer of at most 32 bits (what
// snapshots carry and the history stores), and back. The width is a template argument, so the storage
// type of a column (uint8/16/32) and the range checks are known at compile time.
//
//   fixed_point<Bits>{min, step}   real number: round((v - min) / step), clamped to [0, 2^Bits - 1]; NaN -> 0
//   angle<Bits>{}                  radians: round(v * 2^Bits / 2pi) modulo 2^Bits (any input range)
//   integer<Bits>{}                integral or enum member; Bits = 0 means the member's width (at most 32).
//                                  Unsigned values clamp to 2^Bits - 1, signed ones to the two's complement
//                                  range of Bits bits
//   boolean{}                      1 bit
//
// Dequantizing gives the centre of the value's quantization step, exactly representable for the widths
// the schema accepts (see field_decl), so quantize(dequantize(q)) == q: a client's components re-quantize
// to the server's integers bit for bit.
//
// Prediction: fields whose quantizer has `predict = prediction::linear` (fixed_point by default) are coded
// against a linear extrapolation from two baselines when the encoder has them (docs/protocol.md).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

namespace ecsnet::proto {

/// Wire values of the FieldEncoding enum of schema.proto.
enum class field_encoding : std::uint8_t {
    fixed_point = 1,
    angle = 2,
    unsigned_integer = 3,
    signed_integer = 4,
    boolean = 5
};

/// Wire values of the Prediction enum of schema.proto.
enum class prediction : std::uint8_t { none = 0, linear = 1 };

/// The smallest unsigned type holding Bits bits: how a column of such values is stored.
template<unsigned Bits>
using storage_for_bits_t = std::conditional_t<(Bits <= 8), std::uint8_t,
                                              std::conditional_t<(Bits <= 16), std::uint16_t, std::uint32_t>>;

[[nodiscard]] constexpr std::uint32_t bit_mask(unsigned bits) noexcept {
    return bits >= 32 ? 0xFFFFFFFFU : (std::uint32_t{1} << bits) - 1U;
}

template<unsigned Bits>
struct fixed_point {
    static_assert(Bits >= 1 && Bits <= 32, "a fixed-point field has 1 to 32 bits");
    static constexpr unsigned bits = Bits;
    static constexpr field_encoding encoding = field_encoding::fixed_point;

    double min{};
    double step{1.0};
    prediction predict{prediction::linear};

    template<typename T>
    [[nodiscard]] std::uint32_t quantize(T value) const noexcept {
        static_assert(std::is_floating_point_v<T>, "fixed_point quantizes float or double members");
        // A multiplication by the inverse step: exact for power-of-two steps, within an ulp otherwise (the
        // server's rounding is the truth either way; clients only dequantize).
        const double scaled = (static_cast<double>(value) - min) * (1.0 / step);
        if (!(scaled > 0.0)) { // also NaN
            return 0;
        }
        constexpr double top = static_cast<double>(bit_mask(Bits));
        if (scaled >= top) {
            return bit_mask(Bits);
        }
        return static_cast<std::uint32_t>(scaled + 0.5);
    }
    template<typename T>
    [[nodiscard]] T dequantize(std::uint32_t q) const noexcept {
        return static_cast<T>(min + static_cast<double>(q) * step);
    }
};

template<unsigned Bits>
struct angle {
    static_assert(Bits >= 1 && Bits <= 24, "an angle field has 1 to 24 bits");
    static constexpr unsigned bits = Bits;
    static constexpr field_encoding encoding = field_encoding::angle;

    prediction predict{prediction::none};

    template<typename T>
    [[nodiscard]] std::uint32_t quantize(T value) const noexcept {
        static_assert(std::is_floating_point_v<T>, "angle quantizes float or double members");
        constexpr double scale = static_cast<double>(std::uint64_t{1} << Bits) / (2.0 * std::numbers::pi);
        const double turns = static_cast<double>(value) * scale + 0.5;
        if (!(std::fabs(turns) < 9.0e15)) { // NaN, infinities, and values beyond exact integers
            return 0;
        }
        auto whole = static_cast<std::int64_t>(turns);
        if (static_cast<double>(whole) > turns) { // truncation went up: floor of a negative value
            --whole;
        }
        return static_cast<std::uint32_t>(static_cast<std::uint64_t>(whole) & bit_mask(Bits));
    }
    template<typename T>
    [[nodiscard]] T dequantize(std::uint32_t q) const noexcept {
        constexpr double unit = 2.0 * std::numbers::pi / static_cast<double>(std::uint64_t{1} << Bits);
        return static_cast<T>(static_cast<double>(q) * unit);
    }
};

/// Bits = 0: the member's own width.
template<unsigned Bits = 0>
struct integer {
    static_assert(Bits <= 32, "an integer field has at most 32 bits");
    static constexpr unsigned bits = Bits;

    prediction predict{prediction::none};

    template<typename T>
    using underlying_t =
        typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::type_identity<T>>::type;

    template<typename T>
    static constexpr unsigned bits_for() noexcept {
        return Bits != 0 ? Bits : static_cast<unsigned>(8 * sizeof(underlying_t<T>));
    }
    template<typename T>
    static constexpr field_encoding encoding_for() noexcept {
        return std::is_signed_v<underlying_t<T>> ? field_encoding::signed_integer
                                                 : field_encoding::unsigned_integer;
    }

    template<typename T>
    [[nodiscard]] std::uint32_t quantize(T value) const noexcept {
        using U = underlying_t<T>;
        static_assert(std::is_integral_v<U> && !std::is_same_v<U, bool>,
                      "integer quantizes integral or enum members");
        constexpr unsigned width = bits_for<T>();
        static_assert(width <= 32, "members wider than 32 bits need an explicit integer<Bits> of at most 32");
        const auto raw = static_cast<U>(value);
        if constexpr (std::is_signed_v<U>) {
            constexpr std::int64_t lo = -(std::int64_t{1} << (width - 1));
            constexpr std::int64_t hi = (std::int64_t{1} << (width - 1)) - 1;
            const auto v = std::clamp<std::int64_t>(static_cast<std::int64_t>(raw), lo, hi);
            return static_cast<std::uint32_t>(static_cast<std::uint64_t>(v) & bit_mask(width));
        } else {
            const auto v = static_cast<std::uint64_t>(raw);
            return v > bit_mask(width) ? bit_mask(width) : static_cast<std::uint32_t>(v);
        }
    }
    template<typename T>
    [[nodiscard]] T dequantize(std::uint32_t q) const noexcept {
        using U = underlying_t<T>;
        constexpr unsigned width = bits_for<T>();
        if constexpr (std::is_signed_v<U>) {
            // Sign-extend from `width` bits.
            const auto shift = 64U - width;
            const auto v = static_cast<std::int64_t>(static_cast<std::uint64_t>(q) << shift) >> shift;
            return static_cast<T>(static_cast<U>(v));
        } else {
            return static_cast<T>(static_cast<U>(q));
        }
    }
};

struct boolean {
    static constexpr unsigned bits = 1;
    static constexpr field_encoding encoding = field_encoding::boolean;

    prediction predict{prediction::none};

    template<typename T>
    [[nodiscard]] std::uint32_t quantize(T value) const noexcept {
        static_assert(std::is_same_v<T, bool>, "boolean quantizes bool members");
        return value ? 1U : 0U;
    }
    template<typename T>
    [[nodiscard]] T dequantize(std::uint32_t q) const noexcept {
        return q != 0;
    }
};

} // namespace ecsnet::proto
