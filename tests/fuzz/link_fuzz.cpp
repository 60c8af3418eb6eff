// libFuzzer target: link::receive on arbitrary bytes, one body or a sequence of bodies
// (transport_fuzz_setup.hpp for the format), into a link that has messages of its own in flight; after each
// body the link writes what is due. Nothing may crash, leak or allocate without bound, and whatever was
// received, every body the link writes must be well-formed for any peer: within max_body_bytes, its header
// and every chunk readable under the link's own limits.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "ecsnet/transport/chunk.hpp"
#include "ecsnet/transport/link.hpp"
#include "ecsnet/transport/packet_header.hpp"
#include "transport_fuzz_setup.hpp"

namespace {

using namespace ecsnet::transport;

void check_written(const link& l, std::span<const std::byte> body) {
    const auto& c = l.config();
    if (body.size() > c.max_body_bytes) {
        std::abort();
    }
    byte_reader in{body};
    packet_header header;
    if (read_header(in, header) != receive_error::none) {
        std::abort();
    }
    const chunk_limits limits{static_cast<std::uint32_t>(c.max_body_bytes),
                              static_cast<std::uint32_t>(c.max_message_bytes),
                              static_cast<std::uint32_t>(c.max_redundant_message_bytes),
                              static_cast<std::uint32_t>(c.max_fragments)};
    chunk ch;
    while (!in.empty()) {
        if (read_chunk(in, limits, ch) != receive_error::none) {
            std::abort();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::uint8_t mode = data[0];
    std::span<const std::byte> input{reinterpret_cast<const std::byte*>(data) + 1, size - 1};
    link l{fuzz::config_for(mode)};
    auto now = fuzz::start_time();
    fuzz::queue_script(l, now);
    const auto written = [&](std::span<const std::byte> body) { check_written(l, body); };
    l.write_packets(now, written);

    std::size_t delivered = 0;
    const auto deliver = [&](channel, std::span<const std::byte> message) {
        if (message.size() > l.config().max_message_bytes) {
            std::abort();
        }
        ++delivered;
    };
    const auto feed = [&](std::span<const std::byte> body) {
        now += fuzz::body_interval;
        const auto result = l.receive(body, now, deliver);
        if (!result.ok() && result.delivered != 0) {
            std::abort(); // a refused body delivers nothing
        }
        l.write_packets(now, written);
        static_cast<void>(l.wants_to_send(now));
        static_cast<void>(l.oldest_unacked_reliable_age(now));
    };
    if ((mode & fuzz::several_bodies) == 0) {
        feed(input);
    } else {
        while (input.size() >= 2) {
            const std::size_t length =
                static_cast<std::size_t>(input[0]) | (static_cast<std::size_t>(input[1]) << 8);
            input = input.subspan(2);
            const auto body = input.first(std::min(length, input.size()));
            input = input.subspan(body.size());
            feed(body);
        }
    }
    // Time passes: timers fire, reassembly expires.
    for (int i = 0; i < 3; ++i) {
        now += std::chrono::milliseconds{400};
        l.write_packets(now, written);
    }
    const auto& stats = l.stats();
    if (stats.packets_received + stats.packets_refused == 0 && size > 1 &&
        (mode & fuzz::several_bodies) == 0) {
        std::abort(); // a single body is either accepted or refused
    }
    return 0;
}
