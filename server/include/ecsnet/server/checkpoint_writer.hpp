#pragma once

// The thread that encodes and writes checkpoints, so that the tick only copies the world
// (capture_checkpoint) and never waits for a disk. At most one write is in flight: submit() refuses a
// checkpoint while the previous one is still being written (the caller counts it as skipped), so a slow
// disk costs checkpoints, never memory or tick time. Outcomes are handed back to the tick thread
// (take_outcome), which logs and counts them.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "checkpoint.hpp"

namespace ecsnet::server {

class checkpoint_writer {
public:
    struct outcome {
        bool ok{false};
        std::string error;
        proto::tick_type tick{};
        double seconds{}; // encoding and writing
        std::size_t bytes{};
    };

    /// `pause_midway`: tests only (write_checkpoint_file).
    explicit checkpoint_writer(std::string path, std::chrono::milliseconds pause_midway = {});
    checkpoint_writer(const checkpoint_writer&) = delete;
    checkpoint_writer& operator=(const checkpoint_writer&) = delete;
    /// Stops the thread; a write still in flight is left to finish on its own (a drain that ran out of time
    /// must not wait for a slow disk: the process may exit first, and the previous checkpoint stays whole).
    ~checkpoint_writer();

    /// Hands a checkpoint to the thread; false (and nothing done) while the previous one is in flight.
    bool submit(checkpoint_image image);
    [[nodiscard]] bool busy() const;
    /// The outcome of the newest write that finished since the last call, if any.
    [[nodiscard]] std::optional<outcome> take_outcome();
    /// The image of the newest write once encoded, for the next capture_checkpoint to reuse its memory
    /// (empty if none).
    [[nodiscard]] checkpoint_image take_spare();
    /// Waits until no write is in flight, or `deadline`; true when idle.
    bool wait_idle(std::chrono::steady_clock::time_point deadline);

    [[nodiscard]] const std::string& path() const noexcept { return shared_->path; }

private:
    // Shared with the thread, which may outlive the writer (destructor).
    struct state {
        std::string path;
        std::chrono::milliseconds pause_midway{};
        std::mutex mutex;
        std::condition_variable wake;
        std::condition_variable idle;
        std::optional<checkpoint_image> job;
        bool busy{false};
        bool stopping{false};
        std::optional<outcome> finished;
        checkpoint_image spare; // the newest job's image, encoded: its buffers for the next capture
    };
    static void run(const std::shared_ptr<state>& shared);

    std::shared_ptr<state> shared_;
    std::thread thread_;
};

} // namespace ecsnet::server
