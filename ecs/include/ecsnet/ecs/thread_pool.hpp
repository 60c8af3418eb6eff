#pragma once

// A fixed pool of worker threads for the scheduler (seed 001_9f36d8a5fef2b425.txt: the atomic-counter
// scheduler runs systems as tasks on a thread pool and the caller waits on counter blockers).
//
// The thread that drives the pool takes part: a pool of `threads` runs tasks on the driving thread (worker
// 0, while it is inside run_until() or parallel_for()) and on threads-1 threads it owns (workers 1..). So a
// one-thread pool starts no thread at all and runs everything on the caller, with the same code path.
//
// Hot path, lock-free: tasks go through a bounded MPMC queue (mpmc_queue.hpp); parallel_for publishes a job
// in the calling worker's slot and every idle worker claims chunks of it with one fetch_add each. Idle
// workers spin a little, then sleep on an event count (an epoch counter slept on with std::atomic::wait), so
// a pool that has nothing to do costs no CPU, and waking is one futex call, made only when someone sleeps.
//
// Tasks must not throw (the scheduler catches what systems throw); parallel_for bodies may throw: the first
// exception (lowest chunk index among those that threw) is rethrown by parallel_for once every started chunk
// has finished, and chunks not started yet are skipped.
//
// Shutdown: the destructor stops and joins every thread (no detached threads). It must not run while a task
// is queued or running. One thread drives a pool at a time.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "config.hpp"
#include "counter_blocker.hpp"
#include "mpmc_queue.hpp"

namespace ecsnet {

class thread_pool {
public:
    using task_function = void (*)(void* context, std::uint32_t argument, std::size_t worker) noexcept;

    /// A unit of work: function(context, argument, worker index of the thread running it).
    struct task {
        task_function function;
        void* context;
        std::uint32_t argument;
    };

    /// `threads` >= 1 threads run tasks, the driving thread included; `queue_capacity` bounds queued tasks.
    explicit thread_pool(std::size_t threads, std::size_t queue_capacity = 256)
        : queue_{queue_capacity}
        , slots_{std::make_unique<job_slot[]>(std::max<std::size_t>(threads, 1))}
        , thread_count_{std::max<std::size_t>(threads, 1)} {
        for (std::size_t index = 0; index < thread_count_; ++index) {
            slots_[index].failures = std::make_unique<failure[]>(thread_count_);
        }
        workers_.reserve(thread_count_ - 1);
        try {
            for (std::size_t index = 1; index < thread_count_; ++index) {
                workers_.emplace_back([this, index] { worker_main(index); });
            }
        } catch (...) {
            stop();
            throw;
        }
    }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;
    ~thread_pool() { stop(); }

    /// Threads that run tasks, the driving thread included.
    [[nodiscard]] std::size_t thread_count() const noexcept { return thread_count_; }
    [[nodiscard]] std::size_t queue_capacity() const noexcept { return queue_.capacity(); }

    /// The worker index of the calling thread: 1.. for the pool's threads, 0 for any other thread (the
    /// driving thread is worker 0).
    [[nodiscard]] static std::size_t current_worker() noexcept { return current_worker_index(); }

    /// Queues a task and wakes one idle thread; false (nothing queued) if the queue is full.
    bool submit(task work) noexcept {
        if (!queue_.try_push(work)) {
            return false;
        }
        signal(false);
        return true;
    }

    /// Queues a task without waking anyone; call wake() after a batch.
    bool submit_quietly(task work) noexcept { return queue_.try_push(work); }

    /// Wakes up to `count` idle threads (one system call at most if they sleep; none if nobody sleeps).
    void wake(std::size_t count) noexcept {
        if (count != 0) {
            signal(count > 1);
        }
    }

    /// Wakes every idle thread so that it re-checks for work (and the driving thread its condition).
    void wake_all() noexcept { signal(true); }

    /// Runs one queued task, or helps a parallel_for job, on behalf of `worker`. False if there was nothing.
    bool run_one(std::size_t worker) noexcept {
        task work{};
        if (queue_.try_pop(work)) {
            work.function(work.context, work.argument, worker);
            return true;
        }
        return help_jobs(worker);
    }

    /// Runs tasks on the calling thread, as worker 0, until done() is true; sleeps when there is nothing to
    /// run. Whoever makes done() true must call wake_all() afterwards.
    template<typename Done>
    void run_until(Done&& done) {
        const worker_scope scope{0};
        while (!done()) {
            if (run_one(0)) {
                continue;
            }
            idle([&] { return done() || has_work(); });
        }
    }

    /// Calls body(index) for index in [0, count), split across the pool; returns when every call returned.
    /// Callable from the driving thread, from tasks and from bodies (a nested call runs inline when the
    /// calling worker already has a job out). Runs inline when the pool has one thread.
    template<typename Body>
    void parallel_for(std::size_t count, Body&& body) {
        if (count == 0) {
            return;
        }
        const auto owner = current_worker_index();
        // One thread, one chunk, or a parallel_for nested in one of this worker's own chunks (its slot is
        // taken): run inline.
        if (thread_count_ == 1 || count == 1 || owner >= thread_count_ ||
            slots_[owner].active.load(std::memory_order_relaxed)) {
            for (std::size_t index = 0; index < count; ++index) {
                body(index);
            }
            return;
        }
        auto& slot = slots_[owner];

        using body_type = std::remove_reference_t<Body>;
        slot.count.store(static_cast<std::uint32_t>(count), std::memory_order_relaxed);
        slot.next.store(0, std::memory_order_relaxed);
        slot.finished.store(0, std::memory_order_relaxed);
        slot.failed.store(false, std::memory_order_relaxed);
        slot.run = [](void* job_body, std::size_t index) { (*static_cast<body_type*>(job_body))(index); };
        slot.body = const_cast<void*>(static_cast<const void*>(std::addressof(body)));
        slot.active.store(true, std::memory_order_seq_cst);
        signal(true);

        work_on(slot, owner);
        // The rest is in the hands of helpers that are running it, so this wait is short.
        for (int spin = 0;; ++spin) {
            const auto finished = slot.finished.load(std::memory_order_acquire);
            if (finished == count) {
                break;
            }
            if (spin < 256) {
                detail::spin_pause();
            } else {
                slot.finished.wait(finished, std::memory_order_acquire);
            }
        }
        slot.active.store(false, std::memory_order_seq_cst);
        while (slot.helpers.load(std::memory_order_seq_cst) != 0) {
            std::this_thread::yield();
        }
        if (slot.failed.load(std::memory_order_relaxed)) {
            rethrow_first_failure(slot);
        }
    }

private:
    struct failure {
        std::size_t index = ~std::size_t{};
        std::exception_ptr error;
    };

    // One parallel_for job, published by the worker that runs parallel_for, in its own slot.
    struct alignas(64) job_slot {
        std::atomic<bool> active{false};
        std::atomic<std::uint32_t> helpers{0};
        std::atomic<std::uint32_t> count{0};
        std::atomic<bool> failed{false};
        void (*run)(void* body, std::size_t index) = nullptr;
        void* body = nullptr;
        std::unique_ptr<failure[]> failures; // one per worker: each thread writes only its own
        alignas(64) std::atomic<std::uint32_t> next{0};
        alignas(64) std::atomic<std::uint32_t> finished{0};
    };

    struct worker_scope {
        explicit worker_scope(std::size_t index) noexcept
            : previous{std::exchange(current_worker_index(), index)} {}
        worker_scope(const worker_scope&) = delete;
        worker_scope& operator=(const worker_scope&) = delete;
        ~worker_scope() { current_worker_index() = previous; }
        std::size_t previous;
    };

    static std::size_t& current_worker_index() noexcept {
        static thread_local std::size_t index = 0;
        return index;
    }

    // Claims and runs chunks of the job in `slot` until none is left; returns whether it ran any.
    static bool work_on(job_slot& slot, std::size_t worker) noexcept {
        const auto count = slot.count.load(std::memory_order_relaxed);
        bool ran = false;
        for (auto index = slot.next.fetch_add(1, std::memory_order_relaxed); index < count;
             index = slot.next.fetch_add(1, std::memory_order_relaxed)) {
            if (!slot.failed.load(std::memory_order_relaxed)) { // once a chunk threw, skip the rest
                try {
                    slot.run(slot.body, index);
                } catch (...) {
                    auto& mine = slot.failures[worker];
                    if (index < mine.index) {
                        mine = failure{index, std::current_exception()};
                    }
                    slot.failed.store(true, std::memory_order_relaxed);
                }
            }
            ran = true;
            if (slot.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
                slot.finished.notify_all();
            }
        }
        return ran;
    }

    // Rethrows the failure of the lowest chunk index and forgets them all.
    void rethrow_first_failure(job_slot& slot) {
        failure first;
        for (std::size_t worker = 0; worker < thread_count_; ++worker) {
            auto& f = slot.failures[worker];
            if (f.error && f.index < first.index) {
                first = f;
            }
            f = failure{};
        }
        std::rethrow_exception(first.error);
    }

    bool help_jobs(std::size_t worker) noexcept {
        for (std::size_t step = 1; step < thread_count_; ++step) {
            auto& slot = slots_[(worker + step) % thread_count_];
            if (!slot.active.load(std::memory_order_relaxed)) {
                continue;
            }
            // Registering as a helper before looking at the job keeps its owner from retiring it meanwhile.
            slot.helpers.fetch_add(1, std::memory_order_seq_cst);
            bool ran = false;
            if (slot.active.load(std::memory_order_seq_cst)) {
                ran = work_on(slot, worker);
            }
            slot.helpers.fetch_sub(1, std::memory_order_seq_cst);
            if (ran) {
                return true;
            }
        }
        return false;
    }

    [[nodiscard]] bool has_work() const noexcept {
        if (!queue_.maybe_empty()) {
            return true;
        }
        for (std::size_t index = 0; index < thread_count_; ++index) {
            const auto& slot = slots_[index];
            if (slot.active.load(std::memory_order_acquire) &&
                slot.next.load(std::memory_order_relaxed) < slot.count.load(std::memory_order_relaxed)) {
                return true;
            }
        }
        return false;
    }

    // Event count. A waker has made some condition true (queued a task, finished a phase...), then bumps
    // the epoch and looks for sleepers; a sleeper reads the epoch, announces itself, re-checks its
    // condition, and sleeps only while the epoch has not moved. Both sides touch `sleepers_` with an
    // acq_rel read-modify-write, so one of them comes second in its modification order: if the waker,
    // it sees the sleeper and wakes it (the sleeper's futex wait then either sees the new epoch or gets
    // the wake-up); if the sleeper, it synchronises with the waker and its re-check sees the condition.
    // (Read-modify-writes rather than fences: ThreadSanitizer models the former, not the latter.)
    void signal(bool everyone) noexcept {
        epoch_.fetch_add(1, std::memory_order_acq_rel);
        if (sleepers_.fetch_add(0, std::memory_order_acq_rel) != 0) {
            if (everyone) {
                epoch_.notify_all();
            } else {
                epoch_.notify_one();
            }
        }
    }

    template<typename Ready>
    void idle(Ready&& ready) {
        for (int spin = 0; spin < 512; ++spin) {
            if (ready()) {
                return;
            }
            detail::spin_pause();
        }
        for (int yield = 0; yield < 8; ++yield) {
            if (ready()) {
                return;
            }
            std::this_thread::yield();
        }
        const auto epoch = epoch_.load(std::memory_order_acquire);
        sleepers_.fetch_add(1, std::memory_order_acq_rel);
        if (!ready()) {
            epoch_.wait(epoch, std::memory_order_acquire);
        }
        sleepers_.fetch_sub(1, std::memory_order_release);
    }

    void worker_main(std::size_t index) {
        const worker_scope scope{index};
        for (;;) {
            if (run_one(index)) {
                continue;
            }
            if (stopping_.load(std::memory_order_acquire)) {
                return;
            }
            idle([this] { return stopping_.load(std::memory_order_relaxed) || has_work(); });
        }
    }

    void stop() noexcept {
        stopping_.store(true, std::memory_order_release);
        signal(true);
        for (auto& worker : workers_) {
            if (worker.joinable()) {
                worker.join();
            }
        }
        workers_.clear();
    }

    mpmc_queue<task> queue_;
    std::unique_ptr<job_slot[]> slots_;
    std::size_t thread_count_;
    std::vector<std::thread> workers_;
    alignas(64) std::atomic<std::uint32_t> epoch_{0};
    std::atomic<std::uint32_t> sleepers_{0};
    std::atomic<bool> stopping_{false};
};

} // namespace ecsnet
