// What a game decides a client may see, beyond the radius (issue 15), through interest_replicator without
// sockets, one view_mirror per client applying every snapshot:
// - game_world::may_see vetoes entities in range (here a rule of "teams": client c never sees an index
//   congruent to c mod 3), and the `relevance` marks make one NPC always relevant, one its owner's only and
//   one hidden. After every applied snapshot, every mirror holds only what those rules allow, and verifies;
// - with spatial_layout::asks_may_see false, may_see is never asked, and what it would veto is seen.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/view_mirror.hpp"
#include "ecsnet/server/arena_world.hpp"
#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/relevance.hpp"
#include "ecsnet/server/server_metrics.hpp"

namespace interest_visibility_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

// The arena with a visibility rule of its own: teams by index.
class team_world final : public game_world {
public:
    explicit team_world(arena_options options)
        : arena_{options} {}

    static bool same_team(client_id client, std::uint32_t index) noexcept { return index % 3 == client % 3; }

    [[nodiscard]] const proto::schema& replicated_schema() const override {
        return arena_.replicated_schema();
    }
    [[nodiscard]] ecsnet::registry& registry() override { return arena_.registry(); }
    entity client_joined(client_id client, std::string_view name) override {
        return arena_.client_joined(client, name);
    }
    void client_left(client_id client, entity avatar) override { arena_.client_left(client, avatar); }
    std::optional<std::string> apply_input(client_id client, entity avatar,
                                           const client_input& input) override {
        return arena_.apply_input(client, avatar, input);
    }
    void update(double dt) override { arena_.update(dt); }
    [[nodiscard]] std::optional<spatial_layout> spatial() const override { return arena_.spatial(); }
    [[nodiscard]] bool may_see(client_id client, entity, entity candidate) const override {
        asked.fetch_add(1, std::memory_order_relaxed);
        return !same_team(client, entity_traits::to_index(candidate));
    }

    mutable std::atomic<std::size_t> asked{0};

private:
    arena_world arena_;
};

struct mirrored_client {
    explicit mirrored_client(const proto::schema& schema)
        : mirror{schema} {}
    client_id id{};
    std::uint32_t avatar_index{};
    std::unique_ptr<client_replication> replication;
    proto::view_mirror mirror;
    std::deque<v1::Ack> acks;
};

struct marked_npcs {
    std::uint32_t always{};
    std::uint32_t owned{};
    std::uint32_t hidden{};
};

constexpr client_id owner = 1;

// Marks three NPCs of the world (the first three by index), returning their indices.
marked_npcs mark_three(ecsnet::registry& reg) {
    std::vector<entity> npcs;
    reg.view<const arena::Transform>(exclude<Avatar>).each([&](entity e, const arena::Transform&) {
        npcs.push_back(e);
    });
    std::sort(npcs.begin(), npcs.end(),
              [](entity a, entity b) { return entity_traits::to_index(a) < entity_traits::to_index(b); });
    EXPECT_GE(npcs.size(), 3U);
    reg.emplace<relevance>(npcs[0], relevance::always());
    reg.emplace<relevance>(npcs[1], relevance::owner_only(owner));
    reg.emplace<relevance>(npcs[2], relevance::hidden());
    return {entity_traits::to_index(npcs[0]), entity_traits::to_index(npcs[1]),
            entity_traits::to_index(npcs[2])};
}

struct run_result {
    std::size_t team_mates_seen{}; // mirrored entities that may_see would veto (not the own avatar)
    std::size_t mirrored{};        // entities in the last views, all clients
    bool always_seen_by_all{true};
    bool owned_seen_by_owner{false};
};

run_result run(bool asks_may_see, team_world& world) {
    proto::snapshot_history history{world.replicated_schema(), world.registry(),
                                    proto::history_options{32, 30}};
    server_metrics metrics;
    auto layout = *world.spatial();
    layout.asks_may_see = asks_may_see;
    interest_replicator replicator{world, history, layout, interest_options{160.0F, 128, 30, 2, 128, 52, 2},
                                   metrics};
    constexpr std::size_t count = 6;
    std::vector<std::unique_ptr<mirrored_client>> clients;
    for (std::size_t i = 0; i < count; ++i) {
        const auto id = static_cast<client_id>(i + 1);
        const auto avatar = world.client_joined(id, "client" + std::to_string(id));
        auto c = std::make_unique<mirrored_client>(world.replicated_schema());
        c->id = id;
        c->avatar_index = entity_traits::to_index(avatar);
        std::optional<refusal> refused;
        c->replication = replicator.join(id, avatar, v1::ClientHello{}, refused);
        EXPECT_NE(c->replication, nullptr);
        v1::ServerWelcome welcome;
        replicator.welcome(*c->replication, welcome);
        c->mirror.welcome(welcome);
        clients.push_back(std::move(c));
    }
    const auto marked = mark_three(world.registry());

    run_result result;
    constexpr proto::tick_type ticks = 90;
    for (proto::tick_type tick = 1; tick <= ticks; ++tick) {
        world.update(1.0 / 30.0);
        const auto time_us = std::uint64_t{tick} * 1'000'000 / 30;
        history.capture(tick, time_us);
        replicator.tick(tick, time_us);
        for (auto& c : clients) {
            const auto snapshot = replicator.snapshot(*c->replication);
            EXPECT_TRUE(snapshot.has_value());
            if (!snapshot) {
                return result;
            }
            replicator.sent(*c->replication, snapshot->envelope().size() + 52);
            const auto applied = c->mirror.apply_envelope(snapshot->envelope());
            EXPECT_TRUE(applied) << "client " << c->id << " tick " << tick << ": " << applied.message();
            EXPECT_TRUE(c->mirror.verify()) << "client " << c->id << " tick " << tick;
            c->acks.push_back(c->mirror.make_ack());
            while (c->acks.size() > 2) { // acks arrive two ticks late
                replicator.on_ack(*c->replication, c->acks.front());
                c->acks.pop_front();
            }
            bool has_always = false;
            for (const auto& [id, row] : c->mirror.contents()) {
                EXPECT_NE(id.index, marked.hidden) << "client " << c->id << " tick " << tick;
                if (id.index == marked.owned) {
                    EXPECT_EQ(c->id, owner) << "tick " << tick;
                    result.owned_seen_by_owner = true;
                }
                has_always = has_always || id.index == marked.always;
                if (id.index != c->avatar_index && id.index != marked.always && id.index != marked.owned &&
                    team_world::same_team(c->id, id.index)) {
                    ++result.team_mates_seen;
                }
            }
            if (tick == ticks) {
                result.always_seen_by_all = result.always_seen_by_all && has_always;
                result.mirrored += c->mirror.size();
            }
        }
    }
    return result;
}

TEST(InterestVisibility, MaySeeAndTheRelevanceMarksDecideWhatEveryMirrorHolds) {
    team_world world{arena_options{2'000, 11, 30, 1}};
    const auto seen = run(true, world);
    EXPECT_GT(world.asked.load(), 0U);
    EXPECT_EQ(seen.team_mates_seen, 0U) << "may_see vetoed them";
    EXPECT_TRUE(seen.always_seen_by_all);
    EXPECT_TRUE(seen.owned_seen_by_owner);
    EXPECT_GT(seen.mirrored, 6U * 20U) << "the clients see their surroundings";
}

TEST(InterestVisibility, AWorldThatAsksNothingIsNotAsked) {
    team_world world{arena_options{2'000, 11, 30, 1}};
    const auto seen = run(false, world);
    EXPECT_EQ(world.asked.load(), 0U);
    EXPECT_GT(seen.team_mates_seen, 0U) << "nothing vetoed them";
    EXPECT_TRUE(seen.always_seen_by_all);
    EXPECT_TRUE(seen.owned_seen_by_owner);
}

} // namespace

} // namespace interest_visibility_test
