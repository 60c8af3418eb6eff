#pragma once

// The demo game's input: what a client sends (in Input.payload) to steer its avatar. 16 bytes,
// little-endian:
//   u32 target   0, or the server index of the entity to steer: it must be the client's own avatar
//   f32 dir_x    direction (normalised by the server; (0, 0) stops)
//   f32 dir_y
//   f32 speed    metres per second, clamped by the server to [0, max_avatar_speed]
// The target field exists so that the server's authority can be seen at work: an input aimed at anything
// but the sender's avatar is refused.
//
// An input may carry an action after the move (36 bytes; the 16-byte form stays valid):
//   u8  flags            bit 0: fire along the aim; the other bits are ignored
//   u8  reserved[3]
//   f32 aim_x            the shot's direction on the ground plane (normalised by the server)
//   f32 aim_y
//   i64 render_time_us   the render time the client was drawing when it fired (client.render_time_us():
//                        the server's clock, microseconds): the server evaluates the shot against the world
//                        as it was then (lag compensation, docs/lag_compensation.md)

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

inline constexpr std::size_t action_input_size = 36;
inline constexpr std::uint8_t action_fire = 0x01;

struct action_input {
    std::uint8_t flags{};
    float aim_x{};
    float aim_y{};
    std::int64_t render_time_us{};

    [[nodiscard]] bool fires() const noexcept { return (flags & action_fire) != 0; }
};

/// A decoded input: the move, and the action when the input has one.
struct arena_input {
    move_input move;
    std::optional<action_input> action;
};

[[nodiscard]] inline std::string encode(const move_input& input) {
    std::string bytes(move_input_size, '\0');
    detail::put_u32(bytes.data(), input.target);
    detail::put_u32(bytes.data() + 4, std::bit_cast<std::uint32_t>(input.dir_x));
    detail::put_u32(bytes.data() + 8, std::bit_cast<std::uint32_t>(input.dir_y));
    detail::put_u32(bytes.data() + 12, std::bit_cast<std::uint32_t>(input.speed));
    return bytes;
}

/// The 36-byte form: the move, then the action.
[[nodiscard]] inline std::string encode(const move_input& input, const action_input& action) {
    std::string bytes = encode(input);
    bytes.resize(action_input_size, '\0');
    bytes[move_input_size] = static_cast<char>(action.flags);
    detail::put_u32(bytes.data() + 20, std::bit_cast<std::uint32_t>(action.aim_x));
    detail::put_u32(bytes.data() + 24, std::bit_cast<std::uint32_t>(action.aim_y));
    const auto time = static_cast<std::uint64_t>(action.render_time_us);
    detail::put_u32(bytes.data() + 28, static_cast<std::uint32_t>(time & 0xFFFFFFFFU));
    detail::put_u32(bytes.data() + 32, static_cast<std::uint32_t>(time >> 32));
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

/// Either form (16 or 36 bytes), or nothing if `bytes` are neither.
[[nodiscard]] inline std::optional<arena_input> decode_input(std::string_view bytes) {
    if (bytes.size() != move_input_size && bytes.size() != action_input_size) {
        return std::nullopt;
    }
    arena_input input;
    input.move = *decode_move_input(bytes.substr(0, move_input_size));
    if (bytes.size() == action_input_size) {
        action_input action;
        action.flags = static_cast<std::uint8_t>(bytes[move_input_size]);
        action.aim_x = std::bit_cast<float>(detail::get_u32(bytes.data() + 20));
        action.aim_y = std::bit_cast<float>(detail::get_u32(bytes.data() + 24));
        action.render_time_us =
            static_cast<std::int64_t>(std::uint64_t{detail::get_u32(bytes.data() + 28)} |
                                      (std::uint64_t{detail::get_u32(bytes.data() + 32)} << 32));
        input.action = action;
    }
    return input;
}

} // namespace ecsnet::arena
