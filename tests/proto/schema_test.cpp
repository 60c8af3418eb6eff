// Schema declaration and quantizers: widths and encodings as declared, dequantize -> quantize exact for
// every value of a width (exhaustive where feasible, random elsewhere), clamping and NaN handled, hashes
// stable and sensitive to every attribute, invalid layouts refused with a message.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/arena/scene.hpp"
#include "replication_support.hpp"

namespace ecsnet::proto::schema_test {
namespace {

TEST(Quantize, FixedPointRoundTripIsExactForEveryValueOf16Bits) {
    const fixed_point<16> q{-128.0, 1.0 / 256};
    for (std::uint32_t v = 0; v < (1U << 16); ++v) {
        ASSERT_EQ(q.quantize(q.dequantize<float>(v)), v);
        ASSERT_EQ(q.quantize(q.dequantize<double>(v)), v);
    }
}

TEST(Quantize, FixedPointRoundTripOnTheArenaRange) {
    const fixed_point<20> q{-1024.0, 1.0 / 512};
    arena::scene_random rng{3};
    for (int n = 0; n < 200000; ++n) {
        const auto v = static_cast<std::uint32_t>(rng.below(1U << 20));
        ASSERT_EQ(q.quantize(q.dequantize<float>(v)), v);
    }
    // Non-power-of-two steps too.
    const fixed_point<18> odd{-37.5, 0.01};
    for (int n = 0; n < 200000; ++n) {
        const auto v = static_cast<std::uint32_t>(rng.below(1U << 18));
        ASSERT_EQ(odd.quantize(odd.dequantize<float>(v)), v) << v;
    }
}

TEST(Quantize, FixedPointRoundsToNearestAndClamps) {
    const fixed_point<8> q{0.0, 1.0};
    EXPECT_EQ(q.quantize(3.4F), 3U);
    EXPECT_EQ(q.quantize(3.6F), 4U);
    EXPECT_EQ(q.quantize(-5.0F), 0U);
    EXPECT_EQ(q.quantize(1e9F), 255U);
    EXPECT_EQ(q.quantize(std::numeric_limits<float>::infinity()), 255U);
    EXPECT_EQ(q.quantize(-std::numeric_limits<float>::infinity()), 0U);
    EXPECT_EQ(q.quantize(std::numeric_limits<float>::quiet_NaN()), 0U);
}

TEST(Quantize, AngleWrapsAroundTheCircle) {
    const angle<12> q{};
    constexpr double tau = 2.0 * std::numbers::pi;
    for (std::uint32_t v = 0; v < 4096; ++v) {
        ASSERT_EQ(q.quantize(q.dequantize<float>(v)), v);
        ASSERT_EQ(q.quantize(q.dequantize<float>(v) + static_cast<float>(tau)), v)
            << "one turn more is the same";
        ASSERT_EQ(q.quantize(q.dequantize<double>(v) - 3 * tau), v) << "negative angles wrap";
    }
    EXPECT_EQ(q.quantize(static_cast<float>(-tau / 4096)), 4095U);
    EXPECT_EQ(q.quantize(std::numeric_limits<float>::quiet_NaN()), 0U);
    EXPECT_EQ(q.quantize(std::numeric_limits<float>::infinity()), 0U);
    EXPECT_EQ(q.quantize(1e30F), 0U);
}

TEST(Quantize, IntegersClampToTheirWidth) {
    const integer<> u16{};
    EXPECT_EQ(u16.quantize(std::uint16_t{65535}), 65535U);
    EXPECT_EQ(u16.dequantize<std::uint16_t>(1234), 1234);
    const integer<4> u4{};
    EXPECT_EQ(u4.quantize(std::uint8_t{200}), 15U);
    EXPECT_EQ(u4.quantize(std::uint8_t{7}), 7U);
    const integer<> i8{};
    for (int v = -128; v <= 127; ++v) {
        const auto q = i8.quantize(static_cast<std::int8_t>(v));
        ASSERT_LT(q, 256U);
        ASSERT_EQ(i8.dequantize<std::int8_t>(q), v);
    }
    const integer<6> i6{};
    EXPECT_EQ(i6.dequantize<std::int32_t>(i6.quantize(std::int32_t{-1000})), -32);
    EXPECT_EQ(i6.dequantize<std::int32_t>(i6.quantize(std::int32_t{1000})), 31);
    EXPECT_EQ(i6.dequantize<std::int32_t>(i6.quantize(std::int32_t{-7})), -7);
    const integer<> i32{};
    EXPECT_EQ(i32.dequantize<std::int32_t>(i32.quantize(std::numeric_limits<std::int32_t>::min())),
              std::numeric_limits<std::int32_t>::min());
    enum class level : std::uint8_t { low = 1, high = 200 };
    EXPECT_EQ(integer<>{}.dequantize<level>(integer<>{}.quantize(level::high)), level::high);
    EXPECT_EQ(boolean{}.quantize(true), 1U);
    EXPECT_FALSE(boolean{}.dequantize<bool>(0));
}

TEST(Schema, DeclarationGivesTheDeclaredLayout) {
    const auto& s = arena::replicated_schema();
    ASSERT_EQ(s.size(), 4U);
    const auto& transform = s.component_at(0);
    EXPECT_EQ(transform.name, "Transform");
    ASSERT_EQ(transform.fields.size(), 4U);
    EXPECT_EQ(transform.fields[0].encoding, field_encoding::fixed_point);
    EXPECT_EQ(transform.fields[0].bits, 20U);
    EXPECT_EQ(transform.fields[0].storage_bytes, 4U);
    EXPECT_EQ(transform.fields[0].predict, prediction::linear);
    EXPECT_EQ(transform.fields[0].min, -1024.0);
    EXPECT_EQ(transform.fields[3].encoding, field_encoding::angle);
    EXPECT_EQ(transform.fields[3].bits, 12U);
    EXPECT_EQ(transform.fields[3].storage_bytes, 2U);
    EXPECT_EQ(transform.fields[3].predict, prediction::none);
    EXPECT_EQ(s.component_at(1).fields[0].encoding, field_encoding::unsigned_integer);
    EXPECT_EQ(s.component_at(1).fields[0].bits, 16U);
    EXPECT_EQ(s.component_at(2).fields[0].storage_bytes, 1U);
    EXPECT_EQ(s.index_of<arena::Health>(), 1U);
    EXPECT_EQ(s.index_of<arena::LastHit>(), 3U);
    EXPECT_FALSE(s.index_of<arena::Mover>().has_value());
    const auto& t = testing::test_schema();
    EXPECT_EQ(t.component_at(1).fields[1].encoding, field_encoding::signed_integer); // int8_t level
    EXPECT_EQ(t.component_at(1).fields[2].bits, 8U);                                 // enum : uint8_t
}

// The arena schema's hash is part of the wire contract: it changes only when the declaration changes.
TEST(Schema, HashIsStable) {
    const auto& s = arena::replicated_schema();
    // Computed independently from docs/protocol.md ("Schema hash") with a few lines of Python.
    EXPECT_EQ(s.hash(), 0x8ae1ba32c93e9f44ULL) << std::hex << s.hash();
    EXPECT_EQ(s.hash(), schema_hash(s.layout().components()));
    auto copy = schema_layout::from_proto(s.layout().to_proto());
    ASSERT_TRUE(copy) << copy.message();
    EXPECT_EQ(copy->hash(), s.hash());
    EXPECT_TRUE(*copy == s.layout());
}

TEST(Schema, HashChangesWithEveryAttribute) {
    const auto base = arena::replicated_schema().layout();
    const auto hash_of = [](std::vector<component_info> components) {
        return schema_layout{std::move(components)}.hash();
    };
    std::vector<std::function<void(std::vector<component_info>&)>> edits{
        [](auto& c) { c[0].name = "Transform2"; },
        [](auto& c) { c[0].fields[1].name = "why"; },
        [](auto& c) { c[0].fields[0].bits = 21; },
        [](auto& c) { c[0].fields[0].min = -1023.0; },
        [](auto& c) { c[0].fields[0].step = 1.0 / 256; },
        [](auto& c) { c[0].fields[0].predict = prediction::none; },
        [](auto& c) { c[0].fields[3].bits = 11; },
        [](auto& c) { c[1].fields[0].encoding = field_encoding::signed_integer; },
        [](auto& c) { std::swap(c[1], c[2]); },
        [](auto& c) { std::swap(c[0].fields[0], c[0].fields[1]); },
        [](auto& c) { c.pop_back(); },
    };
    for (std::size_t n = 0; n < edits.size(); ++n) {
        auto components = std::vector<component_info>{base.components().begin(), base.components().end()};
        edits[n](components);
        EXPECT_NE(hash_of(components), base.hash()) << "edit " << n;
    }
}

// GCC 12 at -O3 warns wrongly of overlapping copies in std::string's operator=(const char*) in these lambdas
// (GCC bug 105329).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
TEST(Schema, InvalidLayoutsAreRefused) {
    const auto valid = arena::replicated_schema().layout();
    const auto components = std::vector<component_info>{valid.components().begin(), valid.components().end()};
    std::vector<std::function<void(std::vector<component_info>&)>> edits{
        [](auto& c) { c[0].name.clear(); },
        [](auto& c) { c[0].name = std::string(65, 'x'); },
        [](auto& c) { c[1].name = "Transform"; },
        [](auto& c) { c[0].fields[1].name = "x"; },
        [](auto& c) { c[0].fields.clear(); },
        [](auto& c) { c[0].fields[0].bits = 33; },
        [](auto& c) { c[0].fields[3].bits = 25; }, // angle
        [](auto& c) { c[0].fields[0].bits = 0; },
        [](auto& c) { c[0].fields[0].step = 0; },
        [](auto& c) { c[0].fields[0].step = std::numeric_limits<double>::quiet_NaN(); },
        [](auto& c) { c[0].fields[0].min = std::numeric_limits<double>::infinity(); },
        [](auto& c) { c[1].fields[0].min = 1.0; }, // a range on an integer
        [](auto& c) { c[0].fields[0].encoding = field_encoding{9}; },
        [](auto& c) { c[0].fields[0].predict = prediction{7}; },
        [](auto& c) { c[0].fields[0].storage_bytes = 2; },
    };
    for (std::size_t n = 0; n < edits.size(); ++n) {
        auto copy = components;
        edits[n](copy);
        EXPECT_THROW(schema_layout{copy}, std::invalid_argument) << "edit " << n;
        // The same arriving from a peer is an error value, not an exception.
        v1::ComponentSchema message;
        for (const auto& c : copy) {
            auto* d = message.add_components();
            d->set_name(c.name);
            for (const auto& f : c.fields) {
                auto* fd = d->add_fields();
                fd->set_name(f.name);
                fd->set_encoding(static_cast<v1::FieldEncoding>(f.encoding));
                fd->set_bits(f.bits);
                fd->set_min(f.min);
                fd->set_step(f.step);
                fd->set_prediction(static_cast<v1::Prediction>(f.predict));
            }
        }
        if (n != 14) { // storage width is derived from bits on the wire
            const auto parsed = schema_layout::from_proto(message);
            EXPECT_FALSE(parsed) << "edit " << n;
        }
    }
    v1::ComponentSchema hostile = valid.to_proto();
    hostile.mutable_components(0)->mutable_fields(0)->set_encoding(static_cast<v1::FieldEncoding>(257));
    EXPECT_FALSE(schema_layout::from_proto(hostile)) << "257 must not wrap around to a valid encoding";
    EXPECT_FALSE(schema_layout::from_proto(v1::ComponentSchema{}));
}
#pragma GCC diagnostic pop

struct Wide {
    float value{};
};
struct Twice {
    int a{};
};

TEST(Schema, DeclarationMistakesThrow) {
    // 30 bits over a float cannot be dequantized exactly.
    EXPECT_THROW((schema{component<Wide>("Wide", field<&Wide::value>("value", fixed_point<30>{0.0, 1.0}))}),
                 std::invalid_argument);
    EXPECT_NO_THROW(
        (schema{component<Wide>("Wide", field<&Wide::value>("value", fixed_point<20>{0.0, 1.0}))}));
    EXPECT_THROW((schema{component<Twice>("A", field<&Twice::a>("a", integer<>{})),
                         component<Twice>("B", field<&Twice::a>("a", integer<>{}))}),
                 std::invalid_argument);
}

} // namespace
} // namespace ecsnet::proto::schema_test
