#include "ecsnet/bots/swarm_report.hpp"

#include <algorithm>
#include <cstdio>

#include "ecsnet/bots/json_writer.hpp"

namespace ecsnet::bots {

namespace {

double ms(std::uint64_t us) {
    return static_cast<double>(us) / 1000.0;
}

std::string format(const char* pattern, auto... args) {
    char text[512];
    std::snprintf(text, sizeof text, pattern, args...);
    return text;
}

// "connect_failed 3, server_full 2"
std::string tally(const std::map<std::string, std::size_t>& counts) {
    std::string out;
    for (const auto& [reason, count] : counts) {
        out += (out.empty() ? "" : ", ") + reason + " " + std::to_string(count);
    }
    return out;
}

std::string example(const bot_group& report, const std::map<std::string, std::size_t>& counts) {
    for (const auto& [reason, count] : counts) {
        const auto it = report.messages.find(reason);
        if (it != report.messages.end() && !it->second.empty()) {
            return "; first: \"" + it->second + "\"";
        }
    }
    return {};
}

void write_distribution(json_writer& json, std::string_view name, const distribution& d) {
    json.key(name).begin_object();
    json.member("bots", d.count);
    json.member("min", d.min);
    json.member("median", d.median);
    json.member("mean", d.mean);
    json.member("max", d.max);
    json.end_object();
}

void write_counts(json_writer& json, std::string_view name,
                  const std::map<std::string, std::size_t>& counts) {
    json.key(name).begin_object();
    for (const auto& [reason, count] : counts) {
        json.member(reason, count);
    }
    json.end_object();
}

void write_latency(json_writer& json, const latency_summary& latency) {
    json.key("latency_ms").begin_object();
    json.member("p50", latency.p50_ms);
    json.member("p95", latency.p95_ms);
    json.member("p99", latency.p99_ms);
    json.member("p999", latency.p999_ms);
    json.member("max", latency.max_ms);
    json.member("mean", latency.mean_ms);
    json.member("samples", latency.samples);
    json.member("negative_samples", latency.negative_samples);
    json.end_object();
}

void write_transport(json_writer& json, const bot_group& group) {
    json.key("transport").begin_object();
    json.member("packets_sent", group.packets_sent);
    json.member("packets_lost", group.packets_lost);
    json.member("resends", group.resends);
    json.member("inputs_overflowed", group.inputs_overflowed);
    json.end_object();
}

// The thin bots, apart: what they have (no desyncs: they check nothing).
void write_thin(json_writer& json, const bot_group& thin) {
    json.key("thin").begin_object();
    json.member("clients_requested", thin.clients_requested);
    json.member("clients_reached", thin.clients_reached);
    json.member("connect_failures", thin.connect_failures);
    json.member("still_connecting", thin.still_connecting);
    write_counts(json, "connect_failure_reasons", thin.connect_failure_reasons);
    json.member("dropped", thin.dropped);
    write_counts(json, "disconnects", thin.disconnects);
    json.key("messages").begin_object();
    for (const auto& [reason, message] : thin.messages) {
        json.member(reason, message);
    }
    json.end_object();
    json.member("snapshots_acked", thin.snapshots_applied);
    json.member("full_states_received", thin.full_states);
    write_distribution(json, "snapshots_per_second", thin.snapshots_per_second);
    write_distribution(json, "ticks_applied_ratio", thin.ticks_applied_ratio);
    write_distribution(json, "tick_coverage", thin.tick_coverage);
    write_latency(json, thin.latency);
    write_distribution(json, "bytes_in_per_second", thin.bytes_in_per_second);
    write_distribution(json, "bytes_out_per_second", thin.bytes_out_per_second);
    json.member("bytes_in_total", thin.bytes_in);
    json.member("bytes_out_total", thin.bytes_out);
    json.member("inputs_sent", thin.inputs_sent);
    json.member("inputs_refused", thin.inputs_refused);
    write_distribution(json, "connect_time_ms", thin.connect_ms);
    write_transport(json, thin);
    json.end_object();
}

} // namespace

std::string_view to_string(run_end end) noexcept {
    switch (end) {
    case run_end::duration:
        return "duration";
    case run_end::interrupted:
        return "interrupted";
    case run_end::all_bots_ended:
        return "all_bots_ended";
    case run_end::server_stalled:
        return "server_stalled";
    }
    return "unknown";
}

latency_summary summarize_latency(const latency_histogram& histogram, std::uint64_t negative_samples) {
    latency_summary out;
    out.samples = histogram.count();
    out.negative_samples = negative_samples;
    if (histogram.empty()) {
        return out;
    }
    out.p50_ms = ms(histogram.percentile(50.0));
    out.p95_ms = ms(histogram.percentile(95.0));
    out.p99_ms = ms(histogram.percentile(99.0));
    out.p999_ms = ms(histogram.percentile(99.9));
    out.max_ms = ms(histogram.max());
    out.mean_ms = histogram.mean() / 1000.0;
    return out;
}

bot_summary summarize_bot(std::string name, const bot_reading& reading, const latency_histogram& latency) {
    bot_summary out;
    out.name = std::move(name);
    out.thin = reading.thin;
    out.phase = reading.phase;
    out.applied = reading.applied;
    if (reading.welcomed && reading.connected_seconds > 0.0) {
        out.ticks_applied_ratio = static_cast<double>(reading.applied) /
                                  (1.0 + static_cast<double>(reading.tick_rate) * reading.connected_seconds);
    }
    out.desyncs = reading.desyncs;
    out.latency_samples = latency.count();
    out.latency_p50_ms = ms(latency.percentile(50.0));
    out.latency_p99_ms = ms(latency.percentile(99.0));
    out.bytes_in = reading.bytes_in;
    out.bytes_out = reading.bytes_out;
    if (reading.phase == bot_phase::failed || reading.phase == bot_phase::dropped) {
        out.disconnect_reason = std::string{client::to_string(reading.ended.reason)};
        if (!reading.ended.message.empty()) {
            out.disconnect_reason += ": " + reading.ended.message;
        }
    }
    return out;
}

namespace {

// One kind of bot's figures from its readings; the tick rate of the first welcomed one into `tick_rate`.
void add_group(bot_group& group, const std::vector<const bot_reading*>& readings, std::uint32_t& tick_rate) {
    group.clients_requested = readings.size();
    std::vector<double> rates;
    std::vector<double> ratios;
    std::vector<double> coverage;
    std::vector<double> bytes_in;
    std::vector<double> bytes_out;
    std::vector<double> connect_ms;
    for (const auto* reading : readings) {
        const auto& r = *reading;
        group.snapshots_applied += r.applied;
        group.inputs_sent += r.inputs_sent;
        group.inputs_refused += r.inputs_refused;
        group.bytes_in += r.bytes_in;
        group.bytes_out += r.bytes_out;
        group.desyncs += r.desyncs;
        group.desynced_bots += r.desyncs > 0 ? 1 : 0;
        group.snapshots_refused += r.snapshots_refused;
        group.packets_sent += r.packets_sent;
        group.packets_lost += r.packets_lost;
        group.resends += r.resends;
        group.inputs_overflowed += r.inputs_overflowed;
        group.ticks_compared += r.ticks_compared;
        group.mispredictions += r.mispredictions;
        if (r.tick_rate > 0 && group.ticks_compared > 0) {
            group.mispredictions_per_minute = static_cast<double>(group.mispredictions) * 60.0 *
                                              static_cast<double>(r.tick_rate) /
                                              static_cast<double>(group.ticks_compared);
        }
        if (!r.welcomed) {
            ++group.connect_failures;
            std::string reason;
            if (r.phase == bot_phase::waiting || r.phase == bot_phase::connecting) {
                ++group.still_connecting;
                reason = "still_connecting";
            } else {
                reason = std::string{client::to_string(r.ended.reason)};
            }
            ++group.connect_failure_reasons[reason];
            group.messages.try_emplace(reason, r.ended.message);
            continue;
        }
        ++group.clients_reached;
        if (tick_rate == 0) {
            tick_rate = r.tick_rate;
        }
        group.full_states += r.full_states;
        if (r.phase == bot_phase::dropped) {
            ++group.dropped;
            const std::string reason{client::to_string(r.ended.reason)};
            ++group.disconnects[reason];
            group.messages.try_emplace(reason, r.ended.message);
        }
        connect_ms.push_back(r.connect_seconds * 1000.0);
        if (r.connected_seconds <= 0.0) {
            continue;
        }
        const auto applied = static_cast<double>(r.applied);
        rates.push_back(per_second(applied, r.connected_seconds));
        ratios.push_back(applied / (1.0 + static_cast<double>(r.tick_rate) * r.connected_seconds));
        if (r.first_tick && r.last_tick && *r.last_tick >= *r.first_tick) {
            coverage.push_back(applied / (static_cast<double>(*r.last_tick - *r.first_tick) + 1.0));
        } else {
            coverage.push_back(0.0);
        }
        bytes_in.push_back(per_second(static_cast<double>(r.bytes_in), r.connected_seconds));
        bytes_out.push_back(per_second(static_cast<double>(r.bytes_out), r.connected_seconds));
    }
    group.snapshots_per_second = summarize(rates);
    group.ticks_applied_ratio = summarize(ratios);
    group.tick_coverage = summarize(coverage);
    group.bytes_in_per_second = summarize(bytes_in);
    group.bytes_out_per_second = summarize(bytes_out);
    group.connect_ms = summarize(connect_ms);
}

// The failures of one kind of bot; `bots` names them ("bots", "thin bots").
void judge_group(std::vector<std::string>& f, const bot_group& group, const swarm_report& report,
                 const char* bots) {
    if (group.connect_failures > 0) {
        f.push_back(format("%zu of %zu %s failed to connect (", group.connect_failures,
                           group.clients_requested, bots) +
                    tally(group.connect_failure_reasons) + ")" +
                    example(group, group.connect_failure_reasons));
    }
    if (group.dropped > 0) {
        f.push_back(format("%zu %s were disconnected during the run (", group.dropped, bots) +
                    tally(group.disconnects) + ")" + example(group, group.disconnects));
    }
    const auto& o = report.options;
    if (o.max_latency_p99_ms > 0.0 && group.latency.samples > 0 &&
        group.latency.p99_ms > o.max_latency_p99_ms) {
        f.push_back(format("the %s' update latency p99 %.2f ms is above the %.2f ms allowed", bots,
                           group.latency.p99_ms, o.max_latency_p99_ms));
    }
    if (o.min_ticks_applied_ratio > 0.0 && group.ticks_applied_ratio.count > 0 &&
        group.ticks_applied_ratio.min < o.min_ticks_applied_ratio) {
        f.push_back(format("one of the %s applied only %.3f of the ticks (at least %.3f required)", bots,
                           group.ticks_applied_ratio.min, o.min_ticks_applied_ratio));
    }
}

} // namespace

void add_readings(swarm_report& report, const std::vector<bot_reading>& readings) {
    std::vector<const bot_reading*> full;
    std::vector<const bot_reading*> thin;
    for (const auto& r : readings) {
        (r.thin ? thin : full).push_back(&r);
    }
    add_group(report, full, report.tick_rate);
    add_group(report.thin, thin, report.tick_rate);
}

void judge(swarm_report& report) {
    auto& f = report.failures;
    f.clear();
    if (report.clients_reached + report.thin.clients_reached == 0) {
        const auto& reasons = report.clients_requested > 0 ? report.connect_failure_reasons
                                                           : report.thin.connect_failure_reasons;
        const bot_group& group =
            report.clients_requested > 0 ? static_cast<const bot_group&>(report) : report.thin;
        f.push_back("no bot was welcomed by the server at " + report.options.host + ":" +
                    std::to_string(report.options.port) + example(group, reasons));
    }
    judge_group(f, report, report, "bots");
    if (report.desyncs > 0) {
        f.push_back(format("%llu desyncs (a mirror's state checksum differed from the server's) in %zu bots",
                           static_cast<unsigned long long>(report.desyncs), report.desynced_bots));
    }
    judge_group(f, report.thin, report, "thin bots");
    if (report.ended_by == run_end::server_stalled) {
        f.push_back("the server stopped answering: " + report.end_detail);
    }
    if (report.ended_by == run_end::interrupted) {
        f.push_back("interrupted: " + report.end_detail);
    }
}

std::string to_json(const swarm_report& r) {
    json_writer json;
    json.begin_object();
    json.member("tool", "ecsnet-bots");
    json.member("passed", r.passed());
    json.key("failures").begin_array();
    for (const auto& failure : r.failures) {
        json.value(failure);
    }
    json.end_array();

    const auto& o = r.options;
    json.key("parameters").begin_object();
    json.member("host", o.host);
    json.member("port", o.port);
    json.member("clients", o.clients);
    json.member("ramp_seconds", o.ramp_seconds);
    json.member("duration_seconds", o.duration_seconds);
    json.member("behaviour", to_string(o.behaviour));
    json.member("seed", o.seed);
    json.member("threads", o.threads);
    json.member("name_prefix", o.name_prefix);
    json.member("connect_timeout_ms", o.connect_timeout.count());
    json.member("handshake_timeout_ms", o.handshake_timeout.count());
    json.member("idle_timeout_ms", o.idle_timeout.count());
    json.member("stall_timeout_ms", o.stall_timeout.count());
    json.member("max_latency_p99_ms", o.max_latency_p99_ms);
    json.member("min_ticks_applied_ratio", o.min_ticks_applied_ratio);
    json.member("transport", o.transport == client::transport_kind::udp ? "udp" : "tcp");
    json.member("thin", o.thin);
    json.member("tokens", o.tokens.size()); // how many, never the tokens themselves
    json.key("simulator").begin_object();
    json.member("loss", o.simulator.loss);
    json.member("latency_ms", static_cast<double>(o.simulator.latency.count()) / 1000.0);
    json.member("jitter_ms", static_cast<double>(o.simulator.jitter.count()) / 1000.0);
    json.member("duplicate", o.simulator.duplicate);
    json.member("reorder", o.simulator.reorder);
    json.end_object();
    json.end_object();

    json.member("ended_by", to_string(r.ended_by));
    json.member("end_detail", r.end_detail);
    json.member("elapsed_seconds", r.elapsed_seconds);
    json.member("measured_seconds", r.measured_seconds);
    json.member("tick_rate", r.tick_rate);

    json.member("clients_requested", r.clients_requested);
    json.member("clients_reached", r.clients_reached);
    json.member("connect_failures", r.connect_failures);
    json.member("still_connecting", r.still_connecting);
    write_counts(json, "connect_failure_reasons", r.connect_failure_reasons);
    json.member("dropped", r.dropped);
    write_counts(json, "disconnects", r.disconnects);
    json.key("messages").begin_object();
    for (const auto& [reason, message] : r.messages) {
        json.member(reason, message);
    }
    json.end_object();

    json.member("desyncs", r.desyncs);
    json.member("ticks_compared", r.ticks_compared);
    json.member("mispredictions", r.mispredictions);
    json.member("mispredictions_per_minute", r.mispredictions_per_minute);
    json.member("desynced_bots", r.desynced_bots);
    json.member("snapshots_refused", r.snapshots_refused);
    json.member("full_states_received", r.full_states);

    json.member("snapshots_applied", r.snapshots_applied);
    json.member("snapshots_per_second_min", r.snapshots_per_second.min);
    json.member("snapshots_per_second_median", r.snapshots_per_second.median);
    write_distribution(json, "snapshots_per_second", r.snapshots_per_second);
    json.member("ticks_applied_ratio_min", r.ticks_applied_ratio.min);
    json.member("ticks_applied_ratio_median", r.ticks_applied_ratio.median);
    json.member("ticks_applied_ratio_denominator", "1 + tick_rate x connected seconds");
    write_distribution(json, "ticks_applied_ratio", r.ticks_applied_ratio);
    json.member("tick_coverage_min", r.tick_coverage.min);
    write_distribution(json, "tick_coverage", r.tick_coverage);

    write_latency(json, r.latency);

    json.member("bytes_in_per_second_per_client", r.bytes_in_per_second.median);
    json.member("bytes_in_per_second_per_client_max", r.bytes_in_per_second.max);
    json.member("bytes_out_per_second_per_client", r.bytes_out_per_second.median);
    json.member("bytes_out_per_second_per_client_max", r.bytes_out_per_second.max);
    write_distribution(json, "bytes_in_per_second", r.bytes_in_per_second);
    write_distribution(json, "bytes_out_per_second", r.bytes_out_per_second);
    json.member("bytes_in_total", r.bytes_in);
    json.member("bytes_out_total", r.bytes_out);
    json.member("inputs_sent", r.inputs_sent);
    json.member("inputs_refused", r.inputs_refused);
    write_distribution(json, "connect_time_ms", r.connect_ms);
    write_transport(json, r);
    write_thin(json, r.thin);

    const auto cpu = r.cpu_user_seconds + r.cpu_system_seconds;
    json.member("bots_cpu_seconds", cpu);
    json.key("cpu").begin_object();
    json.member("user_seconds", r.cpu_user_seconds);
    json.member("system_seconds", r.cpu_system_seconds);
    json.member("percent_of_one_core", r.elapsed_seconds > 0.0 ? 100.0 * cpu / r.elapsed_seconds : 0.0);
    json.end_object();
    json.member("peak_rss_mb", r.peak_rss_mb);
    json.end_object();
    return json.str() + "\n";
}

std::string format_rate(double bytes_per_second) {
    if (bytes_per_second >= 1e6) {
        return format("%.2f MB/s", bytes_per_second / 1e6);
    }
    if (bytes_per_second >= 1e3) {
        return format("%.1f kB/s", bytes_per_second / 1e3);
    }
    return format("%.0f B/s", bytes_per_second);
}

void print_summary(std::ostream& out, const swarm_report& r) {
    const auto& o = r.options;
    const auto row = [&out](const char* label, const std::string& text) {
        out << format("  %-24s %s\n", label, text.c_str());
    };
    const std::string thin = o.thin > 0 ? format(" + %zu thin", o.thin) : std::string{};
    out << format(
        "\necsnet-bots: %zu bots%s (%s) against %s:%u over %s, %.1f s measured after a %.1f s ramp; "
        "ended by %s\n",
        o.clients, thin.c_str(), std::string{to_string(o.behaviour)}.c_str(), o.host.c_str(),
        static_cast<unsigned>(o.port), o.transport == client::transport_kind::udp ? "UDP" : "TCP",
        r.measured_seconds, o.ramp_seconds, std::string{to_string(r.ended_by)}.c_str());
    if (!r.end_detail.empty()) {
        out << "  (" << r.end_detail << ")\n";
    }
    row("clients reached", format("%zu / %zu", r.clients_reached, r.clients_requested));
    row("connect failures", r.connect_failures == 0 ? "0"
                                                    : format("%zu (", r.connect_failures) +
                                                          tally(r.connect_failure_reasons) + ")");
    row("dropped during the run",
        r.dropped == 0 ? "0" : format("%zu (", r.dropped) + tally(r.disconnects) + ")");
    row("desyncs", format("%llu in %zu bots", static_cast<unsigned long long>(r.desyncs), r.desynced_bots));
    if (r.ticks_compared > 0) {
        row("mispredictions",
            format("%llu in %llu ticks compared (%.2f per bot-minute)",
                   static_cast<unsigned long long>(r.mispredictions),
                   static_cast<unsigned long long>(r.ticks_compared), r.mispredictions_per_minute));
    }
    if (r.clients_reached == 0) {
        row("per-bot figures", r.clients_requested == 0 ? "none: no full bot" : "none: no bot was welcomed");
    } else {
        row("snapshots/s per bot",
            format("min %.1f  median %.1f  max %.1f  (server tick rate %u Hz)", r.snapshots_per_second.min,
                   r.snapshots_per_second.median, r.snapshots_per_second.max, r.tick_rate));
        row("ticks applied ratio",
            format("min %.3f  median %.3f  (tick coverage min %.3f)", r.ticks_applied_ratio.min,
                   r.ticks_applied_ratio.median, r.tick_coverage.min));
        row("update latency", format("p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  max %.2f ms  (%llu samples)",
                                     r.latency.p50_ms, r.latency.p95_ms, r.latency.p99_ms, r.latency.max_ms,
                                     static_cast<unsigned long long>(r.latency.samples)));
        row("bytes in per bot", "median " + format_rate(r.bytes_in_per_second.median) + "  max " +
                                    format_rate(r.bytes_in_per_second.max));
        row("bytes out per bot", "median " + format_rate(r.bytes_out_per_second.median) + "  max " +
                                     format_rate(r.bytes_out_per_second.max));
        row("connect time", format("median %.1f ms  max %.1f ms", r.connect_ms.median, r.connect_ms.max));
        row("inputs", format("sent %llu  refused %llu", static_cast<unsigned long long>(r.inputs_sent),
                             static_cast<unsigned long long>(r.inputs_refused)));
    }
    row("snapshots refused",
        format("%llu  (full states received %llu)", static_cast<unsigned long long>(r.snapshots_refused),
               static_cast<unsigned long long>(r.full_states)));
    if (o.transport == client::transport_kind::udp && r.packets_sent > 0) {
        row("transport", format("packets sent %llu  lost %llu  resends %llu  inputs pushed out %llu",
                                static_cast<unsigned long long>(r.packets_sent),
                                static_cast<unsigned long long>(r.packets_lost),
                                static_cast<unsigned long long>(r.resends),
                                static_cast<unsigned long long>(r.inputs_overflowed)));
    }
    if (o.thin > 0) {
        const auto& t = r.thin;
        row("thin bots reached", format("%zu / %zu", t.clients_reached, t.clients_requested));
        row("thin connect failures", t.connect_failures == 0 ? "0"
                                                             : format("%zu (", t.connect_failures) +
                                                                   tally(t.connect_failure_reasons) + ")");
        row("thin dropped", t.dropped == 0 ? "0" : format("%zu (", t.dropped) + tally(t.disconnects) + ")");
        if (t.clients_reached > 0) {
            row("thin snapshots/s", format("min %.1f  median %.1f  max %.1f  (ticks applied ratio min %.3f)",
                                           t.snapshots_per_second.min, t.snapshots_per_second.median,
                                           t.snapshots_per_second.max, t.ticks_applied_ratio.min));
            row("thin update latency",
                format("p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  max %.2f ms  (%llu samples)", t.latency.p50_ms,
                       t.latency.p95_ms, t.latency.p99_ms, t.latency.max_ms,
                       static_cast<unsigned long long>(t.latency.samples)));
            row("thin bytes in per bot", "median " + format_rate(t.bytes_in_per_second.median) + "  max " +
                                             format_rate(t.bytes_in_per_second.max));
        }
    }
    const auto cpu = r.cpu_user_seconds + r.cpu_system_seconds;
    row("bots' CPU", format("user %.2f s  system %.2f s  (%.0f%% of one core); peak RSS %.0f MB",
                            r.cpu_user_seconds, r.cpu_system_seconds,
                            r.elapsed_seconds > 0.0 ? 100.0 * cpu / r.elapsed_seconds : 0.0, r.peak_rss_mb));
    if (r.passed()) {
        out << "\nPASSED\n";
    } else {
        out << "\nFAILED\n";
        for (const auto& failure : r.failures) {
            out << "  - " << failure << '\n';
        }
    }
    out << std::flush;
}

} // namespace ecsnet::bots
