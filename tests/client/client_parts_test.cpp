// The client's small parts: the sliding-window rate meter (randomized, against a reference that keeps
// every event), the server clock estimate, the disconnect reasons' names and wire mapping, and the
// constants the UDP mapping relies on (the protocol id, the largest input a redundant message holds).

#include <cctype>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/server/options.hpp>
#include <ecsnet/transport/disconnect_code.hpp>
#include <ecsnet/transport/link_config.hpp>

#include "ecsnet/client/client_options.hpp"
#include "ecsnet/client/disconnect.hpp"
#include "ecsnet/client/rate_meter.hpp"
#include "ecsnet/client/server_clock.hpp"
#include "ecsnet/v1/envelope.pb.h"

namespace client_parts_test {

namespace {

using namespace std::chrono_literals;
using ecsnet::client::disconnect_reason;
using ecsnet::client::rate_meter;
using ecsnet::client::server_clock;
using clock_type = rate_meter::clock;

// Reference: every event kept; the rate counts those in the buckets the window covers, over the time
// they cover, the way rate_meter documents it.
struct reference_meter {
    clock_type::duration width;
    std::int64_t buckets;
    clock_type::time_point start;
    std::vector<std::pair<std::int64_t, double>> events; // (slot, amount)

    std::int64_t slot(clock_type::time_point t) const { return (t - start) / width; }
    void add(double amount, clock_type::time_point t) { events.emplace_back(slot(t), amount); }
    double per_second(clock_type::time_point now) const {
        const auto s = slot(now);
        double sum = 0;
        for (const auto& [at, amount] : events) {
            if (at > s - buckets && at <= s) {
                sum += amount;
            }
        }
        const auto elapsed = now - start;
        const auto covered = std::min(elapsed, width * (buckets - 1) + (elapsed - width * s));
        const double seconds = std::chrono::duration<double>(covered).count();
        return seconds <= 0 ? 0.0 : sum / seconds;
    }
};

TEST(ClientParts, RateMeterMatchesAReference) {
    std::mt19937_64 random{7};
    for (int run = 0; run < 20; ++run) {
        const auto buckets = 1 + random() % 30;
        const auto window = std::chrono::milliseconds{100 + random() % 3000};
        rate_meter meter{window, buckets};
        const auto start = clock_type::time_point{} + std::chrono::seconds{1000 + run};
        meter.reset(start);
        reference_meter model{clock_type::duration{window} / static_cast<std::int64_t>(buckets),
                              static_cast<std::int64_t>(buckets),
                              start,
                              {}};
        auto now = start;
        for (int step = 0; step < 2000; ++step) {
            // Mostly small steps, sometimes a gap longer than the window.
            now += random() % 50 == 0 ? window * 2 : std::chrono::microseconds{random() % 40'000};
            if (random() % 3 != 0) {
                const double amount = static_cast<double>(random() % 1500);
                meter.add(amount, now);
                model.add(amount, now);
            }
            const double expected = model.per_second(now);
            ASSERT_NEAR(meter.per_second(now), expected, 1e-9 * (1 + expected))
                << "run " << run << " step " << step;
        }
    }
}

TEST(ClientParts, RateMeterMeasuresASteadyRate) {
    rate_meter meter{2s, 20};
    const auto start = clock_type::time_point{} + 1h;
    meter.reset(start);
    EXPECT_EQ(meter.per_second(start), 0.0);
    auto now = start;
    for (int i = 0; i < 300; ++i) { // 30 a second for 10 s
        now += std::chrono::microseconds{33'333};
        meter.add(1.0, now);
        if (i > 15) {
            EXPECT_NEAR(meter.per_second(now), 30.0, 3.0) << i;
        }
    }
    EXPECT_NEAR(meter.per_second(now + 1s), 15.0, 2.0) << "half the window without events";
    EXPECT_EQ(meter.per_second(now + 3s), 0.0);
}

TEST(ClientParts, TheNextTickIsCountedFromTheNewestTickSeenNotFromTheServersEpoch) {
    using ecsnet::client::next_tick_at;
    // Tick 100 ran at 10 s of server time: the server has skipped 200 slots since its epoch (at 30 Hz the
    // epoch's count would say tick 300).
    EXPECT_EQ(next_tick_at(100, 10'000'000, 10'000'000, 30), 101U);
    EXPECT_EQ(next_tick_at(100, 10'000'000, 10'033'332, 30), 101U) << "tick 100 still runs";
    EXPECT_EQ(next_tick_at(100, 10'000'000, 10'033'334, 30), 102U) << "tick 101 runs";
    EXPECT_EQ(next_tick_at(100, 10'000'000, 10'100'000, 30), 104U);
    EXPECT_EQ(next_tick_at(100, 10'000'000, 9'990'000, 30), 101U)
        << "a clock estimate behind the tick's time";
    EXPECT_EQ(next_tick_at(0, 0, 10'000'000, 30), 301U) << "from the epoch: tick 0 ran at time 0";
    EXPECT_EQ(next_tick_at(7, 0, 3'600'000'000, 60), 7U + 216'000U + 1U) << "an hour on, no overflow";
}

TEST(ClientParts, ServerClockPrefersTheShortestRoundTrip) {
    server_clock clock;
    EXPECT_FALSE(clock.synchronised());
    EXPECT_EQ(clock.offset_us(), 0);
    // Before any Pong: the largest snapshot bound.
    clock.on_snapshot(5'000'000, 1'000'000);
    clock.on_snapshot(5'010'000, 1'005'000);
    EXPECT_TRUE(clock.synchronised());
    EXPECT_EQ(clock.offset_us(), 4'005'000);
    // The true offset is 4'010'000. A slow round trip whose delay is all on the way back misleads by 40 ms;
    // a fast one by at most 0.5 ms; the fast one wins.
    clock.on_pong(2'000'000, 2'080'000, 6'010'000 + 0);      // server answered right away, reply took 80 ms
    clock.on_pong(3'000'000, 3'001'000, 7'010'000 + 500);    // 1 ms round trip
    clock.on_pong(4'000'000, 4'050'000, 8'010'000 + 49'000); // 50 ms, mostly on the way out
    EXPECT_NEAR(static_cast<double>(clock.offset_us()), 4'010'000.0, 600.0);
    EXPECT_EQ(clock.server_time_us(10), 10 + clock.offset_us());
    clock.on_pong(10, 5, 0); // a negative round trip is ignored
    EXPECT_NEAR(static_cast<double>(clock.offset_us()), 4'010'000.0, 600.0);
    // After 8 more slow samples the fast one has aged out.
    for (int i = 0; i < 8; ++i) {
        clock.on_pong(9'000'000 + i * 100'000, 9'020'000 + i * 100'000, 13'010'000 + i * 100'000 + 10'000);
    }
    EXPECT_EQ(clock.offset_us(), 4'010'000);
    clock.reset();
    EXPECT_FALSE(clock.synchronised());
}

TEST(ClientParts, DisconnectReasonsMapToTheWire) {
    EXPECT_EQ(ecsnet::client::from_wire(ecsnet::v1::SHUTDOWN), disconnect_reason::shutdown);
    EXPECT_EQ(ecsnet::client::from_wire(ecsnet::v1::SCHEMA_MISMATCH), disconnect_reason::schema_mismatch);
    EXPECT_EQ(ecsnet::client::from_wire(ecsnet::v1::AUTHENTICATION_FAILED),
              disconnect_reason::authentication_failed);
    EXPECT_EQ(ecsnet::client::from_wire(ecsnet::v1::DISCONNECT_REASON_UNSPECIFIED),
              disconnect_reason::connection_lost);
    EXPECT_EQ(ecsnet::client::from_wire(static_cast<ecsnet::v1::DisconnectReason>(99)),
              disconnect_reason::connection_lost);
    for (int wire = 1; wire <= 11; ++wire) {
        const auto reason = ecsnet::client::from_wire(static_cast<ecsnet::v1::DisconnectReason>(wire));
        EXPECT_EQ(static_cast<int>(reason), wire);
        // The client's names are the wire names in lower case.
        std::string lower =
            ecsnet::v1::DisconnectReason_Name(static_cast<ecsnet::v1::DisconnectReason>(wire));
        for (auto& ch : lower) {
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        }
        EXPECT_EQ(ecsnet::client::to_string(reason), lower);
    }
    EXPECT_EQ(ecsnet::client::to_string(disconnect_reason::connect_failed), "connect_failed");
    EXPECT_EQ(ecsnet::client::to_string(ecsnet::client::client_state::connected), "connected");
}

TEST(ClientParts, TheTransportsDisconnectCodesAreTheWireReasons) {
    namespace code = ecsnet::transport::disconnect_code;
    EXPECT_EQ(ecsnet::client::from_wire(static_cast<ecsnet::v1::DisconnectReason>(code::client_quit)),
              disconnect_reason::client_quit);
    EXPECT_EQ(ecsnet::client::from_wire(static_cast<ecsnet::v1::DisconnectReason>(code::shutdown)),
              disconnect_reason::shutdown);
    EXPECT_EQ(ecsnet::client::from_wire(static_cast<ecsnet::v1::DisconnectReason>(code::timeout)),
              disconnect_reason::timeout);
    EXPECT_EQ(ecsnet::client::from_wire(static_cast<ecsnet::v1::DisconnectReason>(code::slow_consumer)),
              disconnect_reason::slow_consumer);
}

TEST(ClientParts, TheDefaultProtocolIdIsTheServers) {
    EXPECT_EQ(ecsnet::client::default_protocol_id, ecsnet::server::default_protocol_id);
    EXPECT_EQ(ecsnet::client::client_options{}.protocol_id, ecsnet::server::default_protocol_id);
    EXPECT_EQ(ecsnet::client::client_options{}.transport, ecsnet::client::transport_kind::udp);
    EXPECT_FALSE(ecsnet::client::client_options{}.simulator.enabled());
}

// The largest Input the SDK lets through over UDP fits a redundant-channel message whatever its tick and
// sequence (the largest varints), and one byte more might not.
TEST(ClientParts, TheLargestUdpInputFitsARedundantMessage) {
    const auto limit = ecsnet::transport::link_config{}.max_redundant_message_bytes;
    ecsnet::v1::Envelope envelope;
    auto& input = *envelope.mutable_input();
    input.set_client_tick(UINT32_MAX);
    input.set_sequence(UINT32_MAX);
    input.set_payload(std::string(ecsnet::client::max_udp_input_size, 'x'));
    EXPECT_LE(envelope.ByteSizeLong(), limit);
    input.set_payload(std::string(ecsnet::client::max_udp_input_size + 1, 'x'));
    EXPECT_GT(envelope.ByteSizeLong(), limit);
}

} // namespace

} // namespace client_parts_test
