// row_history::at against a reference that keeps every row of every tick: entities that change every
// tick, some ticks or never, destroyed and their indices taken by new occupants, asked for at every tick
// of the last `depth` and a few beyond. A value is found exactly when the reference says the history still
// holds it (the tick it was replaced at is within the last `depth` ticks, or it is the current value),
// and never across occupants.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/row_history.hpp"

namespace row_history_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::proto;

struct reference_row {
    std::uint32_t generation{};
    std::vector<std::uint32_t> row;
};

// Every replicated row of one tick, by index.
using reference_tick = std::map<std::uint32_t, reference_row>;

struct scene {
    static constexpr std::size_t slots = 96;
    static constexpr std::size_t depth = 16;

    scene()
        : history{arena::replicated_schema(), reg}
        , rows{arena::replicated_schema().layout(), depth} {
        for (std::size_t i = 0; i < slots; ++i) {
            spawn(i);
        }
    }

    // How often the occupant of slot i changes: every tick, half the ticks, a tenth, never.
    static double change_rate(std::size_t slot) {
        constexpr double rates[] = {1.0, 0.5, 0.1, 0.0};
        return rates[slot % 4];
    }

    void spawn(std::size_t slot) {
        const auto e = reg.create();
        std::uniform_real_distribution<float> place{-900.0F, 900.0F};
        reg.emplace<arena::Transform>(e, place(random), place(random), 0.0F, 0.0F);
        reg.emplace<arena::Kind>(e, static_cast<std::uint8_t>(slot % 7));
        if (slot >= entities.size()) {
            entities.resize(slot + 1);
        }
        entities[slot] = e;
    }

    void step() {
        std::uniform_real_distribution<double> chance{0.0, 1.0};
        for (std::size_t slot = 0; slot < slots; ++slot) {
            if (!reg.valid(entities[slot])) {
                continue; // destroyed by a test
            }
            if (chance(random) < 0.01) { // its index is recycled by the next create(): a new occupant
                reg.destroy(entities[slot]);
                spawn(slot);
                continue;
            }
            if (chance(random) < change_rate(slot)) {
                reg.patch<arena::Transform>(entities[slot], [this](arena::Transform& t) {
                    t.x = std::clamp(t.x + (random() % 2 == 0 ? 0.5F : -0.5F), -1000.0F, 1000.0F);
                });
            }
        }
        ++tick;
        history.capture(tick, std::uint64_t{tick} * 33'333);
        rows.update(history);
        reference_tick now;
        const auto width = rows.layout().width();
        for (const auto index : rows.alive()) {
            const auto* row = rows.current(index);
            now[index] = {rows.generation(index), std::vector<std::uint32_t>(row, row + width)};
        }
        past.push_back(std::move(now));
        if (past.size() > depth + 8) {
            past.pop_front();
        }
    }

    const reference_tick& at_tick(tick_type t) const { return past[past.size() - 1 - (tick - t)]; }

    // What at(index, t) must return: the row, or nothing.
    std::optional<std::vector<std::uint32_t>> expected(std::uint32_t index, tick_type t) const {
        const auto& newest = at_tick(tick);
        const auto current = newest.find(index);
        const auto& then = at_tick(t);
        const auto found = then.find(index);
        if (current == newest.end() || found == then.end() ||
            found->second.generation != current->second.generation) {
            return std::nullopt; // not replicated then, or another occupant
        }
        // The value of t is replaced at the first tick after it with another row; the history keeps it
        // while that tick's slab is among the last `depth`.
        for (tick_type u = t + 1; u <= tick; ++u) {
            if (at_tick(u).at(index).row != found->second.row) {
                if (u + depth <= tick) {
                    return std::nullopt;
                }
                break;
            }
        }
        return found->second.row;
    }

    registry reg;
    snapshot_history history;
    row_history rows;
    std::vector<entity> entities;
    std::deque<reference_tick> past; // the last ticks, oldest first
    std::mt19937 random{20261127};
    tick_type tick{0};
};

TEST(RowHistory, AtEqualsAReferenceOfEveryTickForEveryRateOfChange) {
    scene s;
    const auto width = s.rows.layout().width();
    std::size_t found_old = 0; // past values more than 8 ticks back (beyond what a record keeps, if it
                               // changed every tick)
    std::size_t forgotten = 0; // values the history no longer holds
    std::size_t not_owner = 0; // asked for a tick before the index's current occupant
    for (int step = 0; step < 400; ++step) {
        s.step();
        const tick_type oldest = s.tick + 1 - static_cast<tick_type>(s.past.size());
        for (const auto index : s.rows.alive()) {
            for (tick_type t = oldest; t <= s.tick; ++t) {
                const auto want = s.expected(index, t);
                const auto* got = s.rows.at(index, t);
                ASSERT_EQ(got != nullptr, want.has_value())
                    << "index " << index << " at tick " << t << " (now " << s.tick << ")";
                if (want) {
                    ASSERT_TRUE(std::equal(want->begin(), want->end(), got, got + width))
                        << "index " << index << " at tick " << t << " (now " << s.tick << ")";
                    const bool past_value = !std::equal(want->begin(), want->end(), s.rows.current(index));
                    found_old += s.tick - t > 8 && past_value ? 1 : 0;
                } else {
                    const auto then = s.at_tick(t).find(index);
                    const bool same_owner =
                        then != s.at_tick(t).end() && then->second.generation == s.rows.generation(index);
                    (same_owner ? forgotten : not_owner) += 1;
                }
            }
        }
    }
    // Every path was taken, many times.
    EXPECT_GT(found_old, 1000U);
    EXPECT_GT(forgotten, 1000U);
    EXPECT_GT(not_owner, 100U);
}

TEST(RowHistory, NothingForAnIndexWithoutAnOccupantOrAfterTheNewestTick) {
    scene s;
    for (int step = 0; step < 5; ++step) {
        s.step();
    }
    const auto index = entity_traits::to_index(s.entities[0]);
    s.reg.destroy(s.entities[0]);
    s.step();
    EXPECT_FALSE(s.rows.alive(index));
    EXPECT_EQ(s.rows.at(index, s.tick), nullptr);
    EXPECT_EQ(s.rows.at(index, s.tick - 1), nullptr) << "its occupant is gone: no value of it is served";
    const auto alive = s.rows.alive().front();
    EXPECT_EQ(s.rows.at(alive, s.tick + 1), nullptr);
    EXPECT_NE(s.rows.at(alive, s.tick), nullptr);
}

// Each entity's row, built from the newest state by searching each component's ids: what update() must
// hold as the current rows, whether it gathered every row or only those the state lists as changed.
std::map<std::uint32_t, std::vector<std::uint32_t>> rows_of(const replicated_state& state,
                                                            const row_layout& layout) {
    std::vector<std::uint32_t> scratch;
    const auto& entities = state.flat(scratch);
    std::map<std::uint32_t, std::vector<std::uint32_t>> rows;
    for (const auto index : entities) {
        rows[index].assign(layout.width(), 0);
    }
    for (std::size_t c = 0; c < layout.components(); ++c) {
        const auto& component = state.components[c];
        std::vector<std::uint32_t> ids = entities;
        if (!component.ids_are_entities) {
            flatten(component.own_ids, ids);
        }
        for (std::size_t i = 0; i < ids.size(); ++i) {
            auto& row = rows.at(ids[i]);
            row[c / 32] |= 1U << (c % 32);
            for (std::size_t f = 0; f < component.fields.size(); ++f) {
                row[layout.offset(c) + f] = component.fields[f].get(i);
            }
        }
    }
    return rows;
}

TEST(RowHistory, CurrentRowsAreTheNewestStatesWhileComponentsComeAndGoAndTicksAreSkipped) {
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    row_history rows{arena::replicated_schema().layout(), 16};
    std::mt19937 random{20261130};
    std::uniform_real_distribution<double> chance{0.0, 1.0};
    std::vector<entity> entities;
    const auto spawn = [&] {
        const auto e = reg.create();
        reg.emplace<arena::Transform>(e, static_cast<float>(random() % 1000), 0.0F, 0.0F, 0.0F);
        reg.emplace<arena::Kind>(e, std::uint8_t{1});
        if (chance(random) < 0.5) {
            reg.emplace<arena::Health>(e, std::uint16_t{100});
        }
        return e;
    };
    for (int i = 0; i < 200; ++i) {
        entities.push_back(spawn());
    }
    std::size_t compared = 0;
    std::size_t skipped_updates = 0;
    std::size_t changed_presence = 0;
    for (tick_type tick = 1; tick <= 600; ++tick) {
        for (auto& e : entities) {
            const double roll = chance(random);
            if (roll < 0.01) {
                reg.destroy(e);
                e = spawn();
            } else if (roll < 0.03) { // gains or loses a component only some entities have
                if (reg.all_of<arena::Health>(e)) {
                    reg.remove<arena::Health>(e);
                } else {
                    reg.emplace<arena::Health>(e, std::uint16_t{50});
                }
                ++changed_presence;
            } else if (roll < 0.04) {
                reg.emplace_or_replace<arena::LastHit>(e, static_cast<std::uint32_t>(random() % 64), tick,
                                                       1U);
            } else if (roll < 0.05) {
                reg.remove<arena::LastHit>(e);
            } else if (roll < 0.25) {
                reg.patch<arena::Transform>(e, [](arena::Transform& t) { t.x += 0.5F; });
            } else if (roll < 0.27 && reg.all_of<arena::Health>(e)) {
                reg.patch<arena::Health>(
                    e, [](arena::Health& h) { h.value = static_cast<std::uint16_t>(h.value - 1); });
            }
        }
        history.capture(tick, std::uint64_t{tick} * 33'333);
        if (tick % 37 == 0) {
            ++skipped_updates; // the rows miss a tick: the next update cannot go by the state's changes
            continue;
        }
        rows.update(history);
        const auto expected = rows_of(history.newest(), rows.layout());
        ASSERT_EQ(rows.alive().size(), expected.size()) << "tick " << tick;
        std::vector<std::uint32_t> largest(rows.layout().width(), 0);
        for (const auto& [index, row] : expected) {
            ASSERT_TRUE(rows.alive(index)) << "tick " << tick << ", index " << index;
            const auto* current = rows.current(index);
            ASSERT_EQ(std::vector<std::uint32_t>(current, current + row.size()), row)
                << "tick " << tick << ", index " << index;
            for (std::size_t at = rows.layout().presence_words(); at < row.size(); ++at) {
                largest[at] = std::max(largest[at], row[at]);
            }
            ++compared;
        }
        EXPECT_EQ(rows.max_values(), largest) << "tick " << tick;
    }
    EXPECT_GT(compared, 100'000U);
    EXPECT_GT(skipped_updates, 10U);
    EXPECT_GT(changed_presence, 1'000U);
}

} // namespace

} // namespace row_history_test
