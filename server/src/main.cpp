// ecsnet-server: the authoritative game server, running the embedded demo world (the arena).

#include <cstdio>
#include <exception>
#include <memory>

#include <spdlog/spdlog.h>

#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/game_server.hpp"
#include "ecsnet/server/heap_pages.hpp"
#include "ecsnet/server/logging.hpp"
#include "ecsnet/server/options.hpp"

int main(int argc, char** argv) {
    using namespace ecsnet::server;
    const auto parsed = parse_options(argc, argv);
    if (!parsed.options) {
        return parsed.exit_code;
    }
    const auto& options = *parsed.options;
    int exit_code = 0;
    try {
        configure_logging("ecsnet-server", options.log_level, options.log_format_value);
        spdlog::info("{}", describe(this_process_heap_pages()));
        arena_options arena;
        arena.npcs = options.npcs;
        arena.seed = options.seed;
        arena.companions = options.companions;
        arena.tick_rate = options.tick_rate;
        arena.workers = options.workers;
        game_server server{options, std::make_unique<arena_world>(arena)};
        server.open();
        server.run();
        exit_code = server.exit_code(); // 1 when the drain's final checkpoint failed
    } catch (const std::exception& error) {
        spdlog::critical("ecsnet-server: {}", error.what());
        spdlog::default_logger()->flush();
        return 1;
    }
    spdlog::default_logger()->flush();
    return exit_code;
}
