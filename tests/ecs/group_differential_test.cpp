// Randomized differential test of groups (seed 002_c01289adc68b0dd6.txt) and sorting (seed
// 000_19edbd8e7898577e.txt) against a reference model (std::map of optional components): 100,000 random
// operations per run, interleaving create, emplace, remove, destroy, clear, group iteration (with the
// current entity leaving the group), pool sorts, sort_as and group sorts. After every operation:
// - every pool: sparse[packed[i]] == i, its size is the model's count, every component is attached to its
//   entity with the model's value;
// - every group (full-, partial- and non-owning, nested, with exclusions and tags) yields exactly the
//   model's matching entities, each once, in its data() order, and contains() agrees;
// - in every owning group, the first size() entries of every owned packed array hold the same entities
//   in the same order.
// After every sort: the comparator holds along the sorted range, and a stable sort kept the previous
// order of equal elements. Sorting an owned pool, or a group another one is nested in, must throw.
// Runs cover two layouts of nested groups, and groups created before, after and in the middle of the data.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs.hpp>

namespace group_differential_test {

namespace {

using ecsnet::entity;
using ecsnet::exclude;
using ecsnet::get;

struct A {
    int value;
};
struct B {
    std::string text; // real moves and heap memory
};
struct C {
    int value;
};
struct D {}; // a tag, excluded by some groups
struct E {
    std::uint64_t value;
};
struct F {
    int value;
};
struct G {}; // a tag owned by a group
struct H {
    int value; // in no group: sorted freely
};

struct model_entity {
    std::optional<int> a;
    std::optional<std::string> b;
    std::optional<int> c;
    bool d = false;
    std::optional<std::uint64_t> e;
    std::optional<int> f;
    bool g = false;
    std::optional<int> h;
};

using model_type = std::map<entity, model_entity>;
// The model flattened once per step, in entity order, for the checks.
using flat_model = std::vector<std::pair<entity, const model_entity*>>;

// What a group of the run is: its name and which entities the model says belong.
struct group_spec {
    const char* label;
    bool (*belongs)(const model_entity&);
};

// Mismatches are counted and reported once per check, which keeps the checks cheap under the sanitizers.
template<typename Type, typename Value>
void expect_pool(ecsnet::registry& registry, const flat_model& model, Value value_of) {
    const auto& pool = registry.storage<Type>();
    std::size_t expected = 0;
    std::size_t wrong = 0;
    entity first_wrong = ecsnet::null_entity;
    for (const auto& [e, m] : model) {
        const auto* value = value_of(*m);
        bool right = pool.contains(e) == (value != nullptr);
        if (value != nullptr) {
            ++expected;
            if constexpr (!ecsnet::storage<Type>::is_tag) {
                right = right && pool.get(e) == *value;
            }
        }
        if (!right && wrong++ == 0) {
            first_wrong = e;
        }
    }
    ASSERT_EQ(wrong, 0U) << ecsnet::type_name<Type>() << ": first wrong entity "
                         << ecsnet::to_integral(first_wrong);
    ASSERT_EQ(pool.size(), expected) << ecsnet::type_name<Type>();
    for (std::size_t pos = 0; pos < pool.size(); ++pos) {
        if (pool.index(pool[pos]) != pos || !registry.valid(pool[pos])) {
            FAIL() << ecsnet::type_name<Type>() << ": sparse and packed arrays disagree at " << pos;
        }
    }
}

bool operator==(const A& lhs, int rhs) {
    return lhs.value == rhs;
}
bool operator==(const B& lhs, const std::string& rhs) {
    return lhs.text == rhs;
}
bool operator==(const C& lhs, int rhs) {
    return lhs.value == rhs;
}
bool operator==(const E& lhs, std::uint64_t rhs) {
    return lhs.value == rhs;
}
bool operator==(const F& lhs, int rhs) {
    return lhs.value == rhs;
}
bool operator==(const H& lhs, int rhs) {
    return lhs.value == rhs;
}

template<typename Value>
const Value* value_or_null(const std::optional<Value>& value) {
    return value ? &*value : nullptr;
}
const int* present_or_null(bool present) {
    static constexpr int present_marker = 1;
    return present ? &present_marker : nullptr;
}

void expect_pools(ecsnet::registry& registry, const flat_model& model) {
    expect_pool<A>(registry, model, [](const model_entity& m) { return value_or_null(m.a); });
    expect_pool<B>(registry, model, [](const model_entity& m) { return value_or_null(m.b); });
    expect_pool<C>(registry, model, [](const model_entity& m) { return value_or_null(m.c); });
    expect_pool<D>(registry, model, [](const model_entity& m) { return present_or_null(m.d); });
    expect_pool<E>(registry, model, [](const model_entity& m) { return value_or_null(m.e); });
    expect_pool<F>(registry, model, [](const model_entity& m) { return value_or_null(m.f); });
    expect_pool<G>(registry, model, [](const model_entity& m) { return present_or_null(m.g); });
    expect_pool<H>(registry, model, [](const model_entity& m) { return value_or_null(m.h); });
}

// The group yields exactly the model's members, each once, in data() order; owned arrays agree on the
// prefix.
template<typename Group>
void expect_group(const Group& group, std::initializer_list<const ecsnet::sparse_set<>*> owned,
                  const flat_model& model, const group_spec& spec) {
    std::vector<entity> expected;
    std::size_t wrong = 0;
    for (const auto& [e, m] : model) {
        const bool belongs = spec.belongs(*m);
        if (belongs) {
            expected.push_back(e);
        }
        wrong += group.contains(e) == belongs ? 0 : 1;
    }
    ASSERT_EQ(wrong, 0U) << spec.label << ": contains() disagrees";
    ASSERT_EQ(group.size(), expected.size()) << spec.label;
    std::vector<entity> seen;
    seen.reserve(expected.size());
    group.each([&seen](entity e, auto&&...) { seen.push_back(e); });
    ASSERT_EQ(seen.size(), expected.size()) << spec.label;
    ASSERT_TRUE(std::equal(seen.begin(), seen.end(), group.begin()))
        << spec.label << ": each() and data() disagree";
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen, expected) << spec.label;
    for (const auto* pool : owned) {
        ASSERT_GE(pool->size(), group.size()) << spec.label;
        ASSERT_TRUE(std::equal(group.begin(), group.end(), pool->begin()))
            << spec.label << ": owned array out of step";
    }
}

enum class creation { before, after, interleaved };

struct run_config {
    int layout;    // 0 or 1: two sets of nested groups, see below
    creation when; // groups created before the data, after most of it, or one by one meanwhile
    std::uint32_t seed;
};

void PrintTo(const run_config& config, std::ostream* out) {
    *out << "layout " << config.layout << ", groups created " << static_cast<int>(config.when) << ", seed "
         << config.seed;
}

class GroupDifferential : public ::testing::TestWithParam<run_config> {};

// Layout 0: full = group<A, B>(); inner = group<A, B>(get<C>, exclude<D>) nested in it;
//           partial = group<C>(get<const E>, exclude<D>); non-owning = group<>(get<A, E>, exclude<C>);
//           tags = group<F, G>().
// Layout 1: outer = group<A>(get<B>); mid = group<A, B>(exclude<D>); innermost = group<A, B, C>(exclude<D>)
//           (three levels, each owning more); partial = group<E>(get<const C>);
//           non-owning = group<>(get<A, E>, exclude<C>); tags = group<F, G>().
struct layout0 {
    std::optional<decltype(std::declval<ecsnet::registry&>().group<A, B>())> full;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<A, B>(get<C>, exclude<D>))> inner;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<C>(get<const E>, exclude<D>))> partial;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<>(get<A, E>, exclude<C>))> non_owning;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<F, G>())> tags;
};
struct layout1 {
    std::optional<decltype(std::declval<ecsnet::registry&>().group<A>(get<B>))> outer;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<A, B>(exclude<D>))> mid;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<A, B, C>(exclude<D>))> innermost;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<E>(get<const C>))> partial;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<>(get<A, E>, exclude<C>))> non_owning;
    std::optional<decltype(std::declval<ecsnet::registry&>().group<F, G>())> tags;
};

TEST_P(GroupDifferential, AgreesWithTheModelAfterEveryOperation) {
    const auto config = GetParam();
    std::mt19937 rng{config.seed};
    ecsnet::registry registry;
    model_type model;
    layout0 l0;
    layout1 l1;
    constexpr std::size_t group_count_0 = 5;
    constexpr std::size_t group_count_1 = 6;
    const std::size_t group_count = config.layout == 0 ? group_count_0 : group_count_1;
    std::size_t groups_created = 0;

    const auto chance = [&](int per_mille) {
        return std::uniform_int_distribution<int>{0, 999}(rng) < per_mille;
    };
    const auto number = [&](int low, int high) { return std::uniform_int_distribution<int>{low, high}(rng); };
    const auto pick = [&]() -> std::optional<entity> {
        if (model.empty()) {
            return std::nullopt;
        }
        auto it = model.begin();
        std::advance(it, std::uniform_int_distribution<std::size_t>{0, model.size() - 1}(rng));
        return it->first;
    };

    // Creates the next group of the layout; creating it again must return the same group.
    const auto create_next_group = [&] {
        const auto next = groups_created++;
        if (config.layout == 0) {
            switch (next) {
            case 0:
                l0.full.emplace(registry.group<A, B>());
                ASSERT_EQ((registry.group<B, A>().size()), l0.full->size());
                break;
            case 1:
                l0.inner.emplace(registry.group<A, B>(get<C>, exclude<D>));
                break;
            case 2:
                l0.partial.emplace(registry.group<C>(get<const E>, exclude<D>));
                break;
            case 3:
                l0.non_owning.emplace(registry.group<>(get<A, E>, exclude<C>));
                break;
            default:
                l0.tags.emplace(registry.group<F, G>());
                break;
            }
        } else {
            // Inner groups first for half of the runs: the outer one must then start from their members.
            const bool inner_first = (config.seed % 2) == 0;
            const int order[] = {inner_first ? 2 : 0, 1, inner_first ? 0 : 2, 3, 4, 5};
            switch (order[next]) {
            case 0:
                l1.outer.emplace(registry.group<A>(get<B>));
                break;
            case 1:
                l1.mid.emplace(registry.group<A, B>(exclude<D>));
                break;
            case 2:
                l1.innermost.emplace(registry.group<A, B, C>(exclude<D>));
                break;
            case 3:
                l1.partial.emplace(registry.group<E>(get<const C>));
                break;
            case 4:
                l1.non_owning.emplace(registry.group<>(get<A, E>, exclude<C>));
                break;
            default:
                l1.tags.emplace(registry.group<F, G>());
                break;
            }
        }
    };

    const auto pool = [&registry](auto tag) -> const ecsnet::sparse_set<>* {
        return &registry.storage<typename decltype(tag)::type>();
    };
    const auto A_ = std::type_identity<A>{};
    const auto B_ = std::type_identity<B>{};
    const auto C_ = std::type_identity<C>{};
    const auto E_ = std::type_identity<E>{};
    const auto F_ = std::type_identity<F>{};
    const auto G_ = std::type_identity<G>{};

    const auto is_owned = [&](int type) {
        // type: 0 A, 1 C, 2 E, 3 H
        if (config.layout == 0) {
            return (type == 0 && l0.full) || (type == 1 && l0.partial);
        }
        return (type == 0 && (l1.outer || l1.mid || l1.innermost)) || (type == 1 && l1.innermost) ||
               (type == 2 && l1.partial);
    };

    flat_model flat;
    const auto check_all = [&] {
        flat.clear();
        for (const auto& [e, m] : model) {
            flat.emplace_back(e, &m);
        }
        expect_pools(registry, flat);
        if (config.layout == 0) {
            if (l0.full) {
                expect_group(*l0.full, {pool(A_), pool(B_)}, flat,
                             {"group<A, B>", [](const model_entity& m) { return m.a && m.b; }});
            }
            if (l0.inner) {
                expect_group(*l0.inner, {pool(A_), pool(B_)}, flat,
                             {"group<A, B>(get<C>, exclude<D>)",
                              [](const model_entity& m) { return m.a && m.b && m.c && !m.d; }});
            }
            if (l0.partial) {
                expect_group(*l0.partial, {pool(C_)}, flat,
                             {"group<C>(get<E>, exclude<D>)",
                              [](const model_entity& m) { return m.c && m.e && !m.d; }});
            }
            if (l0.non_owning) {
                expect_group(*l0.non_owning, {}, flat,
                             {"group<>(get<A, E>, exclude<C>)",
                              [](const model_entity& m) { return m.a && m.e && !m.c; }});
            }
            if (l0.tags) {
                expect_group(*l0.tags, {pool(F_), pool(G_)}, flat,
                             {"group<F, G>", [](const model_entity& m) { return m.f && m.g; }});
            }
        } else {
            if (l1.outer) {
                expect_group(*l1.outer, {pool(A_)}, flat,
                             {"group<A>(get<B>)", [](const model_entity& m) { return m.a && m.b; }});
            }
            if (l1.mid) {
                expect_group(
                    *l1.mid, {pool(A_), pool(B_)}, flat,
                    {"group<A, B>(exclude<D>)", [](const model_entity& m) { return m.a && m.b && !m.d; }});
            }
            if (l1.innermost) {
                expect_group(*l1.innermost, {pool(A_), pool(B_), pool(C_)}, flat,
                             {"group<A, B, C>(exclude<D>)",
                              [](const model_entity& m) { return m.a && m.b && m.c && !m.d; }});
            }
            if (l1.partial) {
                expect_group(*l1.partial, {pool(E_)}, flat,
                             {"group<E>(get<C>)", [](const model_entity& m) { return m.e && m.c; }});
            }
            if (l1.non_owning) {
                expect_group(*l1.non_owning, {}, flat,
                             {"group<>(get<A, E>, exclude<C>)",
                              [](const model_entity& m) { return m.a && m.e && !m.c; }});
            }
            if (l1.tags) {
                expect_group(*l1.tags, {pool(F_), pool(G_)}, flat,
                             {"group<F, G>", [](const model_entity& m) { return m.f && m.g; }});
            }
        }
    };

    const auto random_sort_options = [&] {
        return ecsnet::sort_options{static_cast<ecsnet::sort_method>(number(0, 3)), chance(500)};
    };

    // Checks a sorted range: `key` of consecutive entities is ordered, and a stable sort kept the previous
    // relative order of equal keys (`before`: each entity's position before the sort).
    const auto expect_sorted = [](const auto& entities, std::size_t count, auto key, bool stable,
                                  const std::map<entity, std::size_t>& before, const char* what) {
        for (std::size_t pos = 1; pos < count; ++pos) {
            const auto previous = key(entities[pos - 1]);
            const auto current = key(entities[pos]);
            ASSERT_LE(previous, current) << what << " at " << pos;
            if (stable && previous == current) {
                ASSERT_LT(before.at(entities[pos - 1]), before.at(entities[pos]))
                    << what << ": not stable at " << pos;
            }
        }
    };
    const auto positions = [](const auto& range, std::size_t count) {
        std::map<entity, std::size_t> at;
        for (std::size_t pos = 0; pos < count; ++pos) {
            at[range[pos]] = pos;
        }
        return at;
    };

    constexpr int operations = 100'000;
    constexpr std::size_t population = 24;
    int sorts_checked = 0;
    int refusals_checked = 0;
    int leaving_iterations = 0;
    std::size_t deepest_members = 0;
    if (config.when == creation::before) {
        while (groups_created < group_count) {
            create_next_group();
        }
    }
    for (int step = 0; step < operations; ++step) {
        if (config.when == creation::after && step == operations / 10) {
            while (groups_created < group_count) {
                create_next_group();
            }
        }
        if (config.when == creation::interleaved && groups_created < group_count && chance(2)) {
            create_next_group();
        }
        const int op = number(0, 999);
        if (op < 100) {
            if (model.size() < population) {
                model[registry.create()];
            }
        } else if (op < 560) {
            const auto e = pick();
            if (!e) {
                continue;
            }
            auto& m = model[*e];
            // Two attempts, so that entities carry several components and the deeper groups fill up.
            for (int attempt = 0; attempt < 2; ++attempt) {
                // A, B and C twice as often as the others.
                constexpr int type_of[] = {0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7};
                switch (type_of[number(0, 10)]) {
                case 0:
                    if (!m.a) {
                        m.a = number(0, 20);
                        registry.emplace<A>(*e, *m.a);
                    }
                    break;
                case 1:
                    if (!m.b) {
                        m.b = std::to_string(number(0, 9999)) + " a string long enough to live on the heap";
                        registry.emplace<B>(*e, *m.b);
                    }
                    break;
                case 2:
                    if (!m.c) {
                        m.c = number(0, 20);
                        registry.emplace<C>(*e, *m.c);
                    }
                    break;
                case 3:
                    if (!m.d) {
                        m.d = true;
                        registry.emplace<D>(*e);
                    }
                    break;
                case 4:
                    if (!m.e) {
                        m.e = static_cast<std::uint64_t>(number(0, 20));
                        registry.emplace<E>(*e, *m.e);
                    }
                    break;
                case 5:
                    if (!m.f) {
                        m.f = number(0, 20);
                        registry.emplace<F>(*e, *m.f);
                    }
                    break;
                case 6:
                    if (!m.g) {
                        m.g = true;
                        registry.emplace<G>(*e);
                    }
                    break;
                default:
                    if (!m.h) {
                        m.h = number(0, 20);
                        registry.emplace<H>(*e, *m.h);
                    }
                    break;
                }
            }
        } else if (op < 720) {
            const auto e = pick();
            if (!e) {
                continue;
            }
            auto& m = model[*e];
            switch (number(0, 7)) {
            case 0:
                ASSERT_EQ(registry.remove<A>(*e), m.a ? 1U : 0U);
                m.a.reset();
                break;
            case 1:
                ASSERT_EQ(registry.remove<B>(*e), m.b ? 1U : 0U);
                m.b.reset();
                break;
            case 2:
                ASSERT_EQ(registry.remove<C>(*e), m.c ? 1U : 0U);
                m.c.reset();
                break;
            case 3:
                ASSERT_EQ(registry.remove<D>(*e), m.d ? 1U : 0U);
                m.d = false;
                break;
            case 4:
                ASSERT_EQ(registry.remove<E>(*e), m.e ? 1U : 0U);
                m.e.reset();
                break;
            case 5:
                ASSERT_EQ(registry.remove<F>(*e), m.f ? 1U : 0U);
                m.f.reset();
                break;
            case 6:
                ASSERT_EQ(registry.remove<G>(*e), m.g ? 1U : 0U);
                m.g = false;
                break;
            default:
                ASSERT_EQ((registry.remove<A, C, D>(*e)),
                          (m.a ? 1U : 0U) + (m.c ? 1U : 0U) + (m.d ? 1U : 0U));
                m.a.reset();
                m.c.reset();
                m.d = false;
                break;
            }
        } else if (op < 760) {
            if (const auto e = pick()) {
                registry.destroy(*e);
                model.erase(*e);
            }
        } else if (op < 762) {
            switch (number(0, 4)) {
            case 0:
                registry.clear<A>();
                for (auto& [e, m] : model) {
                    m.a.reset();
                }
                break;
            case 1:
                registry.clear<C>();
                for (auto& [e, m] : model) {
                    m.c.reset();
                }
                break;
            case 2:
                registry.clear<D>();
                for (auto& [e, m] : model) {
                    m.d = false;
                }
                break;
            case 3:
                registry.clear<G>();
                for (auto& [e, m] : model) {
                    m.g = false;
                }
                break;
            default:
                if (chance(200)) {
                    registry.clear();
                    model.clear();
                }
                break;
            }
        } else if (op < 830) {
            // Iterate a group; some members leave it from inside each(), through each way of leaving.
            std::vector<entity> visited;
            const auto leave = [&](entity e) {
                visited.push_back(e);
                if (!chance(150)) {
                    return;
                }
                auto& m = model[e];
                const int how = number(0, 2);
                if (how == 0) {
                    registry.destroy(e);
                    model.erase(e);
                } else if (how == 1 && !m.d && config.layout == 0) {
                    registry.emplace<D>(e); // excluded by inner and partial
                    m.d = true;
                } else {
                    registry.remove<A, C, E, F>(e);
                    m.a.reset();
                    m.c.reset();
                    m.e.reset();
                    m.f.reset();
                }
            };
            std::vector<entity> members;
            const auto run = [&](auto& group) {
                members.assign(group.begin(), group.end());
                group.each([&](entity e, auto&&...) { leave(e); });
            };
            const int which = number(0, 2);
            if (config.layout == 0) {
                if (which == 0 && l0.inner) {
                    run(*l0.inner);
                } else if (which == 1 && l0.partial) {
                    run(*l0.partial);
                } else if (l0.non_owning) {
                    run(*l0.non_owning);
                }
            } else {
                if (which == 0 && l1.innermost) {
                    run(*l1.innermost);
                } else if (which == 1 && l1.partial) {
                    run(*l1.partial);
                } else if (l1.non_owning) {
                    run(*l1.non_owning);
                }
            }
            std::sort(members.begin(), members.end());
            std::sort(visited.begin(), visited.end());
            ASSERT_EQ(visited, members) << "each() with leaving members: every member once";
            ++leaving_iterations;
        } else if (op < 930) {
            // Sort a pool through the registry: refused if a group owns it.
            const int type = number(0, 3);
            const auto options = random_sort_options();
            const bool by_entity = chance(300);
            const auto try_sort = [&](auto tag, auto key_of_model) {
                using type_t = typename decltype(tag)::type;
                const auto& target = registry.storage<type_t>();
                const auto before = positions(target, target.size());
                if (by_entity) {
                    registry.sort<type_t>([](entity lhs, entity rhs) { return lhs > rhs; }, options);
                    expect_sorted(
                        target, target.size(), [](entity e) { return ~ecsnet::to_integral(e); },
                        options.stable, before, "sort by entity");
                } else {
                    registry.sort<type_t>(
                        [](const type_t& lhs, const type_t& rhs) { return lhs.value < rhs.value; }, options);
                    expect_sorted(
                        target, target.size(), [&](entity e) { return key_of_model(model.at(e)); },
                        options.stable, before, "sort by component");
                }
            };
            const auto sort_type = [&](auto tag, auto key_of_model) {
                if (is_owned(type)) {
                    using type_t = typename decltype(tag)::type;
                    ASSERT_THROW(registry.sort<type_t>([](entity lhs, entity rhs) { return lhs < rhs; }),
                                 ecsnet::group_error);
                    ++refusals_checked;
                } else {
                    try_sort(tag, key_of_model);
                    ++sorts_checked;
                }
            };
            switch (type) {
            case 0:
                sort_type(A_, [](const model_entity& m) { return static_cast<std::uint64_t>(*m.a); });
                break;
            case 1:
                sort_type(C_, [](const model_entity& m) { return static_cast<std::uint64_t>(*m.c); });
                break;
            case 2:
                sort_type(E_, [](const model_entity& m) { return *m.e; });
                break;
            default:
                sort_type(std::type_identity<H>{},
                          [](const model_entity& m) { return static_cast<std::uint64_t>(*m.h); });
                break;
            }
        } else if (op < 955) {
            // sort_as: H ordered like A (A may be owned: reading it is fine); H is never owned.
            registry.sort_as<H, A>();
            const auto& h = registry.storage<H>();
            const auto& a = registry.storage<A>();
            std::size_t shared = 0;
            for (const auto e : a) {
                if (h.contains(e)) {
                    ASSERT_EQ(h[shared], e) << "sort_as: shared entities in A's order";
                    ++shared;
                }
            }
            for (std::size_t pos = shared; pos < h.size(); ++pos) {
                ASSERT_FALSE(a.contains(h[pos])) << "sort_as: the others after";
            }
            if (is_owned(0)) {
                ASSERT_THROW((registry.sort_as<A, H>()), ecsnet::group_error);
                ++refusals_checked;
            }
            ++sorts_checked;
        } else {
            // Sort a group; an outer group with a nested one refuses.
            const auto options = random_sort_options();
            const auto sort_group = [&](auto& group, auto key_of_model, auto sort_call) {
                const auto before = positions(group, group.size());
                sort_call(group, options);
                expect_sorted(
                    group, group.size(), [&](entity e) { return key_of_model(model.at(e)); }, options.stable,
                    before, group.name().c_str());
                ++sorts_checked;
            };
            const auto by_c = [](auto& group, ecsnet::sort_options how) {
                group.template sort<C>([](const C& lhs, const C& rhs) { return lhs.value < rhs.value; }, how);
            };
            const auto by_a_then_e = [](auto& group, ecsnet::sort_options how) {
                group.template sort<A, E>(
                    [](const auto& lhs, const auto& rhs) {
                        return std::get<0>(lhs).value * 100 + static_cast<int>(std::get<1>(lhs).value) <
                               std::get<0>(rhs).value * 100 + static_cast<int>(std::get<1>(rhs).value);
                    },
                    how);
            };
            const auto by_entity = [](auto& group, ecsnet::sort_options how) {
                group.sort([](entity lhs, entity rhs) { return lhs < rhs; }, how);
            };
            const auto c_key = [](const model_entity& m) { return static_cast<std::uint64_t>(*m.c); };
            const auto ae_key = [](const model_entity& m) {
                return static_cast<std::uint64_t>(*m.a * 100 + static_cast<int>(*m.e));
            };
            const int which = number(0, 3);
            if (config.layout == 0) {
                if (which == 0 && l0.inner) {
                    sort_group(*l0.inner, c_key, by_c);
                } else if (which == 1 && l0.partial) {
                    sort_group(*l0.partial, c_key, by_c);
                } else if (which == 2 && l0.non_owning) {
                    sort_group(*l0.non_owning, ae_key, by_a_then_e);
                } else if (l0.full) {
                    if (l0.inner) {
                        ASSERT_THROW(by_entity(*l0.full, options), ecsnet::group_error);
                        ++refusals_checked;
                    } else {
                        const auto before = positions(*l0.full, l0.full->size());
                        by_entity(*l0.full, options);
                        expect_sorted(
                            *l0.full, l0.full->size(), [](entity e) { return ecsnet::to_integral(e); },
                            options.stable, before, "group<A, B> by entity");
                        ++sorts_checked;
                    }
                }
            } else {
                if (which == 0 && l1.innermost) {
                    sort_group(*l1.innermost, c_key, by_c);
                } else if (which == 1 && l1.partial) {
                    sort_group(*l1.partial, c_key, by_c);
                } else if (which == 2 && l1.non_owning) {
                    sort_group(*l1.non_owning, ae_key, by_a_then_e);
                } else if (l1.mid) {
                    if (l1.innermost) {
                        ASSERT_THROW(by_entity(*l1.mid, options), ecsnet::group_error);
                        ++refusals_checked;
                    } else {
                        const auto before = positions(*l1.mid, l1.mid->size());
                        by_entity(*l1.mid, options);
                        expect_sorted(
                            *l1.mid, l1.mid->size(), [](entity e) { return ecsnet::to_integral(e); },
                            options.stable, before, "group<A, B>(exclude<D>) by entity");
                        ++sorts_checked;
                    }
                }
            }
        }
        check_all();
        // How busy the most demanding group is: the runs must exercise it, not an empty one.
        const auto deepest = config.layout == 0 ? (l0.inner ? l0.inner->size() : 0)
                                                : (l1.innermost ? l1.innermost->size() : 0);
        deepest_members += deepest;
        if (HasFatalFailure()) {
            FAIL() << "after step " << step << " (operation " << op << ")";
        }
    }
    EXPECT_EQ(groups_created, group_count);
    EXPECT_GT(sorts_checked, 1000);
    EXPECT_GT(refusals_checked, 100);
    EXPECT_GT(leaving_iterations, 1000);
    RecordProperty("deepest_group_average_members",
                   std::to_string(static_cast<double>(deepest_members) / operations));
    EXPECT_GT(deepest_members, static_cast<std::size_t>(operations) * 3 / 2)
        << "the deepest group should hold a few entities on average";
}

// Layout 1 creates its inner groups first for even seeds, its outer ones first for odd seeds.
const run_config runs[] = {{0, creation::before, 1}, {1, creation::after, 2}, {1, creation::interleaved, 3}};

std::string run_name(const ::testing::TestParamInfo<run_config>& info) {
    const char* when[] = {"Before", "After", "Interleaved"};
    return "Layout" + std::to_string(info.param.layout) + "Groups" + when[static_cast<int>(info.param.when)] +
           "Seed" + std::to_string(info.param.seed);
}

INSTANTIATE_TEST_SUITE_P(Runs, GroupDifferential, ::testing::ValuesIn(runs), run_name);

} // namespace

} // namespace group_differential_test
