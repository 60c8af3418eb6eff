// The packed delta: what write_delta writes, read_delta reads back identically; extrapolation rounds as
// documented; apply_delta refuses deltas that do not fit their baseline; random bytes give errors, never a
// crash; the checksum is the documented sum and every single change moves it.

#include <gtest/gtest.h>

#include <algorithm>

#include "ecsnet/proto/checksum.hpp"
#include "ecsnet/proto/delta.hpp"
#include "ecsnet/proto/encoder.hpp"
#include "replication_support.hpp"

namespace ecsnet::proto::delta_test {
namespace {

std::vector<std::uint32_t> ascending(arena::scene_random& rng, std::size_t max_count, std::uint32_t spread) {
    std::vector<std::uint32_t> out;
    std::uint32_t v = static_cast<std::uint32_t>(rng.below(spread));
    const auto n = rng.below(max_count + 1);
    for (std::size_t i = 0; i < n && v <= max_net_index; ++i) {
        out.push_back(v);
        v += 1 + static_cast<std::uint32_t>(rng.below(rng.chance(0.1) ? spread * 100 : spread));
    }
    return out;
}

// A random delta that respects the syntax (not necessarily any baseline).
delta random_delta(const schema_layout& layout, arena::scene_random& rng) {
    delta d;
    d.reset(layout);
    d.destroyed = ascending(rng, 6, 40);
    d.created = ascending(rng, 6, 40);
    for (std::size_t i = 0; i < d.created.size(); ++i) {
        d.created_generations.push_back(
            static_cast<std::uint32_t>(rng.chance(0.2) ? rng.next() : rng.below(300)));
    }
    for (std::size_t c = 0; c < layout.size(); ++c) {
        auto& cd = d.components[c];
        const auto& fields = layout[c].fields;
        if (rng.chance(0.3)) {
            continue;
        }
        cd.removed = ascending(rng, 4, 30);
        if (!d.created.empty() && rng.chance(0.4)) {
            cd.added = d.created;
            cd.added_are_created = true;
        } else {
            cd.added = ascending(rng, 5, 50);
            cd.added_are_created = !cd.added.empty() && cd.added == d.created;
        }
        for (std::size_t f = 0; f < fields.size(); ++f) {
            for (std::size_t k = 0; k < cd.added.size(); ++k) {
                const auto v = static_cast<std::uint32_t>(rng.next()) & fields[f].mask();
                cd.added_values[f].push_back(rng.chance(0.5) ? v : v & 7U);
            }
        }
        cd.changed = ascending(rng, 40, 8);
        for (std::size_t k = 0; k < cd.changed.size(); ++k) {
            std::uint32_t mask = 0;
            while (mask == 0) {
                mask =
                    static_cast<std::uint32_t>(rng.next()) & bit_mask(static_cast<unsigned>(fields.size()));
            }
            cd.masks.push_back(mask);
            for (std::size_t f = 0; f < fields.size(); ++f) {
                if ((mask >> f) & 1U) {
                    std::uint32_t r = 0;
                    while (r == 0) {
                        r = static_cast<std::uint32_t>(rng.chance(0.7) ? rng.below(5) - 2 : rng.next()) &
                            fields[f].mask();
                    }
                    cd.residuals[f].push_back(r);
                }
            }
        }
        if (cd.empty()) {
            cd.clear(fields.size());
        }
    }
    return d;
}

bool same(const delta& a, const delta& b) {
    if (a.destroyed != b.destroyed || a.created != b.created ||
        a.created_generations != b.created_generations) {
        return false;
    }
    for (std::size_t c = 0; c < a.components.size(); ++c) {
        const auto& x = a.components[c];
        const auto& y = b.components[c];
        if (x.removed != y.removed || x.added != y.added || x.added_are_created != y.added_are_created ||
            x.changed != y.changed || x.masks != y.masks) {
            return false;
        }
        for (std::size_t f = 0; f < x.residuals.size(); ++f) {
            if (x.residuals[f] != y.residuals[f] ||
                (!x.added.empty() && x.added_values[f] != y.added_values[f])) {
                return false;
            }
        }
    }
    return true;
}

TEST(Delta, WhatIsWrittenIsReadBack) {
    const auto& layout = testing::test_schema().layout();
    arena::scene_random rng{21};
    int nonempty = 0;
    for (int n = 0; n < 2000; ++n) {
        const auto d = random_delta(layout, rng);
        bit_writer w;
        write_delta(layout, d, w);
        std::string bytes;
        w.append_to(bytes);
        delta back;
        const auto r = read_delta(layout, bytes, false, back);
        ASSERT_TRUE(r) << r.message();
        ASSERT_TRUE(same(d, back)) << "delta " << n;
        nonempty += d.empty() ? 0 : 1;
        // Every proper truncation is refused.
        for (std::size_t size = 1; size < bytes.size(); size += 1 + bytes.size() / 16) {
            delta cut;
            ASSERT_FALSE(read_delta(layout, std::string_view{bytes}.substr(0, size), false, cut));
        }
    }
    EXPECT_GT(nonempty, 1600);
}

TEST(Delta, RandomBytesAreRefusedOrReadNeverCrash) {
    const auto& layout = testing::test_schema().layout();
    arena::scene_random rng{22};
    int accepted = 0;
    for (int n = 0; n < 30000; ++n) {
        std::string bytes(1 + rng.below(24), '\0');
        for (auto& ch : bytes) {
            ch = static_cast<char>(rng.below(256));
        }
        delta d;
        const auto r = read_delta(layout, bytes, rng.chance(0.5), d, delta_limits{1000});
        if (r) {
            ++accepted;
            EXPECT_LE(d.created.size(), 1000U);
        } else {
            EXPECT_EQ(r.code(), errc::malformed_columns);
        }
    }
    RecordProperty("accepted", accepted);
}

TEST(Delta, ExtrapolationRoundsHalvesUp) {
    const extrapolation one{1, 1};
    EXPECT_EQ(extrapolate(10, 7, 8, one), 13U);
    EXPECT_EQ(extrapolate(7, 10, 8, one), 4U);
    EXPECT_EQ(extrapolate(250, 240, 8, one), 4U) << "wraps modulo 2^bits";
    EXPECT_EQ(extrapolate(2, 250, 8, one), 10U) << "the difference is signed: +8";
    EXPECT_EQ(extrapolate(100, 99, 16, extrapolation{4, 1}), 104U);
    // span 2: d = 3, ahead 1 -> 1.5 rounds to 2; d = -3 -> -1.5 rounds to -1
    EXPECT_EQ(extrapolate(103, 100, 16, extrapolation{1, 2}), 105U);
    EXPECT_EQ(extrapolate(100, 103, 16, extrapolation{1, 2}), 99U);
    // span 3, ahead 2: d = 4 -> 8/3 = 2.67 -> 3; d = -4 -> -2.67 -> -3
    EXPECT_EQ(extrapolate(104, 100, 16, extrapolation{2, 3}), 107U);
    EXPECT_EQ(extrapolate(100, 104, 16, extrapolation{2, 3}), 97U);
    EXPECT_EQ(extrapolate(0xFFFFFFFFU, 0, 32, one), 0xFFFFFFFEU);
}

// Hand-made deltas against a small baseline: the ones that do not fit it are refused.
TEST(Delta, DeltasThatDoNotFitTheBaselineAreRefused) {
    const auto& s = arena::replicated_schema();
    const auto& layout = s.layout();
    registry server;
    snapshot_history history{s, server};
    snapshot_encoder encoder{history};
    for (int i = 0; i < 4; ++i) {
        const auto e = server.create();
        server.emplace<arena::Transform>(e);
        if (i % 2 == 0) {
            server.emplace<arena::Health>(e, std::uint16_t{5});
        }
    }
    history.capture(1, 0);
    mirror client{s};
    ASSERT_TRUE(client.apply_envelope(encoder.encode(baselines{})->envelope));
    const auto& base = *client.newest_state(); // entities 0..3; Health on 0 and 2
    const checksum_weights weights{layout};
    delta_workspace work;
    replicated_state out;
    const auto check = [&](const std::function<void(delta&)>& edit, errc expected) {
        delta d;
        d.reset(layout);
        edit(d);
        const auto r = apply_delta(layout, &base, nullptr, extrapolation{}, d, out, work, weights);
        EXPECT_FALSE(r);
        EXPECT_EQ(r.code(), expected) << r.message();
    };
    check([](delta& d) { d.destroyed = {4}; }, errc::inconsistent_delta); // no 5th entity
    check([](delta& d) { d.created = {2}, d.created_generations = {9}; }, errc::inconsistent_delta); // alive
    check([](delta& d) { d.destroyed = {2}, d.created = {2}, d.created_generations = {0}; },
          errc::inconsistent_delta);                                                  // replaced by itself
    check([](delta& d) { d.components[1].removed = {2}; }, errc::inconsistent_delta); // Health has 2 rows
    check(
        [](delta& d) {
            d.components[1].changed = {2}, d.components[1].masks = {1}, d.components[1].residuals[0] = {1};
        },
        errc::inconsistent_delta);
    check(
        [](delta& d) {
            d.components[1].added = {0};
            d.components[1].added_values[0] = {1};
        },
        errc::inconsistent_delta); // already has it
    check(
        [](delta& d) {
            d.components[1].added = {9};
            d.components[1].added_values[0] = {1};
        },
        errc::inconsistent_delta); // no such entity
    check(
        [](delta& d) {
            d.created = {7};
            d.created_generations = {0};
        },
        errc::inconsistent_delta); // an entity without components
    check([](delta& d) { d.components[0].removed = {1}; },
          errc::inconsistent_delta); // entity 1 would be left with nothing
    check(
        [](delta& d) {
            d.components[1].removed = {0};
            d.components[1].added = {0};
            d.components[1].added_values[0] = {3};
        },
        errc::inconsistent_delta); // removed and added again: not the canonical change
    // A full state may not destroy anything.
    delta d;
    d.reset(layout);
    d.destroyed = {0};
    EXPECT_EQ(apply_delta(layout, nullptr, nullptr, extrapolation{}, d, out, work, weights).code(),
              errc::inconsistent_delta);
}

TEST(Checksum, IsTheDocumentedSumAndMovesWithEveryChange) {
    const auto& s = arena::replicated_schema();
    registry server;
    snapshot_history history{s, server};
    const auto e = server.create();
    server.emplace<arena::Transform>(e, 1.0F, 2.0F, 0.0F, 1.0F);
    server.emplace<arena::Kind>(e, std::uint8_t{3});
    history.capture(1, 0);
    const checksum_weights w{s.layout()};
    // By hand, from docs/protocol.md.
    const auto& st = history.newest();
    std::uint64_t sum = w.entity + std::uint64_t{history.newest_generations()[0]} * w.generation;
    sum += w.components[0].presence;
    for (std::size_t f = 0; f < 4; ++f) {
        sum += std::uint64_t{st.components[0].fields[f].get(0)} * w.components[0].fields[f];
    }
    sum += w.components[2].presence + 3 * w.components[2].fields[0];
    EXPECT_EQ(st.checksum, entity_weight(to_index(e)) * sum);
    EXPECT_EQ(entity_weight(0), mix64(1) | 1U);
    EXPECT_EQ(w.components[0].fields[0], checksum_constant(256 + 1));
    // Any single change of a value, a generation, a component or an entity changes it.
    const auto base = st.checksum;
    server.patch<arena::Transform>(e, [](arena::Transform& t) { t.x += 1.0F / 512; });
    history.capture(2, 0);
    EXPECT_NE(history.newest().checksum, base);
    const auto moved = history.newest().checksum;
    server.remove<arena::Kind>(e);
    history.capture(3, 0);
    EXPECT_NE(history.newest().checksum, moved);
}

TEST(Checksum, HeaderCheckCoversEveryField) {
    snapshot_header h{1234, false, true, 0, 1, -17, 99, 0x0123456789ABCDEFULL};
    const auto base = header_check(h);
    auto edits =
        std::vector<std::function<void(snapshot_header&)>>{[](auto& x) { x.tick ^= 1; },
                                                           [](auto& x) { x.full_state = true; },
                                                           [](auto& x) { x.has_checksum = false; },
                                                           [](auto& x) { x.baseline_gap = 1; },
                                                           [](auto& x) { x.extrapolation_gap = 2; },
                                                           [](auto& x) { x.time_offset_us = 17; },
                                                           [](auto& x) { x.columns_size = 98; },
                                                           [](auto& x) { x.checksum ^= 1ULL << 40; }};
    for (auto& edit : edits) {
        auto copy = h;
        edit(copy);
        EXPECT_NE(header_check(copy), base);
    }
    // The wire's bytes (docs/protocol.md, 5.2): CRC-16/CCITT-FALSE of
    // struct.pack("<IBIIqIQ", 1234, 2, 0, 1, -17, 99, 0x0123456789ABCDEF), computed apart from this code.
    EXPECT_EQ(base, 0x7F10);
    const std::uint8_t text[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    EXPECT_EQ(crc16(text, 9), 0x29B1) << "the CRC-16/CCITT-FALSE check value";
}

} // namespace
} // namespace ecsnet::proto::delta_test
