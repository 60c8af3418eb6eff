#include "ecsnet/transport/batch_sender.hpp"

#include <algorithm>
#include <utility>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace ecsnet::transport {

batch_sender::batch_sender(int socket_fd, std::size_t max_batches)
    : socket_fd_{socket_fd}
    , max_batches_{std::max<std::size_t>(max_batches, 2)} {
    thread_ = std::thread{[this] { run(); }};
#if defined(__linux__)
    pthread_setname_np(thread_.native_handle(), "ecsnet-send"); // as top and perf show it
#endif
}

batch_sender::~batch_sender() {
    stop();
}

std::unique_ptr<outgoing_batch> batch_sender::take_empty() {
    {
        const std::lock_guard lock{mutex_};
        if (!free_.empty()) {
            auto batch = std::move(free_.back());
            free_.pop_back();
            return batch;
        }
        if (created_ >= max_batches_) {
            return nullptr;
        }
        ++created_;
    }
    return std::make_unique<outgoing_batch>(); // outside the lock: 80 KB to clear
}

void batch_sender::submit(std::unique_ptr<outgoing_batch> batch) {
    if (!batch) {
        return;
    }
    std::unique_lock lock{mutex_};
    if (batch->empty()) {
        free_.push_back(std::move(batch));
        return;
    }
    if (stopping_) {
        lock.unlock();
        lost_.fetch_add(batch->flush(socket_fd_), std::memory_order_relaxed);
        lock.lock();
        free_.push_back(std::move(batch));
        return;
    }
    queued_.push_back(std::move(batch));
    lock.unlock();
    wake_.notify_one(); // no system call unless the thread waits
}

void batch_sender::stop() {
    {
        const std::lock_guard lock{mutex_};
        if (stopping_) {
            return;
        }
        stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void batch_sender::run() {
    std::unique_lock lock{mutex_};
    for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !queued_.empty(); });
        if (queued_.empty()) {
            return; // stopping, and everything sent
        }
        auto batch = std::move(queued_.front());
        queued_.pop_front();
        lock.unlock();
        const auto count = batch->size();
        lost_.fetch_add(batch->flush(socket_fd_), std::memory_order_relaxed);
        datagrams_sent_.fetch_add(count, std::memory_order_relaxed);
        lock.lock();
        free_.push_back(std::move(batch));
    }
}

} // namespace ecsnet::transport
