// The report's statistics (issue 7): nearest-rank percentiles, medians, rates and distributions on known
// inputs; the latency histogram's bucket layout, and a randomized differential test of its percentiles,
// merges and differences against a reference that keeps every sample; the per-bot figures of the report
// from known readings; the verdict; the JSON report parsed back.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "ecsnet/bots/json_writer.hpp"
#include "ecsnet/bots/latency_histogram.hpp"
#include "ecsnet/bots/statistics.hpp"
#include "ecsnet/bots/swarm_report.hpp"

namespace bots_statistics_test {

namespace {

using namespace ecsnet::bots;

// ---- plain statistics on known inputs ---------------------------------------------------------------

TEST(BotsStatistics, NearestRankOnKnownInputs) {
    EXPECT_EQ(nearest_rank(50.0, 4), 2U);
    EXPECT_EQ(nearest_rank(50.0, 5), 3U);
    EXPECT_EQ(nearest_rank(99.0, 100), 99U);
    EXPECT_EQ(nearest_rank(99.9, 1000), 999U); // 99.9 * 1000 is not exact in binary
    EXPECT_EQ(nearest_rank(95.0, 20), 19U);
    EXPECT_EQ(nearest_rank(1.0, 1), 1U);
    EXPECT_EQ(nearest_rank(0.0, 10), 1U);
    EXPECT_EQ(nearest_rank(-3.0, 10), 1U);
    EXPECT_EQ(nearest_rank(100.0, 10), 10U);
    EXPECT_EQ(nearest_rank(250.0, 10), 10U);
    EXPECT_EQ(nearest_rank(std::nan(""), 10), 1U);
    EXPECT_EQ(nearest_rank(50.0, 0), 0U);
}

TEST(BotsStatistics, PercentilesMediansAndRatesOnKnownInputs) {
    std::vector<double> hundred;
    for (int i = 100; i >= 1; --i) { // unsorted on purpose
        hundred.push_back(i);
    }
    EXPECT_EQ(percentile(hundred, 50.0), 50.0);
    EXPECT_EQ(percentile(hundred, 95.0), 95.0);
    EXPECT_EQ(percentile(hundred, 99.0), 99.0);
    EXPECT_EQ(percentile(hundred, 100.0), 100.0);
    EXPECT_EQ(percentile(hundred, 0.0), 1.0);
    EXPECT_EQ(percentile({7.0}, 99.0), 7.0);
    EXPECT_EQ(percentile({}, 50.0), 0.0);
    EXPECT_EQ(percentile({3.0, 1.0, 2.0, 10.0}, 50.0), 2.0); // nearest rank, no interpolation

    EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
    EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
    EXPECT_EQ(median({5.0}), 5.0);
    EXPECT_EQ(median({}), 0.0);
    EXPECT_EQ(median({30.0, 30.0, 29.0, 31.0, 30.0, 12.0}), 30.0);

    EXPECT_EQ(per_second(300.0, 10.0), 30.0);
    EXPECT_EQ(per_second(300.0, 0.0), 0.0);
    EXPECT_EQ(per_second(300.0, -1.0), 0.0);

    const auto d = summarize({2.0, 8.0, 4.0, 6.0});
    EXPECT_EQ(d.count, 4U);
    EXPECT_EQ(d.min, 2.0);
    EXPECT_EQ(d.max, 8.0);
    EXPECT_EQ(d.mean, 5.0);
    EXPECT_EQ(d.median, 5.0);
    const auto empty = summarize({});
    EXPECT_EQ(empty.count, 0U);
    EXPECT_EQ(empty.median, 0.0);
}

TEST(BotsStatistics, MedianMatchesASortedReferenceOnRandomInputs) {
    std::mt19937_64 random{11};
    for (int round = 0; round < 500; ++round) {
        std::vector<double> values(1 + random() % 40);
        for (auto& v : values) {
            v = static_cast<double>(random() % 50); // duplicates on purpose
        }
        auto sorted = values;
        std::sort(sorted.begin(), sorted.end());
        const auto n = sorted.size();
        const double expected = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
        ASSERT_EQ(median(values), expected) << "round " << round;
        const double q = static_cast<double>(random() % 1001) / 10.0;
        ASSERT_EQ(percentile(values, q), sorted[nearest_rank(q, n) - 1]) << "q " << q;
    }
}

// ---- the latency histogram ----------------------------------------------------------------------------

TEST(LatencyHistogram, BucketsTileTheRangeWithBoundedRelativeWidth) {
    using h = latency_histogram;
    EXPECT_EQ(h::lowest_in(0), 0U);
    for (std::size_t b = 0; b < h::bucket_count; ++b) {
        const auto lo = h::lowest_in(b);
        const auto hi = h::highest_in(b);
        ASSERT_LE(lo, hi);
        ASSERT_EQ(h::bucket_of(lo), b);
        ASSERT_EQ(h::bucket_of(hi), b);
        if (b + 1 < h::bucket_count) {
            ASSERT_EQ(h::lowest_in(b + 1), hi + 1) << "bucket " << b; // contiguous, no gap, no overlap
        }
        if (b < 256) {
            ASSERT_EQ(lo, hi); // exact below 256 us
        } else {
            ASSERT_LE(static_cast<double>(hi - lo + 1) / static_cast<double>(lo), 1.0 / 128.0 + 1e-12);
        }
    }
    EXPECT_EQ(h::highest_in(h::bucket_count - 1), h::max_trackable);
    EXPECT_EQ(h::bucket_of(h::max_trackable + 12345), h::bucket_count - 1);
}

TEST(LatencyHistogram, ExactBelow256AndKnownPercentiles) {
    latency_histogram h;
    EXPECT_EQ(h.percentile(50.0), 0U);
    EXPECT_EQ(h.mean(), 0.0);
    for (std::uint64_t v = 1; v <= 100; ++v) {
        h.record(v);
    }
    EXPECT_EQ(h.count(), 100U);
    EXPECT_EQ(h.min(), 1U);
    EXPECT_EQ(h.max(), 100U);
    EXPECT_DOUBLE_EQ(h.mean(), 50.5);
    EXPECT_EQ(h.percentile(50.0), 50U);
    EXPECT_EQ(h.percentile(95.0), 95U);
    EXPECT_EQ(h.percentile(99.0), 99U);
    EXPECT_EQ(h.percentile(100.0), 100U);
    EXPECT_EQ(h.percentile(0.0), 1U);

    // 99 samples of 1 ms and one of 1 s: p99 is 1 ms (to the bucket), p100 and max are exactly 1 s.
    latency_histogram tail;
    tail.record(1000, 99);
    tail.record(1'000'000);
    EXPECT_GE(tail.percentile(99.0), 1000U);
    EXPECT_LE(tail.percentile(99.0), 1000U + 1000U / 128U);
    EXPECT_EQ(tail.percentile(99.5), 1'000'000U);
    EXPECT_EQ(tail.max(), 1'000'000U);
    EXPECT_EQ(tail.percentile(100.0), 1'000'000U);

    latency_histogram huge;
    huge.record(latency_histogram::max_trackable + 5);
    EXPECT_EQ(huge.overflow(), 1U);
    EXPECT_EQ(huge.max(), latency_histogram::max_trackable + 5);
    EXPECT_EQ(huge.percentile(50.0), latency_histogram::max_trackable + 5); // clamped to [min, max]
}

// Every step: record a batch, then compare count, min, max, mean and percentiles with a reference that
// keeps every sample. A percentile is never below the exact nearest-rank answer and at most 1/128 above.
TEST(LatencyHistogram, RandomizedAgainstAReferenceKeepingEverySample) {
    std::mt19937_64 random{2026};
    std::uniform_real_distribution<double> log_value{0.0, std::log(5e7)};
    for (int run = 0; run < 6; ++run) {
        latency_histogram h;
        std::vector<std::uint64_t> reference;
        for (int step = 0; step < 60; ++step) {
            const auto batch = 1 + random() % 200;
            for (std::uint64_t i = 0; i < batch; ++i) {
                const auto v = random() % 7 == 0 ? random() % 300 // the exact range, duplicates
                                                 : static_cast<std::uint64_t>(std::exp(log_value(random)));
                h.record(v);
                reference.push_back(v);
            }
            auto sorted = reference;
            std::sort(sorted.begin(), sorted.end());
            ASSERT_EQ(h.count(), sorted.size());
            ASSERT_EQ(h.min(), sorted.front());
            ASSERT_EQ(h.max(), sorted.back());
            double sum = 0;
            for (const auto v : sorted) {
                sum += static_cast<double>(v);
            }
            ASSERT_NEAR(h.mean(), sum / static_cast<double>(sorted.size()), 1e-6 * (1.0 + h.mean()));
            for (const double q : {0.0, 1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
                const auto exact = sorted[nearest_rank(q, sorted.size()) - 1];
                const auto got = h.percentile(q);
                ASSERT_GE(got, exact) << "q " << q << " step " << step;
                ASSERT_LE(static_cast<double>(got), static_cast<double>(exact) * (1.0 + 1.0 / 128.0) + 1e-9)
                    << "q " << q << " step " << step;
                ASSERT_LE(got, h.max());
            }
        }
    }
}

TEST(LatencyHistogram, MergeEqualsRecordingEverythingAndDifferenceRecoversTheNewSamples) {
    std::mt19937_64 random{7};
    for (int round = 0; round < 50; ++round) {
        latency_histogram a;
        latency_histogram b;
        latency_histogram both;
        for (int i = 0; i < 500; ++i) {
            const auto v = random() % (std::uint64_t{1} << (random() % 30));
            (random() % 2 == 0 ? a : b).record(v);
            both.record(v);
        }
        auto merged = a;
        merged.merge(b);
        ASSERT_EQ(merged.count(), both.count());
        ASSERT_EQ(merged.min(), both.min());
        ASSERT_EQ(merged.max(), both.max());
        for (std::size_t bucket = 0; bucket < latency_histogram::bucket_count; ++bucket) {
            ASSERT_EQ(merged.count_in(bucket), both.count_in(bucket));
        }
        // What a progress line does: the merge of now minus the merge of a second ago.
        const auto recent = latency_histogram::difference(merged, a);
        ASSERT_EQ(recent.count(), b.count());
        for (std::size_t bucket = 0; bucket < latency_histogram::bucket_count; ++bucket) {
            ASSERT_EQ(recent.count_in(bucket), b.count_in(bucket));
        }
        if (!b.empty()) {
            ASSERT_EQ(latency_histogram::bucket_of(recent.percentile(99.0)),
                      latency_histogram::bucket_of(b.percentile(99.0)));
            ASSERT_LE(recent.min(), b.min());
            ASSERT_GE(recent.max(), b.max());
        }
        EXPECT_TRUE(latency_histogram::difference(merged, merged).empty());
        merged.reset();
        EXPECT_TRUE(merged.empty());
        EXPECT_EQ(merged.percentile(99.0), 0U);
        for (std::size_t bucket = 0; bucket < latency_histogram::bucket_count; ++bucket) {
            ASSERT_EQ(merged.count_in(bucket), 0U) << "reset clears the used range, which is every count";
        }
    }
}

TEST(LatencyHistogram, SummaryInMilliseconds) {
    latency_histogram h;
    for (std::uint64_t v = 1; v <= 200; ++v) {
        h.record(v * 10); // 10 us .. 2 ms
    }
    const auto s = summarize_latency(h, 3);
    EXPECT_EQ(s.samples, 200U);
    EXPECT_EQ(s.negative_samples, 3U);
    EXPECT_NEAR(s.p50_ms, 1.0, 1.0 / 128.0);
    EXPECT_NEAR(s.p99_ms, 1.98, 1.98 / 128.0);
    EXPECT_GE(s.p99_ms, 1.98);
    EXPECT_EQ(s.max_ms, 2.0);
    EXPECT_NEAR(s.mean_ms, 1.005, 1e-9);
}

// ---- the report from known readings ------------------------------------------------------------------

bot_reading welcomed(double seconds, std::uint64_t applied, std::uint64_t bytes_in, std::uint64_t bytes_out) {
    bot_reading r;
    r.phase = bot_phase::connected;
    r.welcomed = true;
    r.connected_seconds = seconds;
    r.connect_seconds = 0.004;
    r.applied = applied;
    r.first_tick = 1000;
    r.last_tick = 1000 + static_cast<ecsnet::proto::tick_type>(applied) - 1;
    r.tick_rate = 30;
    r.bytes_in = bytes_in;
    r.bytes_out = bytes_out;
    r.full_states = 1;
    r.inputs_sent = applied;
    return r;
}

swarm_report report_of(const std::vector<bot_reading>& readings) {
    swarm_report report;
    report.options.clients = readings.size();
    add_readings(report, readings);
    judge(report);
    return report;
}

TEST(BotsReport, PerBotFiguresFromKnownReadings) {
    std::vector<bot_reading> readings;
    readings.push_back(welcomed(10.0, 301, 200'000, 10'000)); // every tick: 1 + 30 x 10
    readings.push_back(welcomed(10.0, 271, 100'000, 20'000)); // 90%
    auto skipped = welcomed(10.0, 150, 300'000, 30'000);      // every other tick of the ones the server ran
    skipped.last_tick = 1000 + 299;
    readings.push_back(skipped);
    const auto report = report_of(readings);

    EXPECT_EQ(report.clients_requested, 3U);
    EXPECT_EQ(report.clients_reached, 3U);
    EXPECT_EQ(report.connect_failures, 0U);
    EXPECT_EQ(report.tick_rate, 30U);
    EXPECT_EQ(report.snapshots_applied, 722U);
    EXPECT_EQ(report.inputs_sent, 722U);
    EXPECT_DOUBLE_EQ(report.snapshots_per_second.min, 15.0);
    EXPECT_DOUBLE_EQ(report.snapshots_per_second.median, 27.1);
    EXPECT_DOUBLE_EQ(report.snapshots_per_second.max, 30.1);
    EXPECT_DOUBLE_EQ(report.ticks_applied_ratio.max, 1.0);
    EXPECT_DOUBLE_EQ(report.ticks_applied_ratio.median, 271.0 / 301.0);
    EXPECT_DOUBLE_EQ(report.ticks_applied_ratio.min, 150.0 / 301.0);
    EXPECT_DOUBLE_EQ(report.tick_coverage.min, 0.5);
    EXPECT_DOUBLE_EQ(report.tick_coverage.max, 1.0);
    EXPECT_DOUBLE_EQ(report.bytes_in_per_second.median, 20'000.0);
    EXPECT_DOUBLE_EQ(report.bytes_in_per_second.max, 30'000.0);
    EXPECT_DOUBLE_EQ(report.bytes_out_per_second.median, 2'000.0);
    EXPECT_DOUBLE_EQ(report.connect_ms.median, 4.0);
    EXPECT_EQ(report.bytes_in, 600'000U);
    EXPECT_TRUE(report.passed()) << report.failures.front();
}

TEST(BotsReport, FailuresDropsAndDesyncsAreCountedByReasonAndFailTheRun) {
    std::vector<bot_reading> readings;
    readings.push_back(welcomed(5.0, 151, 1000, 100));
    auto refused = bot_reading{};
    refused.phase = bot_phase::failed;
    refused.ended = {ecsnet::client::disconnect_reason::server_full, true, "server full: 1 clients",
                     std::nullopt};
    readings.push_back(refused);
    readings.push_back(refused);
    auto pending = bot_reading{};
    pending.phase = bot_phase::connecting;
    readings.push_back(pending);
    auto dropped = welcomed(2.0, 61, 1000, 100);
    dropped.phase = bot_phase::dropped;
    dropped.ended = {ecsnet::client::disconnect_reason::slow_consumer, true, "too slow", std::nullopt};
    readings.push_back(dropped);
    auto desynced = welcomed(5.0, 150, 1000, 100);
    desynced.desyncs = 2;
    desynced.snapshots_refused = 2;
    desynced.full_states = 3;
    readings.push_back(desynced);

    const auto report = report_of(readings);
    EXPECT_EQ(report.clients_reached, 3U);
    EXPECT_EQ(report.connect_failures, 3U);
    EXPECT_EQ(report.still_connecting, 1U);
    EXPECT_EQ(report.connect_failure_reasons.at("server_full"), 2U);
    EXPECT_EQ(report.connect_failure_reasons.at("still_connecting"), 1U);
    EXPECT_EQ(report.dropped, 1U);
    EXPECT_EQ(report.disconnects.at("slow_consumer"), 1U);
    EXPECT_EQ(report.messages.at("server_full"), "server full: 1 clients");
    EXPECT_EQ(report.desyncs, 2U);
    EXPECT_EQ(report.desynced_bots, 1U);
    EXPECT_EQ(report.full_states, 5U);
    EXPECT_EQ(report.snapshots_per_second.count, 3U); // the welcomed bots only
    ASSERT_FALSE(report.passed());
    std::string all;
    for (const auto& f : report.failures) {
        all += f + "\n";
    }
    EXPECT_NE(all.find("3 of 6 bots failed to connect"), std::string::npos) << all;
    EXPECT_NE(all.find("server full: 1 clients"), std::string::npos) << all;
    EXPECT_NE(all.find("1 bots were disconnected during the run (slow_consumer 1)"), std::string::npos)
        << all;
    EXPECT_NE(all.find("2 desyncs"), std::string::npos) << all;
}

TEST(BotsReport, OptionalThresholdsAndEndingsFailTheRun) {
    auto report = report_of({welcomed(10.0, 271, 1000, 100)});
    EXPECT_TRUE(report.passed());
    report.latency.samples = 271;
    report.latency.p99_ms = 60.0;
    report.options.max_latency_p99_ms = 50.0;
    judge(report);
    ASSERT_EQ(report.failures.size(), 1U);
    EXPECT_NE(report.failures[0].find("p99 60.00 ms"), std::string::npos);
    report.options.max_latency_p99_ms = 0.0;
    report.options.min_ticks_applied_ratio = 0.95;
    judge(report);
    ASSERT_EQ(report.failures.size(), 1U);
    EXPECT_NE(report.failures[0].find("0.900"), std::string::npos);
    report.options.min_ticks_applied_ratio = 0.0;
    report.ended_by = run_end::server_stalled;
    report.end_detail = "no snapshot for 5 s";
    judge(report);
    ASSERT_EQ(report.failures.size(), 1U);
    EXPECT_NE(report.failures[0].find("stopped answering"), std::string::npos);
    EXPECT_FALSE(report_of({}).passed()); // no bot at all
}

// ---- the JSON report ------------------------------------------------------------------------------

TEST(BotsReport, JsonHasTheIssuesKeysAndParses) {
    auto report = report_of({welcomed(10.0, 301, 200'000, 10'000), welcomed(10.0, 271, 100'000, 20'000)});
    latency_histogram h;
    h.record(1500, 99);
    h.record(40'000);
    report.latency = summarize_latency(h);
    report.messages["quote\"d"] = "line\nbreak \\ and \x01 control";
    const auto text = to_json(report);

    google::protobuf::Struct parsed;
    const auto status = google::protobuf::util::JsonStringToMessage(text, &parsed);
    ASSERT_TRUE(status.ok()) << status.ToString() << "\n" << text;
    const auto& f = parsed.fields();
    for (const char* key : {"clients_reached", "connect_failures", "desyncs", "latency_ms",
                            "snapshots_per_second_median", "bytes_in_per_second_per_client",
                            "ticks_applied_ratio_min", "disconnects", "bytes_out_per_second_per_client",
                            "snapshots_per_second_min", "bots_cpu_seconds", "parameters", "passed"}) {
        EXPECT_TRUE(f.contains(key)) << key;
    }
    EXPECT_EQ(f.at("clients_reached").number_value(), 2.0);
    EXPECT_EQ(f.at("desyncs").number_value(), 0.0);
    EXPECT_TRUE(f.at("passed").bool_value());
    EXPECT_DOUBLE_EQ(f.at("bytes_in_per_second_per_client").number_value(), 15'000.0);
    EXPECT_NEAR(f.at("ticks_applied_ratio_min").number_value(), 271.0 / 301.0, 1e-9);
    EXPECT_NEAR(f.at("snapshots_per_second_median").number_value(), 28.6, 1e-9);
    const auto& latency = f.at("latency_ms").struct_value().fields();
    for (const char* key : {"p50", "p95", "p99", "max"}) {
        EXPECT_TRUE(latency.contains(key)) << key;
    }
    EXPECT_NEAR(latency.at("p50").number_value(), 1.5, 1.5 / 128.0);
    EXPECT_EQ(latency.at("max").number_value(), 40.0);
    EXPECT_EQ(f.at("messages").struct_value().fields().at("quote\"d").string_value(),
              "line\nbreak \\ and \x01 control");
    EXPECT_EQ(f.at("parameters").struct_value().fields().at("behaviour").string_value(), "wander");
}

TEST(JsonWriter, NestingEscapingAndNumbers) {
    json_writer json;
    json.begin_object();
    json.member("a", 1);
    json.key("list").begin_array().value(1.5).value("x").value(true).end_array();
    json.key("empty").begin_object().end_object();
    json.member("nan", std::nan(""));
    json.end_object();
    EXPECT_EQ(json.str(),
              "{\n  \"a\": 1,\n  \"list\": [\n    1.5,\n    \"x\",\n    true\n  ],\n  \"empty\": {},\n"
              "  \"nan\": null\n}");
    EXPECT_EQ(json_writer::quote("a\"b\\c\n\t\x1f"), "\"a\\\"b\\\\c\\n\\t\\u001f\"");
    // A server's message may hold any bytes: valid UTF-8 stays, each other byte becomes U+FFFD.
    EXPECT_EQ(json_writer::quote("caf\xc3\xa9 \xff\xc3"), "\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\"");
}

} // namespace

} // namespace bots_statistics_test
