#pragma once

// What link_fuzz and link_corpus_generator.cpp share, so that the seed corpus replays exactly: the
// fuzzed link's configs, the messages it queues before the first body, and the clock. A seed input is a
// conversation recorded by the generator: the bodies a peer sent to a link set up this way, in order; the
// fuzz target rebuilds the same link, feeds it the same bodies at the same times, and so accepts them.
//
// Input format: byte 0 = mode (bits 0-1: config; bit 2: several bodies), then either one body (the rest) or
// bodies each preceded by its length (u16, little-endian).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ecsnet/transport/link.hpp"

namespace ecsnet::transport::fuzz {

using namespace std::chrono_literals;

inline constexpr std::uint8_t several_bodies = 0x04;

inline link_config config_for(std::uint8_t mode) {
    link_config config;
    switch (mode & 0x03) {
    case 1: // small limits: windows, budgets and reassembly hit quickly
        config.max_message_bytes = 20000;
        config.max_reliable_queue_bytes = 30000;
        config.max_unreliable_queue_bytes = 30000;
        config.reliable_window = 32;
        config.redundant_window = 4;
        config.max_reassembly_bytes = 25000;
        config.max_reassembly_groups = 2;
        config.max_fragments = 64;
        break;
    case 2: // small bodies
        config.max_body_bytes = 200;
        config.max_message_bytes = 8000;
        config.max_reliable_queue_bytes = 16000;
        config.max_unreliable_queue_bytes = 16000;
        config.max_redundant_message_bytes = 64;
        config.max_fragments = 64;
        break;
    default:
        break;
    }
    return config;
}

inline clock::time_point start_time() {
    return clock::time_point{std::chrono::hours{1}};
}

/// What the fuzzed link queues before anything arrives (so acks, fragment acks and resends have something
/// to work on): a block, small reliable messages, redundant ones.
inline void queue_script(link& l, clock::time_point now) {
    const auto message = [](std::size_t n, std::uint8_t fill) {
        return std::vector<std::byte>(n, std::byte{fill});
    };
    const auto block = message(l.max_whole_message_bytes() * 3 + 17, 0xB1);
    static_cast<void>(l.send(channel::reliable, block, now));
    for (std::uint8_t i = 0; i < 3; ++i) {
        static_cast<void>(l.send(channel::reliable, message(40 + i, i), now));
        static_cast<void>(l.send(channel::redundant, message(12, static_cast<std::uint8_t>(0x40 + i)), now));
    }
}

/// Time between bodies.
inline constexpr auto body_interval = 3ms;

} // namespace ecsnet::transport::fuzz
