// libFuzzer target: unreliable reassembly with fragments in any order and any shape. The input is a list
// of fragment headers (u16 id, varint total, varint fragment size, varint index, u8 time step); each is
// checked as a reader would (read_chunk on the chunk it describes) and as link::receive would (consistent
// with the message in progress), then added, with time advancing so that messages expire. A fragment's bytes
// are a function of (id, total, position), so every delivered message can be checked byte by byte. Memory and
// messages in progress must stay within the limits, and a message must never come out wrong.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ecsnet/transport/byte_io.hpp"
#include "ecsnet/transport/chunk.hpp"
#include "ecsnet/transport/reassembly_buffer.hpp"

namespace {

using namespace ecsnet::transport;

std::byte content(sequence_t id, std::uint32_t total, std::uint32_t position) {
    return static_cast<std::byte>((id * 131U + total * 7U + position * 13U + (position >> 8)) & 0xFFU);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace std::chrono_literals;
    constexpr chunk_limits limits{1175, 64 * 1024, 256, 256};
    const reassembly_limits memory{100 * 1024, 4, 200ms};
    reassembly_buffer buffer{memory};
    byte_reader in{std::span<const std::byte>{reinterpret_cast<const std::byte*>(data), size}};
    auto now = clock::time_point{std::chrono::hours{1}};
    std::vector<std::byte> chunk_bytes(1400);
    while (!in.empty()) {
        std::uint16_t id = 0;
        std::uint32_t total = 0;
        std::uint32_t fragment_size = 0;
        std::uint32_t index = 0;
        std::uint8_t step = 0;
        if (!in.get_u16(id) || in.get_varint(total) != varint_status::ok ||
            in.get_varint(fragment_size) != varint_status::ok || in.get_varint(index) != varint_status::ok ||
            !in.get_u8(step)) {
            break;
        }
        now += std::chrono::milliseconds{step};
        buffer.expire(now);
        // The chunk this describes, written and read back as link::receive would.
        if (total == 0 || fragment_size == 0 || fragment_size > limits.max_body_bytes ||
            total > limits.max_message_bytes || fragment_count(total, fragment_size) > limits.max_fragments ||
            index >= fragment_count(total, fragment_size)) {
            continue; // a reader refuses these (chunk_test covers that); nothing to add
        }
        const auto length = fragment_length(total, fragment_size, index);
        std::vector<std::byte> payload(length);
        for (std::uint32_t i = 0; i < length; ++i) {
            payload[i] = content(id, total, index * fragment_size + i);
        }
        if (chunk_bytes.size() < length + 32) {
            chunk_bytes.resize(length + 32);
        }
        byte_writer out{chunk_bytes};
        write_fragment(out, chunk_type::unreliable_fragment, id, total, fragment_size, index, payload);
        byte_reader chunk_in{out.written()};
        chunk c;
        if (read_chunk(chunk_in, limits, c) != receive_error::none) {
            std::abort(); // what a writer writes within the limits, a reader reads
        }
        if (!buffer.consistent(c.frag)) {
            continue; // link::receive refuses the body
        }
        if (const auto message = buffer.add(c.frag, now)) {
            if (message->size() != total) {
                std::abort();
            }
            for (std::uint32_t i = 0; i < total; ++i) {
                if ((*message)[i] != content(id, total, i)) {
                    std::abort();
                }
            }
        }
        if (buffer.held_bytes() > memory.max_bytes || buffer.in_progress() > memory.max_groups) {
            std::abort();
        }
    }
    return 0;
}
