// Writes the seed corpora of the transport fuzz targets:
//  - link_fuzz: conversations recorded from a peer talking to a link set up as the fuzz target sets it up
//    (transport_fuzz_setup.hpp), so that each seed replays as valid traffic (every fifth body of the peer is
//    lost on the way, leaving gaps, held messages and half-assembled fragments); as whole sequences and as
//    single bodies, for each config;
//  - reassembly_fuzz: fragments of a few messages, in order, shuffled, interleaved, duplicated.
//   link_fuzz_corpus_generator tests/fuzz/corpus

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ecsnet/transport/byte_io.hpp"
#include "ecsnet/transport/link.hpp"
#include "ecsnet/transport/packet_header.hpp"
#include "transport_fuzz_setup.hpp"

namespace {

using namespace ecsnet::transport;
using bytes = std::vector<std::byte>;

void write(const std::filesystem::path& path, const bytes& content) {
    std::ofstream out{path, std::ios::binary};
    out.write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
}

bytes filled(std::size_t n, std::uint8_t seed) {
    bytes out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<std::byte>((i * 37 + seed) & 0xFF);
    }
    return out;
}

// The bodies a peer sends to a link set up as link_fuzz sets it up, as that link receives them.
std::vector<bytes> conversation(std::uint8_t mode, int rounds) {
    const auto config = fuzz::config_for(mode);
    link target{config};
    link peer{config};
    auto now = fuzz::start_time();
    fuzz::queue_script(target, now);
    target.write_packets(
        now, [&](std::span<const std::byte> b) { static_cast<void>(peer.receive(b, now, nullptr)); });
    std::vector<bytes> received;
    std::size_t sent = 0;
    for (int round = 0; round < rounds; ++round) {
        const auto r = static_cast<std::uint8_t>(round);
        static_cast<void>(peer.send(channel::unreliable, filled(30 + r, r), now));
        if (round % 2 == 0) {
            static_cast<void>(peer.send(channel::redundant, filled(10, r), now));
        }
        if (round % 3 == 0) {
            static_cast<void>(peer.send(channel::reliable, filled(60 + r, r), now));
        }
        if (round == 2) {
            static_cast<void>(
                peer.send(channel::reliable, filled(config.max_body_bytes * 4, 0xAA), now)); // a block
        }
        if (round == 4) {
            static_cast<void>(peer.send(channel::unreliable, filled(config.max_body_bytes * 3, 0xBB), now));
        }
        std::vector<bytes> out;
        peer.write_packets(now, [&](std::span<const std::byte> b) { out.emplace_back(b.begin(), b.end()); });
        for (const auto& body : out) {
            if (sent++ % 5 == 4) {
                continue; // lost
            }
            received.push_back(body);
            now += fuzz::body_interval;
            static_cast<void>(target.receive(body, now, nullptr));
            target.write_packets(
                now, [&](std::span<const std::byte> b) { static_cast<void>(peer.receive(b, now, nullptr)); });
        }
    }
    return received;
}

bytes fragment_op(std::uint16_t id, std::uint32_t total, std::uint32_t size, std::uint32_t index,
                  std::uint8_t step) {
    bytes out(16);
    byte_writer w{out};
    w.put_u16(id);
    w.put_varint(total);
    w.put_varint(size);
    w.put_varint(index);
    w.put_u8(step);
    out.resize(w.size());
    return out;
}

void append(bytes& to, const bytes& from) {
    to.insert(to.end(), from.begin(), from.end());
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: link_fuzz_corpus_generator <corpus directory>\n");
        return 2;
    }
    const std::filesystem::path root{argv[1]};
    const auto link_dir = root / "link_fuzz";
    const auto reassembly_dir = root / "reassembly_fuzz";
    std::filesystem::create_directories(link_dir);
    std::filesystem::create_directories(reassembly_dir);

    for (std::uint8_t mode = 0; mode < 3; ++mode) {
        const auto bodies = conversation(mode, 12);
        bytes sequence{static_cast<std::byte>(mode | fuzz::several_bodies)};
        for (const auto& body : bodies) {
            sequence.push_back(static_cast<std::byte>(body.size() & 0xFF));
            sequence.push_back(static_cast<std::byte>(body.size() >> 8));
            append(sequence, body);
        }
        write(link_dir / ("conversation-" + std::to_string(mode)), sequence);
        for (std::size_t i = 0; i < bodies.size() && i < 6; ++i) {
            // Alone, a body may ack packets the target has not sent yet: its header loses the acks.
            byte_reader in{bodies[i]};
            packet_header header;
            static_cast<void>(read_header(in, header));
            header.has_ack = false;
            bytes single(1 + max_header_bytes);
            single[0] = static_cast<std::byte>(mode);
            byte_writer w{std::span{single}.subspan(1)};
            write_header(w, header);
            single.resize(1 + w.size());
            append(single,
                   bytes(bodies[i].begin() + static_cast<std::ptrdiff_t>(in.position()), bodies[i].end()));
            write(link_dir / ("body-" + std::to_string(mode) + "-" + std::to_string(i)), single);
        }
    }

    // reassembly_fuzz: one message in order; shuffled with a duplicate; two interleaved, one expiring.
    bytes in_order;
    for (std::uint32_t i = 0; i < 3; ++i) {
        append(in_order, fragment_op(1, 2500, 1000, i, 1));
    }
    write(reassembly_dir / "in-order", in_order);
    bytes shuffled;
    for (std::uint32_t i : {4U, 0U, 2U, 2U, 5U, 1U, 3U}) {
        append(shuffled, fragment_op(9, 3000, 500, i, 2));
    }
    write(reassembly_dir / "shuffled", shuffled);
    bytes interleaved;
    for (std::uint32_t i = 0; i < 4; ++i) {
        append(interleaved, fragment_op(20, 4000, 1000, i, 10));
        if (i < 3) {
            append(interleaved, fragment_op(21, 5000, 1100, i, 90)); // misses its last two: expires
        }
    }
    append(interleaved, fragment_op(22, 60000, 1000, 0, 0)); // big: evicts what is older
    write(reassembly_dir / "interleaved", interleaved);
    return 0;
}
