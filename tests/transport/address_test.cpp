// Addresses as tokens list them and the server keys its per-source state: parsing, printing, IPv4-mapped
// IPv6 normalized to IPv4, hashes that ignore or include the port.

#include <gtest/gtest.h>

#include "ecsnet/transport/address.hpp"

namespace address_test {

namespace {

using namespace ecsnet::transport;

TEST(NetAddress, ParsesAndPrintsIpv4AndIpv6) {
    const auto v4 = net_address::parse("127.0.0.1:7777");
    ASSERT_TRUE(v4);
    EXPECT_EQ(v4->family, address_family::ipv4);
    EXPECT_EQ(v4->port, 7777);
    EXPECT_EQ(v4->to_string(), "127.0.0.1:7777");
    const auto v6 = net_address::parse("[2001:db8::1]:40000");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->family, address_family::ipv6);
    EXPECT_EQ(v6->to_string(), "[2001:db8::1]:40000");
    EXPECT_EQ(v6->ip_string(), "2001:db8::1");
}

TEST(NetAddress, RefusesWhatIsNotAnAddressWithAPort) {
    for (const char* text : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:7x",
                             "256.0.0.1:1", "::1:7777", "[::1]", "[::1]7777", "[::1]:", "[zz::1]:1",
                             "host:7777", "[127.0.0.1]:1", "1.2.3.4:123456"}) {
        EXPECT_FALSE(net_address::parse(text)) << text;
    }
}

TEST(NetAddress, Ipv4MappedIpv6IsNormalizedToIpv4) {
    const auto mapped = net_address::parse("[::ffff:10.1.2.3]:99");
    ASSERT_TRUE(mapped);
    EXPECT_EQ(mapped->family, address_family::ipv4);
    EXPECT_EQ(*mapped, *net_address::parse("10.1.2.3:99"));
}

TEST(NetAddress, IpHashAndEqualityIgnoreThePort) {
    const auto a = *net_address::parse("10.0.0.1:1000");
    const auto b = *net_address::parse("10.0.0.1:2000");
    const auto c = *net_address::parse("10.0.0.2:1000");
    EXPECT_TRUE(a.same_ip(b));
    EXPECT_FALSE(a.same_ip(c));
    EXPECT_NE(a, b);
    EXPECT_EQ(net_ip_hash{}(a), net_ip_hash{}(b));
    EXPECT_NE(net_address_hash{}(a), net_address_hash{}(b)); // 2^-64 chance of a false failure
}

} // namespace

} // namespace address_test
