// The bots' behaviours (issue 7): idle sends nothing; the same seed replays the same inputs; wander keeps a
// heading between turns made 1 to 4 s apart and never leaves the arena's inner square by more than a step;
// circle closes its lap of 8 m radius in 2 pi r / v seconds.

#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/bots/behaviour.hpp"

namespace bots_behaviour_test {

namespace {

using namespace ecsnet::bots;
using ecsnet::arena::move_input;
using ecsnet::arena::Transform;

constexpr double dt = 1.0 / 30.0;

TEST(BotsBehaviour, NamesRoundTrip) {
    for (const auto kind : {behaviour_kind::idle, behaviour_kind::wander, behaviour_kind::circle}) {
        EXPECT_EQ(parse_behaviour(to_string(kind)), kind);
    }
    EXPECT_FALSE(parse_behaviour("fly").has_value());
    EXPECT_FALSE(parse_behaviour("").has_value());
}

TEST(BotsBehaviour, IdleSendsNothing) {
    behaviour idle{behaviour_kind::idle, 1};
    const Transform here{10.0F, 10.0F, 0.0F, 0.0F};
    for (std::uint32_t tick = 1; tick < 300; ++tick) {
        ASSERT_FALSE(idle.next(tick, tick % 2 == 0 ? &here : nullptr).has_value());
    }
}

TEST(BotsBehaviour, SeedsAreDistinctPerBot) {
    std::set<std::uint64_t> seeds;
    for (std::uint64_t i = 0; i < 10'000; ++i) {
        seeds.insert(bot_seed(42, i));
    }
    EXPECT_EQ(seeds.size(), 10'000U);
    EXPECT_NE(bot_seed(1, 0), bot_seed(2, 0));
}

// The same seed and the same ticks (skipped ones included) give the same inputs; another seed does not.
TEST(BotsBehaviour, SameSeedSameInputs) {
    for (const auto kind : {behaviour_kind::wander, behaviour_kind::circle}) {
        behaviour a{kind, bot_seed(5, 3)};
        behaviour b{kind, bot_seed(5, 3)};
        behaviour other{kind, bot_seed(5, 4)};
        std::size_t differ = 0;
        std::uint32_t tick = 100;
        for (int i = 0; i < 2000; ++i) {
            tick += 1 + static_cast<std::uint32_t>(i % 7 == 0); // a few skipped ticks
            const Transform at{static_cast<float>(i % 50), 3.0F, 0.0F, 0.0F};
            const auto x = a.next(tick, &at);
            const auto y = b.next(tick, &at);
            const auto z = other.next(tick, &at);
            ASSERT_TRUE(x && y && z);
            ASSERT_EQ(x->dir_x, y->dir_x);
            ASSERT_EQ(x->dir_y, y->dir_y);
            ASSERT_EQ(x->speed, y->speed);
            ASSERT_EQ(x->target, 0U); // always our own avatar
            differ += x->dir_x != z->dir_x ? 1 : 0;
        }
        EXPECT_GT(differ, 1900U) << to_string(kind);
    }
}

// A walk integrated the way the server moves an avatar, with the mirror's position fed back.
struct walk {
    double x{};
    double y{};
    void step(const move_input& in) {
        const double norm = std::hypot(in.dir_x, in.dir_y);
        x += in.dir_x / norm * in.speed * dt;
        y += in.dir_y / norm * in.speed * dt;
    }
};

TEST(BotsBehaviour, WanderKeepsAHeadingBetweenTurnsOneToFourSecondsApart) {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        behaviour wander{behaviour_kind::wander, bot_seed(9, seed)};
        std::optional<move_input> previous;
        std::vector<std::uint32_t> turns;
        const Transform middle{0.0F, 0.0F, 0.0F, 0.0F};
        for (std::uint32_t tick = 1; tick <= 30 * 300; ++tick) {
            const auto in = wander.next(tick, &middle);
            ASSERT_TRUE(in.has_value());
            ASSERT_NEAR(std::hypot(in->dir_x, in->dir_y), 1.0, 1e-5);
            ASSERT_GE(in->speed, 0.5F * ecsnet::arena::max_avatar_speed);
            ASSERT_LE(in->speed, ecsnet::arena::max_avatar_speed);
            if (previous) {
                ASSERT_EQ(in->speed, previous->speed); // a steady speed
                if (in->dir_x != previous->dir_x || in->dir_y != previous->dir_y) {
                    turns.push_back(tick);
                    const double dot = in->dir_x * previous->dir_x + in->dir_y * previous->dir_y;
                    ASSERT_GE(dot, -1e-5) << "turned by more than 90 degrees"; // cos 90 = 0
                }
            }
            previous = in;
        }
        ASSERT_GE(turns.size(), 300U / 4U - 1U);
        ASSERT_LE(turns.size(), 300U);
        for (std::size_t i = 1; i < turns.size(); ++i) {
            ASSERT_GE(turns[i] - turns[i - 1], 30U);      // at least 1 s apart
            ASSERT_LE(turns[i] - turns[i - 1], 4U * 30U); // at most 4 s
        }
    }
}

TEST(BotsBehaviour, WanderTurnsBackAtTheEdgeAndStaysInside) {
    // Heading out past the edge: the next input points back inwards, within 30 degrees.
    std::size_t checked = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        behaviour wander{behaviour_kind::wander, seed};
        const auto first = wander.next(1, nullptr);
        ASSERT_TRUE(first.has_value());
        if (first->dir_x <= 0.05F) {
            continue; // not heading east
        }
        const Transform east{1000.0F, 0.0F, 0.0F, 0.0F};
        const auto back = wander.next(2, &east);
        ASSERT_TRUE(back.has_value());
        EXPECT_LT(back->dir_x, -std::cos(std::numbers::pi / 6.0) + 1e-5) << seed;
        ++checked;
    }
    EXPECT_GT(checked, 50U);

    // Twenty bots walking for 20 minutes each: none goes beyond the turning line by more than one step.
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        behaviour bot{behaviour_kind::wander, bot_seed(3, seed)};
        walk w{900.0 - static_cast<double>(seed) * 90.0, -500.0};
        double farthest = 0.0;
        for (std::uint32_t tick = 1; tick <= 30 * 60 * 20; ++tick) {
            const Transform at{static_cast<float>(w.x), static_cast<float>(w.y), 0.0F, 0.0F};
            const auto in = bot.next(tick, &at);
            ASSERT_TRUE(in.has_value());
            w.step(*in);
            farthest = std::max({farthest, std::fabs(w.x), std::fabs(w.y)});
        }
        EXPECT_LE(farthest, behaviour::wander_edge + ecsnet::arena::max_avatar_speed * dt + 1e-3) << seed;
        EXPECT_GT(farthest, 100.0) << "it wanders";
    }
}

TEST(BotsBehaviour, CircleClosesItsLap) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
        behaviour circle{behaviour_kind::circle, bot_seed(1, seed)};
        walk w;
        const double lap = 2.0 * std::numbers::pi * behaviour::circle_radius / behaviour::circle_speed;
        const auto ticks = static_cast<std::uint32_t>(std::lround(lap / dt));
        double farthest = 0.0;
        for (std::uint32_t tick = 500; tick < 500 + ticks; ++tick) {
            const auto in = circle.next(tick, nullptr);
            ASSERT_TRUE(in.has_value());
            ASSERT_FLOAT_EQ(in->speed, static_cast<float>(behaviour::circle_speed));
            w.step(*in);
            farthest = std::max(farthest, std::hypot(w.x, w.y));
        }
        EXPECT_LT(std::hypot(w.x, w.y), 0.3) << "back where it started after one lap";
        EXPECT_NEAR(farthest, 2.0 * behaviour::circle_radius, 0.3) << "the diameter";
    }
}

} // namespace

} // namespace bots_behaviour_test
