// view_encoder::update against the definition of an exact update: the client's reference (row_layout::
// reference of the rows at its two ticks, extrapolated to now) is the current row. Entities move along lines
// at every kind of speed (still, a few units a tick, speeds that quantize unevenly, speeds at the edge of
// what extrapolation may span without wrapping), turn, bounce, change a field that is not extrapolated,
// gain and lose a component, and are destroyed and replaced; every tick, clients' ticks are drawn at random
// among all those extrapolation allows. An update said exact must be exact (else a mirror goes wrong), and
// one that is exact must be said so (else bits are sent for nothing): whether found by coding or by the
// rows' lines (row_history::on_line), which must answer for most of the moving entities.

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/row_history.hpp"
#include "ecsnet/proto/view_encoder.hpp"

namespace view_encoder_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::proto;

struct mover {
    entity id{null_entity};
    float vx{};
    float vy{};
};

TEST(ViewEncoder, AnUpdateIsExactExactlyWhenTheClientsReferenceIsTheCurrentRow) {
    constexpr std::size_t movers = 48;
    constexpr int ticks = 400;
    constexpr double unit = arena::position_step;
    registry reg;
    snapshot_history history{arena::replicated_schema(), reg};
    row_history rows{arena::replicated_schema().layout(), 64};
    view_encoder encoder{rows};
    std::mt19937 random{20261130};
    std::uniform_real_distribution<double> chance{0.0, 1.0};

    // Speeds in metres a tick: whole units (lines), fractions of one (quantized steps that alternate),
    // and around 64 m, where |step| x 16 ticks reaches half of a position's range (the guard of
    // row_layout::continues_line).
    const auto draw_speed = [&] {
        const double speeds[] = {0.0, unit,  3 * unit, -7 * unit, 0.3 * unit,  1.7 * unit,
                                 0.5, -2.25, 63.5,     -64.5,     64.0 - unit, 64.0};
        return static_cast<float>(speeds[random() % std::size(speeds)]);
    };
    const auto spawn = [&] {
        mover m;
        m.id = reg.create();
        std::uniform_real_distribution<float> place{-500.0F, 500.0F};
        reg.emplace<arena::Transform>(m.id, place(random), place(random), 0.0F, 0.0F);
        reg.emplace<arena::Health>(m.id, std::uint16_t{100});
        m.vx = draw_speed();
        m.vy = random() % 3 == 0 ? 0.0F : draw_speed();
        return m;
    };
    std::vector<mover> all;
    for (std::size_t i = 0; i < movers; ++i) {
        all.push_back(spawn());
    }

    const auto& layout = rows.layout();
    std::vector<std::uint32_t> reference(layout.width());
    std::size_t compared = 0;
    std::size_t exact = 0;
    std::size_t lined = 0;
    for (tick_type tick = 1; tick <= static_cast<tick_type>(ticks); ++tick) {
        for (auto& m : all) {
            if (chance(random) < 0.005) { // destroyed, and its index taken by a new occupant
                reg.destroy(m.id);
                m = spawn();
                continue;
            }
            if (chance(random) < 0.03) { // turns
                m.vx = draw_speed();
                m.vy = draw_speed();
            }
            if (chance(random) < 0.02) { // a field that is not extrapolated
                reg.patch<arena::Health>(m.id, [](arena::Health& h) { --h.value; });
            }
            if (chance(random) < 0.02) { // a component comes or goes
                if (reg.all_of<arena::LastHit>(m.id)) {
                    reg.remove<arena::LastHit>(m.id);
                } else {
                    reg.emplace<arena::LastHit>(m.id, 1U, tick, 1U);
                }
            }
            reg.patch<arena::Transform>(m.id, [&m](arena::Transform& t) {
                if (std::abs(t.x + m.vx) > 1000.0F) { // bounces off the arena's edge
                    m.vx = -m.vx;
                }
                if (std::abs(t.y + m.vy) > 1000.0F) {
                    m.vy = -m.vy;
                }
                t.x += m.vx;
                t.y += m.vy;
            });
        }
        history.capture(tick, std::uint64_t{tick} * 33'333);
        rows.update(history);
        encoder.begin_tick();
        if (tick < 3) {
            continue;
        }
        for (const auto index : rows.alive()) {
            for (int draw = 0; draw < 24; ++draw) {
                const tick_type base =
                    tick - 1 - static_cast<tick_type>(random() % std::min<tick_type>(16, tick - 2));
                const tick_type previous =
                    base - 1 - static_cast<tick_type>(random() % std::min<tick_type>(16, base - 1));
                if (!layout.extrapolates(base, previous, tick) || rows.since(index) <= base) {
                    continue; // what a client's view asks: an entity changed since its value
                }
                const auto* base_row = rows.at(index, base);
                const auto* previous_row = rows.at(index, previous);
                if (base_row == nullptr || previous_row == nullptr) {
                    continue; // another occupant then, or forgotten
                }
                const bool moved =
                    layout.reference(base_row, previous_row, tick - base, base - previous, reference.data());
                const bool truth = layout.equal(reference.data(), rows.current(index));
                const bool on_line = rows.on_line(index, previous);
                const auto code = encoder.update(index, base, previous);
                ASSERT_FALSE(code.forgotten);
                ASSERT_EQ(code.exact, truth) << "tick " << tick << ", index " << index << ", base " << base
                                             << ", previous " << previous << ", on a line " << on_line;
                ASSERT_EQ(code.unchanged, truth && !moved) << "tick " << tick << ", index " << index;
                if (on_line) {
                    ASSERT_TRUE(truth) << "tick " << tick << ", index " << index << ", base " << base
                                       << ", previous " << previous;
                    ASSERT_EQ(code.bits, 0U);
                }
                ++compared;
                exact += truth ? 1 : 0;
                lined += on_line ? 1 : 0;
            }
        }
    }
    // The lines answer for about half the exact updates of this scene (the others: speeds that quantize to
    // uneven steps, speeds beyond the guard over short spans, entities that just turned or spawned).
    EXPECT_GT(compared, 100'000U);
    EXPECT_GT(lined, exact / 3);
    EXPECT_LT(exact, compared); // and coding finds the rest, exact or not
}

} // namespace

} // namespace view_encoder_test
