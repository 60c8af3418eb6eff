// Interpolation on known snapshots: a server-side registry is captured and encoded by the real codec, a
// mirror applies the snapshots, and components are sampled between them. Also the field rules one by one
// (linear, shortest arc, step) against a reference written out longhand, on random values.

#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/client/interpolation.hpp"
#include "ecsnet/proto/encoder.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/mirror.hpp"

namespace interpolation_test {

namespace {

using namespace ecsnet;
using arena::Health;
using arena::Kind;
using arena::Transform;
using client::find_window;
using client::interpolate_field;
using client::state_buffer;

constexpr double pi = std::numbers::pi;
constexpr std::uint32_t tick_rate = 30;

std::int64_t time_of(proto::tick_type tick) {
    return std::int64_t{tick} * 1000000 / tick_rate;
}

double radians(double degrees) {
    return degrees * pi / 180.0;
}

// Difference of two angles in (-pi, pi].
double angle_difference(double a, double b) {
    double d = std::fmod(a - b, 2 * pi);
    if (d <= -pi) {
        d += 2 * pi;
    } else if (d > pi) {
        d -= 2 * pi;
    }
    return d;
}

// A server registry, its history and encoder, and a client mirror fed tick by tick.
class replicated_pair {
public:
    replicated_pair()
        : history_{arena::replicated_schema(), server_, proto::history_options{32, tick_rate}}
        , encoder_{history_}
        , mirror_{arena::replicated_schema(), proto::mirror_options{32, tick_rate}} {}

    registry& server() { return server_; }
    proto::mirror& mirror() { return mirror_; }
    state_buffer& buffer() { return buffer_; }

    /// Captures the server as `tick`, encodes it against the newest tick the mirror applied, applies it.
    void tick(proto::tick_type tick) {
        history_.capture(tick, static_cast<std::uint64_t>(time_of(tick)));
        v1::Snapshot snapshot;
        static_cast<void>(encoder_.encode(proto::baselines{mirror_.newest_tick(), std::nullopt}, snapshot));
        auto applied = mirror_.apply(snapshot);
        ASSERT_TRUE(applied.has_value()) << applied.message();
        EXPECT_EQ(static_cast<std::int64_t>(applied->server_time_us), time_of(tick));
        ASSERT_NE(mirror_.newest_state(), nullptr);
        buffer_.push(*mirror_.newest_state());
    }

    entity local(entity server_entity) {
        const auto net = history_.to_net(server_entity);
        return mirror_.find(net);
    }

private:
    registry server_;
    proto::snapshot_history history_;
    proto::snapshot_encoder encoder_;
    proto::mirror mirror_;
    state_buffer buffer_{32};
};

TEST(ClientInterpolation, SamplesBetweenTwoSnapshots) {
    replicated_pair pair;
    auto& server = pair.server();
    const auto walker = server.create();
    server.emplace<Transform>(walker, 0.0F, 100.0F, 0.0F, static_cast<float>(radians(350)));
    server.emplace<Health>(walker, std::uint16_t{50});
    server.emplace<Kind>(walker, std::uint8_t{3});
    pair.tick(1);
    server.patch<Transform>(walker, [](Transform& t) {
        t.x = 10.0F;
        t.y = 90.0F;
        t.yaw = static_cast<float>(radians(10)); // 20 degrees further, across 0
    });
    server.patch<Health>(walker, [](Health& h) { h.value = 60; });
    const auto newcomer = server.create(); // exists at tick 2 only
    server.emplace<Transform>(newcomer, 5.0F, 5.0F, 0.0F, 0.0F);
    server.emplace<Health>(newcomer, std::uint16_t{1});
    server.emplace<Kind>(newcomer, std::uint8_t{1});
    pair.tick(2);

    const auto local = pair.local(walker);
    ASSERT_NE(local, null_entity);
    const auto midway = (time_of(1) + time_of(2)) / 2;
    const auto window = find_window(pair.buffer(), midway);
    ASSERT_NE(window.before, nullptr);
    ASSERT_NE(window.after, nullptr);
    EXPECT_EQ(window.before->tick, 1U);
    EXPECT_EQ(window.after->tick, 2U);
    EXPECT_NEAR(window.alpha, 0.5, 1e-4);

    const auto t = client::sample<Transform>(pair.mirror(), window, local);
    ASSERT_TRUE(t.has_value());
    EXPECT_NEAR(t->x, 5.0F, 0.01F);
    EXPECT_NEAR(t->y, 95.0F, 0.01F);
    EXPECT_NEAR(angle_difference(t->yaw, 0.0), 0.0, radians(0.2)) << "the short way from 350 to 10 passes 0";
    EXPECT_GE(t->yaw, 0.0F);
    EXPECT_LT(t->yaw, static_cast<float>(2 * pi));
    EXPECT_EQ(client::sample<Health>(pair.mirror(), window, local)->value, 50U) << "integers step";
    EXPECT_EQ(client::sample<Kind>(pair.mirror(), window, local)->value, 3U);

    // At the later snapshot's time: its values; past it: still them (no extrapolation); before the first:
    // the first's.
    const auto at_second = find_window(pair.buffer(), time_of(2));
    EXPECT_EQ(at_second.after, nullptr);
    EXPECT_NEAR(client::sample<Transform>(pair.mirror(), at_second, local)->x, 10.0F, 0.01F);
    EXPECT_EQ(client::sample<Health>(pair.mirror(), at_second, local)->value, 60U);
    const auto later = find_window(pair.buffer(), time_of(2) + 500'000);
    EXPECT_NEAR(client::sample<Transform>(pair.mirror(), later, local)->x, 10.0F, 0.01F);
    const auto earlier = find_window(pair.buffer(), time_of(1) - 500'000);
    EXPECT_EQ(earlier.before, nullptr);
    EXPECT_NEAR(client::sample<Transform>(pair.mirror(), earlier, local)->x, 0.0F, 0.01F);
    EXPECT_EQ(client::sample<Health>(pair.mirror(), earlier, local)->value, 50U);

    // Only one side holds the newcomer: its value as is.
    const auto fresh = client::sample<Transform>(pair.mirror(), window, pair.local(newcomer));
    ASSERT_TRUE(fresh.has_value());
    EXPECT_NEAR(fresh->x, 5.0F, 0.01F);

    // Not a mirrored entity: nothing. An empty window: the registry's current component.
    EXPECT_FALSE(client::sample<Transform>(pair.mirror(), window, null_entity).has_value());
    const auto current = client::sample<Transform>(pair.mirror(), client::interpolation_window{}, local);
    ASSERT_TRUE(current.has_value());
    EXPECT_NEAR(current->x, 10.0F, 0.01F);
}

TEST(ClientInterpolation, RowsBelongToTheRightOccupantOfAnIndex) {
    replicated_pair pair;
    auto& server = pair.server();
    const auto first = server.create();
    server.emplace<Transform>(first, 1.0F, 1.0F, 0.0F, 0.0F);
    pair.tick(1);
    const auto first_net = *pair.mirror().net_of(pair.local(first));
    server.destroy(first);
    const auto second = server.create(); // the same index, recycled
    ASSERT_EQ(to_index(second), to_index(first));
    server.emplace<Transform>(second, 50.0F, 50.0F, 0.0F, 0.0F);
    pair.tick(2);
    const auto second_net = *pair.mirror().net_of(pair.local(second));
    EXPECT_EQ(second_net.index, first_net.index);
    EXPECT_NE(second_net.generation, first_net.generation);

    const auto* one = pair.mirror().state(1);
    const auto* two = pair.mirror().state(2);
    ASSERT_NE(one, nullptr);
    ASSERT_NE(two, nullptr);
    EXPECT_TRUE(client::find_row(*one, 0, first_net).has_value());
    EXPECT_FALSE(client::find_row(*one, 0, second_net).has_value()) << "another generation at that index";
    EXPECT_TRUE(client::find_row(*two, 0, second_net).has_value());
    EXPECT_FALSE(client::find_row(*two, 0, first_net).has_value());
    EXPECT_FALSE(client::find_row(*two, 1, second_net).has_value()) << "no Health";

    // Halfway, the newcomer is not blended with its predecessor: it is where tick 2 put it.
    const auto window = find_window(pair.buffer(), (time_of(1) + time_of(2)) / 2);
    const auto t = client::sample<Transform>(pair.mirror(), window, pair.local(second));
    ASSERT_TRUE(t.has_value());
    EXPECT_NEAR(t->x, 50.0F, 0.01F);
}

TEST(ClientInterpolation, WindowsFollowTheBuffer) {
    replicated_pair pair;
    auto& server = pair.server();
    const auto e = server.create();
    for (proto::tick_type tick = 1; tick <= 40; ++tick) {
        server.emplace_or_replace<Transform>(e, static_cast<float>(tick), 0.0F, 0.0F, 0.0F);
        pair.tick(tick);
    }
    EXPECT_EQ(pair.buffer().size(), 32U) << "as many as it holds";
    EXPECT_EQ(pair.buffer().oldest().tick, 9U);
    EXPECT_EQ(pair.buffer().newest().tick, 40U);
    EXPECT_LE(pair.mirror().stored(), 3U) << "the mirror itself keeps only its baselines";
    const auto local = pair.local(e);
    for (proto::tick_type tick = 9; tick < 40; ++tick) {
        for (const double fraction : {0.0, 0.25, 0.75}) {
            const auto at =
                time_of(tick) +
                static_cast<std::int64_t>(fraction * static_cast<double>(time_of(tick + 1) - time_of(tick)));
            const auto w = find_window(pair.buffer(), at);
            ASSERT_NE(w.before, nullptr) << "tick " << tick << " + " << fraction;
            EXPECT_EQ(w.before->tick, tick);
            ASSERT_NE(w.after, nullptr);
            EXPECT_EQ(w.after->tick, tick + 1);
            EXPECT_NEAR(client::sample<Transform>(pair.mirror(), w, local)->x,
                        static_cast<double>(tick) + fraction, 0.01);
        }
    }
    pair.buffer().clear();
    EXPECT_TRUE(find_window(pair.buffer(), time_of(20)).empty());
}

// The field rules against a longhand reference, on random quantized values.
TEST(ClientInterpolation, FieldRulesMatchAReference) {
    std::mt19937_64 random{42};
    proto::field_info position{"x", proto::field_encoding::fixed_point, 20, -1024.0, 1.0 / 512};
    proto::field_info yaw{"yaw", proto::field_encoding::angle, 12};
    proto::field_info health{"value", proto::field_encoding::unsigned_integer, 16};
    proto::field_info flag{"on", proto::field_encoding::boolean, 1};
    for (int i = 0; i < 20000; ++i) {
        const double alpha = std::uniform_real_distribution<double>{0.0, 1.0}(random);
        const auto a = static_cast<std::uint32_t>(random() & 0xFFFFF);
        const auto b = static_cast<std::uint32_t>(random() & 0xFFFFF);
        const double ra = -1024.0 + a / 512.0;
        const double rb = -1024.0 + b / 512.0;
        ASSERT_NEAR(interpolate_field(position, a, b, alpha), ra * (1 - alpha) + rb * alpha, 1e-9);

        const auto qa = a & 0xFFF;
        const auto qb = b & 0xFFF;
        // Reference: walk from qa towards qb the short way, in whole turns of 4096.
        int delta = static_cast<int>(qb) - static_cast<int>(qa);
        while (delta >= 2048) {
            delta -= 4096;
        }
        while (delta < -2048) {
            delta += 4096;
        }
        const double expected = std::fmod(qa + delta * alpha + 4096.0, 4096.0) * 2 * pi / 4096;
        const double got = interpolate_field(yaw, qa, qb, alpha);
        ASSERT_GE(got, 0.0);
        ASSERT_LT(got, 2 * pi);
        ASSERT_NEAR(angle_difference(got, expected), 0.0, 1e-9) << qa << " -> " << qb << " at " << alpha;
        // Never further from the start than the short arc's length.
        ASSERT_LE(std::fabs(angle_difference(got, qa * 2 * pi / 4096)),
                  std::abs(delta) * 2 * pi / 4096 + 1e-9);

        const auto ha = a & 0xFFFF;
        const auto hb = b & 0xFFFF;
        ASSERT_EQ(interpolate_field(health, ha, hb, alpha), alpha >= 1.0 ? hb : ha);
        ASSERT_EQ(interpolate_field(flag, a & 1, b & 1, alpha), alpha >= 1.0 ? (b & 1) : (a & 1));
    }
    EXPECT_EQ(interpolate_field(health, 5, 9, 1.0), 9.0);
    EXPECT_EQ(interpolate_field(health, 5, 9, 0.999), 5.0);
    // Exactly half a turn apart: either way is as short; the result is a quarter turn from both.
    const double half = interpolate_field(yaw, 0, 2048, 0.5);
    EXPECT_NEAR(std::fabs(angle_difference(half, 0.0)), pi / 2, 1e-9);
}

} // namespace

} // namespace interpolation_test
