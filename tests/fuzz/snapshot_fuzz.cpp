// libFuzzer target: applying a snapshot to a client mirror (fuzz_world.hpp). The first byte of the input
// chooses how the rest is used:
//   even: the rest is an Envelope's bytes, applied as received from the network;
//   odd:  the rest is packed columns (docs/protocol.md), wrapped in a tick-4 snapshot whose header check
//         matches them, with baseline and extrapolation gaps taken from the first byte, so that mutations
//         reach the column decoder and the delta checks instead of stopping at the header check.
// A refused snapshot must leave the mirror untouched: its newest tick and checksum are compared before
// and after. An accepted one (rare) rebuilds the world so that every input starts from the same mirror.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_world.hpp"

namespace {

std::unique_ptr<ecsnet::fuzz::fuzz_world> world;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ecsnet;
    if (size == 0) {
        return 0;
    }
    if (!world) {
        world = std::make_unique<fuzz::fuzz_world>();
    }
    auto& client = *world->client;
    const auto tick = client.newest_tick();
    const auto checksum = client.newest_state()->checksum;
    const std::string_view rest{reinterpret_cast<const char*>(data) + 1, size - 1};
    proto::result<proto::applied_snapshot> r = proto::make_error(proto::errc::bad_header, "");
    if (data[0] % 2 == 0) {
        r = client.apply_envelope(rest);
    } else {
        const auto selector = data[0] >> 1;
        const bool full = selector % 8 == 7;
        const auto snapshot = fuzz::fuzz_world::wrap(std::string{rest}, selector % 4, (selector >> 2) % 3,
                                                     full, world->history.newest().checksum);
        r = client.apply(snapshot);
    }
    if (r) {
        world.reset(); // accepted: start the next input from the same mirror again
        return 0;
    }
    if (client.newest_tick() != tick || client.newest_state()->checksum != checksum) {
        std::abort(); // a refused snapshot changed the mirror
    }
    return 0;
}
