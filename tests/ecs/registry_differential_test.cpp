// Randomized differential test of the registry against a reference model (std::map), with signals and
// views: 120,000 random operations, and after every one of them the invariants:
// - every pool: sparse[packed[i]] == i, and its size is the model's count;
// - every component is attached to its entity with the model's value;
// - valid(), alive(), all_of() and any_of() agree with the model, stale identifiers stay invalid;
// - a view with an exclusion yields exactly the model's matching entities, each once;
// - signals fired exactly as many times as the model says components were constructed/updated/destroyed.

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace registry_differential_test {

namespace {

using ecsnet::entity;

struct A {
    int value;
};
struct B {
    std::string text; // a type with real moves and heap memory
};
struct C {}; // a tag
struct D {
    std::uint64_t bits;
};

struct model_entity {
    std::optional<int> a;
    std::optional<std::string> b;
    bool c = false;
    std::optional<std::uint64_t> d;
};

template<typename Type>
void expect_pool_consistent(ecsnet::registry& registry, std::size_t expected_size) {
    const auto& pool = registry.storage<Type>();
    ASSERT_EQ(pool.size(), expected_size) << ecsnet::type_name<Type>();
    for (std::size_t pos = 0; pos < pool.size(); ++pos) {
        ASSERT_EQ(pool.index(pool[pos]), pos) << ecsnet::type_name<Type>();
        ASSERT_TRUE(registry.valid(pool[pos])) << ecsnet::type_name<Type>();
    }
}

class RegistryDifferential : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(RegistryDifferential, AgreesWithTheModelAfterEveryOperation) {
    std::mt19937 rng{GetParam()};
    ecsnet::registry registry;
    std::map<entity, model_entity> model;
    std::vector<entity> stale;

    struct counts {
        int constructed = 0, updated = 0, destroyed = 0;
    } fired, expected;
    registry.on_construct<A>().connect([&](ecsnet::registry&, entity) { ++fired.constructed; });
    registry.on_update<A>().connect([&](ecsnet::registry&, entity) { ++fired.updated; });
    registry.on_destroy<A>().connect([&](ecsnet::registry& r, entity e) {
        ++fired.destroyed;
        ASSERT_TRUE(r.all_of<A>(e)); // still there while listeners run
    });

    const auto pick = [&]() -> std::optional<entity> {
        if (model.empty()) {
            return std::nullopt;
        }
        auto it = model.begin();
        std::advance(it, std::uniform_int_distribution<std::size_t>{0, model.size() - 1}(rng));
        return it->first;
    };
    const auto chance = [&](int percent) { return std::uniform_int_distribution<int>{0, 99}(rng) < percent; };

    for (int step = 0; step < 120'000; ++step) {
        const int op = std::uniform_int_distribution<int>{0, 99}(rng);
        const auto target = pick();
        if (op < 15 || !target) { // create, with a random set of components
            if (model.size() < 250) {
                const auto e = registry.create();
                ASSERT_EQ(model.count(e), 0U);
                auto& m = model[e];
                if (chance(60)) {
                    m.a = step;
                    registry.emplace<A>(e, step);
                    ++expected.constructed;
                }
                if (chance(50)) {
                    m.b = std::to_string(step); // not "b" + ...: gcc 12 -Wrestrict false positive (PR 105329)
                    registry.emplace<B>(e, *m.b);
                }
                if (chance(30)) {
                    m.c = true;
                    registry.emplace<C>(e);
                }
            }
        } else if (op < 27) { // destroy
            auto& m = model[*target];
            expected.destroyed += m.a ? 1 : 0;
            registry.destroy(*target);
            model.erase(*target);
            stale.push_back(*target);
        } else if (op < 47) { // emplace something missing
            auto& m = model[*target];
            switch (std::uniform_int_distribution<int>{0, 3}(rng)) {
            case 0:
                if (!m.a) {
                    m.a = -step;
                    registry.emplace<A>(*target, -step);
                    ++expected.constructed;
                }
                break;
            case 1:
                if (!m.b) {
                    m.b = std::string(static_cast<std::size_t>(step % 40), 'x');
                    registry.emplace<B>(*target, *m.b);
                }
                break;
            case 2:
                if (!m.c) {
                    m.c = true;
                    registry.emplace<C>(*target);
                }
                break;
            default:
                if (!m.d) {
                    m.d = static_cast<std::uint64_t>(step) * 0x9E3779B97F4A7C15ULL;
                    registry.emplace<D>(*target, *m.d);
                }
                break;
            }
        } else if (op < 62) { // remove (present or not)
            auto& m = model[*target];
            switch (std::uniform_int_distribution<int>{0, 3}(rng)) {
            case 0:
                ASSERT_EQ(registry.remove<A>(*target), m.a ? 1U : 0U);
                expected.destroyed += m.a ? 1 : 0;
                m.a.reset();
                break;
            case 1:
                ASSERT_EQ(registry.remove<B>(*target), m.b ? 1U : 0U);
                m.b.reset();
                break;
            case 2:
                ASSERT_EQ(registry.remove<C>(*target), m.c ? 1U : 0U);
                m.c = false;
                break;
            default:
                ASSERT_EQ((registry.remove<D, C>(*target)), (m.d ? 1U : 0U) + (m.c ? 1U : 0U));
                m.d.reset();
                m.c = false;
                break;
            }
        } else if (op < 77) { // patch / replace
            auto& m = model[*target];
            if (m.a) {
                if (chance(50)) {
                    registry.patch<A>(*target, [](A& a) { a.value *= 3; });
                    *m.a *= 3;
                } else {
                    registry.replace<A>(*target, step);
                    m.a = step;
                }
                ++expected.updated;
            }
            if (m.b && chance(50)) {
                registry.patch<B>(*target, [](B& b) { b.text += "!"; });
                *m.b += "!";
            }
        } else if (op < 97) { // iterate a view and check it against the model
            std::set<entity> yielded;
            registry.view<A, const B>(ecsnet::exclude<C>).each([&](entity e, A& a, const B& b) {
                ASSERT_TRUE(yielded.insert(e).second);
                ASSERT_EQ(a.value, *model.at(e).a);
                ASSERT_EQ(b.text, *model.at(e).b);
            });
            std::set<entity> wanted;
            for (const auto& [e, m] : model) {
                if (m.a && m.b && !m.c) {
                    wanted.insert(e);
                }
            }
            ASSERT_EQ(yielded, wanted);
        } else if (op < 99) { // clear one type
            if (chance(50)) {
                for (auto& [e, m] : model) {
                    expected.destroyed += m.a ? 1 : 0;
                    m.a.reset();
                }
                registry.clear<A>();
            } else {
                for (auto& [e, m] : model) {
                    m.c = false;
                }
                registry.clear<C>();
            }
        } else { // clear everything, rarely
            if (chance(20)) {
                for (const auto& [e, m] : model) {
                    expected.destroyed += m.a ? 1 : 0;
                    stale.push_back(e);
                }
                model.clear();
                registry.clear();
            }
        }

        // Invariants after every step.
        ASSERT_EQ(registry.alive(), model.size());
        std::size_t count_a = 0, count_b = 0, count_c = 0, count_d = 0;
        for (const auto& [e, m] : model) {
            ASSERT_TRUE(registry.valid(e));
            ASSERT_EQ(registry.all_of<A>(e), m.a.has_value());
            ASSERT_EQ(registry.all_of<B>(e), m.b.has_value());
            ASSERT_EQ(registry.all_of<C>(e), m.c);
            ASSERT_EQ(registry.all_of<D>(e), m.d.has_value());
            ASSERT_EQ((registry.any_of<A, B, C, D>(e)), m.a || m.b || m.c || m.d);
            if (m.a) {
                ASSERT_EQ(registry.get<A>(e).value, *m.a);
                ++count_a;
            }
            if (m.b) {
                ASSERT_EQ(registry.get<B>(e).text, *m.b);
                ++count_b;
            }
            if (m.d) {
                ASSERT_EQ(registry.get<D>(e).bits, *m.d);
                ++count_d;
            }
            count_c += m.c ? 1 : 0;
        }
        expect_pool_consistent<A>(registry, count_a);
        expect_pool_consistent<B>(registry, count_b);
        expect_pool_consistent<C>(registry, count_c);
        expect_pool_consistent<D>(registry, count_d);
        if (!stale.empty()) {
            const auto old = stale[std::uniform_int_distribution<std::size_t>{0, stale.size() - 1}(rng)];
            ASSERT_FALSE(registry.valid(old));
            ASSERT_EQ(registry.try_get<A>(old), nullptr);
        }
        ASSERT_EQ(fired.constructed, expected.constructed);
        ASSERT_EQ(fired.updated, expected.updated);
        ASSERT_EQ(fired.destroyed, expected.destroyed);
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RegistryDifferential, ::testing::Values(1U, 2U, 3U));

} // namespace

} // namespace registry_differential_test
