#pragma once

// Two links talking through two network simulators (one per direction) on a simulated clock, for the
// transport tests: every step advances the clock, delivers the datagrams due to each side, then lets each
// side write what it has to (as a server's tick or a client's frame would).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ecsnet/transport/link.hpp"
#include "ecsnet/transport/net_simulator.hpp"

namespace ecsnet::transport::testing {

using namespace std::chrono_literals;

using bytes = std::vector<std::byte>;

/// Deterministic message contents: `size` bytes derived from `seed`.
inline bytes make_message(std::uint64_t seed, std::size_t size) {
    bytes out(size);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    for (auto& b : out) {
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ULL;
        x ^= x >> 32;
        b = static_cast<std::byte>(x & 0xFF);
    }
    return out;
}

inline std::span<const std::byte> as_bytes(const bytes& b) {
    return {b.data(), b.size()};
}

struct delivered_message {
    channel ch;
    bytes data;
};

struct side {
    explicit side(const link_config& config)
        : l{config} {}

    link l;
    std::vector<delivered_message> delivered;
    std::vector<receive_result> refusals;
    bool writes{true}; // false: this side never writes (a peer that stopped sending, so stopped acking)
    std::uint64_t bodies_written{0};
    std::size_t largest_body{0};
};

class link_pair {
public:
    link_pair(const link_config& config, const sim_config& a_to_b, const sim_config& b_to_a)
        : a{config}
        , b{config}
        , ab{a_to_b}
        , ba{b_to_a} {}

    /// Advances the clock by dt, delivers what is due both ways, then each side writes what is due.
    void step(clock::duration dt = 1ms) {
        now += dt;
        ab.deliver_due(now, [&](std::span<const std::byte> body) { receive(b, body); });
        ba.deliver_due(now, [&](std::span<const std::byte> body) { receive(a, body); });
        write(a, ab);
        write(b, ba);
    }

    /// Steps until pred() or `limit` of simulated time passed; returns whether pred() became true.
    template<typename Pred>
    bool run_until(Pred&& pred, clock::duration limit, clock::duration dt = 1ms) {
        const auto end = now + limit;
        while (!pred()) {
            if (now >= end) {
                return false;
            }
            step(dt);
        }
        return true;
    }

    side a;
    side b;
    net_simulator ab; // a -> b
    net_simulator ba; // b -> a
    clock::time_point now{std::chrono::hours{1}};

private:
    void receive(side& s, std::span<const std::byte> body) {
        const auto result = s.l.receive(body, now, [&](channel ch, std::span<const std::byte> message) {
            s.delivered.push_back({ch, bytes(message.begin(), message.end())});
        });
        if (!result) {
            s.refusals.push_back(result);
        }
    }
    void write(side& s, net_simulator& out) {
        if (!s.writes) {
            return;
        }
        s.bodies_written += s.l.write_packets(now, [&](std::span<const std::byte> body) {
            s.largest_body = std::max(s.largest_body, body.size());
            out.submit(body, now);
        });
    }
};

} // namespace ecsnet::transport::testing
