// The server's bounded per-source tables against simple reference models (seeded random operations):
// pending handshakes (claims, retries, other addresses, per-IP and overall eviction, expiry), used tokens,
// and the per-IP rate limiter.

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/transport/pending_handshakes.hpp"
#include "ecsnet/transport/source_rate_limiter.hpp"
#include "ecsnet/transport/used_tokens.hpp"

namespace server_tables_test {

namespace {

using namespace ecsnet::transport;
using namespace std::chrono_literals;

token_mac mac_of(std::uint64_t n) {
    token_mac mac{};
    for (std::size_t i = 0; i < 8; ++i) {
        mac[i] = static_cast<std::uint8_t>(n >> (8 * i));
    }
    mac[15] = 0x5A;
    return mac;
}

// The definition, as plainly as it can be written: a list in insertion order.
struct reference_pending {
    struct entry {
        token_mac mac;
        net_address from;
        clock::time_point first_seen, last_seen;
    };
    std::size_t capacity, per_ip;
    std::vector<entry> entries;

    pending_handshakes::claim_result claim(const token_mac& mac, const net_address& from,
                                           clock::time_point now) {
        const auto found =
            std::find_if(entries.begin(), entries.end(), [&](const entry& e) { return e.mac == mac; });
        if (found != entries.end()) {
            if (found->from != from) {
                return pending_handshakes::claim_result::other_address;
            }
            found->last_seen = now;
            return pending_handshakes::claim_result::refreshed;
        }
        if (std::count_if(entries.begin(), entries.end(), [&](const entry& e) {
                return e.from.same_ip(from);
            }) >= static_cast<std::ptrdiff_t>(per_ip)) {
            entries.erase(std::find_if(entries.begin(), entries.end(),
                                       [&](const entry& e) { return e.from.same_ip(from); }));
        }
        if (entries.size() >= capacity) {
            entries.erase(entries.begin());
        }
        entries.push_back({mac, from, now, now});
        return pending_handshakes::claim_result::inserted;
    }
    std::optional<net_address> owner(const token_mac& mac) const {
        const auto found =
            std::find_if(entries.begin(), entries.end(), [&](const entry& e) { return e.mac == mac; });
        return found == entries.end() ? std::nullopt : std::optional{found->from};
    }
    void expire(clock::time_point cutoff) {
        std::erase_if(entries, [&](const entry& e) { return e.last_seen < cutoff; });
    }
};

TEST(PendingHandshakes, ARetryFromTheSameAddressRefreshesAnotherAddressIsRefused) {
    pending_handshakes table{16, 4};
    const auto now = clock::time_point{} + 1h;
    const auto a = *net_address::parse("10.0.0.1:1000");
    const auto b = *net_address::parse("10.0.0.2:1000");
    EXPECT_EQ(table.claim(mac_of(1), a, now), pending_handshakes::claim_result::inserted);
    EXPECT_EQ(table.claim(mac_of(1), a, now), pending_handshakes::claim_result::refreshed);
    EXPECT_EQ(table.claim(mac_of(1), b, now), pending_handshakes::claim_result::other_address);
    EXPECT_EQ(*table.owner(mac_of(1)), a);
    table.erase(mac_of(1));
    EXPECT_EQ(table.owner(mac_of(1)), nullptr);
    EXPECT_EQ(table.claim(mac_of(1), b, now), pending_handshakes::claim_result::inserted);
}

TEST(PendingHandshakes, OneIpCannotHoldMoreThanItsShare) {
    pending_handshakes table{100, 4};
    const auto now = clock::time_point{} + 1h;
    for (std::uint16_t port = 1; port <= 50; ++port) {
        table.claim(mac_of(port), net_address::ipv4({10, 0, 0, 1}, port), now);
    }
    EXPECT_EQ(table.size(), 4U);
    EXPECT_EQ(table.evictions(), 46U);
    EXPECT_NE(table.owner(mac_of(50)), nullptr); // the newest stay
    EXPECT_EQ(table.owner(mac_of(1)), nullptr);
    table.claim(mac_of(1000), *net_address::parse("10.0.0.2:1"), now); // another IP is not affected
    EXPECT_EQ(table.size(), 5U);
}

TEST(PendingHandshakes, MatchesTheReferenceOnRandomOperations) {
    std::mt19937_64 random{2024};
    for (int round = 0; round < 50; ++round) {
        const std::size_t capacity = 1 + random() % 40;
        const std::size_t per_ip = 1 + random() % 8;
        pending_handshakes table{capacity, per_ip};
        reference_pending model{capacity, per_ip, {}};
        auto now = clock::time_point{} + 1h;
        for (int step = 0; step < 2000; ++step) {
            const auto mac = mac_of(random() % 80);
            const auto from = net_address::ipv4({10, 0, 0, static_cast<std::uint8_t>(random() % 6)},
                                                static_cast<std::uint16_t>(1 + random() % 3));
            switch (random() % 10) {
            case 0:
                table.erase(mac);
                std::erase_if(model.entries, [&](const auto& e) { return e.mac == mac; });
                break;
            case 1: {
                const auto cutoff = now - std::chrono::milliseconds{random() % 500};
                table.expire(cutoff);
                model.expire(cutoff);
                break;
            }
            default:
                ASSERT_EQ(table.claim(mac, from, now), model.claim(mac, from, now)) << round << "/" << step;
                break;
            }
            now += std::chrono::milliseconds{random() % 20};
            ASSERT_EQ(table.size(), model.entries.size()) << round << "/" << step;
            ASSERT_LE(table.size(), capacity);
            const auto probe = mac_of(random() % 80);
            const auto* owner = table.owner(probe);
            const auto expected = model.owner(probe);
            ASSERT_EQ(owner != nullptr, expected.has_value());
            if (owner != nullptr) {
                ASSERT_EQ(*owner, *expected);
            }
        }
    }
}

TEST(UsedTokens, RememberedUntilTheyExpireAndBounded) {
    used_tokens table{3};
    const auto from = *net_address::parse("10.0.0.1:1");
    table.add(mac_of(1), from, 1000, 500);
    EXPECT_TRUE(table.contains(mac_of(1), 999));
    EXPECT_FALSE(table.contains(mac_of(1), 1000)); // expired: useless anyway
    table.add(mac_of(2), from, 2000, 500);
    table.add(mac_of(3), from, 2000, 500);
    table.add(mac_of(4), from, 2000, 500); // full: the oldest goes
    EXPECT_EQ(table.size(), 3U);
    EXPECT_EQ(table.evictions(), 1U);
    EXPECT_FALSE(table.contains(mac_of(1), 600));
    EXPECT_TRUE(table.contains(mac_of(4), 600));
    table.add(mac_of(5), from, 2000, 1500); // nothing expired yet at 1500 but the table is full
    EXPECT_EQ(table.size(), 3U);
    table.add(mac_of(6), from, 3000, 2500); // 3, 4, 5 expired at 2500: they go without counting
    EXPECT_EQ(table.size(), 1U);
    EXPECT_EQ(table.evictions(), 2U);
}

TEST(SourceRateLimiter, ABurstThenTheRate) {
    source_rate_limiter limiter{10, 5, 100};
    auto now = clock::time_point{} + 1h;
    const auto a = *net_address::parse("10.0.0.1:1");
    const auto a_other_port = *net_address::parse("10.0.0.1:2");
    int allowed = 0;
    for (int i = 0; i < 20; ++i) {
        allowed += limiter.allow(i % 2 == 0 ? a : a_other_port, now) ? 1 : 0;
    }
    EXPECT_EQ(allowed, 5); // one budget per IP, whatever the port
    now += 300ms;          // 3 more
    allowed = 0;
    for (int i = 0; i < 20; ++i) {
        allowed += limiter.allow(a, now) ? 1 : 0;
    }
    EXPECT_EQ(allowed, 3);
    EXPECT_TRUE(limiter.allow(*net_address::parse("10.0.0.2:1"), now));
}

TEST(SourceRateLimiter, TheTableOfIpsStaysBounded) {
    source_rate_limiter limiter{10, 5, 64};
    const auto now = clock::time_point{} + 1h;
    for (std::uint32_t i = 0; i < 10'000; ++i) {
        static_cast<void>(
            limiter.allow(net_address::ipv4({10, static_cast<std::uint8_t>(i >> 16),
                                             static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i)},
                                            1),
                          now));
        ASSERT_LE(limiter.size(), 64U);
    }
}

TEST(SourceRateLimiter, ZeroRateMeansNoLimit) {
    source_rate_limiter limiter{0, 0, 1};
    const auto now = clock::time_point{} + 1h;
    for (int i = 0; i < 1000; ++i) {
        ASSERT_TRUE(limiter.allow(*net_address::parse("10.0.0.1:1"), now));
    }
}

} // namespace

} // namespace server_tables_test
