// The server's address -> connection table against a reference std::map: random inserts, reassignments,
// erases and lookups over a small set of IPv4 and IPv6 addresses (so that keys come back after being
// erased), with the real keyed hash and with a hash so weak that every key collides with others and runs
// wrap around the end of the table (what the backward shift of an erase must get right).

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/transport/address_table.hpp"

namespace address_table_test {

namespace {

using ecsnet::transport::address_table;
using ecsnet::transport::net_address;

// Four homes for every key, all near the table's end once it has grown: long runs that wrap.
struct colliding_hash {
    std::size_t operator()(const net_address& address) const noexcept {
        return 0xFFFFFFF0U + (address.port % 4U);
    }
};

std::vector<net_address> some_addresses(std::size_t count) {
    std::vector<net_address> out;
    for (std::size_t i = 0; i < count; ++i) {
        const auto port = static_cast<std::uint16_t>(40000 + i);
        if (i % 3 == 0) {
            std::array<std::uint8_t, 16> ip{};
            ip[0] = 0x20;
            ip[1] = 0x01;
            ip[15] = static_cast<std::uint8_t>(i);
            out.push_back(net_address::ipv6(ip, port));
        } else {
            out.push_back(
                net_address::ipv4({10, 0, static_cast<std::uint8_t>(i / 256), static_cast<std::uint8_t>(i)},
                                  static_cast<std::uint16_t>(i % 2 == 0 ? port : 7777)));
        }
    }
    return out;
}

template<typename Hash>
void run_against_reference(std::uint32_t seed, std::size_t keys, int steps) {
    std::mt19937 rng{seed};
    const auto addresses = some_addresses(keys);
    address_table<int, Hash> table;
    std::map<net_address, int> reference;
    const auto check_all = [&] {
        ASSERT_EQ(table.size(), reference.size());
        for (const auto& address : addresses) {
            const auto* found = table.find(address);
            const auto it = reference.find(address);
            ASSERT_EQ(found != nullptr, it != reference.end()) << address.to_string();
            if (found != nullptr) {
                ASSERT_EQ(*found, it->second) << address.to_string();
            }
        }
    };
    for (int step = 0; step < steps; ++step) {
        const auto& address = addresses[rng() % addresses.size()];
        const auto op = rng() % 8;
        if (op < 4) { // insert or reassign: the table fills up to about half the keys, then churns
            const int value = static_cast<int>(rng() % 1000);
            table.insert_or_assign(address, value);
            reference[address] = value;
        } else if (op < 7) {
            ASSERT_EQ(table.erase(address), reference.erase(address) == 1) << "step " << step;
        } else {
            const auto* found = table.find(address);
            ASSERT_EQ(found != nullptr, reference.contains(address)) << "step " << step;
        }
        if (step % 64 == 0) {
            check_all();
        }
    }
    check_all();
    // Emptied, it still works.
    for (const auto& address : addresses) {
        ASSERT_EQ(table.erase(address), reference.erase(address) == 1);
    }
    EXPECT_TRUE(table.empty());
    check_all();
}

TEST(AddressTable, MatchesAReferenceMap) {
    for (std::uint32_t seed = 1; seed <= 10; ++seed) {
        SCOPED_TRACE(seed);
        run_against_reference<ecsnet::transport::net_address_hash>(seed, 300, 20000);
    }
}

TEST(AddressTable, MatchesAReferenceMapWhenEveryKeyCollides) {
    for (std::uint32_t seed = 1; seed <= 10; ++seed) {
        SCOPED_TRACE(seed);
        run_against_reference<colliding_hash>(seed, 60, 20000);
    }
}

TEST(AddressTable, SameIpOtherPortIsAnotherKey) {
    address_table<int> table;
    const auto a = net_address::ipv4({127, 0, 0, 1}, 5000);
    const auto b = net_address::ipv4({127, 0, 0, 1}, 5001);
    table.insert_or_assign(a, 1);
    EXPECT_EQ(table.find(b), nullptr);
    table.insert_or_assign(b, 2);
    table.insert_or_assign(a, 3); // reassigned, not added
    EXPECT_EQ(table.size(), 2U);
    ASSERT_NE(table.find(a), nullptr);
    EXPECT_EQ(*table.find(a), 3);
    EXPECT_TRUE(table.erase(a));
    EXPECT_FALSE(table.erase(a));
    ASSERT_NE(table.find(b), nullptr);
    EXPECT_EQ(*table.find(b), 2);
}

TEST(AddressTable, AnUnsetAddressIsNeverAKey) {
    address_table<int> table;
    EXPECT_EQ(table.find(net_address{}), nullptr);
    EXPECT_FALSE(table.erase(net_address{}));
    EXPECT_THROW(table.insert_or_assign(net_address{}, 1), std::invalid_argument);
    EXPECT_TRUE(table.empty());
}

} // namespace

} // namespace address_table_test
