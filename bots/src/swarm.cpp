#include "ecsnet/bots/swarm.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include "ecsnet/bots/bot.hpp"
#include "ecsnet/bots/event_log.hpp"

namespace ecsnet::bots {

namespace {

using steady = std::chrono::steady_clock;

double seconds(steady::duration d) {
    return std::chrono::duration<double>(d).count();
}

steady::duration from_seconds(double s) {
    return std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(std::max(0.0, s)));
}

struct cpu_times {
    double user{};
    double system{};
    double peak_rss_mb{};
};

cpu_times process_cpu() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto to_seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return {to_seconds(usage.ru_utime), to_seconds(usage.ru_stime),
            static_cast<double>(usage.ru_maxrss) / 1024.0};
}

// The bots' io_contexts, one per thread, each run by its own thread. A bot lives on one of them, so its
// handlers never move between threads: each context has a single runner (concurrency hint 1: completions
// go through the running thread's private queue instead of the shared one and its lock), and no strand
// hands work from one thread to the other. One io_context run by every thread cost a full bot about 10% more
// CPU per snapshot (bench/RESULTS.md, fourteenth pass). A handler that throws (none should) is logged, and
// the thread runs on.
class io_threads {
public:
    io_threads(std::size_t count, event_log& log)
        : log_{&log} {
        contexts_.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            contexts_.push_back(std::make_unique<asio::io_context>(1));
            work_.push_back(asio::make_work_guard(*contexts_.back()));
        }
    }
    io_threads(const io_threads&) = delete;
    io_threads& operator=(const io_threads&) = delete;
    ~io_threads() { finish(std::chrono::milliseconds{0}); }

    /// The io_context of the k-th bot: they take turns.
    [[nodiscard]] asio::io_context& context_for(std::size_t k) noexcept {
        return *contexts_[k % contexts_.size()];
    }

    /// Starts a thread per io_context (once the bots exist).
    void start() {
        for (auto& context : contexts_) {
            threads_.emplace_back([this, io = context.get()] {
                while (true) {
                    try {
                        io->run();
                        break;
                    } catch (const std::exception& error) {
                        log_->log("internal error", error.what());
                    }
                }
                ++finished_;
            });
        }
    }

    /// Lets the io_contexts run out of work for up to `grace`, then stops them and joins the threads.
    void finish(std::chrono::milliseconds grace) {
        work_.clear();
        const auto deadline = steady::now() + grace;
        while (finished_.load() < threads_.size() && steady::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds{5});
        }
        for (auto& context : contexts_) {
            context->stop();
        }
        for (auto& thread : threads_) {
            if (thread.joinable()) {
                thread.join();
            }
        }
        threads_.clear();
    }

private:
    std::vector<std::unique_ptr<asio::io_context>> contexts_;
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    event_log* log_;
    std::vector<std::thread> threads_;
    std::atomic<std::size_t> finished_{0};
};

// Progress: what changed since the previous sample, kept in the report's series and printed as a line.
class progress_printer {
public:
    progress_printer(std::ostream& out, std::size_t bots, steady::time_point start)
        : out_{&out}
        , previous_applied_(bots, 0)
        , start_{start}
        , previous_at_{start} {}

    progress_sample sample(const std::vector<std::unique_ptr<bot>>& bots, steady::time_point now,
                           bool print) {
        const auto interval = seconds(now - previous_at_);
        std::size_t connected = 0;
        std::size_t thin_connected = 0;
        std::size_t thin_bots = 0;
        std::size_t connecting = 0;
        std::size_t failed = 0;
        std::size_t dropped = 0;
        std::uint64_t bytes_in = 0;
        std::uint64_t bytes_out = 0;
        std::uint64_t desyncs = 0;
        std::uint64_t applied = 0;
        std::vector<double> tick_rates;
        latency_histogram merged;
        for (const auto& b : bots) {
            const auto r = b->read(now, &merged);
            auto& before = previous_applied_[b->index()];
            thin_bots += r.thin ? 1 : 0;
            switch (r.phase) {
            case bot_phase::connected:
                ++(r.thin ? thin_connected : connected);
                tick_rates.push_back(per_second(static_cast<double>(r.applied - std::min(before, r.applied)),
                                                std::min(interval, r.connected_seconds)));
                break;
            case bot_phase::connecting:
                ++connecting;
                break;
            case bot_phase::failed:
                ++failed;
                break;
            case bot_phase::dropped:
                ++dropped;
                break;
            default:
                break;
            }
            applied += r.applied - std::min(before, r.applied);
            before = r.applied;
            bytes_in += r.bytes_in;
            bytes_out += r.bytes_out;
            desyncs += r.desyncs;
        }
        const auto recent = latency_histogram::difference(merged, previous_latency_);
        const auto rates = summarize(tick_rates);
        const auto in_rate =
            per_second(static_cast<double>(bytes_in - std::min(bytes_in, previous_in_)), interval);
        const auto out_rate =
            per_second(static_cast<double>(bytes_out - std::min(bytes_out, previous_out_)), interval);
        progress_sample sample;
        sample.at_seconds = seconds(now - start_);
        sample.connected = connected;
        sample.thin_connected = thin_connected;
        sample.snapshots_per_second = per_second(static_cast<double>(applied), interval);
        sample.bytes_in_per_second = in_rate;
        sample.bytes_out_per_second = out_rate;
        sample.has_latency = !recent.empty();
        sample.latency_p99_ms = static_cast<double>(recent.percentile(99.0)) / 1000.0;
        sample.desyncs = desyncs;
        previous_latency_ = std::move(merged);
        previous_in_ = bytes_in;
        previous_out_ = bytes_out;
        previous_at_ = now;
        if (print) {
            print_line(sample, rates, bots.size() - thin_bots, thin_bots, connecting, failed, dropped);
        }
        return sample;
    }

    [[nodiscard]] steady::time_point last_sample_at() const noexcept { return previous_at_; }

private:
    void print_line(const progress_sample& sample, const distribution& rates, std::size_t full_bots,
                    std::size_t thin_bots, std::size_t connecting, std::size_t failed, std::size_t dropped) {
        char thin[64] = "";
        if (thin_bots > 0) {
            std::snprintf(thin, sizeof thin, " (thin %zu/%zu)", sample.thin_connected, thin_bots);
        }
        char line[600];
        std::snprintf(
            line, sizeof line,
            "%6.1fs  connected %zu/%zu%s  connecting %zu  failed %zu  disconnected %zu  |  ticks/s per bot "
            "median %.1f min %.1f  |  latency p99 %.2f ms  |  in %s  out %s  |  desyncs %llu\n",
            sample.at_seconds, sample.connected, full_bots, thin, connecting, failed, dropped, rates.median,
            rates.min, sample.latency_p99_ms, format_rate(sample.bytes_in_per_second).c_str(),
            format_rate(sample.bytes_out_per_second).c_str(),
            static_cast<unsigned long long>(sample.desyncs));
        *out_ << line << std::flush;
    }

    std::ostream* out_;
    std::vector<std::uint64_t> previous_applied_;
    latency_histogram previous_latency_;
    std::uint64_t previous_in_{};
    std::uint64_t previous_out_{};
    steady::time_point start_;
    steady::time_point previous_at_;
};

} // namespace

swarm_report run_swarm(const swarm_options& options, std::ostream& progress, std::ostream& log,
                       const std::atomic<bool>* stop) {
    swarm_report report;
    report.options = options;
    report.options.threads = std::max<std::size_t>(options.threads, 1);
    const auto& o = report.options;
    const auto cpu_before = process_cpu();

    event_log events{log, o.max_logged_events};
    swarm_counters counters;
    io_threads threads{o.threads, events};
    // The full bots first, then the thin ones: the connects of both kinds interleave over the ramp.
    const auto total = o.clients + o.thin;
    std::vector<std::unique_ptr<bot>> bots;
    bots.reserve(total);
    for (std::size_t i = 0; i < o.clients; ++i) {
        bots.push_back(
            std::make_unique<bot>(threads.context_for(bots.size()), i, false, o, counters, events));
    }
    for (std::size_t i = 0; i < o.thin; ++i) {
        bots.push_back(std::make_unique<bot>(threads.context_for(bots.size()), i, true, o, counters, events));
    }
    // Bot k connects k-th: spread the thin ones between the full ones (a thin bot every clients/thin).
    std::vector<bot*> launch_order;
    launch_order.reserve(total);
    for (std::size_t full = 0, thin = 0; full + thin < total;) {
        const bool thin_next = thin < o.thin && (full == o.clients || thin * o.clients <= full * o.thin);
        launch_order.push_back(bots[thin_next ? o.clients + thin++ : full++].get());
    }
    threads.start();

    const auto start = steady::now();
    const auto ramp_end = start + from_seconds(o.ramp_seconds);
    const auto end = ramp_end + from_seconds(o.duration_seconds);
    const auto connect_time = [&](std::size_t i) {
        return total <= 1 ? start
                          : start + from_seconds(o.ramp_seconds * static_cast<double>(i) /
                                                 static_cast<double>(total));
    };
    const auto interval = std::max(o.progress_interval, std::chrono::milliseconds{10});
    progress_printer printer{progress, total, start};
    auto next_progress = start + interval;
    std::size_t launched = 0;
    std::uint64_t last_applied = 0;
    auto stall_since = start;
    auto now = start;

    report.ended_by = run_end::duration;
    while (true) {
        now = steady::now();
        while (launched < total && connect_time(launched) <= now) {
            launch_order[launched++]->connect();
        }
        if (stop != nullptr && stop->load()) {
            report.ended_by = run_end::interrupted;
            char text[128];
            std::snprintf(text, sizeof text, "stopped after %.1f s of the %.1f s planned",
                          seconds(now - start), seconds(end - start));
            report.end_detail = text;
            break;
        }
        if (now >= end) {
            break;
        }
        if (launched == total && counters.ended.load() == total) {
            report.ended_by = run_end::all_bots_ended;
            report.end_detail = "every bot failed to connect or was disconnected before the end";
            break;
        }
        // Stall: bots are connected, yet none has applied a snapshot for stall_timeout.
        const auto applied = counters.snapshots_applied.load();
        if (counters.connected.load() == 0 || applied != last_applied) {
            last_applied = applied;
            stall_since = now;
        } else if (now - stall_since >= o.stall_timeout) {
            report.ended_by = run_end::server_stalled;
            char text[160];
            std::snprintf(text, sizeof text,
                          "no snapshot applied by any of the %zu connected bots for %.1f s",
                          counters.connected.load(), seconds(now - stall_since));
            report.end_detail = text;
            break;
        }
        if (now >= next_progress) {
            report.progress.add(printer.sample(bots, now, !o.quiet));
            next_progress += interval;
            if (next_progress <= now) {
                next_progress = now + interval;
            }
        }
        auto wake = std::min({next_progress, end, now + std::chrono::milliseconds{20}});
        if (launched < total) {
            wake = std::min(wake, connect_time(launched));
        }
        std::this_thread::sleep_until(wake);
    }

    // The last interval, however short (but not a sliver), so the progress ends where the run did.
    if (now - printer.last_sample_at() >= std::chrono::milliseconds{100}) {
        report.progress.add(printer.sample(bots, now, false));
    }

    // The measurement: every bot as it stands now, before closing changes anything.
    std::vector<bot_reading> readings;
    readings.reserve(bots.size());
    latency_histogram latency;
    latency_histogram thin_latency;
    std::uint64_t negative = 0;
    std::uint64_t thin_negative = 0;
    latency_histogram own_latency; // each bot's, for its line of the per-bot table
    report.bots.reserve(bots.size());
    for (const auto& b : bots) {
        own_latency.reset();
        readings.push_back(b->read(now, &own_latency));
        (b->thin() ? thin_latency : latency).merge(own_latency);
        (b->thin() ? thin_negative : negative) += readings.back().negative_latencies;
        report.bots.push_back(summarize_bot(b->name(), readings.back(), own_latency));
    }
    report.elapsed_seconds = seconds(now - start);
    report.measured_seconds = now > ramp_end ? seconds(now - ramp_end) : 0.0;

    // Closing: Disconnect(CLIENT_QUIT) from every bot, then a bounded wait for them to leave.
    for (auto& b : bots) {
        b->close();
    }
    const auto close_deadline = steady::now() + o.close_timeout;
    while (steady::now() < close_deadline &&
           !std::all_of(bots.begin(), bots.end(), [](const auto& b) { return b->settled(); })) {
        std::this_thread::sleep_for(std::chrono::milliseconds{5});
    }
    bots.clear(); // no callback runs afterwards
    threads.finish(o.close_timeout);
    events.flush_suppressed();

    const auto cpu_after = process_cpu();
    report.cpu_user_seconds = cpu_after.user - cpu_before.user;
    report.cpu_system_seconds = cpu_after.system - cpu_before.system;
    report.peak_rss_mb = cpu_after.peak_rss_mb;
    report.latency = summarize_latency(latency, negative);
    report.thin.latency = summarize_latency(thin_latency, thin_negative);
    report.latency_bins = coarse_bins(latency);
    report.thin.latency_bins = coarse_bins(thin_latency);
    add_readings(report, readings);
    judge(report);
    return report;
}

} // namespace ecsnet::bots
