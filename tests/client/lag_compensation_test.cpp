// Lag compensation (issue 17): the hit history (ring, interpolation, nearest hit, memory), the server's
// checks of shots (clamped render times, cooldown, invalid aims), the arena's fire input, and the issue's
// live test: at 150 ms round trip, a shot at a moving target that was under the crosshair on the client's
// screen hits, and one that missed there misses.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>

#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/arena/input.hpp"
#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/server/hit_history.hpp"
#include "ecsnet/server/hit_target.hpp"
#include "ecsnet/server/lag_compensation.hpp"

namespace lag_compensation_test {

namespace {

using namespace std::chrono_literals;
using namespace ecsnet;
using ecsnet::client::testing::test_server;
using server::hit_history;
using server::hit_ray;

entity make_entity(std::uint32_t index, std::uint32_t version = 0) {
    return entity{(version << entity_traits::index_bits) | index};
}

// ---- the history -------------------------------------------------------------------------------------

TEST(HitHistory, InterpolatesBetweenTheTwoFramesAroundTheTimeAsTheClientDoes) {
    hit_history history{4};
    const auto a = make_entity(7);
    history.begin_frame(1, 1000);
    history.add(a, 0.0F, 10.0F, 0.5F);
    history.begin_frame(2, 2000);
    history.add(a, 4.0F, 10.0F, 0.5F);
    const auto at = [&](std::int64_t t) { return history.position_of(a, t); };
    ASSERT_TRUE(at(1500));
    EXPECT_FLOAT_EQ(at(1500)->x, 2.0F);
    EXPECT_FLOAT_EQ(at(1250)->x, 1.0F);
    EXPECT_FLOAT_EQ(at(1000)->x, 0.0F); // at a frame: that frame
    EXPECT_FLOAT_EQ(at(500)->x, 0.0F);  // before the oldest: the oldest
    EXPECT_FLOAT_EQ(at(9000)->x, 4.0F); // past the newest: the newest
    // A ray along y = 10 from the left, aimed at where the entity was at t = 1500, hits it there.
    const auto hit = history.raycast(1500, hit_ray{-10.0F, 10.0F, 1.0F, 0.0F, 100.0F});
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->target, a);
    EXPECT_NEAR(hit->distance, 11.5F, 1e-4F); // centre at x = 2, radius 0.5
    // A ray through x = 3.5 along y misses at t = 1250 (the entity at x = 1) and hits at t = 1750 (x = 3).
    EXPECT_FALSE(history.raycast(1250, hit_ray{3.5F, 0.0F, 0.0F, 1.0F, 100.0F}));
    EXPECT_TRUE(history.raycast(1750, hit_ray{3.4F, 0.0F, 0.0F, 1.0F, 100.0F}));
}

TEST(HitHistory, TheNearestTargetAlongTheRayIsHitAndTheIgnoredOneIsNot) {
    hit_history history{2};
    const auto near = make_entity(1);
    const auto far = make_entity(2);
    const auto shooter = make_entity(3);
    history.begin_frame(1, 0);
    history.add(far, 50.0F, 0.0F, 1.0F);
    history.add(shooter, 0.0F, 0.0F, 1.0F);
    history.add(near, 20.0F, 0.3F, 1.0F);
    const auto hit = history.raycast(0, hit_ray{0.0F, 0.0F, 2.0F, 0.0F, 100.0F}, shooter);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->target, near);
    // Without ignoring the shooter, the origin is inside its circle: distance 0.
    const auto self = history.raycast(0, hit_ray{0.0F, 0.0F, 1.0F, 0.0F, 100.0F});
    ASSERT_TRUE(self);
    EXPECT_EQ(self->target, shooter);
    EXPECT_EQ(self->distance, 0.0F);
    // Range, direction and degenerate rays.
    EXPECT_FALSE(history.raycast(0, hit_ray{0.0F, 0.0F, 1.0F, 0.0F, 10.0F}, shooter));
    EXPECT_FALSE(history.raycast(0, hit_ray{0.0F, 0.0F, -1.0F, 0.0F, 100.0F}, shooter));
    EXPECT_FALSE(history.raycast(0, hit_ray{0.0F, 0.0F, 0.0F, 0.0F, 100.0F}, shooter));
    EXPECT_FALSE(history.raycast(0, hit_ray{0.0F, 0.0F, NAN, 0.0F, 100.0F}, shooter));
}

TEST(HitHistory, TheRingWrapsEntitiesComeAndGoAndMemoryStaysBounded) {
    hit_history history{3};
    EXPECT_TRUE(history.empty());
    EXPECT_FALSE(history.raycast(0, hit_ray{0.0F, 0.0F, 1.0F, 0.0F, 10.0F}));
    std::size_t warm = 0;
    for (std::uint64_t tick = 1; tick <= 100; ++tick) {
        history.begin_frame(tick, static_cast<std::int64_t>(tick) * 100);
        // Entity 5 exists on even ticks only; entity 9 always, moving 1 m per tick; a new occupant of index 5
        // (another version) on ticks multiple of 4.
        history.add(make_entity(9), static_cast<float>(tick), 0.0F, 0.5F);
        if (tick % 2 == 0) {
            history.add(make_entity(5, tick % 4 == 0 ? 1U : 0U), 0.0F, 5.0F, 0.5F);
        }
        if (tick == 10) {
            warm = history.memory_bytes();
        }
    }
    EXPECT_EQ(history.size(), 3U);
    EXPECT_EQ(history.newest_tick(), 100U);
    EXPECT_EQ(history.oldest_time_us(), 9800);
    EXPECT_EQ(history.memory_bytes(), warm); // no growth once warm
    // Between ticks 99 and 100: entity 9 blended; index 5's occupant (version 1) exists in tick 100 only.
    const auto moving = history.position_of(make_entity(9), 9950);
    ASSERT_TRUE(moving);
    EXPECT_FLOAT_EQ(moving->x, 99.5F);
    const auto fresh = history.position_of(make_entity(5, 1), 9950);
    ASSERT_TRUE(fresh);
    EXPECT_FLOAT_EQ(fresh->y, 5.0F);
    EXPECT_FALSE(history.position_of(make_entity(5, 0), 9950)); // the previous occupant is not it
    // Older than what is kept: the oldest frame (tick 98: 98 m).
    EXPECT_FLOAT_EQ(history.position_of(make_entity(9), 0)->x, 98.0F);
}

// The broad phase skips nothing it should not: every raycast equals a brute-force one over position_of().
TEST(HitHistory, RaycastsEqualABruteForceOverBlendedPositions) {
    hit_history history{6};
    arena::scene_random random{11};
    std::vector<std::pair<float, float>> at(200);
    for (auto& p : at) {
        p = {static_cast<float>(random.uniform(-50, 50)), static_cast<float>(random.uniform(-50, 50))};
    }
    for (std::uint64_t tick = 1; tick <= 6; ++tick) {
        history.begin_frame(tick, static_cast<std::int64_t>(tick) * 1000);
        for (std::uint32_t i = 0; i < at.size(); ++i) {
            if (random.chance(0.05)) {
                continue; // absent this tick
            }
            // Most walk a little; one in 50 jumps far (a respawn) and widens the tick's margin.
            const double jump = random.chance(0.02) ? 40.0 : 0.5;
            at[i].first += static_cast<float>(random.uniform(-jump, jump));
            at[i].second += static_cast<float>(random.uniform(-jump, jump));
            history.add(make_entity(i), at[i].first, at[i].second, 0.3F + static_cast<float>(i % 3) * 0.2F);
        }
    }
    std::size_t hits = 0;
    for (int shot = 0; shot < 2000; ++shot) {
        const auto time = static_cast<std::int64_t>(random.uniform(500, 6500));
        const hit_ray ray{
            static_cast<float>(random.uniform(-60, 60)), static_cast<float>(random.uniform(-60, 60)),
            static_cast<float>(random.uniform(-1, 1)), static_cast<float>(random.uniform(-1, 1)),
            static_cast<float>(random.uniform(10, 150))};
        const double length = std::hypot(ray.dir_x, ray.dir_y);
        std::optional<std::pair<double, entity>> expected;
        for (std::uint32_t i = 0; i < at.size(); ++i) {
            const auto p = history.position_of(make_entity(i), time);
            if (!p || length < 1e-9) {
                continue;
            }
            const double mx = ray.x - static_cast<double>(p->x);
            const double my = ray.y - static_cast<double>(p->y);
            const double b = (mx * ray.dir_x + my * ray.dir_y) / length;
            const double r = 0.3 + (i % 3) * 0.2;
            const double c = mx * mx + my * my - r * r;
            if ((c > 0 && b > 0) || b * b - c < 0) {
                continue;
            }
            const double s = std::max(0.0, -b - std::sqrt(b * b - c));
            if (s <= ray.range && (!expected || s < expected->first)) {
                expected = std::pair{s, make_entity(i)};
            }
        }
        const auto hit = history.raycast(time, ray);
        ASSERT_EQ(hit.has_value(), expected.has_value()) << "shot " << shot;
        if (hit) {
            EXPECT_NEAR(hit->distance, expected->first, 1e-3) << "shot " << shot;
            ++hits;
        }
    }
    EXPECT_GT(hits, 100U); // the comparison saw hits, not only misses
}

// ---- the server's checks ------------------------------------------------------------------------------

struct compensation_fixture {
    registry reg;
    server::lag_compensation compensation;
    entity shooter;
    entity target;

    explicit compensation_fixture(std::chrono::milliseconds interval = 100ms)
        : compensation{arena::replicated_schema(),
                       server::spatial_layout{"Transform", "x", "y", -1024.0F, -1024.0F, 1024.0F, 1024.0F},
                       server::lag_compensation_options{500ms, interval, 30}} {
        shooter = reg.create();
        reg.emplace<arena::Transform>(shooter, 0.0F, 0.0F, 0.0F, 0.0F);
        reg.emplace<server::hit_target>(shooter, 0.5F);
        target = reg.create();
        reg.emplace<arena::Transform>(target, 0.0F, 10.0F, 0.0F, 0.0F);
        reg.emplace<server::hit_target>(target, 0.5F);
        // 30 ticks of the target walking +x at 3 m per tick (a tick every 33,333 us).
        for (std::uint64_t tick = 1; tick <= 30; ++tick) {
            reg.patch<arena::Transform>(target,
                                        [&](arena::Transform& t) { t.x = 3.0F * static_cast<float>(tick); });
            compensation.record(reg, tick, time_of(tick));
        }
        compensation.set_now(time_of(30) + 10'000);
    }
    static std::int64_t time_of(std::uint64_t tick) { return static_cast<std::int64_t>(tick) * 33'333; }
    server::shot_result shoot_at(float x, std::int64_t render_time_us, server::client_id client = 1) {
        return compensation.shoot(
            server::shot_request{client, shooter, render_time_us, x, 10.0F, 100.0F, 0, 0});
    }
};

TEST(LagCompensation, RecordingFromTheCapturedColumnsEqualsQuantizingTheRegistry) {
    registry reg;
    arena::scene_random random{5};
    std::vector<entity> all;
    for (int i = 0; i < 300; ++i) {
        const auto e = reg.create();
        reg.emplace<arena::Transform>(e, static_cast<float>(random.uniform(-1000, 1000)),
                                      static_cast<float>(random.uniform(-1000, 1000)), 0.0F, 0.0F);
        if (i % 3 != 0) { // a third are not hit-testable
            reg.emplace<server::hit_target>(e, 0.25F + static_cast<float>(i % 4));
        }
        all.push_back(e);
    }
    reg.destroy(all[10]); // a hole: the captured indices skip it
    proto::snapshot_history captured{arena::replicated_schema(), reg, proto::history_options{32, 30}};
    const server::spatial_layout layout{"Transform", "x", "y", -1024.0F, -1024.0F, 1024.0F, 1024.0F};
    server::lag_compensation quantizing{arena::replicated_schema(), layout, {}};
    server::lag_compensation from_columns{arena::replicated_schema(), layout, {}};
    captured.capture(1, 1000);
    quantizing.record(reg, 1, 1000);
    from_columns.record(reg, 1, 1000, &captured.newest());
    ASSERT_EQ(quantizing.history().newest_size(), 199U);
    EXPECT_EQ(from_columns.history().newest_size(), 199U);
    for (const auto e : all) {
        const auto a = quantizing.history().position_of(e, 1000);
        const auto b = from_columns.history().position_of(e, 1000);
        ASSERT_EQ(a.has_value(), b.has_value());
        if (a) {
            EXPECT_EQ(a->x, b->x);
            EXPECT_EQ(a->y, b->y);
            // And the position is the quantized one (1/512 m), not the float the registry holds.
            EXPECT_NEAR(a->x, reg.get<arena::Transform>(e).x, 1.0 / 1024 + 1e-4);
        }
    }
}

TEST(LagCompensation, AShotHitsWhereTheTargetWasAtTheRenderTimeNotWhereItIsNow) {
    compensation_fixture f{0ms};
    // At tick 20 the target was at x = 60, now it is at 90.
    const auto then = f.shoot_at(60.0F, compensation_fixture::time_of(20));
    EXPECT_EQ(then.outcome, server::shot_outcome::hit);
    EXPECT_EQ(then.clamp, server::rewind_clamp::none);
    ASSERT_TRUE(then.hit);
    EXPECT_EQ(then.hit->target, f.target);
    EXPECT_NEAR(then.hit->x, 60.0F, 1e-2F);
    EXPECT_EQ(f.shoot_at(90.0F, compensation_fixture::time_of(20)).outcome, server::shot_outcome::miss);
    // Halfway between ticks 20 and 21: x = 61.5.
    EXPECT_EQ(f.shoot_at(61.5F, compensation_fixture::time_of(20) + 16'666).outcome,
              server::shot_outcome::hit);
    EXPECT_EQ(f.compensation.counts().shots, 3U);
    EXPECT_EQ(f.compensation.counts().hits, 2U);
}

TEST(LagCompensation, APredictingShooterShootsFromWhereItIsNowAtTargetsWhereTheyWere) {
    compensation_fixture f{0ms};
    // The shooter was recorded at (0, 0); now (as it predicts and sees itself) it is at (50, 0). Aiming
    // (10, 10) from there crosses where the target was at tick 20: (60, 10).
    const auto present = f.compensation.shoot(server::shot_request{
        1, f.shooter, compensation_fixture::time_of(20), 10.0F, 10.0F, 100.0F, 50.0F, 0.0F, true});
    EXPECT_EQ(present.outcome, server::shot_outcome::hit);
    // The same aim from where the history has the shooter passes (10, 10): a miss.
    const auto recorded = f.compensation.shoot(server::shot_request{
        1, f.shooter, compensation_fixture::time_of(20), 10.0F, 10.0F, 100.0F, 50.0F, 0.0F});
    EXPECT_EQ(recorded.outcome, server::shot_outcome::miss);
}

TEST(LagCompensation, RenderTimesFromTheFutureOrBeyondTheWindowAreClampedAndCounted) {
    compensation_fixture f{0ms};
    // From the future: evaluated at the newest tick (x = 90).
    const auto future = f.shoot_at(90.0F, compensation_fixture::time_of(30) + 5'000'000);
    EXPECT_EQ(future.clamp, server::rewind_clamp::future);
    EXPECT_EQ(future.outcome, server::shot_outcome::hit);
    // 1 s back (tick 0 would put the target at x = 0): clamped to now - 500 ms, about tick 15.6 (x = 47).
    const auto old = f.shoot_at(3.0F, 0);
    EXPECT_EQ(old.clamp, server::rewind_clamp::too_old);
    EXPECT_EQ(old.outcome, server::shot_outcome::miss);
    EXPECT_EQ(old.evaluated_time_us, compensation_fixture::time_of(30) + 10'000 - 500'000);
    EXPECT_EQ(f.compensation.counts().clamped_future, 1U);
    EXPECT_EQ(f.compensation.counts().clamped_too_old, 1U);
}

TEST(LagCompensation, AFloodOfShotsIsRefusedByTheCooldownPerClientAndInvalidAimsAreRefused) {
    compensation_fixture f{100ms}; // 4 ticks at 30 Hz
    EXPECT_EQ(f.shoot_at(90.0F, compensation_fixture::time_of(30), 1).outcome, server::shot_outcome::hit);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(f.shoot_at(90.0F, compensation_fixture::time_of(30), 1).outcome,
                  server::shot_outcome::refused_cooldown);
    }
    // Another client is not affected.
    EXPECT_EQ(f.shoot_at(90.0F, compensation_fixture::time_of(30), 2).outcome, server::shot_outcome::hit);
    EXPECT_EQ(f.compensation.shoot(server::shot_request{3, f.shooter, 0, NAN, 1.0F, 100.0F, 0, 0}).outcome,
              server::shot_outcome::refused_invalid);
    EXPECT_EQ(f.compensation.shoot(server::shot_request{3, f.shooter, 0, 0.0F, 0.0F, 100.0F, 0, 0}).outcome,
              server::shot_outcome::refused_invalid);
    EXPECT_EQ(f.compensation.counts().refused_cooldown, 10U);
    EXPECT_EQ(f.compensation.counts().refused_invalid, 2U);
    // After the interval, client 1 may fire again.
    for (std::uint64_t tick = 31; tick <= 34; ++tick) {
        f.compensation.record(f.reg, tick, compensation_fixture::time_of(tick));
    }
    EXPECT_EQ(f.shoot_at(90.0F, compensation_fixture::time_of(34), 1).outcome, server::shot_outcome::hit);
}

TEST(ArenaInput, TheActionFormRoundTripsAndTheMoveFormStaysValid) {
    const arena::move_input move{0, 1.0F, 0.0F, 4.0F};
    const arena::action_input action{arena::action_fire, 0.5F, -0.5F, -1234567890123LL};
    const auto bytes = arena::encode(move, action);
    ASSERT_EQ(bytes.size(), arena::action_input_size);
    const auto decoded = arena::decode_input(bytes);
    ASSERT_TRUE(decoded && decoded->action);
    EXPECT_EQ(decoded->move.speed, 4.0F);
    EXPECT_TRUE(decoded->action->fires());
    EXPECT_EQ(decoded->action->aim_y, -0.5F);
    EXPECT_EQ(decoded->action->render_time_us, -1234567890123LL);
    const auto old = arena::decode_input(arena::encode(move));
    ASSERT_TRUE(old);
    EXPECT_FALSE(old->action);
    EXPECT_FALSE(arena::decode_input(bytes.substr(0, 20)));
}

// ---- live: the test ----------------------------------------------------------------------------

class live_clients {
public:
    explicit live_clients(test_server& server)
        : server_{server} {}

    client::client& add(const std::string& name, std::chrono::milliseconds one_way) {
        auto options = client::testing::over(client::transport_kind::udp, name);
        options.simulator.latency = one_way;
        options.connect_timeout = 5000ms;
        options.handshake_timeout = 5000ms;
        clients_.push_back(std::make_unique<client::client>(arena::replicated_schema(), options));
        clients_.back()->connect("127.0.0.1", server_.port());
        return *clients_.back();
    }
    void poll() {
        for (auto& c : clients_) {
            c->poll();
        }
    }
    bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            poll();
            std::this_thread::sleep_for(1ms);
        }
        poll();
        return done();
    }
    void poll_for(std::chrono::milliseconds duration) {
        poll_until([] { return false; }, duration);
    }

private:
    test_server& server_;
    std::vector<std::unique_ptr<client::client>> clients_;
};

/// The other avatar (Kind 8) the shooter mirrors, if any.
entity other_avatar(client::client& shooter) {
    entity found = null_entity;
    shooter.registry().view<const arena::Kind>().each([&](entity e, const arena::Kind& kind) {
        if (kind.value == 8 && e != shooter.own_entity()) {
            found = e;
        }
    });
    return found;
}

server::lag_compensation_counts counts_of(test_server& server) {
    return server.server().call([&server] { return server.server().lag_compensator()->counts(); });
}

TEST(LagCompensationLive, At150MsRoundTripAShotOnTheCrosshairHitsTheMovingTargetAndOneBesideItMisses) {
    test_server server{0}; // avatars only: nothing else in the way
    live_clients clients{server};
    auto& shooter = clients.add("shooter", 75ms); // 75 ms each way: 150 ms round trip
    auto& runner = clients.add("runner", 10ms);
    ASSERT_TRUE(clients.poll_until(
        [&] {
            return shooter.state() == client::client_state::connected &&
                   runner.state() == client::client_state::connected && shooter.own_entity() != null_entity &&
                   other_avatar(shooter) != null_entity;
        },
        5000ms));
    const auto target = other_avatar(shooter);
    const auto target_on_server = server.avatar_of("runner");
    // The runner walks at 8 m/s across the shooter's line of sight (about 2 m between what the shooter draws
    // and where it is on the server).
    const auto from = server.transform_of(server.avatar_of("shooter"));
    const auto to = server.transform_of(target_on_server);
    ASSERT_TRUE(from && to);
    runner.send_input(
        arena::encode(arena::move_input{0, -(to->y - from->y), to->x - from->x, arena::max_avatar_speed}));
    const auto moving = [&] {
        const auto a = shooter.sample<arena::Transform>(target, shooter.render_time_us());
        const auto b = shooter.sample<arena::Transform>(target, shooter.render_time_us() - 100'000);
        return a && b && std::hypot(a->x - b->x, a->y - b->y) > 0.5F;
    };
    ASSERT_TRUE(clients.poll_until(moving, 3000ms)) << "the shooter never drew the runner moving";

    // Aims from where the shooter draws itself to where it draws the target (plus `offset` metres sideways),
    // fires with that render time; returns how far the target is on the server from that line.
    const auto fire = [&](float offset) {
        const auto render_time = shooter.render_time_us();
        const auto me = shooter.sample<arena::Transform>(shooter.own_entity(), render_time);
        const auto it = shooter.sample<arena::Transform>(target, render_time);
        EXPECT_TRUE(me && it);
        // The point `offset` metres to the left of the target, seen from the shooter.
        const float dx = it->x - me->x;
        const float dy = it->y - me->y;
        const float length = std::hypot(dx, dy);
        const float aim_x = dx - dy / length * offset;
        const float aim_y = dy + dx / length * offset;
        EXPECT_TRUE(shooter.send_input(arena::encode(
            arena::move_input{}, arena::action_input{arena::action_fire, aim_x, aim_y, render_time})));
        // Where the target is on the server when the shot arrives (75 ms later): off the crosshair by more
        // than its radius, so a shot evaluated without rewinding would miss.
        clients.poll_for(75ms);
        const auto now = server.transform_of(target_on_server);
        EXPECT_TRUE(now);
        const float ax = aim_x / std::hypot(aim_x, aim_y);
        const float ay = aim_y / std::hypot(aim_x, aim_y);
        const float distance = std::fabs((now->x - me->x) * ay - (now->y - me->y) * ax);
        std::printf("target %.2f m off the crosshair on the server when the shot arrived\n", distance);
        return distance;
    };
    const auto hits = [&]() -> std::uint32_t {
        const auto* report = shooter.registry().try_get<arena::LastHit>(shooter.own_entity());
        return report != nullptr ? report->hits : 0U;
    };

    const auto off_by = fire(0.0F);
    EXPECT_GT(off_by, 0.5F) << "the target should have moved on since the shooter's render time";
    ASSERT_TRUE(clients.poll_until([&] { return hits() == 1; }, 3000ms))
        << "the shot on the crosshair missed";
    const auto* report = shooter.registry().try_get<arena::LastHit>(shooter.own_entity());
    ASSERT_NE(report, nullptr);
    EXPECT_EQ(report->target, shooter.mirror().net_of(target)->index);
    ASSERT_TRUE(clients.poll_until(
        [&] {
            const auto* health = shooter.registry().try_get<arena::Health>(target);
            return health != nullptr && health->value == 90;
        },
        2000ms))
        << "the target's health did not drop by the shot's damage";

    clients.poll_for(200ms);       // past the fire interval
    static_cast<void>(fire(2.0F)); // 2 m beside the target on the shooter's screen (radius 0.5 m)
    clients.poll_for(1000ms);      // the round trip and more
    EXPECT_EQ(hits(), 1U) << "the shot beside the target hit";
    const auto counts = counts_of(server);
    EXPECT_EQ(counts.shots, 2U);
    EXPECT_EQ(counts.hits, 1U);
    EXPECT_EQ(counts.clamped_future + counts.clamped_too_old, 0U);
}

TEST(LagCompensationLive, ShotsFromTheFutureTooOldOrFloodedAreClampedOrRefusedAndOthersAreUnaffected) {
    test_server server{0};
    live_clients clients{server};
    auto& cheater = clients.add("cheater", 0ms);
    auto& honest = clients.add("honest", 0ms);
    ASSERT_TRUE(clients.poll_until(
        [&] {
            return cheater.state() == client::client_state::connected &&
                   honest.state() == client::client_state::connected && cheater.own_entity() != null_entity &&
                   honest.own_entity() != null_entity && cheater.render_time_us() > 0;
        },
        5000ms));
    const auto now = cheater.server_time_us();
    const auto shot = [&](std::int64_t render_time) {
        return arena::encode(arena::move_input{},
                             arena::action_input{arena::action_fire, 1.0F, 0.0F, render_time});
    };
    ASSERT_TRUE(cheater.send_input(shot(now + 60'000'000))); // a minute ahead
    clients.poll_for(200ms);
    ASSERT_TRUE(cheater.send_input(shot(now - 60'000'000))); // a minute back
    clients.poll_for(200ms);
    for (int i = 0; i < 20; ++i) { // a flood within one tick
        ASSERT_TRUE(cheater.send_input(shot(cheater.render_time_us())));
    }
    std::string nan_aim = shot(now);
    nan_aim[20] = nan_aim[21] = nan_aim[22] = nan_aim[23] = static_cast<char>(0xFF); // aim_x = NaN
    ASSERT_TRUE(cheater.send_input(nan_aim));
    clients.poll_for(500ms);
    const auto counts = counts_of(server);
    EXPECT_EQ(counts.clamped_future, 1U);
    EXPECT_EQ(counts.clamped_too_old, 1U);
    EXPECT_GE(counts.refused_cooldown, 15U);
    EXPECT_GE(server.server().metrics().fire_refused.with("cooldown").value(), 15U);
    // Both still play; the honest client still receives snapshots.
    const auto applied_before = honest.stats().snapshots_applied;
    clients.poll_for(300ms);
    EXPECT_EQ(cheater.state(), client::client_state::connected);
    EXPECT_EQ(honest.state(), client::client_state::connected);
    EXPECT_GT(honest.stats().snapshots_applied, applied_before);
}

} // namespace

} // namespace lag_compensation_test
