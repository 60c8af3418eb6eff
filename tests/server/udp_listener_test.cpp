// udp_listener's shared decoder: connections borrow the listener's one, and a message decoded while
// another is still handled gets a decoder of its own, so the first message stays valid.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <asio/io_context.hpp>

#include "ecsnet/server/udp_listener.hpp"
#include "ecsnet/transport/dev_key.hpp"

namespace udp_listener_test {
namespace {

using ecsnet::server::client_link;
using ecsnet::server::connection_handler;
using ecsnet::server::outgoing_snapshot;
using ecsnet::server::udp_listener;

struct nothing_handler : connection_handler {
    void on_opened(std::shared_ptr<client_link>) override {}
    void on_message(client_link&, ecsnet::v1::Envelope&) override {}
    std::optional<outgoing_snapshot> next_snapshot(client_link&) override { return std::nullopt; }
    void on_left(client_link&) override {}
    void on_closed(client_link&) override {}
};

std::string encoded_ack(std::uint32_t tick) {
    ecsnet::v1::Envelope envelope;
    envelope.mutable_ack()->set_tick(tick);
    return envelope.SerializeAsString();
}

struct listener_fixture {
    asio::io_context io;
    nothing_handler handler;
    udp_listener listener{io, options(), handler, std::chrono::seconds{1}, nullptr};

    static ecsnet::transport::udp_server_options options() {
        ecsnet::transport::udp_server_options o;
        o.bind_address = "127.0.0.1";
        o.config.protocol_id = 1;
        o.config.private_key = ecsnet::transport::dev_private_key;
        o.config.public_addresses = {*ecsnet::transport::net_address::parse("127.0.0.1:1")};
        return o;
    }
};

TEST(UdpListener, ConnectionsTakeTurnsWithTheSameDecoder) {
    listener_fixture f;
    const ecsnet::server::envelope_decoder* first = nullptr;
    {
        auto decoder = f.listener.borrow_decoder();
        first = &*decoder;
        ASSERT_TRUE(decoder->decode(encoded_ack(7)));
        EXPECT_EQ(decoder->message().ack().tick(), 7U);
    }
    auto again = f.listener.borrow_decoder();
    EXPECT_EQ(&*again, first); // returned, then lent again
    ASSERT_TRUE(again->decode(encoded_ack(8)));
    EXPECT_EQ(again->message().ack().tick(), 8U);
}

TEST(UdpListener, AMessageDecodedWhileAnotherIsHandledLeavesTheFirstIntact) {
    listener_fixture f;
    auto outer = f.listener.borrow_decoder();
    ASSERT_TRUE(outer->decode(encoded_ack(11)));
    const auto& message = outer->message();
    {
        auto inner = f.listener.borrow_decoder();
        EXPECT_NE(&*inner, &*outer);
        for (std::uint32_t tick = 100; tick < 100 + 3 * ecsnet::server::envelope_decoder::messages_per_reset;
             ++tick) {
            ASSERT_TRUE(inner->decode(encoded_ack(tick)));
            EXPECT_EQ(inner->message().ack().tick(), tick);
        }
    }
    EXPECT_EQ(message.ack().tick(), 11U);
    // The nested one gave nothing back that was not its own: the shared decoder is still lent.
    auto third = f.listener.borrow_decoder();
    EXPECT_NE(&*third, &*outer);
}

} // namespace
} // namespace udp_listener_test
