#pragma once

// The network simulator's random numbers: xoshiro256** (Blackman and Vigna), seeded through splitmix64,
// written here from the published algorithm. Unlike std::uniform_*_distribution, the same seed gives the
// same numbers with every standard library, so a simulated run is reproducible anywhere.

#include <cstdint>

namespace ecsnet::transport {

class sim_random {
public:
    explicit sim_random(std::uint64_t seed) noexcept {
        for (auto& word : state_) {
            seed += 0x9E3779B97F4A7C15ULL;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            word = z ^ (z >> 31);
        }
    }

    std::uint64_t next() noexcept {
        const auto result = rotl(state_[1] * 5, 7) * 9;
        const auto t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = rotl(state_[3], 45);
        return result;
    }

    /// Uniform in [0, 1), 53 bits.
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    /// Uniform in [0, n) (n > 0; the tiny modulo bias is irrelevant here).
    std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }

    std::uint64_t state_[4]{};
};

} // namespace ecsnet::transport
