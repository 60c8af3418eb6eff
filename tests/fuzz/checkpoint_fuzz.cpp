// libFuzzer target: the checkpoint reader (docs/operations.md, "Checkpoint file format") on arbitrary
// bytes. Random bytes never pass the checksum, so the input is read twice: as a whole file (the header's
// checks), and as a body sealed for the arena's schemas with a valid header and checksum (seal_checkpoint),
// which reaches every check behind the checksum. Nothing may crash, assert, throw or leak; whatever decodes
// must encode back to the same bytes (a checkpoint has one form), must apply to a fresh arena world, and
// that world must then tick and be captured as the server would.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/checkpoint.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

constexpr std::uint32_t tick_rate = 30;

arena_options empty_arena() {
    arena_options options;
    options.npcs = 0;
    options.tick_rate = tick_rate;
    options.workers = 1;
    return options;
}

// What the server restores into: its world, its saveable components and a history that has not captured.
struct fresh_server {
    fresh_server()
        : world{std::make_unique<arena_world>(empty_arena())}
        , history{world->replicated_schema(), world->registry(), proto::history_options{8, tick_rate}} {
        world->declare_saveable(saveable);
    }
    std::unique_ptr<arena_world> world;
    saveable_components saveable;
    proto::snapshot_history history;
};

void read(const std::vector<std::byte>& file, const fresh_server& schemas) {
    checkpoint_image image;
    if (decode_checkpoint(file, schemas.world->replicated_schema(), schemas.saveable, image)) {
        return; // refused: the refusal's words are the tests' business (checkpoint_test.cpp)
    }
    if (encode_checkpoint(image) != file) {
        std::abort(); // decoded, but another file encodes the same image
    }
    fresh_server restored;
    if (apply_checkpoint(image, *restored.world, restored.saveable, restored.history)) {
        return; // the world refused its own state (load_state), before anything changed
    }
    // The server's next ticks: the systems, then the capture of what clients will be sent.
    for (proto::tick_type tick = image.tick + 1; tick <= image.tick + 2; ++tick) {
        restored.world->update(1.0 / tick_rate);
        restored.history.capture(tick, std::uint64_t{tick} * 1000);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fresh_server schemas; // the hashes and schemas every file is read against
    const std::span<const std::byte> input{reinterpret_cast<const std::byte*>(data), size};

    read(std::vector<std::byte>(input.begin(), input.end()), schemas);
    const auto tick = size == 0 ? 0 : std::uint64_t{data[0]} * 97; // a few ticks, so that sealed files differ
    read(seal_checkpoint(schemas.world->replicated_schema().hash(), schemas.saveable.hash(), tick, input),
         schemas);
    return 0;
}
