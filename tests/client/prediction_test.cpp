// Client-side prediction (issue 17): the predictor against the server's own world, without sockets (a
// simulated 100 ms round trip with 5% loss, 60 s of game time as fast as it runs); corrections after a push
// the client cannot predict; the server's input buffer refusing what it must; and one short live run over
// UDP with the transport's network simulator. The same for an entity the server marks predicted for the
// client besides its avatar (the arena's companion drone, marked_predictions.hpp).

#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/arena/input.hpp"
#include "ecsnet/arena/movement.hpp"
#include "ecsnet/client/marked_predictions.hpp"
#include "ecsnet/client/prediction.hpp"
#include "ecsnet/client/predictor.hpp"
#include "ecsnet/server/input_buffer.hpp"
#include "ecsnet/server/predicted_by.hpp"

namespace ecsnet::client::prediction_test {
namespace {

using arena::Transform;
using namespace ecsnet::client::testing;
using namespace std::chrono_literals;

prediction_rules<Transform> avatar_rules() {
    return {&arena::predict_avatar, &arena::position_of, &arena::displace};
}

prediction_rules<Transform> companion_rules() {
    return {&arena::predict_companion, &arena::position_of, &arena::displace};
}

prediction_options slack() {
    prediction_options options;
    options.initial_margin_ticks = 5.0;
    options.target_lead_ticks = 3;
    return options;
}

/// A scripted walk: still for the first 20 ticks, then a new heading and speed every 45 ticks, and now and
/// then a stop.
arena::move_input scripted(std::uint32_t tick) {
    if (tick < 20) {
        return {};
    }
    const auto leg = tick / 45;
    if (leg % 7 == 3) {
        return {0, 0.0F, 0.0F, 0.0F};
    }
    const double heading = static_cast<double>(leg) * 2.39996; // the golden angle: every direction in turn
    return {0, static_cast<float>(std::cos(heading)), static_cast<float>(std::sin(heading)),
            2.0F + static_cast<float>(leg % 4) * 2.0F};
}

/// splitmix64, for the simulated loss.
struct loss_dice {
    std::uint64_t state;
    bool lost(double p) {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        return static_cast<double>(z >> 11) * 0x1.0p-53 < p;
    }
};

/// The server's world and input buffer, and a predicting client, linked by delay queues: one step per
/// server tick (the client's clock in step with the server's), one-way delay and loss both ways. Inputs go
/// redundantly (every unacknowledged one in each packet), as over the UDP transport. With companions, the
/// avatar's drone (marked predicted_by the client) goes in each snapshot too, with whether it is marked (as
/// InputStatus.predicted tells), and the client predicts it with the same inputs (marked_predictions.hpp).
class harness {
public:
    static constexpr std::uint32_t rate = 30;
    static constexpr double one_way_ms = 50.0;
    static constexpr double loss = 0.05;
    static constexpr std::uint32_t lead = 4; // ticks ahead of the server: 1.5 ticks of latency + a margin

    explicit harness(bool companions = false)
        : world_{server::arena_options{
              .npcs = 0, .seed = 7, .tick_rate = rate, .workers = 1, .companions = companions}}
        , avatar_{world_.client_joined(1, "walker")}
        , drone_{world_.companion_of(avatar_)}
        , predictor_{avatar_rules(), 1.0 / rate}
        , marked_{companion_rules(), 1.0 / rate} {}

    /// One server tick and what the client does at the same instant. `on_compared(tick, predicted, server)`
    /// is called for each server state the client compares with its prediction.
    template<typename OnCompared>
    void step(OnCompared&& on_compared) {
        const double now = static_cast<double>(tick_) * 1000.0 / rate;
        // The server: the packets that arrived, then the step producing tick_ + 1, then its snapshot.
        while (!to_server_.empty() && to_server_.front().arrives <= now) {
            for (const auto& in : to_server_.front().inputs) {
                if (in.sequence > server_sequence_) {
                    server_sequence_ = in.sequence;
                    buffer_.offer({in.client_tick, in.sequence, {}}, in.payload, tick_ + 1, rate);
                }
            }
            to_server_.pop_front();
        }
        buffer_.take(tick_ + 1, [&](const server::client_input& input) {
            EXPECT_FALSE(world_.apply_input(1, avatar_, input).has_value());
        });
        world_.update(1.0 / rate);
        ++tick_;
        if (push_) {
            push_(world_.registry(), avatar_, tick_);
        }
        if (!dice_.lost(loss)) {
            std::optional<Transform> drone;
            bool marked = false;
            if (drone_ != null_entity && world_.registry().valid(drone_)) {
                drone = quantized(world_.registry().get<Transform>(drone_));
                marked = world_.registry().all_of<server::predicted_by>(drone_);
            }
            to_client_.push_back({now + one_way_ms, tick_,
                                  quantized(world_.registry().get<Transform>(avatar_)),
                                  buffer_.applied_sequence(), drone, marked});
        }
        // The client: the snapshots that arrived, then the ticks it moved into.
        while (!to_client_.empty() && to_client_.front().arrives <= now) {
            const auto& s = to_client_.front();
            acked_ = std::max(acked_, s.applied_sequence);
            const auto before = predictor_.predicted_at(s.tick);
            const bool was_started = predictor_.started();
            predictor_.reconcile(s.tick, s.state);
            if (was_started && before) {
                on_compared(s.tick, *before, s.state);
            }
            const std::vector<proto::net_entity> marked =
                s.drone_marked ? std::vector{drone_id()} : std::vector<proto::net_entity>{};
            marked_.mark(marked);
            if (s.drone) {
                const auto* p = marked_.find(drone_id());
                const auto drone_before = p != nullptr ? p->predicted_at(s.tick) : std::nullopt;
                const bool drone_started = p != nullptr && p->started();
                marked_.reconcile(drone_id(), s.tick, *s.drone, predictor_);
                if (drone_started && drone_before && on_drone_compared_) {
                    on_drone_compared_(s.tick, *drone_before, *s.drone);
                }
                drone_seen_ = *s.drone;
            }
            to_client_.pop_front();
        }
        if (predictor_.started()) {
            while (predictor_.newest_tick() < tick_ + lead) {
                const auto tick = predictor_.newest_tick() + 1;
                const auto payload = arena::encode(scripted(tick));
                unacked_.push_back({tick, ++sequence_, payload});
                predictor_.advance(payload);
            }
            predictor_.caught_up();
            marked_.follow(predictor_);
        }
        std::erase_if(unacked_, [this](const sent_input& in) { return in.sequence <= acked_; });
        if (!unacked_.empty() && !dice_.lost(loss)) {
            to_server_.push_back({now + one_way_ms, unacked_});
        }
    }

    [[nodiscard]] predictor<Transform>& client() noexcept { return predictor_; }
    [[nodiscard]] marked_predictions<Transform>& marked() noexcept { return marked_; }
    /// The drone's identity for the client (the harness has no net ids: its entity value will do).
    [[nodiscard]] proto::net_entity drone_id() const noexcept {
        return {static_cast<std::uint32_t>(to_integral(drone_)), 0};
    }
    [[nodiscard]] entity drone() const noexcept { return drone_; }
    /// The drone's newest server state the client received.
    [[nodiscard]] const std::optional<Transform>& drone_seen() const noexcept { return drone_seen_; }
    void on_drone_compared(std::function<void(std::uint32_t, const Transform&, const Transform&)> f) {
        on_drone_compared_ = std::move(f);
    }
    [[nodiscard]] const server::input_buffer& buffer() const noexcept { return buffer_; }
    [[nodiscard]] std::uint32_t tick() const noexcept { return tick_; }
    void on_server_tick(std::function<void(registry&, entity, std::uint32_t)> push) {
        push_ = std::move(push);
    }

private:
    struct sent_input {
        std::uint32_t client_tick;
        std::uint32_t sequence;
        std::string payload;
    };
    struct packet {
        double arrives;
        std::vector<sent_input> inputs;
    };
    struct snapshot {
        double arrives;
        std::uint32_t tick;
        Transform state;
        std::uint32_t applied_sequence;
        std::optional<Transform> drone;
        bool drone_marked;
    };

    // What the client reads: the replicated values (position and z at 1/512 m, yaw in 12 bits).
    static Transform quantized(const Transform& t) {
        const auto grid = [](float v) { return static_cast<float>(std::round(v * 512.0) / 512.0); };
        const auto yaw_step = 2.0 * std::numbers::pi / 4096.0;
        return {grid(t.x), grid(t.y), grid(t.z), static_cast<float>(std::round(t.yaw / yaw_step) * yaw_step)};
    }

    server::arena_world world_;
    entity avatar_;
    entity drone_;
    server::input_buffer buffer_;
    std::uint32_t server_sequence_{};
    predictor<Transform> predictor_;
    marked_predictions<Transform> marked_;
    std::optional<Transform> drone_seen_;
    std::function<void(std::uint32_t, const Transform&, const Transform&)> on_drone_compared_;
    std::uint32_t tick_{};
    std::uint32_t sequence_{};
    std::uint32_t acked_{};
    std::vector<sent_input> unacked_;
    std::deque<packet> to_server_;
    std::deque<snapshot> to_client_;
    loss_dice dice_{12345};
    std::function<void(registry&, entity, std::uint32_t)> push_;
};

TEST(Prediction, AScriptedWalkAt100MsAnd5PercentLossIsNeverMispredictedOver60Seconds) {
    harness h;
    std::size_t compared = 0;
    std::size_t moving = 0;
    for (int i = 0; i < 1800; ++i) {
        h.step([&](std::uint32_t tick, const Transform& predicted, const Transform& server) {
            ++compared;
            moving += tick > 20 && scripted(tick).speed > 0.0F ? 1 : 0;
            ASSERT_EQ(predicted.x, server.x) << "tick " << tick;
            ASSERT_EQ(predicted.y, server.y) << "tick " << tick;
            ASSERT_EQ(predicted.z, server.z) << "tick " << tick;
        });
        ASSERT_FALSE(HasFatalFailure());
    }
    const auto& stats = h.client().stats();
    EXPECT_EQ(stats.mispredictions, 0U);
    EXPECT_EQ(stats.ticks_replayed, 0U);
    EXPECT_EQ(stats.restarts, 1U) << "started once, from the first snapshot";
    EXPECT_GT(compared, 1600U) << "about 95% of 1,800 snapshots arrive";
    EXPECT_GT(moving, 1000U) << "the avatar walked";
    EXPECT_EQ(h.buffer().ran_dry(), 0U) << "every input arrived in time despite the loss";
    // Prediction on: the avatar moves on screen at the tick its input is made (no delay to the input).
    EXPECT_GT(h.client().predicted_at(h.client().newest_tick()).has_value(), 0);
}

TEST(Prediction, APushTheClientCannotPredictIsCorrectedWithinARoundTripAndShrinksOnScreenEveryFrame) {
    harness h;
    constexpr std::uint32_t push_tick = 300;
    h.on_server_tick([](registry& reg, entity avatar, std::uint32_t tick) {
        if (tick == push_tick) { // a knockback: 3 m along x, on the position grid
            reg.patch<Transform>(avatar, [](Transform& t) { t.x = arena::on_position_grid(t.x + 3.0F); });
        }
    });
    std::optional<std::uint32_t> corrected_at;
    std::size_t wrong_after = 0;
    for (int i = 0; i < 600; ++i) {
        h.step([&](std::uint32_t tick, const Transform& predicted, const Transform& server) {
            if (tick >= push_tick && predicted.x != server.x && !corrected_at) {
                corrected_at = h.tick();
            } else if (corrected_at && predicted.x != server.x) {
                ++wrong_after;
            }
        });
        if (corrected_at && *corrected_at == h.tick()) {
            // The frames after the correction (two per tick here): the error on screen shrinks every one.
            auto& p = h.client();
            double previous = std::hypot(p.visible_offset()[0], p.visible_offset()[1]);
            EXPECT_NEAR(previous, 3.0, 0.01) << "the whole push is on screen as an offset at first";
            int frames = 0;
            while (previous > 0.0 && frames < 200) {
                p.frame();
                const double now = std::hypot(p.visible_offset()[0], p.visible_offset()[1]);
                ASSERT_LT(now, previous) << "frame " << frames;
                previous = now;
                ++frames;
            }
            EXPECT_LT(frames, 60) << "smoothed away within a second at 60 frames a second";
        }
    }
    ASSERT_TRUE(corrected_at.has_value());
    EXPECT_LE(*corrected_at, push_tick + 4) << "the first snapshot after the push corrects it";
    EXPECT_EQ(wrong_after, 0U) << "converged: every later tick predicted exactly";
    EXPECT_EQ(h.client().stats().mispredictions, 1U);
    EXPECT_NEAR(h.client().stats().correction_max, 3.0, 0.01);
    EXPECT_GE(h.client().stats().ticks_replayed, 1U);
}

TEST(Prediction, AMarkedCompanionIsPredictedExactlyWithTheAvatarAt100MsAnd5PercentLoss) {
    harness h{true};
    ASSERT_NE(h.drone(), null_entity) << "arena_options::companions spawns a drone with the avatar";
    std::size_t compared = 0;
    std::size_t drone_compared = 0;
    h.on_drone_compared([&](std::uint32_t tick, const Transform& predicted, const Transform& server) {
        ++drone_compared;
        ASSERT_EQ(predicted.x, server.x) << "drone, tick " << tick;
        ASSERT_EQ(predicted.y, server.y) << "drone, tick " << tick;
    });
    std::optional<Transform> drone_start;
    for (int i = 0; i < 1800; ++i) {
        h.step([&](std::uint32_t tick, const Transform& predicted, const Transform& server) {
            ++compared;
            ASSERT_EQ(predicted.x, server.x) << "avatar, tick " << tick;
            ASSERT_EQ(predicted.y, server.y) << "avatar, tick " << tick;
        });
        ASSERT_FALSE(HasFatalFailure());
        if (!drone_start) {
            drone_start = h.drone_seen();
        }
    }
    const auto* drone = h.marked().find(h.drone_id());
    ASSERT_NE(drone, nullptr);
    EXPECT_EQ(h.client().stats().mispredictions, 0U);
    EXPECT_EQ(drone->stats().mispredictions, 0U);
    EXPECT_EQ(drone->stats().ticks_replayed, 0U);
    EXPECT_EQ(drone->stats().restarts, 1U) << "started once, from its first server state";
    EXPECT_EQ(h.marked().totals().mispredictions, 0U);
    EXPECT_GT(compared, 1600U);
    EXPECT_GT(drone_compared, 1600U) << "the drone is compared at every tick the avatar is";
    ASSERT_TRUE(drone_start.has_value());
    ASSERT_TRUE(h.drone_seen().has_value());
    EXPECT_GT(std::hypot(h.drone_seen()->x - drone_start->x, h.drone_seen()->y - drone_start->y), 1.0)
        << "the drone moved with the inputs";
}

TEST(Prediction, APushedCompanionIsCorrectedWithinARoundTripAndAnUnmarkedOneIsNoLongerPredicted) {
    harness h{true};
    constexpr std::uint32_t push_tick = 300;
    constexpr std::uint32_t unmark_tick = 450;
    h.on_server_tick([&h](registry& reg, entity, std::uint32_t tick) {
        if (tick == push_tick) { // something the client does not simulate moves the drone 2 m along y
            reg.patch<Transform>(h.drone(), [](Transform& t) { t.y = arena::on_position_grid(t.y + 2.0F); });
        }
        if (tick == unmark_tick) {
            reg.remove<server::predicted_by>(h.drone());
        }
    });
    std::optional<std::uint32_t> corrected_at;
    std::size_t wrong_after = 0;
    h.on_drone_compared([&](std::uint32_t tick, const Transform& predicted, const Transform& server) {
        if (tick >= push_tick && predicted.y != server.y && !corrected_at) {
            corrected_at = h.tick();
        } else if (corrected_at && predicted.y != server.y) {
            ++wrong_after;
        }
    });
    const auto ignore = [](std::uint32_t, const Transform&, const Transform&) {};
    std::optional<prediction_stats> drone_stats;
    for (int i = 0; i < 600; ++i) {
        h.step(ignore);
        if (corrected_at && *corrected_at == h.tick()) {
            const auto* drone = h.marked().find(h.drone_id());
            ASSERT_NE(drone, nullptr);
            auto copy = *drone; // the frames after the correction: the error on screen shrinks every one
            double previous = std::hypot(copy.visible_offset()[0], copy.visible_offset()[1]);
            EXPECT_NEAR(previous, 2.0, 0.01) << "the whole push is on screen as an offset at first";
            int frames = 0;
            while (previous > 0.0 && frames < 200) {
                copy.frame();
                const double now = std::hypot(copy.visible_offset()[0], copy.visible_offset()[1]);
                ASSERT_LT(now, previous) << "frame " << frames;
                previous = now;
                ++frames;
            }
            EXPECT_LT(frames, 60) << "smoothed away within a second at 60 frames a second";
        }
        if (h.tick() == unmark_tick - 1) {
            const auto* drone = h.marked().find(h.drone_id());
            ASSERT_NE(drone, nullptr);
            drone_stats = drone->stats();
        }
    }
    ASSERT_TRUE(corrected_at.has_value());
    EXPECT_LE(*corrected_at, push_tick + 4) << "the first snapshot after the push corrects it";
    EXPECT_EQ(wrong_after, 0U) << "converged: every later tick predicted exactly, until unmarked";
    EXPECT_EQ(h.client().stats().mispredictions, 0U) << "the avatar was not pushed";
    ASSERT_TRUE(drone_stats.has_value());
    EXPECT_EQ(drone_stats->mispredictions, 1U);
    EXPECT_NEAR(drone_stats->correction_max, 2.0, 0.01);
    EXPECT_EQ(h.marked().find(h.drone_id()), nullptr) << "unmarked: no longer predicted";
    EXPECT_EQ(h.marked().totals().mispredictions, 1U) << "the totals keep what an entity that left counted";
}

TEST(Prediction, TheInputBufferRefusesFutureAndFloodingInputsAndAppliesLateOnesOnce) {
    server::input_buffer buffer;
    const auto input = [](std::uint32_t tick, std::uint32_t sequence) {
        return server::client_input{tick, sequence, {}};
    };
    using verdict = server::input_buffer::verdict;
    EXPECT_EQ(buffer.offer(input(100 + 33, 1), "far", 100, 30), verdict::future);
    EXPECT_EQ(buffer.offer(input(100 + 32, 2), "edge", 100, 30), verdict::kept);
    EXPECT_EQ(buffer.offer(input(90, 3), "late", 100, 30), verdict::late);
    for (std::uint32_t i = 0; i < 32; ++i) {
        EXPECT_EQ(buffer.offer(input(101, 10 + i), "flood", 100, 30), verdict::kept);
    }
    EXPECT_EQ(buffer.offer(input(101, 50), "flood", 100, 30), verdict::flood);
    EXPECT_EQ(buffer.lead(), -10) << "the smallest slack: the late one";

    std::vector<std::string> applied;
    const auto collect = [&](const server::client_input& in) {
        applied.push_back(std::string{in.payload} + (in.repeated ? "*" : ""));
    };
    EXPECT_FALSE(buffer.take(100, collect));
    EXPECT_EQ(applied, std::vector<std::string>{"late"}) << "a late input is applied at the next tick, once";
    applied.clear();
    EXPECT_FALSE(buffer.take(101, collect));
    EXPECT_EQ(applied.size(), 32U);
    applied.clear();
    EXPECT_TRUE(buffer.take(102, collect)) << "nothing for 102: ran dry";
    EXPECT_EQ(applied, std::vector<std::string>{"flood*"}) << "the newest input repeated, marked so";
    EXPECT_EQ(buffer.ran_dry(), 1U);
}

TEST(Prediction, AClientSendingFutureAndFloodingInputsIsCountedAndAnotherWalksOn) {
    test_server srv{0};
    auto good_options = over(transport_kind::udp, "good");
    good_options.prediction = true;
    client good{arena::replicated_schema(), good_options};
    prediction<Transform> walk{good, avatar_rules()};
    client bad{arena::replicated_schema(), over(transport_kind::udp, "bad")};
    good.connect("127.0.0.1", srv.port());
    bad.connect("127.0.0.1", srv.port());
    const auto both = [&] {
        good.poll();
        bad.poll();
    };
    ASSERT_TRUE(poll_until(good, [&] {
        both();
        return good.own_entity() != null_entity && bad.own_entity() != null_entity;
    }));
    const auto east = arena::encode({0, 1.0F, 0.0F, 4.0F});
    const auto start = srv.transform_of(srv.avatar_of("good"));
    ASSERT_TRUE(start.has_value());
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < deadline) {
        both();
        walk.update(east);
        for (int i = 0; i < 40; ++i) { // 40 inputs for one tick, then one a million ticks ahead
            bad.send_input(east, static_cast<std::uint32_t>(srv.newest_tick() + 5));
        }
        bad.send_input(east, 1'000'000);
        std::this_thread::sleep_for(5ms);
    }
    const auto& m = srv.server().metrics();
    EXPECT_GT(srv.server().call([&] { return m.inputs_future.value(); }), 0U);
    EXPECT_GT(srv.server().call([&] { return m.inputs_flood.value(); }), 0U);
    const auto end = srv.transform_of(srv.avatar_of("good"));
    ASSERT_TRUE(end.has_value());
    EXPECT_GT(end->x - start->x, 4.0F) << "the good client walked east at 4 m/s for most of 2 s";
    EXPECT_EQ(bad.state(), client_state::connected) << "refused inputs are counted, not a disconnect";
}

// A server that overruns skips slots (tick_pacer.hpp): its tick count falls behind its clock for good. A
// client that counted ticks from the server's epoch named ticks ever further ahead (a CI run's loaded host
// put them 33 ahead, and the server refused them as future); counted from the newest tick applied, the
// inputs of both send_input and lead_tick (the predictor's) name ticks the server will run.
TEST(Prediction, AfterTheServerSkipsSlotsTheClientsInputsStillNameTicksItWillRun) {
    test_server srv{0};
    client net{arena::replicated_schema(), over(transport_kind::udp, "patient")};
    net.connect("127.0.0.1", srv.port());
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
    ASSERT_TRUE(poll_until(net, [&] { return net.stats().pongs_received > 0; }))
        << "the clock is synchronised";

    // 1.5 s without a tick: 45 slots skipped, more than the 32 ticks of lead the server accepts.
    srv.server().call([] { std::this_thread::sleep_for(1500ms); });
    const auto after_stall = srv.newest_tick() + 1;
    ASSERT_TRUE(poll_until(net, [&] { return net.stats().newest_tick >= after_stall; }));
    const auto& m = srv.server().metrics();
    const auto future_before = srv.server().call([&] { return m.inputs_future.value(); });
    const auto late_before = srv.server().call([&] { return m.inputs_late.value(); });

    const auto east = arena::encode({0, 1.0F, 0.0F, 4.0F});
    const auto start = srv.transform_of(srv.avatar_of("patient"));
    ASSERT_TRUE(start.has_value());
    const auto deadline = std::chrono::steady_clock::now() + 1s;
    while (std::chrono::steady_clock::now() < deadline) {
        net.poll();
        EXPECT_TRUE(net.send_input(east));
        EXPECT_TRUE(net.send_input(east, net.lead_tick(2.0)));
        std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(poll_until(net, [&] {
        return srv.server().call([&] {
            for (const auto& c : srv.server().clients()) {
                if (c.name == "patient") {
                    return c.inputs_received >= net.stats().inputs_sent;
                }
            }
            return false;
        });
    }));
    EXPECT_EQ(srv.server().call([&] { return m.inputs_future.value(); }), future_before)
        << "no input named a tick more than 32 ahead";
    EXPECT_LE(srv.server().call([&] { return m.inputs_late.value(); }) - late_before, 4U)
        << "nor, in the other direction, a tick already run (a few may race the tick they name)";
    const auto end = srv.transform_of(srv.avatar_of("patient"));
    ASSERT_TRUE(end.has_value());
    EXPECT_GT(end->x - start->x, 2.0F) << "the inputs were applied: it walked east at 4 m/s for about 1 s";
}

TEST(Prediction, LiveOverUdpWith50MsEachWayAnd5PercentLossNothingIsMispredicted) {
    test_server srv{50};
    auto options = over(transport_kind::udp, "live");
    options.prediction = true;
    options.simulator.latency = std::chrono::milliseconds{50};
    options.simulator.loss = 0.05;
    options.simulator.seed = 3;
    client net{arena::replicated_schema(), options};
    // More slack than the default (inputs 3 ticks early rather than 1): CI runs this beside other tests, and
    // a stalled test thread must not make an input late (that is a misprediction, not a bug).
    prediction<Transform> walk{net, avatar_rules(), slack()};
    net.connect("127.0.0.1", srv.port());
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
    const auto started = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - started < 4s) {
        net.poll();
        const auto seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        // Still for the first second (the run-ahead settles), then a new heading every second.
        const auto leg = static_cast<int>(seconds);
        const arena::move_input move = leg == 0
                                           ? arena::move_input{}
                                           : arena::move_input{0, static_cast<float>(std::cos(leg * 2.4)),
                                                               static_cast<float>(std::sin(leg * 2.4)), 5.0F};
        walk.update(arena::encode(move));
        std::this_thread::sleep_for(2ms);
    }
    const auto s = net.stats();
    EXPECT_TRUE(s.prediction.enabled);
    EXPECT_GT(s.prediction.ticks_compared, 60U);
    EXPECT_GT(s.prediction.ticks_predicted, 100U);
    EXPECT_EQ(s.prediction.mispredictions, 0U)
        << "largest correction " << s.prediction.correction_max << " m; lead "
        << s.input_lead_ticks.value_or(-99) << ", margin " << s.prediction.margin_ticks << ", ran dry "
        << s.inputs_ran_dry;
    EXPECT_GT(s.prediction.ticks_ahead, 0) << "the client runs ahead of the server";
    ASSERT_TRUE(s.input_lead_ticks.has_value());
    EXPECT_GE(*s.input_lead_ticks, 0) << "inputs arrive in time";
}

TEST(Prediction, LiveOverUdpTheServerMarksTheCompanionAndTheClientPredictsItWithoutMisprediction) {
    test_server srv{50, 30, 0.0F, {}, 1, true};
    auto options = over(transport_kind::udp, "pet-owner");
    options.prediction = true;
    options.simulator.latency = std::chrono::milliseconds{30};
    options.simulator.seed = 5;
    client net{arena::replicated_schema(), options};
    prediction<Transform> walk{net, avatar_rules(), slack()};
    walk.predict_marked(companion_rules());
    net.connect("127.0.0.1", srv.port());
    ASSERT_TRUE(poll_until(net, [&] { return net.own_entity() != null_entity; }));
    const auto started = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - started < 2500ms) {
        net.poll();
        const bool walking = std::chrono::steady_clock::now() - started > 1s;
        walk.update(arena::encode(walking ? arena::move_input{0, 1.0F, 0.0F, 4.0F} : arena::move_input{}));
        std::this_thread::sleep_for(2ms);
    }
    const auto s = net.stats();
    ASSERT_EQ(s.predicted_entities.size(), 1U) << "InputStatus.predicted names the drone";
    const auto drone = net.mirror().find(s.predicted_entities.front());
    ASSERT_NE(drone, null_entity);
    const auto* core = walk.core_of(drone);
    ASSERT_NE(core, nullptr);
    EXPECT_GT(core->stats().ticks_compared, 20U);
    EXPECT_EQ(core->stats().mispredictions, 0U) << "largest correction " << core->stats().correction_max;
    EXPECT_EQ(s.prediction.entities, 2U) << "the avatar and its drone";
    EXPECT_EQ(s.prediction.mispredictions, 0U) << "largest correction " << s.prediction.correction_max;
    EXPECT_GE(s.prediction.ticks_compared, core->stats().ticks_compared + walk.core().stats().ticks_compared)
        << "the stats are totals";
    const auto seen = walk.visible(drone);
    const auto mirrored = net.registry().get<Transform>(drone);
    ASSERT_TRUE(seen.has_value());
    EXPECT_GT(seen->x, mirrored.x) << "the predicted drone runs ahead of the server's, eastwards";
    EXPECT_EQ(walk.core_of(net.own_entity()), nullptr) << "the avatar is predicted by its own rules";

    // The server unmarks it: InputStatus.predicted says so within a few ticks, and the client shows the
    // server's state of the drone again.
    const auto avatar = srv.avatar_of("pet-owner");
    ASSERT_TRUE(srv.server().call([&] {
        auto& world = static_cast<server::arena_world&>(srv.server().world());
        const auto companion = world.companion_of(avatar);
        return companion != null_entity && world.registry().remove<server::predicted_by>(companion) == 1;
    }));
    ASSERT_TRUE(poll_until(net, [&] {
        walk.update(arena::encode(arena::move_input{0, 1.0F, 0.0F, 4.0F}));
        return walk.core_of(drone) == nullptr;
    }));
    EXPECT_TRUE(net.stats().predicted_entities.empty());
    const auto shown = walk.visible(drone);
    ASSERT_TRUE(shown.has_value());
    EXPECT_EQ(shown->x, net.registry().get<Transform>(drone).x) << "unmarked: the mirror's state";
}

} // namespace
} // namespace ecsnet::client::prediction_test

namespace ecsnet::client::prediction_test {
namespace {

TEST(Prediction, OverTcpTheInputStatusArrivesAndNothingIsMispredicted) {
    testing::test_server srv{50};
    auto options = testing::over(transport_kind::tcp, "tcp-walker");
    options.prediction = true;
    client net{arena::replicated_schema(), options};
    prediction<arena::Transform> walk{
        net, {&arena::predict_avatar, &arena::position_of, &arena::displace}, slack()};
    net.connect("127.0.0.1", srv.port());
    ASSERT_TRUE(testing::poll_until(net, [&] { return net.own_entity() != null_entity; }));
    const auto started = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - started < std::chrono::milliseconds{2500}) {
        net.poll();
        const bool walking = std::chrono::steady_clock::now() - started > std::chrono::seconds{1};
        walk.update(arena::encode(walking ? arena::move_input{0, 0.0F, 1.0F, 3.0F} : arena::move_input{}));
        std::this_thread::sleep_for(std::chrono::milliseconds{2});
    }
    const auto s = net.stats();
    EXPECT_TRUE(s.input_status_tick.has_value()) << "the server sends InputStatus over TCP too";
    EXPECT_GT(s.prediction.ticks_compared, 30U);
    EXPECT_EQ(s.prediction.mispredictions, 0U) << "largest correction " << s.prediction.correction_max;
    EXPECT_EQ(net.state(), client_state::connected);
}

} // namespace
} // namespace ecsnet::client::prediction_test
