// Command buffers: deferred structural changes, applied in key order, robust to stale commands.

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/command_buffer.hpp>
#include <ecsnet/ecs/registry.hpp>

namespace command_buffer_test {

namespace {

struct Position {
    float x, y;
};
struct Health {
    int value;
};
struct Tagged {};
struct Owned {
    std::shared_ptr<int> handle;
};

using buffer = ecsnet::basic_command_buffer<ecsnet::registry>;

// The registry's content, comparable: every live entity and its components by type.
struct world_state {
    std::vector<ecsnet::entity> alive;
    std::map<ecsnet::entity, std::pair<float, float>> positions;
    std::map<ecsnet::entity, int> healths;
    std::map<ecsnet::entity, bool> tagged;
    bool operator==(const world_state&) const = default;
};

world_state state_of(ecsnet::registry& world) {
    world_state state;
    world.each([&](ecsnet::entity e) { state.alive.push_back(e); });
    for (const auto e : world.view<const Position>()) {
        const auto& p = world.get<Position>(e);
        state.positions[e] = {p.x, p.y};
    }
    for (const auto e : world.view<const Health>()) {
        state.healths[e] = world.get<Health>(e).value;
    }
    for (const auto e : world.view<const Tagged>()) {
        state.tagged[e] = true;
    }
    return state;
}

// Invariants of a registry after an apply: bitsets agree with the pools, pools hold only live entities.
void check_invariants(ecsnet::registry& world) {
    world.each([&](ecsnet::entity e) {
        ASSERT_EQ(world.all_of<Position>(e), world.storage<Position>().contains(e));
        ASSERT_EQ(world.all_of<Health>(e), world.storage<Health>().contains(e));
        ASSERT_EQ(world.all_of<Tagged>(e), world.storage<Tagged>().contains(e));
    });
    for (const auto e : world.storage<Position>()) {
        ASSERT_TRUE(world.valid(e));
    }
    for (const auto e : world.storage<Health>()) {
        ASSERT_TRUE(world.valid(e));
    }
}

TEST(CommandBufferTest, RandomizedAgainstImmediateApplication) {
    std::mt19937 rng{20240611};
    ecsnet::registry deferred_world;
    ecsnet::registry model_world; // the reference: the same operations, applied at once with the same rules
    deferred_world.prepare<Position, Health, Tagged>();
    model_world.prepare<Position, Health, Tagged>();
    buffer commands;
    ecsnet::command_stats total;

    for (int round = 0; round < 300; ++round) {
        // What both worlds looked like when the round started: commands can only name those entities, or
        // the ones this round creates.
        std::vector<ecsnet::entity> known;
        deferred_world.each([&](ecsnet::entity e) { known.push_back(e); });
        if (round % 7 == 0) {
            known.push_back(ecsnet::entity_traits::construct(123456, 3)); // never valid
        }
        std::vector<ecsnet::deferred_entity> pending;
        std::vector<ecsnet::entity> model_created;
        ecsnet::command_stats model;

        const auto pick = [&]() -> ecsnet::entity {
            return known.empty()
                       ? ecsnet::null_entity
                       : known[std::uniform_int_distribution<std::size_t>{0, known.size() - 1}(rng)];
        };
        const int operations = std::uniform_int_distribution<int>{0, 40}(rng);
        for (int op = 0; op < operations; ++op) {
            const auto kind = std::uniform_int_distribution<int>{0, 9}(rng);
            const auto value = std::uniform_int_distribution<int>{-100, 100}(rng);
            const auto e = pick();
            switch (kind) {
            case 0: { // create, and maybe give the new entity components
                pending.push_back(commands.create());
                model_created.push_back(model_world.create());
                ++model.applied;
                if (value % 2 == 0) {
                    commands.emplace<Position>(pending.back(), float(value), 1.f);
                    model_world.emplace<Position>(model_created.back(), float(value), 1.f);
                    ++model.applied;
                }
                break;
            }
            case 1:
                if (e == ecsnet::null_entity) {
                    break;
                }
                commands.destroy(e);
                if (model_world.valid(e)) {
                    model_world.destroy(e);
                    ++model.applied;
                } else {
                    ++model.dropped;
                }
                break;
            case 2:
                if (e == ecsnet::null_entity) {
                    break;
                }
                commands.emplace<Health>(e, value);
                if (model_world.valid(e) && !model_world.all_of<Health>(e)) {
                    model_world.emplace<Health>(e, value);
                    ++model.applied;
                } else {
                    ++model.dropped;
                }
                break;
            case 3:
                if (e == ecsnet::null_entity) {
                    break;
                }
                commands.emplace<Tagged>(e);
                if (model_world.valid(e) && !model_world.all_of<Tagged>(e)) {
                    model_world.emplace<Tagged>(e);
                    ++model.applied;
                } else {
                    ++model.dropped;
                }
                break;
            case 4:
                if (e == ecsnet::null_entity) {
                    break;
                }
                commands.emplace_or_replace<Position>(e, float(value), float(-value));
                if (model_world.valid(e)) {
                    model_world.emplace_or_replace<Position>(e, float(value), float(-value));
                    ++model.applied;
                } else {
                    ++model.dropped;
                }
                break;
            case 5:
                if (e == ecsnet::null_entity) {
                    break;
                }
                commands.replace<Health>(e, value * 2);
                if (model_world.valid(e) && model_world.all_of<Health>(e)) {
                    model_world.replace<Health>(e, value * 2);
                    ++model.applied;
                } else {
                    ++model.dropped;
                }
                break;
            case 6:
                if (e == ecsnet::null_entity) {
                    break;
                }
                commands.patch<Position>(e, [value](Position& p) { p.y += float(value); });
                if (model_world.valid(e) && model_world.all_of<Position>(e)) {
                    model_world.patch<Position>(e, [value](Position& p) { p.y += float(value); });
                    ++model.applied;
                } else {
                    ++model.dropped;
                }
                break;
            case 7:
                if (e == ecsnet::null_entity) {
                    break;
                }
                commands.remove<Health, Tagged>(e);
                if (model_world.valid(e)) {
                    model_world.remove<Health, Tagged>(e);
                    ++model.applied;
                } else {
                    ++model.dropped;
                }
                break;
            case 8:
                if (!pending.empty()) { // a component for an entity created earlier in this round
                    const auto at = std::uniform_int_distribution<std::size_t>{0, pending.size() - 1}(rng);
                    commands.emplace<Health>(pending[at], value);
                    const auto target = model_created[at];
                    if (model_world.valid(target) && !model_world.all_of<Health>(target)) {
                        model_world.emplace<Health>(target, value);
                        ++model.applied;
                    } else {
                        ++model.dropped;
                    }
                }
                break;
            default: // an arbitrary deferred function
                commands.enqueue([value](ecsnet::registry& r) {
                    const auto made = r.create();
                    r.emplace<Health>(made, value + 1000);
                });
                {
                    const auto made = model_world.create();
                    model_world.emplace<Health>(made, value + 1000);
                    ++model.applied;
                }
                break;
            }
        }
        const auto stats = commands.apply(deferred_world);
        total += stats;
        EXPECT_TRUE(commands.empty());
        ASSERT_EQ(stats.applied, model.applied) << "round " << round;
        ASSERT_EQ(stats.dropped, model.dropped) << "round " << round;
        ASSERT_EQ(state_of(deferred_world), state_of(model_world)) << "round " << round;
        check_invariants(deferred_world);
    }
    // The random walk did exercise both outcomes.
    EXPECT_GT(total.applied, 1000U);
    EXPECT_GT(total.dropped, 100U);
}

TEST(CommandBufferTest, SegmentsApplyByKeyWhicheverBufferRecordedThem) {
    ecsnet::registry world;
    std::vector<std::string> log;
    buffer first;
    buffer second;
    const auto note = [&log](std::string text) {
        return [&log, text](ecsnet::registry&) { log.push_back(text); };
    };
    first.begin_segment(20);
    first.enqueue(note("20a"));
    first.enqueue(note("20b"));
    second.begin_segment(10);
    second.enqueue(note("10a"));
    first.begin_segment(5);
    first.enqueue(note("5a"));
    second.begin_segment(20); // same key as a segment of `first`: buffer order breaks the tie
    second.enqueue(note("20c"));
    second.begin_segment(30);
    second.enqueue(note("30a"));
    first.begin_segment(10);
    first.enqueue(note("10b"));

    buffer* both[] = {&first, &second};
    const auto stats = buffer::apply_in_order(world, both);
    EXPECT_EQ(stats.applied, 7U);
    EXPECT_EQ(log, (std::vector<std::string>{"5a", "10b", "10a", "20a", "20b", "20c", "30a"}));
    EXPECT_TRUE(first.empty());
    EXPECT_TRUE(second.empty());
}

TEST(CommandBufferTest, SignalsFireWhenAppliedOnTheApplyingThread) {
    ecsnet::registry world;
    const auto e = world.create();
    world.emplace<Health>(e, 10);
    int constructed = 0;
    int updated = 0;
    std::thread::id update_thread;
    auto on_construct =
        world.on_construct<Position>().connect([&](ecsnet::registry&, ecsnet::entity) { ++constructed; });
    auto on_update = world.on_update<Health>().connect([&](ecsnet::registry&, ecsnet::entity) {
        ++updated;
        update_thread = std::this_thread::get_id();
    });

    buffer commands;
    // Recorded on another thread, applied on this one.
    std::thread recorder{[&] {
        commands.emplace<Position>(e, 1.f, 2.f);
        commands.replace<Health>(e, 20);
        commands.patch<Health>(e, [](Health& h) { h.value += 1; });
    }};
    recorder.join();
    EXPECT_EQ(constructed, 0);
    EXPECT_EQ(updated, 0);
    commands.apply(world);
    EXPECT_EQ(constructed, 1);
    EXPECT_EQ(updated, 2);
    EXPECT_EQ(update_thread, std::this_thread::get_id());
    EXPECT_EQ(world.get<Health>(e).value, 21);
    on_construct.release();
    on_update.release();
}

TEST(CommandBufferTest, AThrowingCommandDiscardsTheRestAndReleasesTheirArguments) {
    ecsnet::registry world;
    const auto e = world.create();
    auto handle = std::make_shared<int>(7);
    buffer commands;
    commands.emplace<Position>(e, 1.f, 1.f);
    commands.enqueue([](ecsnet::registry&) { throw std::runtime_error("listener failed"); });
    commands.emplace<Owned>(e, handle);
    EXPECT_EQ(handle.use_count(), 2);
    buffer::key_type failed_key = 99;
    buffer* one[] = {&commands};
    EXPECT_THROW(buffer::apply_in_order(world, one, &failed_key), std::runtime_error);
    EXPECT_EQ(failed_key, 0U);
    EXPECT_TRUE(world.all_of<Position>(e)) << "commands before the failure took effect";
    EXPECT_FALSE(world.all_of<Owned>(e)) << "commands after it were discarded";
    EXPECT_EQ(handle.use_count(), 1) << "the discarded command's argument was destroyed";
    EXPECT_TRUE(commands.empty());

    // Reusable afterwards.
    commands.emplace<Owned>(e, handle);
    commands.apply(world);
    EXPECT_TRUE(world.all_of<Owned>(e));
}

TEST(CommandBufferTest, ClearDestroysArgumentsWithoutApplying) {
    ecsnet::registry world;
    const auto e = world.create();
    auto handle = std::make_shared<int>(1);
    {
        buffer commands;
        for (int i = 0; i < 1000; ++i) { // spans several memory blocks
            commands.emplace<Owned>(e, handle);
        }
        EXPECT_EQ(handle.use_count(), 1001);
        commands.clear();
        EXPECT_EQ(handle.use_count(), 1);
        commands.emplace<Owned>(e, handle);
        EXPECT_EQ(handle.use_count(), 2);
    } // the destructor discards too
    EXPECT_EQ(handle.use_count(), 1);
    EXPECT_FALSE(world.all_of<Owned>(e));
}

TEST(CommandBufferTest, DeferredEntitiesAreCreatedInRecordingOrder) {
    ecsnet::registry world;
    buffer commands;
    const auto a = commands.create();
    const auto b = commands.create();
    commands.emplace<Health>(b, 2);
    commands.emplace<Health>(a, 1);
    commands.emplace<Tagged>(a);
    commands.emplace<Health>(a, 99); // a second Health for the same entity: dropped
    const auto stats = commands.apply(world);
    EXPECT_EQ(stats.applied, 5U);
    EXPECT_EQ(stats.dropped, 1U);
    ASSERT_EQ(world.alive(), 2U);
    const auto first = world.current(0);
    const auto second = world.current(1);
    EXPECT_EQ(world.get<Health>(first).value, 1);
    EXPECT_TRUE(world.all_of<Tagged>(first));
    EXPECT_EQ(world.get<Health>(second).value, 2);
}

TEST(CommandBufferTest, ADeferredEntityBelongsToItsBuffer) {
    buffer first;
    buffer second;
    const auto made = first.create();
    EXPECT_THROW(second.emplace<Health>(made, 1), std::invalid_argument);
    EXPECT_TRUE(second.empty()) << "nothing recorded";
    ecsnet::registry world;
    first.apply(world);
    EXPECT_THROW(first.emplace<Health>(made, 1), std::invalid_argument) << "stale after apply";
}

} // namespace

} // namespace command_buffer_test
