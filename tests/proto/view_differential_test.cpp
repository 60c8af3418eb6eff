// Interest-managed views against a simple reference, over thousands of ticks of the standard scene: clients
// that move (and teleport), relevancy radii, spawns and despawns (one at a time and by hundreds), budgets
// from generous to starving, and a network that delays, reorders and loses snapshots and acks, or (TCP-like)
// delivers them in order up to 2 s late, more views in flight than the server keeps.
//
// The reference is the test's own record of the world: every entity's quantized components per tick, read
// from the registry with the schema's codecs (not through row_history). After every snapshot a client
// applies:
//   - the mirror's registry equals the view it claims (verify: checksum and components);
//   - the view holds only entities relevant to the client at that tick (nothing outside leaks);
//   - each entity shows the reference (its value, or the extrapolation of its two last values) of the
//     world's values at the ticks the server says it sent: what it shows is what the world was;
//   - a client with an unlimited budget shows exactly its relevant set with the world's values of the tick;
//   - sets recomputed only every few ticks (as a server does) hold entities destroyed or replaced since:
//     the view skips them, and what it holds is what is still relevant;
//   - under a budget, no entity's value stays behind the world for longer than a bound (no starvation).

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/client_view.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/row_history.hpp"
#include "ecsnet/proto/view_encoder.hpp"
#include "ecsnet/proto/view_mirror.hpp"

namespace view_differential_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::proto;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

constexpr std::size_t record_depth = 128;

// The world as the test sees it: per entity index, the versions of its generation and quantized row, each
// from the tick it took that value (and when it stopped being replicated), kept for the last
// `record_depth` ticks plus the version before them (an entity a view holds unchanged keeps the tick it
// got its value at, which may be long ago).
class world_record {
public:
    explicit world_record(const row_layout& layout)
        : layout_{&layout} {}

    struct entry {
        std::uint32_t index;
        std::uint32_t generation;
        const std::uint32_t* row;
    };

    void take(tick_type tick, registry& reg, snapshot_history& history) {
        const auto& s = arena::replicated_schema();
        const auto width = layout_->width();
        std::vector<entity> alive;
        for (std::size_t c = 0; c < s.size(); ++c) {
            for (const auto e : s.codec(c).pool_entities(reg)) {
                alive.push_back(e);
            }
        }
        std::sort(alive.begin(), alive.end(), [](entity a, entity b) { return to_index(a) < to_index(b); });
        alive.erase(std::unique(alive.begin(), alive.end()), alive.end());
        indices_.clear();
        std::vector<std::uint32_t> row(width);
        std::vector<std::uint32_t> values(width);
        std::vector<std::uint8_t> seen(versions_.size(), 0);
        for (const auto e : alive) {
            const auto index = to_index(e);
            std::fill(row.begin(), row.end(), 0U);
            for (std::size_t c = 0; c < s.size(); ++c) {
                if (s.codec(c).contained(reg, e)) {
                    row_layout::set_present(row.data(), c);
                    s.codec(c).quantize_one(reg, e, values.data());
                    std::copy_n(values.begin(), layout_->fields(c), row.begin() + layout_->offset(c));
                }
            }
            const auto generation = history.to_net(e).generation;
            if (index >= versions_.size()) {
                versions_.resize(std::size_t{index} + 1);
                seen.resize(versions_.size(), 0);
            }
            seen[index] = 1;
            auto& list = versions_[index];
            if (list.empty() || !list.back().present || list.back().generation != generation ||
                list.back().row != row) {
                list.push_back({tick, true, generation, row});
            }
            indices_.push_back(index);
        }
        for (std::size_t index = 0; index < versions_.size(); ++index) {
            auto& list = versions_[index];
            if (seen[index] == 0 && !list.empty() && list.back().present) {
                list.push_back({tick, false, 0, {}});
            }
            // Forget what no view can still hold: versions replaced more than record_depth ticks ago.
            std::size_t stale = 0;
            while (stale + 1 < list.size() && list[stale + 1].from + record_depth < tick) {
                ++stale;
            }
            if (stale > 0) {
                list.erase(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(stale));
            }
        }
        newest_ = tick;
    }

    // `index` at `tick`: nothing when it was not replicated then (or that is forgotten).
    std::optional<entry> at(tick_type tick, std::uint32_t index) const {
        if (index >= versions_.size() || tick > newest_) {
            return std::nullopt;
        }
        const auto& list = versions_[index];
        // The last version from at most `tick` (versions are in tick order).
        const auto after = std::upper_bound(list.begin(), list.end(), tick,
                                            [](tick_type t, const version& v) { return t < v.from; });
        if (after == list.begin() || !std::prev(after)->present) {
            return std::nullopt;
        }
        const auto& found = *std::prev(after);
        return entry{index, found.generation, found.row.data()};
    }

    // Sorted indices replicated at the newest tick.
    const std::vector<std::uint32_t>& indices(tick_type) const { return indices_; }

    static bool equal(const std::uint32_t* a, const std::vector<std::uint32_t>& b) {
        return std::equal(b.begin(), b.end(), a);
    }

private:
    struct version {
        tick_type from;
        bool present;
        std::uint32_t generation;
        std::vector<std::uint32_t> row;
    };
    const row_layout* layout_;
    std::vector<std::vector<version>> versions_;
    std::vector<std::uint32_t> indices_;
    tick_type newest_{};
};

struct client_sim {
    client_sim(view_encoder& encoder, double radius, std::int64_t budget_bits_per_tick, double loss)
        : view{encoder}
        , mirror{arena::replicated_schema()}
        , radius{radius}
        , budget_per_tick{budget_bits_per_tick}
        , loss{loss} {}

    client_view view;
    view_mirror mirror;
    double x{};
    double y{};
    double radius;
    std::int64_t budget_per_tick; // < 0: unlimited
    std::int64_t bucket{};
    double loss;
    double max_delay{4.0}; // ticks, each way
    bool in_order{};       // deliveries never overtake (TCP)
    // Ticks between two recomputations of the set (a server's relevancy period): in between, the same set is
    // written again, holding entities destroyed or replaced since, which the view must skip.
    tick_type relevancy_period{1};
    std::vector<net_entity> set;
    std::vector<float> set_weights;
    std::size_t stale_members{}; // members of a set passed to write() that were gone by then
    tick_type last_delivery{};
    tick_type last_ack{};
    std::deque<std::pair<tick_type, std::string>> snapshots; // (delivery tick, envelope bytes)
    std::deque<std::pair<tick_type, v1::Ack>> acks;
    std::map<tick_type, view_frame> sent;                        // what the server says each view holds
    std::map<tick_type, std::vector<std::uint32_t>> relevant_at; // sorted indices
    std::size_t applied{};
    std::size_t refused{};
    tick_type worst_staleness{};
    std::map<std::uint32_t, tick_type> behind_since; // entities whose shown value differs from the world
    std::size_t max_waiting{};
};

TEST(ViewDifferential, MirrorsEqualTheReferenceUnderLossBudgetsAndRelevancyChanges) {
    // ECSNET_VIEW_TICKS overrides the length (for profiling, or a longer soak).
    const char* override_ticks = std::getenv("ECSNET_VIEW_TICKS");
    const std::size_t ticks =
        override_ticks != nullptr ? std::strtoul(override_ticks, nullptr, 10) : (sanitized ? 1500 : 10'000);
    const auto& schema = arena::replicated_schema();
    registry reg;
    arena::scene_options scene_options;
    scene_options.entities = 1200;
    scene_options.seed = 7;
    arena::scene scene{reg, scene_options};
    scene.populate();
    snapshot_history history{schema, reg};
    row_history rows{schema.layout(), 64};
    view_encoder encoder{rows};
    world_record world{rows.layout()};
    std::mt19937_64 random{42};
    std::uniform_real_distribution<double> unit{0.0, 1.0};

    std::vector<std::unique_ptr<client_sim>> clients;
    clients.push_back(std::make_unique<client_sim>(encoder, 350.0, -1, 0.0));     // unlimited, lossless
    clients.push_back(std::make_unique<client_sim>(encoder, 300.0, -1, 0.15));    // unlimited, lossy
    clients.push_back(std::make_unique<client_sim>(encoder, 400.0, 1'000, 0.05)); // tight budget
    clients.push_back(std::make_unique<client_sim>(encoder, 250.0, 300, 0.10));   // starving budget
    clients.push_back(std::make_unique<client_sim>(encoder, 1.0e9, -1, 0.05));    // sees everything
    // TCP-like: in order, up to 2 s late each way, so that up to ~120 views are in flight (more than the
    // server keeps: its base is then dropped and a full state follows).
    clients.push_back(std::make_unique<client_sim>(encoder, 300.0, 3'000, 0.0));
    clients.back()->max_delay = 60.0;
    clients.back()->in_order = true;
    clients.push_back(std::make_unique<client_sim>(encoder, 300.0, -1, 0.0));
    clients.back()->max_delay = 60.0;
    clients.back()->in_order = true;
    // Sets recomputed every 4 ticks (the server: 8; more changes a run here): unlimited and lossy, and a
    // tight budget.
    const std::size_t first_added_client = clients.size();
    std::mt19937_64 added_random{43};
    clients.push_back(std::make_unique<client_sim>(encoder, 350.0, -1, 0.1));
    clients.back()->relevancy_period = 4;
    clients.push_back(std::make_unique<client_sim>(encoder, 300.0, 1'500, 0.05));
    clients.back()->relevancy_period = 4;
    for (std::size_t ci = 0; ci < clients.size(); ++ci) {
        auto& rng = ci < first_added_client ? random : added_random;
        clients[ci]->x = (unit(rng) - 0.5) * 1500.0;
        clients[ci]->y = (unit(rng) - 0.5) * 1500.0;
    }

    const auto& layout = rows.layout();
    std::vector<std::uint32_t> reference(layout.width());
    v1::Envelope envelope;

    for (tick_type tick = 1; tick <= ticks; ++tick) {
        scene.step();
        // Now and then: hundreds spawn at once next to client 2, or hundreds despawn.
        if (tick % 700 == 350) {
            for (int i = 0; i < 300; ++i) {
                const auto e = reg.create();
                reg.emplace<arena::Transform>(
                    e, static_cast<float>(clients[2]->x + (unit(random) - 0.5) * 40.0),
                    static_cast<float>(clients[2]->y + (unit(random) - 0.5) * 40.0), 0.0F, 0.0F);
                reg.emplace<arena::Health>(e, std::uint16_t{50});
            }
        }
        if (tick % 900 == 450) {
            std::vector<entity> doomed;
            for (const auto e : reg.storage<arena::Transform>()) {
                if (unit(random) < 0.1) {
                    doomed.push_back(e);
                }
            }
            for (const auto e : doomed) {
                reg.destroy(e);
            }
        }
        history.capture(tick, std::uint64_t{tick} * 33'333);
        rows.update(history);
        encoder.begin_tick();
        world.take(tick, reg, history);

        for (std::size_t ci = 0; ci < clients.size(); ++ci) {
            auto& c = *clients[ci];
            // The clients added later draw from a stream of their own: the first ones meet the same network
            // and the same moves as before they came.
            auto& rng = ci < first_added_client ? random : added_random;
            // Clients wander, and teleport now and then.
            c.x = std::clamp(c.x + (unit(rng) - 0.5) * 8.0, -1000.0, 1000.0);
            c.y = std::clamp(c.y + (unit(rng) - 0.5) * 8.0, -1000.0, 1000.0);
            if (tick % 500 == 100 * ci) {
                c.x = (unit(rng) - 0.5) * 1800.0;
                c.y = (unit(rng) - 0.5) * 1800.0;
            }
            auto& relevant_indices = c.relevant_at[tick];
            if (tick % c.relevancy_period == 0) {
                c.set.clear();
                c.set_weights.clear();
                for (const auto index : world.indices(tick)) {
                    const auto value = *world.at(tick, index);
                    const auto* row = value.row;
                    const double px =
                        -arena::arena_half_extent + row[layout.offset(0)] * arena::position_step;
                    const double py =
                        -arena::arena_half_extent + row[layout.offset(0) + 1] * arena::position_step;
                    const double d = std::hypot(px - c.x, py - c.y);
                    if (!row_layout::has(row, 0) || d <= c.radius) {
                        c.set.push_back({index, value.generation});
                        c.set_weights.push_back(
                            static_cast<float>(1.0 + 7.0 * std::max(0.0, 1.0 - d / 400.0)));
                    }
                }
            }
            // A set of a few ticks ago: what is relevant is what of it is still there.
            for (const auto& id : c.set) {
                const auto now = world.at(tick, id.index);
                if (now && now->generation == id.generation) {
                    relevant_indices.push_back(id.index);
                } else {
                    ++c.stale_members;
                }
            }
            std::int64_t budget = std::int64_t{1} << 40;
            if (c.budget_per_tick >= 0) {
                c.bucket = std::min(c.bucket + c.budget_per_tick, 2 * c.budget_per_tick);
                budget = c.bucket;
            }
            const auto report = c.view.write(c.set, c.set_weights, budget, 0, envelope);
            ASSERT_EQ(report.relevant, relevant_indices.size()) << "client " << ci << " tick " << tick;
            const auto bytes = encode_envelope(envelope);
            if (c.budget_per_tick >= 0) {
                c.bucket -= static_cast<std::int64_t>(bytes.size()) * 8;
            }
            c.max_waiting = std::max(c.max_waiting, report.waiting);
            c.sent[tick] = *c.view.newest();
            if (unit(rng) >= c.loss) {
                auto when = tick + static_cast<tick_type>(unit(rng) * c.max_delay);
                if (c.in_order) {
                    when = std::max(when, c.last_delivery);
                    c.last_delivery = when;
                }
                c.snapshots.emplace_back(when, bytes);
            }

            // Deliveries due (in the order they were sent, or not: delays differ).
            for (auto it = c.snapshots.begin(); it != c.snapshots.end();) {
                if (it->first > tick) {
                    ++it;
                    continue;
                }
                const auto applied = c.mirror.apply_envelope(it->second);
                it = c.snapshots.erase(it);
                if (!applied) {
                    ASSERT_TRUE(applied.code() == errc::stale_snapshot ||
                                applied.code() == errc::unknown_baseline)
                        << applied.message();
                    ++c.refused;
                } else {
                    ++c.applied;
                    const auto t = applied->tick;
                    ASSERT_TRUE(c.mirror.verify()) << "client " << ci << " tick " << t;
                    const auto& frame = c.sent.at(t);
                    const auto contents = c.mirror.contents();
                    ASSERT_EQ(contents.size(), frame.entries.size()) << "client " << ci << " tick " << t;
                    const auto& allowed = c.relevant_at.at(t);
                    for (std::size_t i = 0; i < contents.size(); ++i) {
                        const auto& [id, shown] = contents[i];
                        const auto& e = frame.entries[i];
                        ASSERT_EQ(id.index, e.index);
                        ASSERT_EQ(id.generation, e.generation);
                        ASSERT_TRUE(std::binary_search(allowed.begin(), allowed.end(), id.index))
                            << "client " << ci << " learnt of entity " << id.index << ", not relevant at "
                            << t;
                        const auto value = world.at(e.tick, e.index);
                        ASSERT_TRUE(value.has_value());
                        ASSERT_EQ(value->generation, e.generation);
                        const bool x = layout.extrapolates(e.tick, e.previous(), t);
                        const auto before = x ? world.at(e.previous(), e.index) : std::nullopt;
                        ASSERT_TRUE(!x || before.has_value());
                        layout.reference(value->row, x ? before->row : nullptr, t - e.tick,
                                         x ? e.tick - e.previous() : 0, reference.data());
                        ASSERT_EQ(shown, reference)
                            << "client " << ci << " entity " << e.index << " at " << t;
                        const auto now = world.at(t, e.index);
                        // Staleness: since when what it shows has differed from the world.
                        if (now && !world.equal(now->row, shown)) {
                            const auto since = c.behind_since.emplace(e.index, t).first->second;
                            c.worst_staleness = std::max(c.worst_staleness, t - since);
                        } else {
                            c.behind_since.erase(e.index);
                        }
                    }
                    if (c.budget_per_tick < 0) {
                        // Everything relevant, exactly as the world was at that tick.
                        ASSERT_EQ(contents.size(), allowed.size()) << "client " << ci << " tick " << t;
                        for (const auto& [id, shown] : contents) {
                            const auto now = world.at(t, id.index);
                            ASSERT_TRUE(now.has_value());
                            ASSERT_TRUE(world.equal(now->row, shown))
                                << "client " << ci << " entity " << id.index;
                        }
                    }
                }
                if (unit(rng) >= c.loss) {
                    auto when = tick + static_cast<tick_type>(unit(rng) * c.max_delay);
                    if (c.in_order) {
                        when = std::max(when, c.last_ack);
                        c.last_ack = when;
                    }
                    c.acks.emplace_back(when, c.mirror.make_ack());
                }
            }
            for (auto it = c.acks.begin(); it != c.acks.end();) {
                if (it->first > tick) {
                    ++it;
                    continue;
                }
                c.view.on_ack(it->second.tick(), it->second.full_state_requested());
                it = c.acks.erase(it);
            }
            // Forget what no delivery can need any more.
            while (!c.sent.empty() && c.sent.begin()->first + 200 < tick) {
                c.sent.erase(c.sent.begin());
            }
            while (!c.relevant_at.empty() && c.relevant_at.begin()->first + 200 < tick) {
                c.relevant_at.erase(c.relevant_at.begin());
            }
        }
    }
    for (std::size_t ci = 0; ci < clients.size(); ++ci) {
        const auto& c = *clients[ci];
        EXPECT_GT(c.applied, ticks / 2) << "client " << ci;
        // No entity stays behind the world for long, even on a starving budget.
        EXPECT_LE(c.worst_staleness, 200U) << "client " << ci;
        std::printf(
            "client %zu: %zu applied, %zu refused, worst staleness %u ticks, most waiting to enter %zu, "
            "%zu members of its sets gone when written\n",
            ci, c.applied, c.refused, c.worst_staleness, c.max_waiting, c.stale_members);
        if (c.relevancy_period > 1) {
            EXPECT_GT(c.stale_members, 0U) << "client " << ci << ": no set held a destroyed entity";
        }
    }
    const auto& stats = encoder.stats();
    std::printf("encoder: %llu lookups, %.1f%% hits; %llu bits coded, %llu bits copied into snapshots\n",
                static_cast<unsigned long long>(stats.lookups),
                stats.lookups == 0
                    ? 0.0
                    : 100.0 * static_cast<double>(stats.hits) / static_cast<double>(stats.lookups),
                static_cast<unsigned long long>(stats.bits_coded),
                static_cast<unsigned long long>(stats.bits_copied));
}

} // namespace

} // namespace view_differential_test
