#pragma once

// Helpers shared by the replication tests: a test schema with every field encoding, a random world that
// exercises it, and comparisons between a server registry and a client mirror.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ecsnet/arena/scene.hpp"
#include "ecsnet/proto/history.hpp"
#include "ecsnet/proto/mirror.hpp"

namespace ecsnet::proto::testing {

enum class Color : std::uint8_t { red, green, blue, black = 255 };

struct Body {
    float x{};
    float y{};
    double precise{};
    float heading{};
};

struct Flags {
    bool active{};
    std::int8_t level{};
    Color color{};
};

struct Score {
    std::uint32_t points{};
    std::int32_t delta{};
    std::uint16_t local_only{}; // not declared: never sent
};

struct Marker {
    std::uint8_t id{};
};

/// Every encoding, both predictions, widths 1 to 32, storage widths 1, 2 and 4.
inline const schema& test_schema() {
    static const schema instance{
        component<Body>("Body", field<&Body::x>("x", fixed_point<16>{-128.0, 1.0 / 256}),
                        field<&Body::y>("y", fixed_point<12>{-8.0, 1.0 / 256}),
                        field<&Body::precise>("precise", fixed_point<32>{-1.0e6, 1.0 / 1024}),
                        field<&Body::heading>("heading", angle<10>{prediction::linear})),
        component<Flags>("Flags", field<&Flags::active>("active", boolean{}),
                         field<&Flags::level>("level", integer<>{}),
                         field<&Flags::color>("color", integer<>{})),
        component<Score>("Score", field<&Score::points>("points", integer<>{}),
                         field<&Score::delta>("delta", integer<>{prediction::linear})),
        component<Marker>("Marker", field<&Marker::id>("id", integer<3>{}))};
    return instance;
}

/// Every declared component of a registry, quantized, as flat rows {component, index, values...} sorted
/// by (component, index): what the server's pools and a client's pools must agree on. Flat and sorted by an
/// index permutation, so that comparing them every tick stays cheap even in a sanitizer build.
using pool_rows = std::vector<std::uint32_t>;

template<typename IndexOf>
pool_rows quantized_pools(const schema& s, const registry& reg, IndexOf index_of) {
    pool_rows rows;
    std::vector<std::uint32_t> values;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> order; // (index, position in the pool)
    for (std::size_t c = 0; c < s.size(); ++c) {
        const auto& codec = s.codec(c);
        const auto pool = codec.pool_entities(reg);
        const auto nfields = s.component_at(c).fields.size();
        order.clear();
        for (std::uint32_t p = 0; p < pool.size(); ++p) {
            order.emplace_back(index_of(pool[p]), p);
        }
        std::sort(order.begin(), order.end());
        values.resize(nfields);
        for (const auto& [index, p] : order) {
            codec.quantize_one(reg, pool[p], values.data());
            rows.push_back(static_cast<std::uint32_t>(c));
            rows.push_back(index);
            rows.insert(rows.end(), values.begin(), values.end());
        }
    }
    return rows;
}

inline pool_rows server_pools(const schema& s, const registry& reg) {
    return quantized_pools(s, reg, [](entity e) { return to_index(e); });
}

inline pool_rows client_pools(const mirror& m) {
    return quantized_pools(m.replicated_schema(), m.registry(), [&m](entity e) {
        const auto id = m.net_of(e);
        return id ? id->index : 0xFFFFFFFFU;
    });
}

/// A hash of a mirror's pools in storage order: unchanged as long as nothing touched them. Allocation-free.
inline std::uint64_t pools_fingerprint(const mirror& m) {
    const auto& s = m.replicated_schema();
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; };
    std::uint32_t values[max_fields_per_component];
    for (std::size_t c = 0; c < s.size(); ++c) {
        const auto pool = s.codec(c).pool_entities(m.registry());
        mix(pool.size());
        for (const auto e : pool) {
            mix(to_integral(e));
            s.codec(c).quantize_one(m.registry(), e, values);
            for (std::size_t f = 0; f < s.component_at(c).fields.size(); ++f) {
                mix(values[f]);
            }
        }
    }
    mix(m.registry().alive());
    return h;
}

/// A random world on the test schema: creates, destroys (recycling indices), adds and removes components,
/// changes fields (small steps, jumps, extremes), moves some bodies linearly, and now and then a burst.
class random_world {
public:
    random_world(registry& reg, std::uint64_t seed, std::size_t target_size)
        : reg_{&reg}
        , rng_{seed}
        , target_{target_size} {}

    void step() {
        const bool burst = rng_.chance(0.02);
        const double scale = burst ? 8.0 : 1.0;
        // Creations and destructions keep the size around the target.
        const auto alive = live_.size();
        const auto creates = rng_.count(scale * (alive < target_ ? 3.0 : 1.0));
        const auto destroys = rng_.count(scale * (alive > target_ ? 3.0 : 1.0));
        for (std::size_t n = 0; n < destroys && !live_.empty(); ++n) {
            const auto at = rng_.below(live_.size());
            reg_->destroy(live_[at]);
            live_[at] = live_.back();
            live_.pop_back();
        }
        for (std::size_t n = 0; n < creates; ++n) {
            create();
        }
        // Component churn.
        const auto churn = rng_.count(scale * 2.0);
        for (std::size_t n = 0; n < churn && !live_.empty(); ++n) {
            toggle_component(live_[rng_.below(live_.size())]);
        }
        // Field changes; linear movers every tick.
        for (const auto e : live_) {
            if (auto* body = reg_->try_get<Body>(e); body != nullptr && moving(e)) {
                reg_->patch<Body>(e, [](Body& b) {
                    b.x += 0.37F;
                    b.heading += 0.05F;
                    b.precise += 3.25;
                });
            }
        }
        const auto changes = rng_.count(scale * static_cast<double>(live_.size()) * 0.05 + 1.0);
        for (std::size_t n = 0; n < changes && !live_.empty(); ++n) {
            change_fields(live_[rng_.below(live_.size())]);
        }
    }

    [[nodiscard]] std::size_t size() const noexcept { return live_.size(); }
    arena::scene_random& random() noexcept { return rng_; }

private:
    bool moving(entity e) const noexcept { return to_index(e) % 3 == 0; }

    void create() {
        const auto e = reg_->create();
        bool any = false;
        while (!any) {
            if (rng_.chance(0.7)) {
                reg_->emplace<Body>(e, random_body());
                any = true;
            }
            if (rng_.chance(0.5)) {
                reg_->emplace<Flags>(e, random_flags());
                any = true;
            }
            if (rng_.chance(0.5)) {
                reg_->emplace<Score>(e, Score{static_cast<std::uint32_t>(rng_.next()),
                                              static_cast<std::int32_t>(rng_.next()), 7});
                any = true;
            }
            if (rng_.chance(0.3)) {
                reg_->emplace<Marker>(e, Marker{static_cast<std::uint8_t>(rng_.below(16))});
                any = true;
            }
        }
        live_.push_back(e);
    }

    Body random_body() {
        return Body{static_cast<float>(rng_.uniform(-140.0, 140.0)),
                    static_cast<float>(rng_.uniform(-9.0, 9.0)), rng_.uniform(-2.0e6, 3.0e6),
                    static_cast<float>(rng_.uniform(-10.0, 10.0))};
    }
    Flags random_flags() {
        const Color colors[] = {Color::red, Color::green, Color::blue, Color::black};
        return Flags{rng_.chance(0.5), static_cast<std::int8_t>(static_cast<int>(rng_.below(256)) - 128),
                     colors[rng_.below(4)]};
    }

    // Adds a missing component or removes a present one, keeping at least one declared component (an
    // entity that loses its last one leaves replication: tested too, by removing and re-adding).
    void toggle_component(entity e) {
        switch (rng_.below(4)) {
        case 0:
            if (reg_->all_of<Body>(e)) {
                reg_->remove<Body>(e);
            } else {
                reg_->emplace<Body>(e, random_body());
            }
            break;
        case 1:
            if (reg_->all_of<Flags>(e)) {
                reg_->remove<Flags>(e);
            } else {
                reg_->emplace<Flags>(e, random_flags());
            }
            break;
        case 2:
            if (reg_->all_of<Score>(e)) {
                reg_->remove<Score>(e);
            } else {
                reg_->emplace<Score>(e, Score{1, -1, 0});
            }
            break;
        default:
            if (reg_->all_of<Marker>(e)) {
                reg_->remove<Marker>(e);
            } else {
                reg_->emplace<Marker>(e, Marker{5});
            }
            break;
        }
        // Sometimes the entity has no declared component left: it stays alive but leaves replication until
        // it gets one again.
        if (!reg_->any_of<Body, Flags, Score, Marker>(e) && rng_.chance(0.5)) {
            reg_->emplace<Marker>(e, Marker{1});
        }
    }

    void change_fields(entity e) {
        if (auto* b = reg_->try_get<Body>(e); b != nullptr && rng_.chance(0.6)) {
            reg_->patch<Body>(e, [&](Body& body) {
                switch (rng_.below(5)) {
                case 0:
                    body.x += static_cast<float>(rng_.uniform(-1.0, 1.0));
                    break;
                case 1:
                    body.y = rng_.chance(0.5) ? -1000.0F : 1000.0F;
                    break; // clamps to the range ends
                case 2:
                    body.precise = rng_.uniform(-1.0e6, 3.0e6);
                    break;
                case 3:
                    body.heading += static_cast<float>(rng_.uniform(-4.0, 4.0));
                    break;
                default:
                    body = random_body();
                    break;
                }
            });
        }
        if (reg_->all_of<Flags>(e) && rng_.chance(0.4)) {
            reg_->patch<Flags>(e, [&](Flags& f) {
                f.active = !f.active;
                if (rng_.chance(0.5)) {
                    f.level = static_cast<std::int8_t>(rng_.chance(0.5) ? -128 : 127);
                }
            });
        }
        if (reg_->all_of<Score>(e) && rng_.chance(0.4)) {
            reg_->patch<Score>(e, [&](Score& s) {
                s.points += static_cast<std::uint32_t>(rng_.below(1000));
                s.delta = rng_.chance(0.1)
                              ? std::numeric_limits<std::int32_t>::min()
                              : static_cast<std::int32_t>(static_cast<std::uint32_t>(s.delta) - 3U);
                s.local_only = static_cast<std::uint16_t>(rng_.next());
            });
        }
        if (reg_->all_of<Marker>(e) && rng_.chance(0.3)) {
            reg_->patch<Marker>(e, [&](Marker& m) { m.id = static_cast<std::uint8_t>(rng_.below(256)); });
        }
    }

    registry* reg_;
    arena::scene_random rng_;
    std::size_t target_;
    std::vector<entity> live_;
};

} // namespace ecsnet::proto::testing
