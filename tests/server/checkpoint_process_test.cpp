// Checkpoints and the drain, on the real ecsnet-server process: a SIGKILL while a checkpoint is being
// written leaves the previous checkpoint intact; SIGTERM (also in the middle of a write) tells clients
// SHUTDOWN with the retry hint, writes the final checkpoint and exits 0; a final checkpoint that cannot be
// written, or a checkpoint refused at start, exits non-zero with the reason.

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/checkpoint.hpp"
#include "server_process.hpp"
#include "server_support.hpp"

namespace checkpoint_process_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;
namespace fs = std::filesystem;

std::vector<std::string> server_args(std::vector<std::string> more) {
    std::vector<std::string> args{"--bind", "127.0.0.1", "--port",    "0", "--admin-port",  "0",
                                  "--npcs", "300",       "--workers", "1", "--insecure-dev"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

fs::path fresh_directory(const std::string& name) {
    const auto dir = fs::path{testing::TempDir()} / ("ecsnet_ckpt_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::vector<std::byte> file_bytes(const fs::path& path) {
    std::vector<std::byte> bytes;
    static_cast<void>(server::read_checkpoint_file(path.string(), bytes));
    return bytes;
}

// Whether `bytes` are a whole checkpoint the arena accepts.
std::optional<server::checkpoint_refusal> refusal_of(const std::vector<std::byte>& bytes,
                                                     server::checkpoint_image& image) {
    server::arena_world world{server::arena_options{1, 42, 30, 1}};
    server::saveable_components saveable;
    world.declare_saveable(saveable);
    return server::decode_checkpoint(bytes, world.replicated_schema(), saveable, image);
}

// The temporary file a write in flight is filling, once it holds some bytes.
std::optional<fs::path> write_in_flight(const fs::path& dir, std::chrono::milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    while (steady::now() < deadline) {
        for (const auto& entry : fs::directory_iterator{dir}) {
            if (entry.path().filename().string().find(".tmp-") != std::string::npos &&
                fs::file_size(entry.path()) > 0) {
                return entry.path();
            }
        }
        std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
}

TEST(CheckpointProcess, SigkillMidWriteLeavesThePreviousCheckpointIntact) {
    const auto dir = fresh_directory("sigkill");
    const auto file = dir / "world.ckpt";
    {
        server_process first{server_args({"--save", file.string()})};
        ASSERT_TRUE(first.wait_for("listening for clients", 10'000ms)) << first.output();
        first.signal(SIGTERM);
        ASSERT_EQ(first.wait_exit(5000ms), 0) << first.output();
    }
    const auto before = file_bytes(file);
    ASSERT_FALSE(before.empty());

    // The second server pauses 5 s halfway through each write: the kill lands inside one.
    server_process second{server_args({"--restore", file.string(), "--save", file.string(), "--save-every",
                                       "0.1", "--checkpoint-test-pause-ms", "5000"})};
    ASSERT_TRUE(second.wait_for("listening for clients", 10'000ms)) << second.output();
    const auto partial = write_in_flight(dir, 5000ms);
    ASSERT_TRUE(partial) << "no checkpoint write started\n" << second.output();
    second.signal(SIGKILL);
    ASSERT_TRUE(second.wait_exit(5000ms));

    EXPECT_EQ(file_bytes(file), before) << "the previous checkpoint changed";
    server::checkpoint_image image;
    EXPECT_FALSE(refusal_of(file_bytes(file), image));
    server::checkpoint_image half;
    const auto refused = refusal_of(file_bytes(*partial), half);
    ASSERT_TRUE(refused) << "the half-written temporary file must not pass for a checkpoint";
    EXPECT_EQ(refused->error, server::checkpoint_error::truncated) << refused->message;

    // The next start restores the intact checkpoint and clears what the killed write left.
    server_process third{server_args({"--restore", file.string(), "--save", file.string()})};
    ASSERT_TRUE(third.wait_for("listening for clients", 10'000ms)) << third.output();
    EXPECT_NE(third.output().find("restored"), std::string::npos) << third.output();
    EXPECT_NE(third.output().find("removed 1 temporary checkpoint file"), std::string::npos)
        << third.output();
    EXPECT_FALSE(fs::exists(*partial));
}

TEST(CheckpointProcess, SigtermTellsClientsWhenToRetryWritesTheFinalCheckpointAndExitsZero) {
    const auto dir = fresh_directory("drain");
    const auto file = dir / "world.ckpt";
    server_process server{
        server_args({"--save", file.string(), "--retry-after-seconds", "7", "--drain-seconds", "3"})};
    const auto port = server.wait_for("listening for clients on 127.0.0.1:", 10'000ms);
    ASSERT_TRUE(port) << server.output();
    raw_client client{static_cast<std::uint16_t>(std::stoi(*port))};
    client.send_hello(arena::replicated_schema(), "drained");
    const auto welcome = client.read();
    ASSERT_TRUE(welcome && welcome->has_server_welcome());

    const auto signalled = steady::now();
    server.signal(SIGTERM);
    const auto reason = client.read_disconnect(3000ms);
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->reason(), v1::SHUTDOWN);
    EXPECT_EQ(reason->retry_after_seconds(), 7U);
    const auto status = server.wait_exit(3000ms);
    ASSERT_TRUE(status) << "still running after --drain-seconds\n" << server.output();
    EXPECT_EQ(*status, 0) << server.output();
    EXPECT_LT(steady::now() - signalled, 3000ms);
    server.drain();
    EXPECT_NE(server.output().find("final checkpoint of tick"), std::string::npos) << server.output();

    server::checkpoint_image image;
    ASSERT_FALSE(refusal_of(file_bytes(file), image));
    EXPECT_GT(image.tick, 0U);
    EXPECT_GT(image.entities(), 250U);
}

TEST(CheckpointProcess, SigtermDuringAWriteWaitsForItThenWritesTheFinalOne) {
    const auto dir = fresh_directory("sigterm_mid_write");
    const auto file = dir / "world.ckpt";
    server_process server{server_args({"--save", file.string(), "--save-every", "0.1",
                                       "--checkpoint-test-pause-ms", "700", "--drain-seconds", "5"})};
    ASSERT_TRUE(server.wait_for("listening for clients", 10'000ms)) << server.output();
    ASSERT_TRUE(write_in_flight(dir, 5000ms)) << server.output();
    server.signal(SIGTERM);
    const auto status = server.wait_exit(5000ms);
    ASSERT_TRUE(status) << server.output();
    EXPECT_EQ(*status, 0) << server.output();
    server.drain();
    EXPECT_NE(server.output().find("final checkpoint of tick"), std::string::npos) << server.output();
    server::checkpoint_image image;
    EXPECT_FALSE(refusal_of(file_bytes(file), image));
}

TEST(CheckpointProcess, AFailedFinalCheckpointExitsNonZeroAndSaysWhy) {
    server_process server{server_args({"--save", "/dev/null/world.ckpt"})};
    ASSERT_TRUE(server.wait_for("listening for clients", 10'000ms)) << server.output();
    server.signal(SIGTERM);
    const auto status = server.wait_exit(5000ms);
    ASSERT_TRUE(status);
    EXPECT_EQ(*status, 1);
    server.drain();
    EXPECT_NE(server.output().find("final checkpoint to '/dev/null/world.ckpt' failed"), std::string::npos)
        << server.output();
}

TEST(CheckpointProcess, ARefusedRestoreExitsNonZeroBeforeListening) {
    const auto dir = fresh_directory("refused");
    const auto file = dir / "world.ckpt";
    {
        std::ofstream out{file, std::ios::binary};
        out << "ECSNCKPT"; // the magic, then nothing
    }
    server_process server{server_args({"--restore", file.string()})};
    const auto status = server.wait_exit(5000ms);
    ASSERT_TRUE(status);
    EXPECT_EQ(*status, 1);
    server.drain();
    EXPECT_NE(server.output().find("refused (truncated)"), std::string::npos) << server.output();
    EXPECT_EQ(server.output().find("listening for clients"), std::string::npos) << server.output();
}

} // namespace

} // namespace checkpoint_process_test
