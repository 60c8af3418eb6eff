#pragma once

// The demo game's input: what a client sends (in Input.payload) to steer its avatar. 16 bytes,
// little-endian:
//   u32 target   0, or the server index of the entity to steer: it must be the client's own avatar
//   f32 dir_x    direction (normalised by the server; (0, 0) stops)
//   f32 dir_y
//   f32 speed    metres per second, clamped by the server to [0, max_avatar_speed]
// The target field exists so that the server's authority can be seen at work: an input aimed at anything
// but the sender's avatar is refused.

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace ecsnet::arena {

inline constexpr float max_avatar_speed = 8.0F;
inline constexpr std::size_t move_input_size = 16;

struct move_input {
    std::uint32_t target{};
    float dir_x{};
    float dir_y{};
    float speed{};
};

namespace detail {
inline void put_u32(char* out, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) {
        out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
    }
}
inline std::uint32_t get_u32(const char* in) {
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
        value |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
    }
    return value;
}
} // namespace detail

[[nodiscard]] inline std::string encode(const move_input& input) {
    std::string bytes(move_input_size, '\0');
    detail::put_u32(bytes.data(), input.target);
    detail::put_u32(bytes.data() + 4, std::bit_cast<std::uint32_t>(input.dir_x));
    detail::put_u32(bytes.data() + 8, std::bit_cast<std::uint32_t>(input.dir_y));
    detail::put_u32(bytes.data() + 12, std::bit_cast<std::uint32_t>(input.speed));
    return bytes;
}

/// The input in `bytes`, or nothing if they are not one.
[[nodiscard]] inline std::optional<move_input> decode_move_input(std::string_view bytes) {
    if (bytes.size() != move_input_size) {
        return std::nullopt;
    }
    move_input input;
    input.target = detail::get_u32(bytes.data());
    input.dir_x = std::bit_cast<float>(detail::get_u32(bytes.data() + 4));
    input.dir_y = std::bit_cast<float>(detail::get_u32(bytes.data() + 8));
    input.speed = std::bit_cast<float>(detail::get_u32(bytes.data() + 12));
    return input;
}

} // namespace ecsnet::arena
