// The security layer's costs (transport/, docs/protocol.md section 10), each against a floor measured in
// the same binary and run:
//   BM_Memcpy1200            floor: copying a 1,200-byte datagram
//   BM_Encrypt1200/<cipher>  seal_packet of a full payload (1,175-byte body -> 1,200-byte datagram):
//                            header, nonce from the sequence; cipher 0 ChaCha20-Poly1305 IETF, 1 AES-256-GCM
//                            (the connection's cipher when both ends have AES-NI; skipped elsewhere)
//   BM_Decrypt1200/<cipher>  read_datagram_header + open_packet of that datagram
//   BM_ReplayWindow          check + accept of the next sequence (part of every received packet)
//   BM_TokenIssue            issue_token (random keys and nonce, XChaCha20-Poly1305 seal of 1,008 bytes)
//   BM_TokenVerify           what a server does with a request's token: read_connection_request +
//                            open_private_token (decrypt and parse)
//   BM_RefuseJunk/<kind>     server_core::receive of a datagram it refuses, per datagram:
//                            0 random bytes (bad prefix), 1 a request-shaped junk datagram (size, prefix,
//                            version, protocol id and expiry right: refused by the token's MAC, the
//                            costliest junk), 2 a keep-alive from an unknown source, 3 a 1,200-byte
//                            payload-shaped datagram from a connected client's address with a bad MAC
// Goal (the brief): encrypt and decrypt of a 1,200-byte packet each under 1 microsecond.

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"
#include "ecsnet/transport/replay_window.hpp"
#include "ecsnet/transport/server_core.hpp"

namespace {

using namespace ecsnet::transport;

constexpr std::uint64_t protocol = 0xEC5E7;

std::vector<std::uint8_t> random_bytes(std::size_t size, std::uint64_t seed) {
    std::mt19937_64 random{seed};
    std::vector<std::uint8_t> out(size);
    for (auto& b : out) {
        b = static_cast<std::uint8_t>(random());
    }
    return out;
}

void BM_Memcpy1200(benchmark::State& state) {
    const auto source = random_bytes(max_datagram_bytes, 1);
    std::array<std::uint8_t, max_datagram_bytes> out{};
    for (auto _ : state) {
        benchmark::DoNotOptimize(source.data());
        std::memcpy(out.data(), source.data(), source.size());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * max_datagram_bytes));
}
BENCHMARK(BM_Memcpy1200);

// The cipher of a benchmark's argument, or nullopt (the benchmark skipped) when this CPU lacks it.
std::optional<packet_cipher> cipher_of(benchmark::State& state) {
    const auto cipher = static_cast<packet_cipher>(state.range(0));
    if ((available_ciphers() & cipher_bit(cipher)) == 0) {
        state.SkipWithError("this CPU does not run the cipher");
        return std::nullopt;
    }
    return cipher;
}

void BM_Encrypt1200(benchmark::State& state) {
    const auto cipher = cipher_of(state);
    if (!cipher) {
        return;
    }
    const auto k = generate_key();
    const auto body = random_bytes(max_payload_bytes, 2);
    std::array<std::uint8_t, max_datagram_bytes> out{};
    std::uint64_t sequence = std::uint64_t{1} << 56; // 8 sequence bytes: the full 1,200
    for (auto _ : state) {
        const auto size = seal_packet(packet_type::payload, sequence++, body, k, protocol, out, *cipher);
        benchmark::DoNotOptimize(size);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * max_datagram_bytes));
}
BENCHMARK(BM_Encrypt1200)->Arg(0)->Arg(1);

void BM_Decrypt1200(benchmark::State& state) {
    const auto cipher = cipher_of(state);
    if (!cipher) {
        return;
    }
    const auto k = generate_key();
    const auto body = random_bytes(max_payload_bytes, 3);
    std::array<std::uint8_t, max_datagram_bytes> datagram{};
    const auto size =
        seal_packet(packet_type::payload, std::uint64_t{1} << 56, body, k, protocol, datagram, *cipher);
    std::array<std::uint8_t, max_datagram_bytes> out{};
    for (auto _ : state) {
        const auto header = read_datagram_header(std::span{datagram}.first(size));
        const auto opened = open_packet(*header, std::span{datagram}.first(size), k, protocol, out, *cipher);
        benchmark::DoNotOptimize(opened);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * max_datagram_bytes));
}
BENCHMARK(BM_Decrypt1200)->Arg(0)->Arg(1);

void BM_ReplayWindow(benchmark::State& state) {
    replay_window window;
    std::uint64_t sequence = 0;
    for (auto _ : state) {
        if (window.check(sequence)) {
            window.accept(sequence);
        }
        sequence += 1 + (sequence & 1); // gaps now and then
        benchmark::DoNotOptimize(window);
    }
}
BENCHMARK(BM_ReplayWindow);

token_params params() {
    token_params p;
    p.protocol_id = protocol;
    p.client_id = 1234;
    p.server_addresses = {*net_address::parse("127.0.0.1:7777")};
    p.expire_seconds = 3600;
    return p;
}

void BM_TokenIssue(benchmark::State& state) {
    const auto k = generate_key();
    const auto p = params();
    for (auto _ : state) {
        auto token = issue_token(p, k);
        benchmark::DoNotOptimize(token);
    }
}
BENCHMARK(BM_TokenIssue);

void BM_TokenVerify(benchmark::State& state) {
    const auto k = generate_key();
    const auto request = write_connection_request(*issue_token(params(), k));
    for (auto _ : state) {
        const auto view = read_connection_request(request);
        auto opened = open_private_token(
            {view->protocol_id, view->expire_timestamp, view->nonce, view->encrypted_private}, k);
        benchmark::DoNotOptimize(opened);
    }
}
BENCHMARK(BM_TokenVerify);

struct null_handler : server_handler {
    void on_connected(const connection_info& info) override { connected = info.id; }
    void on_message(connection_id, channel, std::span<const std::byte>) override {}
    void on_disconnected(connection_id, const disconnect_info&) override {}
    connection_id connected{0};
};

void BM_RefuseJunk(benchmark::State& state) {
    const auto kind = state.range(0);
    null_handler handler;
    server_config config;
    config.protocol_id = protocol;
    config.private_key = generate_key();
    config.public_addresses = {*net_address::parse("127.0.0.1:7777")};
    config.handshake_packets_per_second_per_ip = 0; // measure the refusal itself, not the rate limiter
    const auto now = clock::now();
    std::vector<std::uint8_t> reply;
    server_core server{
        config, handler,
        [&](const net_address&, std::span<const std::uint8_t> d) { reply.assign(d.begin(), d.end()); }, now};
    const auto from = *net_address::parse("10.0.0.2:5000");
    std::vector<std::uint8_t> junk;
    switch (kind) {
    case 0:
        junk = random_bytes(max_datagram_bytes, 4);
        junk[0] = 0xF7; // type 7: refused on the prefix
        break;
    case 1: {
        const auto request = write_connection_request(*issue_token(params(), generate_key())); // another key
        junk.assign(request.begin(), request.end());
        break;
    }
    case 2:
        junk = random_bytes(18, 5);
        junk[0] = 0x14; // a keep-alive's prefix, from nobody we know
        break;
    default: {
        // Connect a client through the handshake by hand, then send it payloads with a bad MAC.
        const auto token = *issue_token(params(), config.private_key);
        const auto request = write_connection_request(token);
        server.receive(request, from, now);
        const auto header = read_datagram_header(reply);
        std::array<std::uint8_t, max_datagram_bytes> plain{};
        const auto size = open_packet(*header, reply, token.server_to_client_key, protocol, plain);
        const auto challenge = read_challenge(std::span{plain}.first(*size));
        std::array<std::uint8_t, max_datagram_bytes> response{};
        const auto response_size =
            seal_clear_packet(packet_type::response, handshake_sequence_bit | 1,
                              write_response({challenge->challenge_sequence, challenge->token}),
                              token.client_to_server_key, protocol, response);
        server.receive(std::span{response}.first(response_size), from, now);
        if (handler.connected == 0) {
            state.SkipWithError("the handshake did not complete");
            return;
        }
        junk = random_bytes(max_datagram_bytes, 6);
        junk[0] = 0x85; // payload, 8 sequence bytes
        junk[8] = 0;    // below the handshake range
        break;
    }
    }
    std::uint64_t sequence = 0;
    for (auto _ : state) {
        if (kind == 3) {
            std::memcpy(junk.data() + 1, &sequence, 7); // a fresh sequence each time: past the replay window
            ++sequence;
        }
        server.receive(junk, kind == 3 ? from : net_address::ipv4({10, 1, 0, 1}, 5000), now);
    }
    if (server.counters().dropped.total() < static_cast<std::uint64_t>(state.iterations())) {
        state.SkipWithError("not every datagram was refused");
    }
    state.SetLabel(kind == 0   ? "bad prefix"
                   : kind == 1 ? "request, bad token MAC"
                   : kind == 2 ? "unknown source"
                               : "payload, bad MAC");
}
BENCHMARK(BM_RefuseJunk)->DenseRange(0, 3);

} // namespace

BENCHMARK_MAIN();
