#include "ecsnet/proto/delta.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "delta_runs.hpp"

namespace ecsnet::proto {

using namespace runs; // the shared machinery (delta_runs.hpp)

// ---- applying (client) --------------------------------------------------------------------------------

namespace {

result<void> inconsistent(std::string what) {
    return make_error(errc::inconsistent_delta, std::move(what));
}

void ensure_weights(std::vector<std::uint64_t>& weights, std::uint32_t max_index) {
    if (weights.size() <= max_index) {
        const auto first = weights.size();
        weights.resize(std::size_t{max_index} + 1);
        for (auto i = first; i < weights.size(); ++i) {
            weights[i] = entity_weight(static_cast<std::uint32_t>(i));
        }
    }
}

// acc[k] += value[at[k]] * weight, for one field.
template<typename T>
void accumulate(std::uint64_t* __restrict acc, const T* values, const std::uint32_t* at, std::size_t n,
                std::uint64_t weight) {
    for (std::size_t k = 0; k < n; ++k) {
        acc[k] += std::uint64_t{values[at[k]]} * weight;
    }
}

// acc[k] += (now[t[k]] - before[b[k]]) * weight, for one field (modulo 2^64).
template<typename T>
void accumulate_difference(std::uint64_t* __restrict acc, const T* now, const std::uint32_t* t,
                           const T* before, const std::uint32_t* b, std::size_t n, std::uint64_t weight) {
    for (std::size_t k = 0; k < n; ++k) {
        acc[k] += (std::uint64_t{now[t[k]]} - std::uint64_t{before[b[k]]}) * weight;
    }
}

} // namespace

result<void> apply_delta(const schema_layout& layout, const replicated_state* baseline,
                         const replicated_state* second, extrapolation x, const delta& d,
                         replicated_state& out, delta_workspace& work, const checksum_weights& weights,
                         const delta_limits& limits, std::span<const candidate_kernel> kernels) {
    out.reset(layout);
    auto& effects = work.effects;
    effects.destroyed = d.destroyed;
    effects.created.clear();
    effects.components.resize(layout.size());
    for (auto& e : effects.components) {
        e.written.clear();
        e.added.clear();
        e.removed.clear();
    }
    auto& et = work.target_entities;
    et.clear();
    static const std::vector<std::uint32_t> none;
    const auto& eb = baseline != nullptr ? baseline->flat(work.base_entities) : none;
    std::uint64_t sum = baseline != nullptr ? baseline->checksum : 0;
    auto& entity_runs = work.entity_runs;
    entity_runs.clear();

    // 1. Entities: the baseline's survivors (in runs) and the created ones, in id order.
    if (baseline == nullptr) {
        if (!d.destroyed.empty()) {
            return inconsistent("a full state destroys entities");
        }
        et = d.created;
        out.generations = d.created_generations;
        for (std::uint32_t k = 0; k < et.size(); ++k) {
            effects.created.push_back(k);
        }
    } else {
        if (baseline->generations.size() != eb.size()) {
            return inconsistent("baseline without generations");
        }
        if (!d.destroyed.empty() && d.destroyed.back() >= eb.size()) {
            return inconsistent("destroyed position " + std::to_string(d.destroyed.back()) +
                                " beyond the baseline");
        }
        std::size_t i = 0;
        std::size_t dpos = 0;
        std::size_t cpos = 0;
        while (i < eb.size() || cpos < d.created.size()) {
            const auto next_b = i < eb.size() ? eb[i] : no_bound;
            const auto next_c = cpos < d.created.size() ? d.created[cpos] : no_bound;
            if (next_c < next_b) {
                effects.created.push_back(static_cast<std::uint32_t>(et.size()));
                et.push_back(next_c);
                out.generations.push_back(d.created_generations[cpos++]);
                continue;
            }
            if (dpos < d.destroyed.size() && d.destroyed[dpos] == i) {
                if (next_c == next_b && d.created_generations[cpos] == baseline->generations[i]) {
                    return inconsistent("entity " + std::to_string(next_c) + " replaced by itself");
                }
                ++dpos;
                ++i;
                continue; // a created entry with the same id (a new occupant) comes next round
            }
            if (next_c == next_b) {
                return inconsistent("created entity " + std::to_string(next_c) +
                                    " is already in the baseline");
            }
            // A run of survivors up to the next destroyed position or created id.
            auto end = dpos < d.destroyed.size() ? std::size_t{d.destroyed[dpos]} : eb.size();
            if (next_c != no_bound) {
                end = std::min(end,
                               static_cast<std::size_t>(
                                   std::lower_bound(eb.begin() + static_cast<std::ptrdiff_t>(i),
                                                    eb.begin() + static_cast<std::ptrdiff_t>(end), next_c) -
                                   eb.begin()));
            }
            entity_runs.push_back({static_cast<std::uint32_t>(et.size()), static_cast<std::uint32_t>(i),
                                   no_second, static_cast<std::uint32_t>(end - i)});
            et.insert(et.end(), eb.begin() + static_cast<std::ptrdiff_t>(i),
                      eb.begin() + static_cast<std::ptrdiff_t>(end));
            out.generations.insert(out.generations.end(),
                                   baseline->generations.begin() + static_cast<std::ptrdiff_t>(i),
                                   baseline->generations.begin() + static_cast<std::ptrdiff_t>(end));
            i = end;
        }
    }
    if (et.size() > limits.max_entities) {
        return make_error(errc::limit_exceeded, "state of " + std::to_string(et.size()) + " entities");
    }
    out.entities_stale =
        true; // the flat ids (kept below) are the truth; the compact array is built on demand
    ensure_weights(work.weights, std::max(et.empty() ? 0U : et.back(), eb.empty() ? 0U : eb.back()));
    const auto* w = work.weights.data();
    for (const auto pos : effects.created) {
        sum += w[et[pos]] * weights.identity(out.generations[pos]);
    }
    auto& destroyed_ids = work.destroyed_ids;
    destroyed_ids.clear();
    for (const auto pos : d.destroyed) {
        destroyed_ids.push_back(eb[pos]);
        sum -= w[eb[pos]] * weights.identity(baseline->generations[pos]);
    }

    // Extrapolation applies to entities whose occupant is the same in both baselines. When the baseline was
    // built from the second one, its continuing runs say which (compose_runs); otherwise the entity lists
    // and generations are compared (`fresh`: the baseline's indices whose occupant is not the second's).
    auto& fresh = work.fresh;
    fresh.clear();
    auto& entity_second_runs = work.entity_second_runs;
    const std::vector<std::uint32_t>* ep = nullptr;
    const auto find_fresh = [&] {
        ep = &second->flat(work.second_entities);
        align(eb, *ep, none, work.runs, work.target_only, work.base_only);
        for (const auto& r : work.runs) {
            const auto* gb = baseline->generations.data() + r.t;
            const auto* gp = second->generations.data() + r.b;
            std::uint32_t k = 0;
            while (k < r.length) {
                const auto block = std::min<std::uint32_t>(64, r.length - k);
                if (std::memcmp(gb + k, gp + k, block * sizeof(std::uint32_t)) != 0) {
                    for (std::uint32_t j = k; j < k + block; ++j) {
                        if (gb[j] != gp[j]) {
                            fresh.push_back(eb[r.t + j]);
                        }
                    }
                }
                k += block;
            }
        }
    };
    if (second != nullptr && baseline != nullptr) {
        if (second->generations.size() != second->entity_count()) {
            return inconsistent("second baseline without generations");
        }
        if (baseline->written_since && *baseline->written_since == second->tick) {
            compose_runs(entity_runs, baseline->continuing, entity_second_runs);
        } else {
            find_fresh();
            split_by_second(et, entity_runs, *ep, fresh, entity_second_runs);
        }
    }

    // 2. Components.
    auto& covered = work.flags;
    bool all_covered = false;
    bool coverage_started = false;
    for (std::size_t comp = 0; comp < layout.size(); ++comp) {
        const auto& cd = d.components[comp];
        const auto& fields = layout[comp].fields;
        auto& eff = effects.components[comp];
        auto& state = out.components[comp];
        const auto& cw = weights.components[comp];
        const bool predict = second != nullptr && baseline != nullptr && has_linear(fields);
        auto& base_gone = work.base_gone;
        base_gone.clear();

        // The new id column: runs of the baseline's column plus the added entries.
        const std::vector<std::uint32_t>* ids = &work.target_ids;
        const std::vector<std::uint32_t>* tb = &none;
        const std::vector<aligned_run>* runs = &work.own_runs;
        const bool follows_entities = baseline == nullptr ? cd.added.size() == et.size() && cd.added == et
                                                          : baseline->components[comp].ids_are_entities &&
                                                                cd.removed.empty() && cd.added == d.created;
        if (follows_entities) {
            ids = &et;
            tb = &eb;
            runs = &entity_runs;
            eff.added = effects.created;
            base_gone = d.destroyed;
        } else {
            auto& tt = work.target_ids;
            auto& own_runs = work.own_runs;
            tt.clear();
            own_runs.clear();
            if (baseline != nullptr) {
                if (baseline->components[comp].ids_are_entities) {
                    tb = &eb;
                } else {
                    flatten(baseline->ids(comp), work.base_ids);
                    tb = &work.base_ids;
                }
            }
            const auto& base = *tb;
            if (!cd.removed.empty() && cd.removed.back() >= base.size()) {
                return inconsistent("component '" + layout[comp].name +
                                    "' removed at a position beyond its column");
            }
            std::size_t i = 0;
            std::size_t a = 0;
            std::size_t dpos = 0;
            std::size_t rm = 0;
            while (i < base.size() || a < cd.added.size()) {
                const auto next_a = a < cd.added.size() ? cd.added[a] : no_bound;
                const auto next_b = i < base.size() ? base[i] : no_bound;
                if (next_a < next_b) {
                    eff.added.push_back(static_cast<std::uint32_t>(tt.size()));
                    tt.push_back(next_a);
                    ++a;
                    continue;
                }
                const bool entity_gone = seek(destroyed_ids, dpos, next_b);
                const bool removed = rm < cd.removed.size() && cd.removed[rm] == i;
                if (entity_gone || removed) {
                    if (entity_gone && removed) {
                        return inconsistent("component removed from a destroyed entity");
                    }
                    if (removed) {
                        if (next_a == next_b) {
                            return inconsistent("component '" + layout[comp].name +
                                                "' removed and added again on entity " +
                                                std::to_string(next_a));
                        }
                        eff.removed.push_back(static_cast<std::uint32_t>(i));
                        ++rm;
                    }
                    base_gone.push_back(static_cast<std::uint32_t>(i++));
                    continue;
                }
                if (next_a == next_b) {
                    return inconsistent("component '" + layout[comp].name + "' added to entity " +
                                        std::to_string(next_a) + " which already has it");
                }
                auto end = rm < cd.removed.size() ? std::size_t{cd.removed[rm]} : base.size();
                auto bound = next_a;
                if (dpos < destroyed_ids.size()) {
                    bound = std::min(bound, destroyed_ids[dpos]);
                }
                if (bound != no_bound) {
                    end = std::min(
                        end, static_cast<std::size_t>(
                                 std::lower_bound(base.begin() + static_cast<std::ptrdiff_t>(i),
                                                  base.begin() + static_cast<std::ptrdiff_t>(end), bound) -
                                 base.begin()));
                }
                own_runs.push_back({static_cast<std::uint32_t>(tt.size()), static_cast<std::uint32_t>(i),
                                    no_second, static_cast<std::uint32_t>(end - i)});
                tt.insert(tt.end(), base.begin() + static_cast<std::ptrdiff_t>(i),
                          base.begin() + static_cast<std::ptrdiff_t>(end));
                i = end;
            }
            // Every entry must belong to an entity of the new state.
            if (!coverage_started) {
                covered.assign(et.size(), 0);
                coverage_started = true;
            }
            std::size_t at = 0;
            for (const auto id : tt) {
                while (at < et.size() && et[at] < id) {
                    ++at;
                }
                if (at == et.size() || et[at] != id) {
                    return inconsistent("component '" + layout[comp].name + "' on entity " +
                                        std::to_string(id) + " which does not exist");
                }
                covered[at] = 1;
            }
        }
        if (predict) {
            const bool second_follows = second->components[comp].ids_are_entities;
            if (follows_entities && second_follows) {
                runs = &entity_second_runs;
            } else {
                if (ep == nullptr) {
                    find_fresh();
                }
                const std::vector<std::uint32_t>* tp = ep;
                if (!second_follows) {
                    flatten(second->ids(comp), work.second_ids);
                    tp = &work.second_ids;
                }
                split_by_second(*ids, *runs, *tp, fresh, work.second_runs);
                runs = &work.second_runs;
            }
        }
        const auto nt = ids->size();

        // Which entries may differ from the baseline ("written", below): without extrapolation only the
        // changed ones; with it, also those that moved between the two baselines, known when the baseline was
        // itself built from the second baseline (its `written`), else found by scanning the columns.
        const bool scan = predict && !(baseline->written_since && *baseline->written_since == second->tick);
        // With a scan, the positions of the changed entries in the new column, through the runs; without
        // one, the candidates pass (below) walks them with the other candidates.
        const auto changed_outside = [&] {
            return inconsistent("component '" + layout[comp].name +
                                "' changed on an entity that does not keep it");
        };
        auto& changed_t = work.changed_t;
        auto& candidates = work.candidates;
        if (scan && !map_through_runs(*runs, cd.changed, changed_t, false)) {
            return changed_outside();
        }

        // The values: references over the runs, then the added values, then the residuals.
        for (std::size_t f = 0; f < fields.size(); ++f) {
            const bool linear = predict && fields[f].predict == prediction::linear;
            auto& column = state.fields[f];
            column.resize(nt);
            column.visit([&](auto& dst) {
                using T = typename std::decay_t<decltype(dst)>::value_type;
                const T* bv = baseline != nullptr
                                  ? static_cast<const T*>(baseline->components[comp].fields[f].raw())
                                  : nullptr;
                const T* pv =
                    linear ? static_cast<const T*>(second->components[comp].fields[f].raw()) : nullptr;
                for (const auto& r : *runs) {
                    const bool extrapolated = linear && r.p != no_second;
                    reference_run<T>(bv + r.b, extrapolated ? pv + r.p : nullptr, dst.data() + r.t, r.length,
                                     extrapolated, x, fields[f].bits);
                }
                const auto& added = cd.added_values[f];
                for (std::size_t k = 0; k < eff.added.size(); ++k) {
                    dst[eff.added[k]] = static_cast<T>(added[k]);
                }
                if (!scan) {
                    return; // the residuals are added in the candidates' pass
                }
                const auto mask = fields[f].mask();
                const auto& residuals = cd.residuals[f];
                std::size_t next = 0;
                for (std::size_t k = 0; k < cd.changed.size(); ++k) {
                    if ((cd.masks[k] >> f) & 1U) {
                        const auto pos = changed_t[k];
                        dst[pos] = static_cast<T>((std::uint32_t{dst[pos]} + residuals[next++]) & mask);
                    }
                }
            });
        }

        // Written: survivors whose values differ from the baseline's.
        auto& written = eff.written;
        auto& written_b = work.written_b;
        if (scan) {
            auto& differs = work.masks;
            differs.resize(nt);
            for (std::size_t f = 0; f < fields.size(); ++f) {
                state.fields[f].visit([&](const auto& dst) {
                    using T = typename std::decay_t<decltype(dst)>::value_type;
                    const T* bv = static_cast<const T*>(baseline->components[comp].fields[f].raw());
                    for (const auto& r : *runs) {
                        mark_differences(dst.data() + r.t, bv + r.b, differs.data() + r.t, r.length, f == 0);
                    }
                });
            }
            candidates.resize(nt + 8);
            std::size_t count = 0;
            for (const auto& r : *runs) {
                count = compact_nonzero(differs.data() + r.t, r.t, r.length, candidates.data(), count);
            }
            candidates.resize(count);
            written.assign(candidates.begin(), candidates.end());
        } else if (baseline != nullptr) {
            // The candidates pass (candidates.hpp): the changed entries, and with extrapolation the
            // baseline's written ones, row by row.
            const auto n = fields.size(); // at most max_fields_per_component (schema_layout checks)
            std::array<void*, max_fields_per_component> now{};
            std::array<const void*, max_fields_per_component> before{};
            std::array<const std::uint32_t*, max_fields_per_component> residuals{};
            std::array<std::size_t, max_fields_per_component> residual_counts{};
            std::array<std::uint32_t, max_fields_per_component> value_masks{};
            std::array<unsigned, max_fields_per_component> widths{};
            for (std::size_t f = 0; f < n; ++f) {
                now[f] = state.fields[f].raw();
                before[f] = baseline->components[comp].fields[f].raw();
                residuals[f] = cd.residuals[f].data();
                residual_counts[f] = cd.residuals[f].size();
                value_masks[f] = fields[f].mask();
                widths[f] = state.fields[f].width();
            }
            candidate_pass pass;
            pass.runs = *runs;
            pass.written_before = predict ? std::span<const std::uint32_t>{baseline->written[comp]}
                                          : std::span<const std::uint32_t>{};
            pass.changed = cd.changed;
            pass.change_masks = cd.masks;
            pass.fields = n;
            pass.now = now.data();
            pass.before = before.data();
            pass.residuals = residuals.data();
            pass.residual_counts = residual_counts.data();
            pass.value_masks = value_masks.data();
            pass.widths = widths.data();
            pass.weights = cw.fields.data();
            pass.entity_weights = w;
            pass.ids = ids->data();
            pass.written = &work.written_rows;
            pass.sum = sum;
            auto outcome = comp < kernels.size() && kernels[comp] != nullptr ? kernels[comp](pass)
                                                                             : candidate_outcome::wrong_types;
            if (outcome == candidate_outcome::wrong_types) {
                outcome = dynamic_candidates(pass);
            }
            if (outcome != candidate_outcome::done) {
                return changed_outside();
            }
            sum = pass.sum;
            written.assign(work.written_rows.begin(),
                           work.written_rows.begin() + static_cast<std::ptrdiff_t>(pass.written_count));
        } else if (!cd.changed.empty()) {
            return changed_outside(); // a full state has no baseline to change
        } else {
            written.clear();
        }
        const bool summed = !scan; // the candidate path summed the written differences already
        if (scan && !written.empty()) {
            std::size_t r = 0;
            written_b.resize(written.size());
            for (std::size_t k = 0; k < written.size(); ++k) {
                while ((*runs)[r].t + (*runs)[r].length <= written[k]) {
                    ++r;
                }
                written_b[k] = (*runs)[r].b + (written[k] - (*runs)[r].t);
            }
        }

        // Checksum: + written differences, + added entries, - entries gone from the baseline's column.
        auto& acc = work.sums;
        const auto weigh = [&](const std::vector<std::uint32_t>& at, const std::vector<std::uint32_t>& id_of,
                               const replicated_state& s, std::uint64_t presence) {
            acc.assign(at.size(), presence);
            for (std::size_t f = 0; f < fields.size(); ++f) {
                with_values(s.components[comp].fields[f], [&](const auto* v) {
                    accumulate(acc.data(), v, at.data(), at.size(), cw.fields[f]);
                });
            }
            std::uint64_t total = 0;
            for (std::size_t k = 0; k < at.size(); ++k) {
                total += w[id_of[at[k]]] * acc[k];
            }
            return total;
        };
        if (!summed && !written.empty()) {
            acc.assign(written.size(), 0);
            for (std::size_t f = 0; f < fields.size(); ++f) {
                state.fields[f].visit([&](const auto& now) {
                    using T = typename std::decay_t<decltype(now)>::value_type;
                    accumulate_difference(acc.data(), now.data(), written.data(),
                                          static_cast<const T*>(baseline->components[comp].fields[f].raw()),
                                          written_b.data(), written.size(), cw.fields[f]);
                });
            }
            const auto* id_of = ids->data();
            for (std::size_t k = 0; k < written.size(); ++k) {
                sum += w[id_of[written[k]]] * acc[k];
            }
        }
        sum += weigh(eff.added, *ids, out, cw.presence);
        if (!base_gone.empty()) {
            sum -= weigh(base_gone, *tb, *baseline, cw.presence);
        }

        state.ids_are_entities = follows_entities || *ids == et;
        if (!state.ids_are_entities) {
            state.own_ids.append(ids->begin(), ids->end());
        } else {
            all_covered = true;
        }
        out.written[comp] = written;
    }
    if (!all_covered) {
        if (!coverage_started) {
            covered.assign(et.size(), 0);
        }
        for (std::size_t i = 0; i < et.size(); ++i) {
            if (covered[i] == 0) {
                return inconsistent("entity " + std::to_string(et[i]) + " has no replicated component");
            }
        }
    }
    out.checksum = sum;
    if (baseline != nullptr) {
        out.written_since = baseline->tick;
        out.continuing = entity_runs;
    }
    // Keep the flat entities with the state: it is the next baseline.
    std::swap(out.flat_entities, work.target_entities);
    out.flat_valid = true;
    return {};
}

} // namespace ecsnet::proto
