// libFuzzer target: applying a ViewSnapshot (interest-managed views, docs/protocol.md section 12) to a client
// view mirror that has applied ticks 1 to 3 of a small arena scene, acking each, as a server's client_view
// wrote them. The first byte of the input chooses how the rest is used:
//   even: the rest is an Envelope's bytes, applied as received from the network;
//   odd:  the rest is XORed into the valid tick-4 view snapshot from an offset the second byte chooses, so
//         that mutations reach the view decoder (lists, rows, checksum) instead of stopping at the parse.
// A refused snapshot must leave the mirror untouched (its newest tick, its size, and verify()); an
// accepted one (rare) rebuilds the world so that every input starts from the same mirror.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/client_view.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/row_history.hpp"
#include "ecsnet/proto/view_encoder.hpp"
#include "ecsnet/proto/view_mirror.hpp"

namespace {

using namespace ecsnet;

struct view_world {
    registry server;
    proto::snapshot_history history{arena::replicated_schema(), server};
    proto::row_history rows{arena::replicated_schema().layout(), 8};
    proto::view_encoder encoder{rows};
    proto::client_view view{encoder};
    std::unique_ptr<proto::view_mirror> client;
    std::string tick4; // the valid envelope of tick 4 (never applied here)

    view_world() {
        arena::scene_options options;
        options.entities = 40;
        options.seed = 11;
        arena::scene scene{server, options};
        scene.populate();
        client = std::make_unique<proto::view_mirror>(arena::replicated_schema());
        v1::Envelope envelope;
        for (proto::tick_type tick = 1; tick <= 4; ++tick) {
            scene.step();
            history.capture(tick, std::uint64_t{tick} * 33'333);
            rows.update(history);
            encoder.begin_tick();
            std::vector<proto::net_entity> relevant;
            std::vector<float> weights;
            for (const auto index : rows.alive()) {
                relevant.push_back({index, rows.generation(index)});
                weights.push_back(1.0F + static_cast<float>(index % 3));
            }
            // A budget that leaves some entities behind, so that views hold entities at older ticks.
            static_cast<void>(
                view.write(relevant, weights, tick == 1 ? std::int64_t{1} << 30 : 1500, 0, envelope));
            auto bytes = proto::encode_envelope(envelope);
            if (tick == 4) {
                tick4 = std::move(bytes);
                break;
            }
            if (!client->apply_envelope(bytes)) {
                std::abort(); // the setup itself must work
            }
            view.on_ack(tick, false);
        }
    }
};

std::unique_ptr<view_world> world;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) {
        return 0;
    }
    if (!world) {
        world = std::make_unique<view_world>();
    }
    auto& client = *world->client;
    const auto tick = client.newest_tick();
    const auto entities = client.size();
    std::string bytes;
    if (data[0] % 2 == 0) {
        bytes.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
    } else {
        bytes = world->tick4;
        const std::size_t offset = bytes.empty() ? 0 : data[1] % bytes.size();
        for (std::size_t i = 2; i < size && offset + i - 2 < bytes.size(); ++i) {
            bytes[offset + i - 2] = static_cast<char>(bytes[offset + i - 2] ^ static_cast<char>(data[i]));
        }
    }
    if (client.apply_envelope(bytes)) {
        if (!client.verify()) {
            std::abort(); // accepted, yet the registry is not the view it claims
        }
        world.reset();
        return 0;
    }
    if (client.newest_tick() != tick || client.size() != entities || !client.verify()) {
        std::abort(); // a refused snapshot changed the mirror
    }
    return 0;
}
