// libFuzzer target: the datagram entry of a server (and of a connecting client), on arbitrary bytes: the
// packet parsers up to the crypto, and past it for the inputs that are valid (the server runs with the
// development key, so the seed corpus holds requests that open). The first input byte picks the target
// and the source address; the rest is one datagram. Each parser of handshake packet data also reads the
// input directly. Nothing may crash, assert or leak, and the server's tables stay within their bounds.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "ecsnet/transport/client_core.hpp"
#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"
#include "ecsnet/transport/server_core.hpp"

namespace {

using namespace ecsnet::transport;

// Fixed times, so that an input always does the same thing (the seeds' tokens expire long after this).
constexpr std::uint64_t fuzz_unix_time = 1'700'000'000;
const clock::time_point fuzz_now = clock::time_point{} + std::chrono::hours{1};

struct quiet_server : server_handler {
    void on_connected(const connection_info&) override {}
    void on_message(connection_id, channel, std::span<const std::byte>) override {}
    void on_disconnected(connection_id, const disconnect_info&) override {}
};

struct quiet_client : client_handler {
    void on_message(channel, std::span<const std::byte>) override {}
};

server_core& server() {
    static quiet_server handler;
    static server_core core = [] {
        server_config config;
        config.protocol_id = 0xEC5E7;
        config.private_key = dev_private_key;
        config.public_addresses = {*net_address::parse("127.0.0.1:7777")};
        config.max_clients = 4;
        config.max_pending_handshakes = 64;
        config.max_pending_per_ip = 8;
        config.max_used_tokens = 64;
        config.max_rate_limited_ips = 64;
        config.handshake_packets_per_second_per_ip = 0;
        config.unix_clock = [] { return fuzz_unix_time; };
        return server_core{config, handler, [](const net_address&, std::span<const std::uint8_t>) {},
                           fuzz_now};
    }();
    return core;
}

client_core& client() {
    static quiet_client handler;
    static client_core core = [] {
        client_config config;
        config.unix_clock = [] { return fuzz_unix_time; };
        return client_core{config, handler, [](const net_address&, std::span<const std::uint8_t>) {}};
    }();
    return core;
}

void connect_client() {
    // The client reads only the public part: fixed keys (0x11..., 0x22...) let the seeds hold a challenge
    // and a denial that open.
    static const connect_token token = [] {
        connect_token t;
        t.protocol_id = 0xEC5E7;
        t.create_timestamp = fuzz_unix_time;
        t.expire_timestamp = fuzz_unix_time + 3600;
        t.timeout_seconds = 10;
        t.server_addresses = {*net_address::parse("127.0.0.1:7777")};
        t.client_to_server_key.fill(0x11);
        t.server_to_client_key.fill(0x22);
        return t;
    }();
    if (client().state() == client_state::disconnected) {
        client().connect(token, fuzz_now);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const auto selector = data[0];
    const std::span<const std::uint8_t> datagram{data + 1, size - 1};

    // The parsers alone.
    static_cast<void>(read_connection_request(datagram));
    if (const auto header = read_datagram_header(datagram)) {
        if (header->size > datagram.size()) {
            __builtin_trap();
        }
    }
    static_cast<void>(read_denied(datagram));
    static_cast<void>(read_challenge(datagram));
    static_cast<void>(read_response(datagram));
    if (const auto disconnect = read_disconnect(datagram)) {
        if (disconnect->message.size() > max_disconnect_message_bytes || !valid_utf8(disconnect->message)) {
            __builtin_trap();
        }
    }

    if ((selector & 0x80) == 0) {
        const auto from = net_address::ipv4({10, 0, 0, static_cast<std::uint8_t>(selector & 0x0F)},
                                            static_cast<std::uint16_t>(5000 + (selector >> 4)));
        auto& core = server();
        core.receive(datagram, from, fuzz_now);
        const auto sizes = core.table_sizes();
        const auto& config = core.config();
        if (sizes.pending_handshakes > config.max_pending_handshakes ||
            sizes.used_tokens > config.max_used_tokens || sizes.connections > config.max_clients) {
            __builtin_trap();
        }
    } else {
        connect_client();
        client().receive(datagram, *net_address::parse("127.0.0.1:7777"), fuzz_now);
    }
    return 0;
}
