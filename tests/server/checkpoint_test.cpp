// Checkpoints in-process: the file format round-trips a world that then evolves exactly as the original;
// every bad file is refused whole with its own words (corrupt, truncated, other schema, other version, bad
// magic, missing); the writer skips rather than queues; and a server whose save directory is unwritable
// keeps ticking, counts each failure and logs it once per period.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <ecsnet/arena/components.hpp>

#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/checkpoint.hpp"
#include "ecsnet/server/checkpoint_writer.hpp"
#include "ecsnet/server/options.hpp"
#include "server_support.hpp"

namespace checkpoint_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::server;
using namespace std::chrono_literals;

constexpr std::uint32_t tick_rate = 30;

// A world and its history, ticked as the server ticks them.
struct ticked_world {
    explicit ticked_world(std::size_t npcs = 300)
        : world{std::make_unique<arena_world>(arena_options{npcs, 42, tick_rate, 2})}
        , history{world->replicated_schema(), world->registry(), proto::history_options{32, tick_rate}} {
        world->declare_saveable(saveable);
    }
    void run(proto::tick_type until) {
        while (tick < until) {
            world->update(1.0 / tick_rate);
            ++tick;
            history.capture(tick, std::uint64_t{tick} * 1000);
        }
    }
    std::unique_ptr<arena_world> world;
    proto::snapshot_history history;
    saveable_components saveable;
    proto::tick_type tick{0};
};

std::vector<std::byte> saved_bytes(ticked_world& w) {
    return encode_checkpoint(capture_checkpoint(*w.world, w.saveable, w.history, w.tick));
}

std::optional<checkpoint_refusal> decode(const std::vector<std::byte>& bytes) {
    ticked_world fresh{10};
    checkpoint_image image;
    return decode_checkpoint(bytes, fresh.world->replicated_schema(), fresh.saveable, image);
}

std::string temp_path(const std::string& name) {
    return testing::TempDir() + "ecsnet_checkpoint_" + name;
}

TEST(Checkpoint, ARestoredWorldEqualsTheSavedOneAndEvolvesIdentically) {
    ticked_world original;
    original.run(40);
    const auto bytes = saved_bytes(original);

    ticked_world restored{50}; // its own 50 NPCs are replaced
    checkpoint_image image;
    ASSERT_FALSE(decode_checkpoint(bytes, restored.world->replicated_schema(), restored.saveable, image));
    EXPECT_EQ(image.tick, 40U);
    ASSERT_FALSE(apply_checkpoint(image, *restored.world, restored.saveable, restored.history));
    restored.tick = image.tick;
    EXPECT_EQ(restored.world->registry().entity_pool(), original.world->registry().entity_pool());

    // Captured as the same tick, the restored world has the saved one's checksum: the same indices,
    // generations and quantized values.
    restored.history.capture(40, 40 * 1000);
    EXPECT_EQ(restored.history.newest().checksum, original.history.newest().checksum);
    ASSERT_EQ(restored.history.newest_generations().size(), original.history.newest_generations().size());
    EXPECT_TRUE(std::equal(restored.history.newest_generations().begin(),
                           restored.history.newest_generations().end(),
                           original.history.newest_generations().begin()));

    // Server-only state and exact floats came back: 60 more ticks (spawns, despawns, turns) stay identical.
    original.run(100);
    restored.run(100);
    EXPECT_EQ(restored.history.newest().checksum, original.history.newest().checksum);
    EXPECT_EQ(restored.world->registry().entity_pool(), original.world->registry().entity_pool());
    original.world->registry().view<arena::Transform>().each([&](entity e, const arena::Transform& t) {
        const auto& mine = restored.world->registry().get<arena::Transform>(e);
        EXPECT_EQ(mine.x, t.x);
        EXPECT_EQ(mine.y, t.y);
    });
}

// A periodic checkpoint copies the replicated components from the history's columns (taken that same
// tick) into the buffers of the previous image; a drain's quantizes the registry into fresh ones. Both
// must hold the same rows, whatever the order, and restore to the same world.
TEST(Checkpoint, ACopyFromTheHistoryIntoRecycledBuffersEqualsOneQuantizedFromTheRegistry) {
    ticked_world w{400};
    w.run(25);
    auto recycled = capture_checkpoint(*w.world, w.saveable, w.history, w.tick);
    w.run(60); // spawns and despawns since: the recycled buffers hold other rows
    const auto quantized = capture_checkpoint(*w.world, w.saveable, w.history, w.tick);
    const auto copied =
        capture_checkpoint(*w.world, w.saveable, w.history, w.tick, std::move(recycled), true);

    EXPECT_EQ(copied.tick, quantized.tick);
    EXPECT_EQ(copied.pool, quantized.pool);
    EXPECT_EQ(copied.pool, w.world->registry().entity_pool()); // the recycled slots, all rewritten
    EXPECT_EQ(copied.generations, quantized.generations);
    EXPECT_EQ(copied.world_state, quantized.world_state);
    ASSERT_EQ(copied.replicated.size(), quantized.replicated.size());
    for (std::size_t c = 0; c < copied.replicated.size(); ++c) {
        const auto fields = w.world->replicated_schema().component_at(c).fields.size();
        const auto by_index = [fields](const checkpoint_image::replicated_rows& rows) {
            std::map<std::uint32_t, std::vector<std::uint32_t>> out;
            for (std::size_t r = 0; r < rows.indices.size(); ++r) {
                out[rows.indices[r]].assign(rows.values.begin() + static_cast<std::ptrdiff_t>(r * fields),
                                            rows.values.begin() +
                                                static_cast<std::ptrdiff_t>((r + 1) * fields));
            }
            return out;
        };
        if (w.world->replicated_schema().component_at(c).name != "LastHit") { // nobody fired
            EXPECT_FALSE(copied.replicated[c].indices.empty());
        }
        EXPECT_EQ(copied.replicated[c].indices.size(), quantized.replicated[c].indices.size()) << c;
        EXPECT_EQ(by_index(copied.replicated[c]), by_index(quantized.replicated[c])) << c;
    }
    ASSERT_EQ(copied.saved.size(), quantized.saved.size());
    for (std::size_t s = 0; s < copied.saved.size(); ++s) {
        EXPECT_EQ(copied.saved[s].indices, quantized.saved[s].indices);
        EXPECT_EQ(copied.saved[s].bytes, quantized.saved[s].bytes);
    }

    // And the copy restores to the world it was taken from.
    ticked_world restored{10};
    checkpoint_image image;
    ASSERT_FALSE(decode_checkpoint(encode_checkpoint(copied), restored.world->replicated_schema(),
                                   restored.saveable, image));
    ASSERT_FALSE(apply_checkpoint(image, *restored.world, restored.saveable, restored.history));
    restored.history.capture(w.tick, std::uint64_t{w.tick} * 1000);
    EXPECT_EQ(restored.history.newest().checksum, w.history.newest().checksum);
}

TEST(Checkpoint, AFlippedByteIsAChecksumMismatch) {
    ticked_world w;
    w.run(5);
    auto bytes = saved_bytes(w);
    bytes[bytes.size() / 2] ^= std::byte{0x01};
    const auto refused = decode(bytes);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->error, checkpoint_error::checksum_mismatch);
    EXPECT_NE(refused->message.find("checksum mismatch"), std::string::npos) << refused->message;
}

// What another writer's bug could put behind a valid checksum: each is refused whole, as malformed, with
// words that say where. (checkpoint_fuzz tries every other body.)
TEST(Checkpoint, ContentWrongBehindAValidChecksumIsMalformedAndSaysWhere) {
    ticked_world w{40};
    w.run(5);
    const auto bytes = saved_bytes(w);
    const auto schema_hash = w.world->replicated_schema().hash();
    ASSERT_EQ(seal_checkpoint(schema_hash, w.saveable.hash(), w.tick, checkpoint_body(bytes)), bytes)
        << "a file is its body sealed";
    checkpoint_image saved;
    ASSERT_FALSE(decode(bytes));
    ASSERT_FALSE(decode_checkpoint(bytes, w.world->replicated_schema(), w.saveable, saved));
    ASSERT_GE(saved.replicated.size(), 1U);
    ASSERT_GE(saved.replicated[0].indices.size(), 2U);

    const auto refused_as = [](const std::vector<std::byte>& file, const std::string& words) {
        const auto refused = decode(file);
        ASSERT_TRUE(refused) << words;
        EXPECT_EQ(refused->error, checkpoint_error::malformed) << refused->message;
        EXPECT_NE(refused->message.find(words), std::string::npos) << refused->message;
    };
    // Images changed, then encoded: the checksum is right, the content is not.
    const auto changed = [&saved](auto&& change) {
        auto image = saved;
        change(image);
        return encode_checkpoint(image);
    };
    refused_as(changed([](checkpoint_image& i) { i.replicated[0].values[0] = 0xFFFF'FFFF; }),
               "value out of its");
    refused_as(changed([](checkpoint_image& i) { i.replicated[0].indices[1] = i.replicated[0].indices[0]; }),
               "appears twice");
    refused_as(changed([](checkpoint_image& i) {
                   i.replicated[0].indices[0] = static_cast<std::uint32_t>(i.pool.slots.size());
               }),
               "which is not a live entity");
    refused_as(changed([](checkpoint_image& i) { i.replicated[0].values.pop_back(); }), "rows");
    refused_as(changed([](checkpoint_image& i) { i.replicated.pop_back(); }), "replicated components");
    refused_as(changed([](checkpoint_image& i) {
                   i.generations.push_back({0, 0xFFFF'FFFF});
               }),
               "does not match the entity slots");
    refused_as(changed([](checkpoint_image& i) { i.pool.free_head = 7; }), "entity pool image");
    ASSERT_FALSE(saved.saved.empty());
    refused_as(changed([](checkpoint_image& i) { i.saved[0].bytes.push_back(std::byte{1}); }), "rows");

    // Bodies changed, then sealed: a byte too many, a count larger than what follows, a tick beyond 32 bits.
    const auto body = checkpoint_body(bytes);
    std::vector<std::byte> longer(body.begin(), body.end());
    longer.push_back(std::byte{0});
    refused_as(seal_checkpoint(schema_hash, w.saveable.hash(), w.tick, longer), "world state");
    std::vector<std::byte> slots(body.begin(), body.end());
    slots[3] = std::byte{0x7F}; // the slot count's high byte
    refused_as(seal_checkpoint(schema_hash, w.saveable.hash(), w.tick, slots), "entity slots");
    refused_as(seal_checkpoint(schema_hash, w.saveable.hash(), std::uint64_t{1} << 32, body), "tick");
}

TEST(Checkpoint, ATruncatedFileSaysTruncated) {
    ticked_world w;
    w.run(5);
    const auto bytes = saved_bytes(w);
    for (const auto keep : {bytes.size() - 1, bytes.size() / 2, std::size_t{20}, std::size_t{0}}) {
        const auto refused =
            decode(std::vector<std::byte>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
        ASSERT_TRUE(refused) << keep;
        EXPECT_EQ(refused->error, checkpoint_error::truncated) << keep;
        EXPECT_NE(refused->message.find("truncated"), std::string::npos) << refused->message;
    }
}

// Another game: the same component names with another layout.
struct other_transform {
    float x{};
};

TEST(Checkpoint, AnotherSchemasCheckpointIsRefusedAndNothingIsTouched) {
    static const proto::schema other{proto::component<other_transform>(
        "Transform", proto::field<&other_transform::x>("x", proto::fixed_point<16>{-1024.0, 1.0 / 32}))};
    ticked_world w;
    w.run(5);
    const auto bytes = saved_bytes(w);
    checkpoint_image image;
    const auto refused = decode_checkpoint(bytes, other, w.saveable, image);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->error, checkpoint_error::other_schema);
    EXPECT_NE(refused->message.find("other schema"), std::string::npos) << refused->message;
    EXPECT_TRUE(image.pool.slots.empty()) << "nothing decoded into the caller's image";

    // Other saveable declarations are another schema too.
    saveable_components fewer;
    fewer.add<arena::Mover>("Mover");
    const auto also = decode_checkpoint(bytes, w.world->replicated_schema(), fewer, image);
    ASSERT_TRUE(also);
    EXPECT_EQ(also->error, checkpoint_error::other_schema);
}

TEST(Checkpoint, BadMagicAndOtherVersionsSaySo) {
    ticked_world w;
    w.run(2);
    auto bytes = saved_bytes(w);
    auto not_ours = bytes;
    not_ours[0] = std::byte{'X'};
    const auto magic = decode(not_ours);
    ASSERT_TRUE(magic);
    EXPECT_EQ(magic->error, checkpoint_error::bad_magic);
    EXPECT_NE(magic->message.find("bad magic"), std::string::npos);

    bytes[8] = std::byte{99}; // the format version
    const auto version = decode(bytes);
    ASSERT_TRUE(version);
    EXPECT_EQ(version->error, checkpoint_error::other_version);
    EXPECT_NE(version->message.find("version 99"), std::string::npos) << version->message;
}

TEST(Checkpoint, AMissingFileSaysMissing) {
    std::vector<std::byte> bytes;
    const auto refused = read_checkpoint_file(temp_path("does_not_exist"), bytes);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->error, checkpoint_error::missing);
    EXPECT_NE(refused->message.find("No such file"), std::string::npos) << refused->message;
}

TEST(Checkpoint, AServerRefusesABadRestoreBeforeOpeningItsPort) {
    const auto path = temp_path("corrupt_restore");
    {
        ticked_world w;
        w.run(3);
        auto bytes = saved_bytes(w);
        bytes[bytes.size() - 5] ^= std::byte{0x80}; // inside the checksum itself
        std::ofstream out{path, std::ios::binary};
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    auto options = testing_support::test_options(50);
    options.restore_path = path;
    game_server server{options, std::make_unique<arena_world>(arena_options{50, 42, tick_rate, 1})};
    try {
        server.open();
        FAIL() << "a corrupt checkpoint was accepted";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string{error.what()}.find("checksum mismatch"), std::string::npos) << error.what();
    }
    EXPECT_EQ(server.port(), 0) << "the game port never opened";
}

TEST(CheckpointOptions, FlagsAndTheirDefaults) {
    const char* defaults[] = {"ecsnet-server"};
    const auto plain = parse_options(1, defaults);
    ASSERT_TRUE(plain.options);
    EXPECT_TRUE(plain.options->save_path.empty());
    EXPECT_EQ(plain.options->save_every.count(), 0);
    EXPECT_EQ(plain.options->drain_time, 10'000ms);
    EXPECT_EQ(plain.options->retry_after_seconds, 5U);

    const char* given[] = {"ecsnet-server",
                           "--save",
                           "/var/lib/w.ckpt",
                           "--save-every",
                           "2.5",
                           "--restore",
                           "/var/lib/old.ckpt",
                           "--drain-seconds",
                           "3",
                           "--retry-after-seconds",
                           "20"};
    const auto parsed = parse_options(static_cast<int>(std::size(given)), given);
    ASSERT_TRUE(parsed.options);
    EXPECT_EQ(parsed.options->save_path, "/var/lib/w.ckpt");
    EXPECT_EQ(parsed.options->save_every, 2500ms);
    EXPECT_EQ(parsed.options->restore_path, "/var/lib/old.ckpt");
    EXPECT_EQ(parsed.options->drain_time, 3000ms);
    EXPECT_EQ(parsed.options->retry_after_seconds, 20U);
}

TEST(CheckpointDrain, TheDrainHookRunsOnceAfterTheFinalCheckpoint) {
    const auto path = temp_path("drain_hook");
    std::filesystem::remove(path);
    auto options = testing_support::test_options(50);
    options.save_path = path;
    game_server server{options, std::make_unique<arena_world>(arena_options{50, 42, tick_rate, 1})};
    server.open();
    int calls = 0;
    bool saved_before_hook = false;
    server.on_drain([&] {
        ++calls;
        saved_before_hook = std::filesystem::exists(path);
    });
    std::thread running{[&server] { server.run(false); }};
    std::this_thread::sleep_for(100ms);
    server.stop();
    server.stop(); // a second stop (a second SIGTERM) drains nothing more
    running.join();
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(saved_before_hook) << "the hook runs once the final checkpoint is on disk";
    EXPECT_EQ(server.exit_code(), 0);
    EXPECT_EQ(server.metrics().checkpoints_written.value(), 1U);
    EXPECT_GT(server.metrics().checkpoint_last_size.value(), 1000.0);
}

TEST(CheckpointWriter, AWriteInFlightMakesTheNextOneSkipNotQueue) {
    const auto path = temp_path("writer");
    ticked_world w;
    w.run(2);
    checkpoint_writer writer{path, 300ms};
    EXPECT_TRUE(writer.submit(capture_checkpoint(*w.world, w.saveable, w.history, w.tick)));
    EXPECT_TRUE(writer.busy());
    EXPECT_FALSE(writer.submit(capture_checkpoint(*w.world, w.saveable, w.history, w.tick)));
    ASSERT_TRUE(writer.wait_idle(std::chrono::steady_clock::now() + 5s));
    const auto outcome = writer.take_outcome();
    ASSERT_TRUE(outcome);
    EXPECT_TRUE(outcome->ok) << outcome->error;
    EXPECT_EQ(outcome->bytes, std::filesystem::file_size(path));
    EXPECT_FALSE(writer.take_outcome()) << "an outcome is handed out once";
    std::vector<std::byte> bytes;
    ASSERT_FALSE(read_checkpoint_file(path, bytes));
    EXPECT_FALSE(decode(bytes));
}

TEST(CheckpointWriter, AnUnwritableDirectoryIsCountedLoggedOncePerPeriodAndTheServerKeepsTicking) {
    std::ostringstream log;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
    auto previous = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("checkpoint_test", sink));
    spdlog::set_level(spdlog::level::warn);

    auto options = testing_support::test_options(50);
    options.save_path = "/dev/null/world.ckpt"; // its directory is a device: nothing can be created there
    options.save_every = 50ms;
    options.log_period = 10'000ms;
    {
        testing_support::running_server server{options};
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (server.get().metrics().checkpoints_failed.value() < 4 &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(10ms);
        }
        EXPECT_GE(server.get().metrics().checkpoints_failed.value(), 4U);
        EXPECT_EQ(server.get().metrics().checkpoints_written.value(), 0U);
        EXPECT_TRUE(server.get().healthy());
        server.stop(); // the final checkpoint fails as well: a non-zero exit code
        EXPECT_EQ(server.get().exit_code(), 1);
    }
    spdlog::set_default_logger(previous);
    const auto text = log.str();
    EXPECT_NE(text.find("cannot write in '/dev/null'"), std::string::npos) << "said at start\n" << text;
    std::size_t periodic = 0;
    for (auto at = text.find("failed, the previous one stays"); at != std::string::npos;
         at = text.find("failed, the previous one stays", at + 1)) {
        ++periodic;
    }
    EXPECT_EQ(periodic, 1U) << "one line per log period\n" << text;
    EXPECT_NE(text.find("final checkpoint to '/dev/null/world.ckpt' failed"), std::string::npos) << text;
}

} // namespace

namespace {

// The child's verdicts in DiskThatFills (exit codes).
enum disk_full_verdict : int {
    kept = 0,               // on a full tmpfs
    kept_at_size_limit = 5, // at RLIMIT_FSIZE, where no tmpfs could be mounted
    first_write_failed = 1,
    overflowing_write_succeeded = 2,
    previous_changed = 3,
    temporary_left = 4,
};

// A tiny tmpfs in a private mount namespace, seen by this process alone and gone with it; false where that
// cannot be had (no CAP_SYS_ADMIN, or a chroot whose / is no mount point: then / cannot be made private,
// and a mount would show on the host).
bool mount_small_disk(const std::filesystem::path& dir) {
    return ::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
           ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") == 0;
}

int fill_a_small_disk(const std::filesystem::path& dir) {
    const bool on_tmpfs = mount_small_disk(dir);
    if (!on_tmpfs) {
        // The same failure as the disk's, one step earlier: writes past 64 kB fail (EFBIG instead of ENOSPC).
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{64 * 1024, 64 * 1024};
        ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    const auto path = (dir / "world.ckpt").string();
    const std::vector<std::byte> small(16 * 1024, std::byte{0x5A});
    if (!write_checkpoint_file(path, small).ok) {
        return first_write_failed;
    }
    const std::vector<std::byte> big(256 * 1024, std::byte{0xA5});
    const auto overflow = write_checkpoint_file(path, big);
    if (overflow.ok) {
        return overflowing_write_succeeded;
    }
    std::vector<std::byte> read;
    if (read_checkpoint_file(path, read) || read != small) {
        return previous_changed;
    }
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator{dir}) {
        ++files;
    }
    if (files != 1) {
        return temporary_left;
    }
    return on_tmpfs ? kept : kept_at_size_limit;
}

} // namespace

TEST(CheckpointFile, ADiskThatFillsMidWriteKeepsThePreviousCheckpointAndLeavesNoTemporaryFile) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("ecsnet-disk-full-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::_exit(fill_a_small_disk(dir));
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(WIFEXITED(status));
    const int verdict = WEXITSTATUS(status);
    EXPECT_TRUE(verdict == kept || verdict == kept_at_size_limit)
        << "verdict " << verdict << " (disk_full_verdict)";
    if (verdict == kept_at_size_limit) {
        std::printf(
            "no private tmpfs here (not root, or a chroot): the file size limit stood in for the disk\n");
    }
}

} // namespace checkpoint_test
