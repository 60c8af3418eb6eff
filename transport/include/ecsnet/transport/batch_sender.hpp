#pragma once

// Datagrams handed to the kernel on a thread of their own. A server's tick ends by sending a snapshot to
// every client; with sendmmsg(2) on the tick's own thread the system calls were about a fifth of the
// server's time at 1,000 clients (on 127.0.0.1 they also deliver each datagram to its receiver's socket:
// bench/RESULTS.md, sixteenth pass). Here the owner fills outgoing batches (datagram_batch.hpp) and
// submits them; this thread sends them, in the order submitted, while the owner goes on with its next
// work (the datagrams that came in, the next tick).
//
// Bounded: at most max_batches batches exist, queued, being sent or being filled. When none is free the
// owner sends its batch itself (take_empty() returns nullptr), so a sender that falls behind costs what
// sending on the owner's thread cost, never memory; those datagrams may overtake queued ones, which UDP
// allows. Datagrams the socket did not take are counted for the owner to collect (take_lost()).
//
// Threads: one owner thread calls take_empty, submit, take_lost and stop. Linux only (the sender uses the
// socket's descriptor, not the Asio object): the owner must stop() it before it closes the socket.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "datagram_batch.hpp"

namespace ecsnet::transport {

class batch_sender {
public:
    static constexpr std::size_t default_max_batches = 64; // 4,096 datagrams, about 5 MB

    /// Starts the thread. Throws std::system_error when it cannot.
    explicit batch_sender(int socket_fd, std::size_t max_batches = default_max_batches);
    ~batch_sender();
    batch_sender(const batch_sender&) = delete;
    batch_sender& operator=(const batch_sender&) = delete;

    /// An empty batch to fill: a recycled one, or a new one while fewer than max_batches exist; nullptr
    /// when every one is queued or being sent.
    [[nodiscard]] std::unique_ptr<outgoing_batch> take_empty();
    /// Queues a batch to be sent after those queued before it (an empty one is simply recycled).
    void submit(std::unique_ptr<outgoing_batch> batch);
    /// Datagrams the socket did not take (its buffer full, an error) since the last call.
    [[nodiscard]] std::size_t take_lost() noexcept { return lost_.exchange(0, std::memory_order_relaxed); }
    /// Sends everything queued and ends the thread; later submits are sent on the caller's thread (while
    /// the descriptor is still open). Idempotent.
    void stop();

    /// Datagrams this thread handed to the socket (taken or not), for tests and metrics.
    [[nodiscard]] std::uint64_t datagrams_sent() const noexcept {
        return datagrams_sent_.load(std::memory_order_relaxed);
    }

private:
    void run();

    int socket_fd_;
    std::size_t max_batches_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::unique_ptr<outgoing_batch>> queued_;
    std::vector<std::unique_ptr<outgoing_batch>> free_;
    std::size_t created_{0};
    bool stopping_{false};
    std::atomic<std::size_t> lost_{0};
    std::atomic<std::uint64_t> datagrams_sent_{0};
    std::thread thread_;
};

} // namespace ecsnet::transport
