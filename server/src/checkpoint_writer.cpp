#include "ecsnet/server/checkpoint_writer.hpp"

#include <utility>

namespace ecsnet::server {

checkpoint_writer::checkpoint_writer(std::string path, std::chrono::milliseconds pause_midway)
    : shared_{std::make_shared<state>()} {
    shared_->path = std::move(path);
    shared_->pause_midway = pause_midway;
    thread_ = std::thread{[shared = shared_] { run(shared); }};
}

checkpoint_writer::~checkpoint_writer() {
    bool busy = false;
    {
        std::lock_guard lock{shared_->mutex};
        shared_->stopping = true;
        busy = shared_->busy;
    }
    shared_->wake.notify_all();
    if (busy) {
        thread_.detach(); // it owns what it uses (shared_) and ends after its write
    } else {
        thread_.join();
    }
}

bool checkpoint_writer::submit(checkpoint_image image) {
    {
        std::lock_guard lock{shared_->mutex};
        if (shared_->busy || shared_->stopping) {
            return false;
        }
        shared_->busy = true;
        shared_->job = std::move(image);
    }
    shared_->wake.notify_one();
    return true;
}

bool checkpoint_writer::busy() const {
    std::lock_guard lock{shared_->mutex};
    return shared_->busy;
}

std::optional<checkpoint_writer::outcome> checkpoint_writer::take_outcome() {
    std::lock_guard lock{shared_->mutex};
    return std::exchange(shared_->finished, std::nullopt);
}

checkpoint_image checkpoint_writer::take_spare() {
    std::lock_guard lock{shared_->mutex};
    return std::exchange(shared_->spare, checkpoint_image{});
}

bool checkpoint_writer::wait_idle(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock{shared_->mutex};
    return shared_->idle.wait_until(lock, deadline, [this] { return !shared_->busy; });
}

void checkpoint_writer::run(const std::shared_ptr<state>& shared) {
    for (;;) {
        std::optional<checkpoint_image> job;
        {
            std::unique_lock lock{shared->mutex};
            shared->wake.wait(lock, [&shared] { return shared->stopping || shared->job.has_value(); });
            if (!shared->job || shared->stopping) {
                return;
            }
            job = std::exchange(shared->job, std::nullopt);
        }
        const auto started = std::chrono::steady_clock::now();
        outcome done;
        done.tick = job->tick;
        try {
            const auto bytes = encode_checkpoint(*job);
            {
                // Kept for the next capture rather than freed: that one then writes into memory already
                // mapped, instead of faulting in fresh pages on the tick.
                std::lock_guard lock{shared->mutex};
                shared->spare = std::move(*job);
            }
            job.reset();
            done.bytes = bytes.size();
            const auto written = write_checkpoint_file(shared->path, bytes, shared->pause_midway);
            done.ok = written.ok;
            done.error = written.error;
        } catch (const std::exception& error) {
            done.ok = false;
            done.error = error.what(); // out of memory while encoding: the previous checkpoint stays
        }
        done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        {
            std::lock_guard lock{shared->mutex};
            shared->finished = std::move(done);
            shared->busy = false;
        }
        shared->idle.notify_all();
    }
}

} // namespace ecsnet::server
