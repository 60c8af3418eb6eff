#include "ecsnet/bots/html_report.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace ecsnet::bots {

namespace {

std::string format(const char* pattern, auto... args) {
    char text[512];
    std::snprintf(text, sizeof text, pattern, args...);
    return text;
}

std::string bytes(std::uint64_t count) {
    const auto value = static_cast<double>(count);
    if (value >= 1e9) {
        return format("%.2f GB", value / 1e9);
    }
    if (value >= 1e6) {
        return format("%.2f MB", value / 1e6);
    }
    if (value >= 1e3) {
        return format("%.1f kB", value / 1e3);
    }
    return format("%.0f B", value);
}

std::string count(std::uint64_t value) {
    return std::to_string(value);
}

constexpr std::string_view style = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.5em; } h1 .passed { color: #1a7f37; } h1 .failed { color: #c62828; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; }
th, td { padding: 0.15em 0.6em; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f4f4f4; } td.text, th.text { text-align: left; }
table.summary th { text-align: left; font-weight: normal; color: #555; background: none; }
table.summary td { text-align: left; }
ul.failures li { color: #c62828; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
svg rect.bar { fill: #4878b8; } svg line.axis { stroke: #888; }
svg polyline.series { fill: none; stroke: #4878b8; stroke-width: 1.5; } div.charts svg { margin-right: 1em; }
tr.problem td { background: #fdecea; }
.note { color: #666; }
)";

class page {
public:
    void raw(std::string_view html) { out_ += html; }
    void text(std::string_view text) { out_ += html_escape(text); }
    void element(std::string_view tag, std::string_view content, std::string_view attributes = {}) {
        out_ += '<';
        out_ += tag;
        if (!attributes.empty()) {
            out_ += ' ';
            out_ += attributes;
        }
        out_ += '>';
        text(content);
        out_ += "</";
        out_ += tag;
        out_ += '>';
    }
    void summary_row(std::string_view label, std::string_view value) {
        raw("<tr><th>");
        text(label);
        raw("</th><td>");
        text(value);
        raw("</td></tr>\n");
    }
    [[nodiscard]] std::string take() { return std::move(out_); }

private:
    std::string out_;
};

void write_summary(page& p, const swarm_report& r) {
    const auto& o = r.options;
    p.raw("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"summary\">\n");
    p.summary_row("server", o.host + ":" + std::to_string(o.port));
    p.summary_row("transport", o.transport == client::transport_kind::udp ? "UDP" : "TCP");
    p.summary_row("clients", format("%zu of %zu reached", r.clients_reached, r.clients_requested) +
                                 (o.thin > 0 ? format(" (+ thin bots: %zu of %zu reached)",
                                                      r.thin.clients_reached, r.thin.clients_requested)
                                             : std::string{}));
    p.summary_row("bots",
                  "named " + o.name_prefix + "-<index>, behaviour " + std::string{to_string(o.behaviour)});
    p.summary_row("duration", format("%.1f s measured after a %.1f s ramp (%.1f s in all)",
                                     r.measured_seconds, o.ramp_seconds, r.elapsed_seconds));
    p.summary_row("ended by",
                  std::string{to_string(r.ended_by)} + (r.end_detail.empty() ? "" : ": " + r.end_detail));
    p.summary_row("server tick rate", format("%u Hz", r.tick_rate));
    p.summary_row("ticks applied ratio",
                  format("min %.3f, median %.3f (tick coverage min %.3f)", r.ticks_applied_ratio.min,
                         r.ticks_applied_ratio.median, r.tick_coverage.min));
    p.summary_row("desyncs",
                  format("%llu in %zu bots", static_cast<unsigned long long>(r.desyncs), r.desynced_bots));
    p.summary_row("update latency",
                  format("p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms (%llu samples)",
                         r.latency.p50_ms, r.latency.p95_ms, r.latency.p99_ms, r.latency.max_ms,
                         static_cast<unsigned long long>(r.latency.samples)));
    if (o.thin > 0) {
        p.summary_row("thin bots' latency",
                      format("p50 %.2f ms, p99 %.2f ms (%llu samples)", r.thin.latency.p50_ms,
                             r.thin.latency.p99_ms, static_cast<unsigned long long>(r.thin.latency.samples)));
    }
    p.summary_row("bytes per bot", "in " + format_rate(r.bytes_in_per_second.median) + ", out " +
                                       format_rate(r.bytes_out_per_second.median) + " (medians)");
    p.summary_row("connect failures, drops", format("%zu, %zu", r.connect_failures + r.thin.connect_failures,
                                                    r.dropped + r.thin.dropped));
    p.summary_row("bots' CPU", format("%.2f s user, %.2f s system; peak RSS %.0f MB", r.cpu_user_seconds,
                                      r.cpu_system_seconds, r.peak_rss_mb));
    p.raw("</table>\n");
    if (!r.failures.empty()) {
        p.raw("<ul class=\"failures\">\n");
        for (const auto& failure : r.failures) {
            p.element("li", failure);
            p.raw("\n");
        }
        p.raw("</ul>\n");
    }
    p.raw("</section>\n");
}

// The histogram as SVG bars: x one bar a bin (log scale, as the bins are), y the samples.
void write_histogram(page& p, std::string_view id, std::string_view title,
                     const std::vector<latency_bin>& bins) {
    p.raw(format("<section id=\"%.*s\">\n", static_cast<int>(id.size()), id.data()));
    p.element("h2", title);
    p.raw("\n");
    if (bins.empty()) {
        p.element("p", "No latency sample (no snapshot applied).", "class=\"note\"");
        p.raw("\n</section>\n");
        return;
    }
    constexpr double width = 800.0;
    constexpr double height = 260.0;
    constexpr double left = 60.0;
    constexpr double right = 10.0;
    constexpr double top = 10.0;
    constexpr double bottom = 40.0;
    const double plot_width = width - left - right;
    const double plot_height = height - top - bottom;
    std::uint64_t highest = 1;
    for (const auto& bin : bins) {
        highest = std::max(highest, bin.count);
    }
    const double bar = plot_width / static_cast<double>(bins.size());
    p.raw(format("<svg class=\"histogram\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                 "role=\"img\">\n",
                 width, height, width, height));
    for (std::size_t i = 0; i < bins.size(); ++i) {
        const auto& bin = bins[i];
        const double h = plot_height * static_cast<double>(bin.count) / static_cast<double>(highest);
        p.raw(format("<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>",
                     left + bar * static_cast<double>(i), top + plot_height - h, std::max(bar - 1.0, 0.5),
                     h));
        p.text(format("%.3f to %.3f ms: %llu samples", static_cast<double>(bin.low_us) / 1000.0,
                      static_cast<double>(bin.high_us) / 1000.0, static_cast<unsigned long long>(bin.count)));
        p.raw("</title></rect>\n");
    }
    const double axis_y = top + plot_height;
    p.raw(format("<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", left, axis_y,
                 width - right, axis_y));
    p.raw(format("<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", left, top, left,
                 axis_y));
    // About eight labels along x: each the lowest latency of its bar.
    const auto label_every = std::max<std::size_t>(1, (bins.size() + 7) / 8);
    for (std::size_t i = 0; i < bins.size(); i += label_every) {
        p.raw(format("<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\">%.3g</text>\n",
                     left + bar * (static_cast<double>(i) + 0.5), axis_y + 15.0,
                     static_cast<double>(bins[i].low_us) / 1000.0));
    }
    p.raw(format("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">update latency, ms (log scale)</text>\n",
                 left + plot_width / 2.0, height - 5.0));
    p.raw(format("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%llu</text>\n", left - 5.0, top + 10.0,
                 static_cast<unsigned long long>(highest)));
    p.raw(format("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>\n", left - 5.0, axis_y));
    p.raw(format(
        "<text x=\"15\" y=\"%.0f\" transform=\"rotate(-90 15 %.0f)\" text-anchor=\"middle\">samples</text>\n",
        top + plot_height / 2.0, top + plot_height / 2.0));
    p.raw("</svg>\n</section>\n");
}

// One series over the run as an SVG polyline (points without a value are gaps), for the progress section.
struct chart_point {
    double x{};
    double y{};
    bool has_value{};
};

void write_line_chart(page& p, std::string_view title, const std::vector<chart_point>& points) {
    constexpr double width = 390.0;
    constexpr double height = 170.0;
    constexpr double left = 50.0;
    constexpr double right = 10.0;
    constexpr double top = 20.0;
    constexpr double bottom = 25.0;
    double max_x = 1e-9;
    double max_y = 1e-9;
    for (const auto& point : points) {
        max_x = std::max(max_x, point.x);
        max_y = point.has_value ? std::max(max_y, point.y) : max_y;
    }
    const auto x_of = [&](double x) { return left + (width - left - right) * x / max_x; };
    const auto y_of = [&](double y) { return top + (height - top - bottom) * (1.0 - y / max_y); };
    p.raw(format(
        "<svg class=\"chart\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
        width, height, width, height));
    p.raw(format("<text x=\"%.0f\" y=\"13\">", left));
    p.text(title);
    p.raw("</text>\n");
    const double axis_y = height - bottom;
    p.raw(format("<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", left, axis_y,
                 width - right, axis_y));
    p.raw(format("<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", left, top, left,
                 axis_y));
    p.raw(format("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.3g</text>\n", left - 4.0, top + 4.0,
                 max_y));
    p.raw(format("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>\n", left - 4.0, axis_y));
    p.raw(format("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.0f s</text>\n", width - right,
                 height - 8.0, max_x));
    // A polyline per stretch of points with a value.
    std::string line;
    const auto flush = [&] {
        if (!line.empty()) {
            p.raw("<polyline class=\"series\" points=\"" + line + "\"/>\n");
            line.clear();
        }
    };
    for (const auto& point : points) {
        if (!point.has_value) {
            flush();
            continue;
        }
        line += format("%s%.1f,%.1f", line.empty() ? "" : " ", x_of(point.x), y_of(point.y));
    }
    flush();
    p.raw("</svg>\n");
}

void write_progress(page& p, const swarm_report& r) {
    const auto& series = r.progress;
    p.raw("<section id=\"progress\">\n<h2>Progress</h2>\n");
    if (series.stride() > 1) {
        p.element(
            "p",
            format("One sample every %zu progress intervals (the run was long: the series keeps at most "
                   "%zu samples).",
                   series.stride(), series.capacity()),
            "class=\"note\"");
        p.raw("\n");
    }
    std::vector<chart_point> snapshots;
    std::vector<chart_point> latency;
    for (const auto& s : series.samples()) {
        snapshots.push_back({s.at_seconds, s.snapshots_per_second, true});
        latency.push_back({s.at_seconds, s.latency_p99_ms, s.has_latency});
    }
    if (!snapshots.empty()) {
        p.raw("<div class=\"charts\">\n");
        write_line_chart(p, "snapshots applied per second, all bots", snapshots);
        write_line_chart(p, "update latency p99 of the second, ms", latency);
        p.raw("</div>\n");
    }
    const bool thin = r.options.thin > 0;
    p.raw("<table id=\"progress-table\">\n<thead><tr><th>time, s</th><th>bots connected</th>");
    if (thin) {
        p.raw("<th>thin bots connected</th>");
    }
    p.raw("<th>snapshots applied /s</th><th>bytes in /s</th><th>bytes out /s</th><th>latency p99, ms</th>"
          "<th>desyncs so far</th></tr></thead>\n<tbody>\n");
    for (const auto& s : series.samples()) {
        p.raw(format("<tr><td>%.1f</td><td>%zu</td>", s.at_seconds, s.connected));
        if (thin) {
            p.raw(format("<td>%zu</td>", s.thin_connected));
        }
        p.raw(format("<td>%.0f</td>", s.snapshots_per_second));
        p.element("td", format_rate(s.bytes_in_per_second));
        p.element("td", format_rate(s.bytes_out_per_second));
        p.raw(s.has_latency ? format("<td>%.2f</td>", s.latency_p99_ms) : std::string{"<td>n/a</td>"});
        p.raw(format("<td>%llu</td></tr>\n", static_cast<unsigned long long>(s.desyncs)));
    }
    p.raw("</tbody>\n</table>\n</section>\n");
}

void write_bots(page& p, const swarm_report& r) {
    p.raw("<section id=\"bots\">\n<h2>Bots</h2>\n");
    const auto shown = std::min(r.bots.size(), max_bot_rows);
    if (shown < r.bots.size()) {
        p.element("p", format("The first %zu of %zu bots.", shown, r.bots.size()), "class=\"note\"");
        p.raw("\n");
    }
    p.raw("<table id=\"bot-table\">\n<thead><tr><th class=\"text\">name</th><th class=\"text\">state</th>"
          "<th>ticks applied</th><th>ticks applied ratio</th><th>desyncs</th><th>latency p50, ms</th>"
          "<th>latency p99, ms</th><th>bytes in</th><th>bytes out</th>"
          "<th class=\"text\">disconnect reason</th></tr></thead>\n<tbody>\n");
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& b = r.bots[i];
        const bool problem = b.desyncs > 0 || !b.disconnect_reason.empty();
        p.raw(problem ? "<tr class=\"bot problem\">" : "<tr class=\"bot\">");
        p.element("td", b.name, "class=\"text\"");
        p.element("td", std::string{to_string(b.phase)} + (b.thin ? " (thin)" : ""), "class=\"text\"");
        p.element("td", count(b.applied));
        p.element("td", format("%.3f", b.ticks_applied_ratio));
        p.element("td", count(b.desyncs));
        p.element("td", b.latency_samples > 0 ? format("%.2f", b.latency_p50_ms) : std::string{"n/a"});
        p.element("td", b.latency_samples > 0 ? format("%.2f", b.latency_p99_ms) : std::string{"n/a"});
        p.element("td", bytes(b.bytes_in));
        p.element("td", bytes(b.bytes_out));
        p.element("td", b.disconnect_reason, "class=\"text\"");
        p.raw("</tr>\n");
    }
    p.raw("</tbody>\n</table>\n</section>\n");
}

} // namespace

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string to_html(const swarm_report& r) {
    page p;
    const auto& o = r.options;
    p.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    p.element("title", format("ecsnet-bots: %zu bots", o.clients) +
                           (o.thin > 0 ? format(" + %zu thin", o.thin) : std::string{}) + " against " +
                           o.host + ":" + std::to_string(o.port));
    p.raw("\n<style>");
    p.raw(style);
    p.raw("</style>\n</head>\n<body>\n<h1>ecsnet-bots: ");
    p.raw(r.passed() ? "<span class=\"passed\">PASSED</span>" : "<span class=\"failed\">FAILED</span>");
    p.raw("</h1>\n");
    write_summary(p, r);
    if (o.clients > 0) {
        write_histogram(p, "latency-histogram", "Update latency (full bots)", r.latency_bins);
    }
    if (o.thin > 0) {
        write_histogram(p, "thin-latency-histogram", "Update latency (thin bots)", r.thin.latency_bins);
    }
    write_progress(p, r);
    write_bots(p, r);
    p.raw("</body>\n</html>\n");
    return p.take();
}

} // namespace ecsnet::bots
