// row_layout's reference and checksum term against their definitions (docs/protocol.md 5.3 and 5.4), read
// literally: field by field, component by component. Both the server and the client compute them, so what
// the tables and shortcuts of entity_row.cpp give must be exactly this.

#include <random>

#include <gtest/gtest.h>

#include "ecsnet/proto/entity_row.hpp"

namespace ecsnet::proto::entity_row_test {
namespace {

// 40 components (two presence words) of 1 to 3 fields of every width, about half of them linear.
schema_layout random_layout(std::mt19937& rng) {
    std::vector<component_info> components;
    for (int c = 0; c < 40; ++c) {
        component_info component;
        component.name = "c";
        component.name += std::to_string(c);
        const int n = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < n; ++f) {
            field_info field;
            field.name = "f";
            field.name += std::to_string(f);
            field.encoding = field_encoding::unsigned_integer;
            field.bits = 1 + static_cast<unsigned>(rng() % 32);
            field.storage_bytes = field.bits <= 8 ? 1U : field.bits <= 16 ? 2U : 4U;
            field.predict = rng() % 2 == 0 ? prediction::linear : prediction::none;
            component.fields.push_back(field);
        }
        components.push_back(std::move(component));
    }
    return schema_layout{std::move(components)};
}

// A row with random components present (absent ones all 0) and values within their widths.
std::vector<std::uint32_t> random_row(const row_layout& layout, std::mt19937& rng) {
    std::vector<std::uint32_t> row(layout.width(), 0);
    for (std::size_t c = 0; c < layout.components(); ++c) {
        if (rng() % 4 == 0) {
            continue;
        }
        row_layout::set_present(row.data(), c);
        for (std::size_t f = 0; f < layout.fields(c); ++f) {
            row[layout.offset(c) + f] =
                static_cast<std::uint32_t>(rng()) & layout.schema()[c].fields[f].mask();
        }
    }
    return row;
}

std::vector<std::uint32_t> literal_reference(const row_layout& layout, const std::vector<std::uint32_t>& base,
                                             const std::vector<std::uint32_t>& previous, std::uint32_t ahead,
                                             std::uint32_t span) {
    auto out = base;
    if (ahead < 1 || span < 1 || ahead > max_extrapolation_ticks || span > max_extrapolation_ticks) {
        return out;
    }
    for (std::size_t c = 0; c < layout.components(); ++c) {
        if (!row_layout::has(base.data(), c) || !row_layout::has(previous.data(), c)) {
            continue;
        }
        for (std::size_t f = 0; f < layout.fields(c); ++f) {
            const auto& field = layout.schema()[c].fields[f];
            if (field.predict == prediction::linear) {
                const auto at = layout.offset(c) + f;
                out[at] = extrapolate(base[at], previous[at], field.bits, extrapolation{ahead, span});
            }
        }
    }
    return out;
}

std::uint64_t literal_term(const row_layout& layout, const checksum_weights& weights, std::uint32_t index,
                           std::uint32_t generation, const std::vector<std::uint32_t>& row) {
    std::uint64_t sum = weights.entity + std::uint64_t{generation} * weights.generation;
    for (std::size_t c = 0; c < layout.components(); ++c) {
        if (row_layout::has(row.data(), c)) {
            sum += weights.components[c].presence;
            for (std::size_t f = 0; f < layout.fields(c); ++f) {
                sum += std::uint64_t{row[layout.offset(c) + f]} * weights.components[c].fields[f];
            }
        }
    }
    return entity_weight(index) * sum;
}

TEST(EntityRow, ReferenceIsTheLiteralExtrapolationOfEveryLinearFieldAndSaysWhetherItMoved) {
    std::mt19937 rng{15};
    const auto schema = random_layout(rng);
    const row_layout layout{schema};
    ASSERT_EQ(layout.presence_words(), 2U);
    std::vector<std::uint32_t> out(layout.width());
    int extrapolated = 0;
    for (int trial = 0; trial < 20'000; ++trial) {
        const auto base = random_row(layout, rng);
        const auto previous = random_row(layout, rng);
        // Spans and distances of 1 (the shortcut) and beyond, with the limits and past them.
        const auto ahead = static_cast<std::uint32_t>(rng() % (max_extrapolation_ticks + 2));
        const auto span =
            trial % 2 == 0 ? 1U : static_cast<std::uint32_t>(rng() % (max_extrapolation_ticks + 2));
        const bool moved = layout.reference(base.data(), previous.data(), ahead, span, out.data());
        const auto expected = literal_reference(layout, base, previous, ahead, span);
        ASSERT_EQ(out, expected) << "trial " << trial << ", ahead " << ahead << ", span " << span;
        ASSERT_EQ(moved, expected != base) << "trial " << trial << ": whether it moved";
        extrapolated += out != base ? 1 : 0;
        // Every field of the previous value equal to the base's: nothing moves.
        ASSERT_FALSE(layout.reference(base.data(), base.data(), ahead, span, out.data()));
        ASSERT_EQ(out, base) << "trial " << trial << ": a value that did not change extrapolates to itself";
        ASSERT_FALSE(layout.reference(base.data(), nullptr, ahead, span, out.data()));
        ASSERT_EQ(out, base) << "no value before: the base value";
    }
    EXPECT_GT(extrapolated, 10'000);
}

TEST(EntityRow, ChecksumTermIsTheLiteralSumOverPresentComponents) {
    std::mt19937 rng{16};
    const auto schema = random_layout(rng);
    const row_layout layout{schema};
    const checksum_weights weights{schema};
    for (int trial = 0; trial < 20'000; ++trial) {
        const auto row = random_row(layout, rng);
        const auto index = static_cast<std::uint32_t>(rng());
        const auto generation = static_cast<std::uint32_t>(rng());
        const auto expected = literal_term(layout, weights, index, generation, row);
        ASSERT_EQ(layout.checksum_term(weights, index, generation, row.data()), expected)
            << "trial " << trial;
        ASSERT_EQ(layout.checksum_term(index, generation, row.data()), expected) << "trial " << trial;
    }
}

TEST(EntityRow, ReferenceTermIsTheLiteralTermOfTheReference) {
    std::mt19937 rng{17};
    const auto schema = random_layout(rng);
    const row_layout layout{schema};
    const checksum_weights weights{schema};
    std::vector<std::uint32_t> reference(layout.width());
    int moved = 0;
    for (int trial = 0; trial < 20'000; ++trial) {
        const auto base = random_row(layout, rng);
        const auto previous = random_row(layout, rng);
        const auto ahead = 1 + static_cast<std::uint32_t>(rng() % max_extrapolation_ticks);
        const auto span =
            trial % 2 == 0 ? 1U : 1 + static_cast<std::uint32_t>(rng() % max_extrapolation_ticks);
        const auto index = static_cast<std::uint32_t>(rng());
        const auto generation = static_cast<std::uint32_t>(rng());
        layout.reference(base.data(), previous.data(), ahead, span, reference.data());
        const auto base_term = literal_term(layout, weights, index, generation, base);
        ASSERT_EQ(layout.reference_term(base_term, index, base.data(), reference.data()),
                  literal_term(layout, weights, index, generation, reference))
            << "trial " << trial << ", ahead " << ahead << ", span " << span;
        moved += reference != base ? 1 : 0;
    }
    EXPECT_GT(moved, 10'000); // most references moved: the differences were summed, not only skipped
}

TEST(EntityRow, DifferingComponentsAreThoseWithAFieldThatDiffers) {
    std::mt19937 rng{18};
    const auto schema = random_layout(rng);
    const row_layout layout{schema};
    for (int trial = 0; trial < 5'000; ++trial) {
        const auto a = random_row(layout, rng);
        auto b = a;
        // A few fields changed (rows that differ in one component are the common case).
        for (auto k = rng() % 4; k > 0; --k) {
            b[layout.presence_words() + rng() % (layout.width() - layout.presence_words())] ^= 1U;
        }
        b[0] ^= static_cast<std::uint32_t>(rng()); // presence aside
        std::uint64_t expected = 0;
        for (std::size_t c = 0; c < layout.components(); ++c) {
            for (std::size_t f = 0; f < layout.fields(c); ++f) {
                if (a[layout.offset(c) + f] != b[layout.offset(c) + f]) {
                    expected |= std::uint64_t{1} << c;
                }
            }
        }
        ASSERT_EQ(layout.differing_components(a.data(), b.data()), expected) << "trial " << trial;
    }
}

TEST(EntityRow, FieldsPerComponentAreTheSchemas) {
    std::mt19937 rng{17};
    const auto schema = random_layout(rng);
    const row_layout layout{schema};
    std::size_t width = layout.presence_words();
    for (std::size_t c = 0; c < schema.size(); ++c) {
        EXPECT_EQ(layout.fields(c), schema[c].fields.size());
        EXPECT_EQ(layout.offset(c), width);
        width += schema[c].fields.size();
    }
    EXPECT_EQ(layout.width(), width);
}

} // namespace
} // namespace ecsnet::proto::entity_row_test
