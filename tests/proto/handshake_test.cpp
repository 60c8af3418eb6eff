// Handshake: a matching hello is accepted; a different protocol version or schema is refused with the
// right Disconnect reason and a message naming the component (and field) that differs.

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/handshake.hpp"

namespace ecsnet::proto::handshake_test {
namespace {

schema_layout edited(const std::function<void(std::vector<component_info>&)>& edit) {
    const auto& base = arena::replicated_schema().layout();
    std::vector<component_info> components{base.components().begin(), base.components().end()};
    edit(components);
    return schema_layout{std::move(components)};
}

v1::ClientHello hello_from(const schema_layout& client) {
    return make_client_hello(client, "token", "ada").client_hello();
}

TEST(Handshake, MatchingHelloIsAcceptedAndTravels) {
    const auto& server = arena::replicated_schema().layout();
    const auto envelope = make_client_hello(server, std::string("\x01\x02", 2), "ada");
    const auto decoded = decode_envelope(encode_envelope(envelope));
    ASSERT_TRUE(decoded);
    ASSERT_EQ(decoded->message_case(), v1::Envelope::kClientHello);
    const auto& hello = decoded->client_hello();
    EXPECT_EQ(hello.protocol_version(), protocol_version);
    EXPECT_EQ(hello.schema_hash(), server.hash());
    EXPECT_EQ(hello.connect_token(), std::string("\x01\x02", 2));
    EXPECT_EQ(client_name(hello), "ada");
    EXPECT_TRUE(check_client_hello(hello, server));
}

TEST(Handshake, VersionMismatchIsRefused) {
    const auto& server = arena::replicated_schema().layout();
    auto hello = hello_from(server);
    hello.set_protocol_version(protocol_version + 1);
    const auto verdict = check_client_hello(hello, server);
    ASSERT_FALSE(verdict);
    EXPECT_EQ(verdict.code(), errc::version_mismatch);
    EXPECT_EQ(reason_for(verdict.error_value()), v1::VERSION_MISMATCH);
    EXPECT_EQ(verdict.message(), "protocol version 2 on the client, 1 on the server");
}

TEST(Handshake, SchemaMismatchNamesWhatDiffers) {
    const auto& server = arena::replicated_schema().layout();
    struct expectation {
        std::function<void(std::vector<component_info>&)> edit;
        std::string message;
    };
    const std::vector<expectation> cases{
        {[](auto& c) { c[0].fields[3].bits = 10; }, "schema mismatch: component 'Transform' differs: field "
                                                    "'yaw' is angle/12 bits on the server, angle/10 "
                                                    "bits on the client"},
        {[](auto& c) { c[0].fields[0].step = 1.0 / 256; },
         "schema mismatch: component 'Transform' differs: field 'x' is fixed_point/20 bits from -1024 by "
         "0.001953125, extrapolated on the server, fixed_point/20 bits from -1024 by 0.00390625, "
         "extrapolated on "
         "the client"},
        {[](auto& c) { c.pop_back(); }, "schema mismatch: component 'LastHit' is missing on the client"},
        {[](auto& c) { c[2].name = "Team"; }, "schema mismatch: component 'Kind' is missing on the client"},
        {[](auto& c) { c[1].fields.push_back(c[1].fields[0]), c[1].fields[1].name = "max"; },
         "schema mismatch: component 'Health' differs: field 'max' is unknown on the server"},
        {[](auto& c) { std::swap(c[1], c[2]); }, "schema mismatch: components are declared in another order: "
                                                 "'Health' is #1 on the server, 'Kind' is #1 "
                                                 "on the client"},
        {[](auto& c) { std::swap(c[0].fields[0], c[0].fields[1]); },
         "schema mismatch: component 'Transform' differs: its fields are declared in another order"},
    };
    for (const auto& [edit, message] : cases) {
        const auto verdict = check_client_hello(hello_from(edited(edit)), server);
        ASSERT_FALSE(verdict);
        EXPECT_EQ(verdict.code(), errc::schema_mismatch);
        EXPECT_EQ(reason_for(verdict.error_value()), v1::SCHEMA_MISMATCH);
        EXPECT_EQ(verdict.message(), message);
    }
}

TEST(Handshake, HashOnlyHelloStillSaysTheHashesDiffer) {
    const auto& server = arena::replicated_schema().layout();
    auto hello = hello_from(edited([](auto& c) { c.pop_back(); }));
    hello.clear_schema();
    const auto verdict = check_client_hello(hello, server);
    ASSERT_FALSE(verdict);
    EXPECT_EQ(verdict.code(), errc::schema_mismatch);
    EXPECT_NE(verdict.message().find("schema hash 0x"), std::string_view::npos) << verdict.message();
}

TEST(Handshake, InvalidPeerSchemaIsReported) {
    const auto& server = arena::replicated_schema().layout();
    auto hello = hello_from(server);
    hello.set_schema_hash(1);
    hello.mutable_schema()->mutable_components(0)->mutable_fields(0)->set_bits(99);
    const auto verdict = check_client_hello(hello, server);
    ASSERT_FALSE(verdict);
    EXPECT_NE(verdict.message().find("invalid schema on the client"), std::string_view::npos)
        << verdict.message();
}

TEST(Handshake, WelcomeCarriesWhatTheClientNeeds) {
    const auto& layout = arena::replicated_schema().layout();
    const auto envelope = make_server_welcome(
        layout, welcome_info{7, 30, 1234, net_entity{42, 4097}, 1'700'000'000'000'000ULL, 32});
    const auto decoded = decode_envelope(encode_envelope(envelope));
    ASSERT_TRUE(decoded);
    const auto& welcome = decoded->server_welcome();
    EXPECT_TRUE(check_server_welcome(welcome, layout));
    EXPECT_EQ(welcome.client_id(), 7U);
    EXPECT_EQ(welcome.tick_rate(), 30U);
    EXPECT_EQ(welcome.current_tick(), 1234U);
    ASSERT_TRUE(welcome.has_own_entity());
    EXPECT_EQ(welcome.own_entity().index(), 42U);
    EXPECT_EQ(welcome.own_entity().generation(), 4097U);
    EXPECT_EQ(welcome.history_ticks(), 32U);
    EXPECT_EQ(welcome.server_epoch_unix_us(), 1'700'000'000'000'000ULL);
    auto parsed = schema_layout::from_proto(welcome.schema());
    ASSERT_TRUE(parsed);
    EXPECT_TRUE(*parsed == layout);
    // A client with another schema refuses the server's welcome.
    const auto other = edited([](auto& c) { c[0].fields[3].bits = 10; });
    const auto verdict = check_server_welcome(welcome, other);
    ASSERT_FALSE(verdict);
    EXPECT_EQ(verdict.message(),
              "schema mismatch: component 'Transform' differs: field 'yaw' is angle/10 bits on "
              "the client, angle/12 bits on the server");
}

TEST(Handshake, DisconnectAndNames) {
    const auto envelope = make_disconnect(v1::SERVER_FULL, "64 clients already");
    const auto decoded = decode_envelope(encode_envelope(envelope));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->disconnect().reason(), v1::SERVER_FULL);
    EXPECT_EQ(decoded->disconnect().message(), "64 clients already");
    // Every reason the next issues rely on exists.
    for (const auto reason :
         {v1::SHUTDOWN, v1::PROTOCOL_ERROR, v1::SCHEMA_MISMATCH, v1::VERSION_MISMATCH, v1::HANDSHAKE_TIMEOUT,
          v1::TIMEOUT, v1::SERVER_FULL, v1::SLOW_CONSUMER, v1::KICKED, v1::CLIENT_QUIT}) {
        EXPECT_TRUE(v1::DisconnectReason_IsValid(reason));
    }
    // Long names are cut at a character boundary (here inside a 2-byte 'é').
    std::string name(63, 'a');
    name += "\xc3\xa9tienne";
    const auto hello = make_client_hello(arena::replicated_schema().layout(), "", name).client_hello();
    EXPECT_EQ(client_name(hello), std::string(63, 'a'));
}

} // namespace
} // namespace ecsnet::proto::handshake_test
