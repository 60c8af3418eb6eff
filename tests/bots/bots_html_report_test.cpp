// The HTML report of ecsnet-bots (issue 18): every outside string escaped (a hostile --name-prefix, host and
// server message), every section present, one SVG bar per coarse bin of the latency histogram, the per-bot
// table's rows (capped), nothing fetched from anywhere; the coarse bins on known samples; the per-second
// progress series staying bounded over a long run while keeping its whole timeline.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "ecsnet/bots/html_report.hpp"
#include "ecsnet/bots/latency_histogram.hpp"
#include "ecsnet/bots/progress_series.hpp"
#include "ecsnet/bots/swarm_report.hpp"

namespace bots_html_report_test {

namespace {

using namespace ecsnet::bots;

std::size_t occurrences(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) {
        ++n;
    }
    return n;
}

std::string lowercase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    return text;
}

// The part of `html` from the element with id `id` to the end of its section.
std::string section(const std::string& html, std::string_view id) {
    const auto start = html.find("id=\"" + std::string{id} + "\"");
    if (start == std::string::npos) {
        return {};
    }
    return html.substr(start, html.find("</section>", start) - start);
}

constexpr std::string_view hostile = "<script>alert('x')</script>&\"";

// A report as run_swarm would make it: `bots` full bots named with the hostile prefix, one dropped with a
// hostile server message, latencies from 1 to 40 ms, ten seconds of progress.
swarm_report hostile_report(std::size_t bots) {
    swarm_report r;
    r.options.clients = bots;
    r.options.name_prefix = std::string{hostile};
    r.options.host = "<b>host</b>";
    r.clients_requested = bots;
    r.clients_reached = bots;
    r.failures.push_back(
        "1 bots were disconnected during the run (kicked); first: \"<img src=x onerror=1>\"");
    latency_histogram latency;
    for (std::uint64_t us = 1000; us <= 40'000; us += 250) {
        latency.record(us);
    }
    r.latency = summarize_latency(latency);
    r.latency_bins = coarse_bins(latency);
    for (std::size_t i = 0; i < bots; ++i) {
        bot_reading reading;
        reading.phase = i == 0 ? bot_phase::dropped : bot_phase::connected;
        reading.welcomed = true;
        reading.connected_seconds = 10.0;
        reading.tick_rate = 30;
        reading.applied = 301;
        reading.bytes_in = 123'456;
        reading.ended.reason = ecsnet::client::disconnect_reason::kicked;
        reading.ended.message = "<img src=x onerror=1>";
        r.bots.push_back(summarize_bot(r.options.name_prefix + "-" + std::to_string(i), reading, latency));
    }
    for (int second = 1; second <= 10; ++second) {
        progress_sample sample;
        sample.at_seconds = second;
        sample.connected = bots;
        sample.snapshots_per_second = 30.0 * static_cast<double>(bots);
        sample.has_latency = second > 1;
        sample.latency_p99_ms = 12.5;
        r.progress.add(sample);
    }
    return r;
}

TEST(BotsHtmlReport, EscapesTheFiveSpecialCharacters) {
    EXPECT_EQ(html_escape("a<b>&\"c'd"), "a&lt;b&gt;&amp;&quot;c&#39;d");
    EXPECT_EQ(html_escape("plain text, 1.5 ms"), "plain text, 1.5 ms");
    EXPECT_EQ(html_escape(""), "");
}

TEST(BotsHtmlReport, HostileNamesHostAndMessagesAreEscapedEverywhere) {
    const auto html = to_html(hostile_report(3));
    const auto lower = lowercase(html);
    EXPECT_EQ(lower.find("<script"), std::string::npos) << html;
    EXPECT_EQ(lower.find("<img"), std::string::npos) << html;
    EXPECT_EQ(lower.find("<b>"), std::string::npos) << html;
    EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;-2"), std::string::npos);
    EXPECT_NE(html.find("&lt;img src=x onerror=1&gt;"), std::string::npos);
    EXPECT_NE(html.find("&lt;b&gt;host&lt;/b&gt;"), std::string::npos);
    // Self-contained: nothing to fetch, no script at all.
    EXPECT_EQ(lower.find("http"), std::string::npos);
    EXPECT_EQ(lower.find("src=\""), std::string::npos);
    EXPECT_EQ(lower.find("href="), std::string::npos);
    EXPECT_EQ(lower.find("<link"), std::string::npos);
}

TEST(BotsHtmlReport, HasEverySectionOneBarPerBinAndOneRowPerBot) {
    const auto report = hostile_report(3);
    const auto html = to_html(report);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
    EXPECT_NE(html.find("</html>"), std::string::npos);
    for (const char* id :
         {"summary", "latency-histogram", "progress", "bots", "progress-table", "bot-table"}) {
        EXPECT_NE(html.find("id=\"" + std::string{id} + "\""), std::string::npos) << id;
    }
    EXPECT_EQ(html.find("thin-latency-histogram"), std::string::npos) << "no thin bot in this run";
    EXPECT_NE(html.find("FAILED"), std::string::npos);

    const auto histogram = section(html, "latency-histogram");
    ASSERT_FALSE(report.latency_bins.empty());
    EXPECT_EQ(occurrences(histogram, "<rect class=\"bar\""), report.latency_bins.size());
    EXPECT_EQ(occurrences(histogram, "<svg"), 1U);

    const auto bots = section(html, "bots");
    EXPECT_EQ(occurrences(bots, "<tr class=\"bot"), 3U);
    EXPECT_EQ(occurrences(bots, "<tr class=\"bot problem\">"), 1U) << "the dropped one stands out";
    EXPECT_NE(bots.find("kicked: &lt;img"), std::string::npos);
    EXPECT_NE(bots.find("<td>1.000</td>"), std::string::npos) << "301 snapshots in 10 s at 30 Hz";

    const auto progress = section(html, "progress");
    EXPECT_EQ(occurrences(progress, "<tr><td>"), 10U);
    EXPECT_EQ(occurrences(progress, "<td>12.50</td>"), 9U);
    EXPECT_EQ(occurrences(progress, "<td>n/a</td>"), 1U) << "no latency in the first second";
    EXPECT_EQ(occurrences(progress, "<svg class=\"chart\""), 2U) << "snapshots/s and latency p99 over time";
    EXPECT_EQ(occurrences(progress, "<polyline"), 2U) << "the latency's line starts at its first value";
}

TEST(BotsHtmlReport, NoSampleSaysSoAndThinBotsGetTheirOwnHistogram) {
    swarm_report r;
    r.options.clients = 1;
    r.options.thin = 2;
    r.thin.latency_bins = {{1000, 1189, 4}, {1190, 1414, 0}, {1415, 1681, 2}};
    const auto html = to_html(r);
    EXPECT_NE(section(html, "latency-histogram").find("No latency sample"), std::string::npos);
    EXPECT_EQ(occurrences(section(html, "thin-latency-histogram"), "<rect class=\"bar\""), 3U);
    EXPECT_NE(html.find("<th>thin bots connected</th>"), std::string::npos);
}

TEST(BotsHtmlReport, TheBotTableIsCapped) {
    const auto html = to_html(hostile_report(max_bot_rows + 5));
    EXPECT_EQ(occurrences(section(html, "bots"), "<tr class=\"bot"), max_bot_rows);
    EXPECT_NE(
        html.find("The first " + std::to_string(max_bot_rows) + " of " + std::to_string(max_bot_rows + 5)),
        std::string::npos);
}

TEST(BotsHtmlReport, CoarseBinsOnKnownSamples) {
    latency_histogram h;
    EXPECT_TRUE(coarse_bins(h).empty());
    h.record(1000, 3); // 2^9.97: bin floor(9.97 x 4) + 1 = 40, [2^9.75, 2^10) = [861, 1023]
    h.record(2000, 2); // one octave up: bin 44
    const auto bins = coarse_bins(h, 4);
    ASSERT_EQ(bins.size(), 5U) << "bins 40 to 44, the empty ones between included";
    EXPECT_EQ(bins.front().count, 3U);
    EXPECT_EQ(bins.back().count, 2U);
    EXPECT_EQ(bins[1].count + bins[2].count + bins[3].count, 0U);
    EXPECT_LE(bins.front().low_us, 1000U);
    EXPECT_GE(bins.front().high_us, 1000U);
    EXPECT_LE(bins.back().low_us, 2000U);
    EXPECT_GE(bins.back().high_us, 2000U);
    for (std::size_t i = 1; i < bins.size(); ++i) {
        EXPECT_EQ(bins[i].low_us, bins[i - 1].high_us + 1) << "contiguous, at bin " << i;
    }
    // Whatever the spread, at most 1 + 32 x per_octave bins.
    h.record(0);
    h.record(latency_histogram::max_trackable);
    EXPECT_LE(coarse_bins(h, 4).size(), 1U + 32U * 4U);
    std::uint64_t total = 0;
    for (const auto& bin : coarse_bins(h, 4)) {
        total += bin.count;
    }
    EXPECT_EQ(total, h.count());
}

TEST(BotsHtmlReport, TheProgressSeriesStaysBoundedAndKeepsTheWholeRun) {
    progress_series series{10};
    for (int second = 0; second < 1000; ++second) {
        progress_sample sample;
        sample.at_seconds = second;
        series.add(sample);
        ASSERT_LE(series.samples().size(), 10U);
    }
    EXPECT_EQ(series.offered(), 1000U);
    const auto& kept = series.samples();
    ASSERT_GE(kept.size(), 5U);
    EXPECT_EQ(kept.front().at_seconds, 0.0) << "the start of the run is kept";
    EXPECT_GT(kept.back().at_seconds, 1000.0 - 2.0 * static_cast<double>(series.stride()))
        << "and its end, at the current stride";
    for (std::size_t i = 1; i < kept.size(); ++i) {
        EXPECT_EQ(kept[i].at_seconds - kept[i - 1].at_seconds, static_cast<double>(series.stride()))
            << "evenly spaced, at " << i;
    }
    EXPECT_EQ(series.stride(), 128U) << "1000 offers into 10 places: the stride doubled 7 times";

    progress_series odd{3};
    EXPECT_EQ(odd.capacity(), 4U) << "rounded up to even";
}

} // namespace

} // namespace bots_html_report_test
