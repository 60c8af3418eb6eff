// RTT (RFC 6298 smoothing, the ack delay taken out, the resend timeout), loss (plain average, then an
// exponential moving average) and the pacing token bucket.

#include <gtest/gtest.h>

#include "ecsnet/transport/loss_estimator.hpp"
#include "ecsnet/transport/random.hpp"
#include "ecsnet/transport/rtt_estimator.hpp"
#include "ecsnet/transport/token_bucket.hpp"

namespace ecsnet::transport::estimators_test {
namespace {

using namespace std::chrono_literals;

TEST(RttEstimator, FollowsRfc6298) {
    rtt_estimator rtt{100ms};
    EXPECT_FALSE(rtt.has_sample());
    EXPECT_EQ(rtt.smoothed(), 100ms);
    EXPECT_EQ(rtt.variance(), 50ms);
    rtt.add_sample(80ms, 0ms); // first sample: SRTT = R, RTTVAR = R / 2
    EXPECT_EQ(rtt.smoothed(), 80ms);
    EXPECT_EQ(rtt.variance(), 40ms);
    rtt.add_sample(120ms, 0ms); // RTTVAR = 3/4 40 + 1/4 |80 - 120| = 40; SRTT = 7/8 80 + 1/8 120 = 85
    EXPECT_EQ(rtt.variance(), 40ms);
    EXPECT_EQ(rtt.smoothed(), 85ms);
    EXPECT_EQ(rtt.min_rtt(), 80ms);
    // RTO = SRTT + 4 RTTVAR + peer ack delay (0), clamped.
    EXPECT_EQ(rtt.resend_timeout(10ms, 1s), 245ms);
    EXPECT_EQ(rtt.resend_timeout(10ms, 200ms), 200ms);
}

TEST(RttEstimator, TakesTheAckDelayOut) {
    rtt_estimator rtt{100ms};
    for (int i = 0; i < 100; ++i) {
        rtt.add_sample(60ms, 20ms); // every ack held 20 ms by a peer that writes once per tick
    }
    EXPECT_EQ(rtt.smoothed(), 40ms);
    EXPECT_EQ(rtt.min_rtt(), 40ms);
    EXPECT_EQ(rtt.peer_ack_delay(), 20ms);
    // ... and the resend timeout puts it back (the peer will hold acks again).
    EXPECT_GE(rtt.resend_timeout(1ms, 1s), 60ms);
    // A delay longer than the sample itself is nonsense: ignored.
    rtt_estimator other{100ms};
    other.add_sample(30ms, 50ms);
    EXPECT_EQ(other.smoothed(), 30ms);
}

TEST(RttEstimator, ConvergesOnNoisySamples) {
    rtt_estimator rtt{500ms};
    sim_random rng{1};
    for (int i = 0; i < 2000; ++i) {
        rtt.add_sample(std::chrono::microseconds{45000 + rng.below(10001)}, 0ms);
    }
    const std::chrono::duration<double, std::milli> smoothed = rtt.smoothed();
    EXPECT_NEAR(smoothed.count(), 50.0, 2.0);
    EXPECT_LT(rtt.variance(), 5ms);
}

TEST(LossEstimator, AveragesPlainlyThenSmooths) {
    loss_estimator loss{1.0 / 64};
    loss.add(true);
    EXPECT_DOUBLE_EQ(loss.value(), 1.0);
    loss.add(false);
    EXPECT_DOUBLE_EQ(loss.value(), 0.5);
    loss.add(false);
    loss.add(false);
    EXPECT_DOUBLE_EQ(loss.value(), 0.25);
    sim_random rng{2};
    for (int i = 0; i < 20000; ++i) {
        loss.add(rng.uniform() < 0.2);
    }
    EXPECT_NEAR(loss.value(), 0.2, 0.08);
    EXPECT_EQ(loss.samples(), 20004U);
}

TEST(TokenBucket, PacesToTheRateWithABurst) {
    token_bucket bucket{1000, 500}; // 1,000 bytes/s, 500 bytes of burst
    const clock::time_point t{std::chrono::hours{1}};
    EXPECT_TRUE(bucket.allows(t));
    EXPECT_EQ(bucket.available(t), 500);
    bucket.consume(800, t); // an overdraw is allowed once
    EXPECT_EQ(bucket.available(t), -300);
    EXPECT_FALSE(bucket.allows(t));
    EXPECT_EQ(bucket.when_allowed(t), t + 301ms);
    EXPECT_FALSE(bucket.allows(t + 300ms));
    EXPECT_TRUE(bucket.allows(t + 301ms));
    EXPECT_EQ(bucket.available(t + 10s), 500); // never more than the burst
    token_bucket unlimited{0, 1};
    unlimited.consume(1 << 30, t);
    EXPECT_TRUE(unlimited.allows(t));
}

} // namespace
} // namespace ecsnet::transport::estimators_test
