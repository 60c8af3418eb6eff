// Writes the seed corpus of checkpoint_fuzz: the bodies of real checkpoints of the arena (what the target
// seals and reads), and one whole file (what it reads as is). Worlds of 0, 3 and 24 NPCs after a few
// ticks, one with clients that joined (avatars, companions) and one with some of them gone (free slots).
//   checkpoint_fuzz_corpus_generator tests/fuzz/corpus

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/checkpoint.hpp"

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

constexpr std::uint32_t tick_rate = 30;

template<typename Bytes>
void write(const std::filesystem::path& path, const Bytes& content) {
    std::ofstream out{path, std::ios::binary};
    out.write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
}

struct scene {
    std::size_t npcs{};
    std::size_t clients{};
    std::size_t clients_leaving{};
    bool companions{};
};

std::vector<std::byte> checkpoint_of(const scene& s) {
    arena_options options;
    options.npcs = s.npcs;
    options.tick_rate = tick_rate;
    options.workers = 1;
    options.companions = s.companions;
    auto world = std::make_unique<arena_world>(options);
    saveable_components saveable;
    world->declare_saveable(saveable);
    proto::snapshot_history history{world->replicated_schema(), world->registry(),
                                    proto::history_options{8, tick_rate}};
    std::vector<entity> avatars;
    for (std::size_t c = 0; c < s.clients; ++c) {
        avatars.push_back(world->client_joined(static_cast<client_id>(c + 1), "seed"));
    }
    proto::tick_type tick = 0;
    for (; tick < 5; ++tick) {
        world->update(1.0 / tick_rate);
        history.capture(tick + 1, std::uint64_t{tick + 1} * 1000);
    }
    for (std::size_t c = 0; c < s.clients_leaving; ++c) {
        world->client_left(static_cast<client_id>(c + 1), avatars[c]);
    }
    for (; tick < 8; ++tick) {
        world->update(1.0 / tick_rate);
        history.capture(tick + 1, std::uint64_t{tick + 1} * 1000);
    }
    return encode_checkpoint(capture_checkpoint(*world, saveable, history, tick));
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: checkpoint_fuzz_corpus_generator <corpus directory>\n");
        return 2;
    }
    const auto dir = std::filesystem::path{argv[1]} / "checkpoint_fuzz";
    std::filesystem::create_directories(dir);
    const scene scenes[] = {
        {0, 0, 0, false}, {3, 0, 0, false}, {24, 0, 0, false}, {3, 2, 0, true}, {6, 4, 2, true}};
    for (const auto& s : scenes) {
        const auto file = checkpoint_of(s);
        const auto name = std::to_string(s.npcs) + "-npcs-" + std::to_string(s.clients) + "-clients-" +
                          std::to_string(s.clients_leaving) + "-left";
        write(dir / ("body-" + name), checkpoint_body(file));
        if (s.npcs == 3 && s.clients == 0) {
            write(dir / ("file-" + name), file);
        }
    }
    return 0;
}
