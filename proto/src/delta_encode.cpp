#include "ecsnet/proto/delta.hpp"

#include <algorithm>
#include <bit>

#include "delta_runs.hpp"

namespace ecsnet::proto {

using namespace runs; // the shared machinery (delta_runs.hpp)

// ---- encoding (server) --------------------------------------------------------------------------------

void make_delta(const schema_layout& layout, const replicated_state& target, const replicated_state* baseline,
                const replicated_state* second, extrapolation x, const delta_identity& identity, delta& out,
                delta_workspace& work) {
    out.reset(layout);
    const auto& et = target.flat(work.target_entities);
    const auto created_set = identity.created;
    work.fresh.assign(identity.fresh_since_second.begin(), identity.fresh_since_second.end());

    if (baseline == nullptr) {
        out.created = et;
        out.created_generations.assign(identity.generations.begin(), identity.generations.end());
        for (std::size_t c = 0; c < layout.size(); ++c) {
            auto& cd = out.components[c];
            const auto& fields = layout[c].fields;
            if (target.components[c].ids_are_entities) {
                cd.added = et;
            } else {
                flatten(target.ids(c), cd.added);
            }
            cd.added_are_created = !cd.added.empty() && cd.added == out.created;
            for (std::size_t f = 0; f < fields.size(); ++f) {
                auto& values = cd.added_values[f];
                values.resize(cd.added.size());
                with_values(target.components[c].fields[f],
                            [&](const auto* v) { std::copy(v, v + values.size(), values.begin()); });
            }
        }
        return;
    }

    // Entities: runs of continuing ones; the rest are created (target side) or destroyed (base side).
    const auto& eb = baseline->flat(work.base_entities);
    auto& entity_runs = work.entity_runs;
    if (target.written_since && *target.written_since == baseline->tick) {
        // The target kept its continuing entities (history.cpp, record_changes): the same alignment.
        entity_runs = target.continuing;
        outside_runs(entity_runs, et.size(), true, work.created_positions);
        outside_runs(entity_runs, eb.size(), false, out.destroyed);
    } else {
        align(et, eb, created_set, entity_runs, work.created_positions, out.destroyed);
    }
    for (const auto pos : work.created_positions) {
        out.created.push_back(et[pos]);
        out.created_generations.push_back(identity.generations[pos]);
    }
    auto& destroyed_ids = work.destroyed_ids;
    destroyed_ids.clear();
    for (const auto pos : out.destroyed) {
        destroyed_ids.push_back(eb[pos]);
    }
    auto& entity_second_runs = work.entity_second_runs;
    const std::vector<std::uint32_t>* ep = nullptr;
    if (second != nullptr) {
        if (baseline->written_since && *baseline->written_since == second->tick) {
            compose_runs(entity_runs, baseline->continuing, entity_second_runs);
        } else {
            ep = &second->flat(work.second_entities);
            split_by_second(et, entity_runs, *ep, work.fresh, entity_second_runs);
        }
    }

    work.residuals.resize(max_fields_per_component);
    for (std::size_t comp = 0; comp < layout.size(); ++comp) {
        auto& cd = out.components[comp];
        const auto& fields = layout[comp].fields;
        const auto& tcols = target.components[comp].fields;
        const auto& bcols = baseline->components[comp].fields;
        const bool predict = second != nullptr && has_linear(fields);
        const bool aliased = target.components[comp].ids_are_entities &&
                             baseline->components[comp].ids_are_entities &&
                             (!predict || second->components[comp].ids_are_entities);
        const std::vector<std::uint32_t>* ids = &et;
        const std::vector<aligned_run>* runs = nullptr;
        const std::vector<std::uint32_t>* added_at = nullptr;
        if (aliased) {
            runs = predict ? &entity_second_runs : &entity_runs;
            cd.added = out.created; // an aliased column follows the entities: nothing removed
            added_at = &work.created_positions;
        } else {
            auto& tt = work.target_ids;
            auto& tb = work.base_ids;
            if (target.components[comp].ids_are_entities) {
                tt = et;
            } else {
                flatten(target.ids(comp), tt);
            }
            if (baseline->components[comp].ids_are_entities) {
                tb = eb;
            } else {
                flatten(baseline->ids(comp), tb);
            }
            ids = &tt;
            align(tt, tb, created_set, work.runs, work.target_only, work.base_only);
            std::size_t d = 0;
            for (const auto pos : work.base_only) {
                if (!seek(destroyed_ids, d, tb[pos])) {
                    cd.removed.push_back(pos);
                }
            }
            for (const auto pos : work.target_only) {
                cd.added.push_back(tt[pos]);
            }
            added_at = &work.target_only;
            runs = &work.runs;
            if (predict) {
                auto& tp = work.second_ids;
                if (second->components[comp].ids_are_entities) {
                    if (ep == nullptr) {
                        ep = &second->flat(work.second_entities);
                    }
                    tp = *ep;
                } else {
                    flatten(second->ids(comp), tp);
                }
                split_by_second(tt, work.runs, tp, work.fresh, work.second_runs);
                runs = &work.second_runs;
            }
        }
        // Added entries: their values, whole.
        if (!cd.added.empty()) {
            for (std::size_t f = 0; f < fields.size(); ++f) {
                auto& values = cd.added_values[f];
                values.resize(added_at->size());
                with_values(tcols[f], [&](const auto* v) {
                    for (std::size_t k = 0; k < added_at->size(); ++k) {
                        values[k] = v[(*added_at)[k]];
                    }
                });
            }
        }
        cd.added_are_created = !cd.added.empty() && cd.added == out.created;

        // Continuing entries. When the target lists what changed since the baseline, and (for an
        // extrapolated component) the baseline what changed since the second baseline, only those entries
        // can differ from their reference: visit them alone. Otherwise compare every entry.
        const bool target_knows = target.written_since && *target.written_since == baseline->tick;
        const bool base_knows =
            !predict || (baseline->written_since && *baseline->written_since == second->tick);
        if (target_knows && base_knows) {
            auto& candidates = work.candidates;
            const auto& now_changed = target.written[comp];
            if (predict) {
                map_through_runs(*runs, baseline->written[comp], work.changed_t, true);
                candidates.resize(now_changed.size() + work.changed_t.size());
                candidates.resize(static_cast<std::size_t>(
                    std::set_union(now_changed.begin(), now_changed.end(), work.changed_t.begin(),
                                   work.changed_t.end(), candidates.begin()) -
                    candidates.begin()));
            } else {
                candidates.assign(now_changed.begin(), now_changed.end());
            }
            const auto count = candidates.size();
            auto& segments = work.segments;
            segment_candidates(*runs, candidates, segments);
            // Residuals, field by field, with typed loads; each field's non-zero ones are kept in order (a
            // mask bit is set exactly where the residual is not 0).
            if (work.masks.size() < count) {
                work.masks.resize(count);
            }
            // Computed in scratch memory (not zeroed first), then copied out at their final sizes.
            for (std::size_t f = 0; f < fields.size(); ++f) {
                auto& residuals = work.residuals[f];
                if (residuals.size() < count) {
                    residuals.resize(count);
                }
                const bool linear = predict && fields[f].predict == prediction::linear;
                std::size_t kept = 0;
                tcols[f].visit([&](const auto& tv) {
                    using T = typename std::decay_t<decltype(tv)>::value_type;
                    const T* pv =
                        linear ? static_cast<const T*>(second->components[comp].fields[f].raw()) : nullptr;
                    kept = candidate_residuals<T>(
                        tv.data(), static_cast<const T*>(bcols[f].raw()), pv, candidates.data(), segments, x,
                        fields[f].bits, static_cast<unsigned>(f), residuals.data(), work.masks.data());
                });
                cd.residuals[f].assign(residuals.begin(),
                                       residuals.begin() + static_cast<std::ptrdiff_t>(kept));
            }
            // The changed entries, by baseline position, with their masks (compacted in place: next <= k).
            auto& changed_b = work.written_b;
            if (changed_b.size() < count) {
                changed_b.resize(count);
            }
            auto* masks = work.masks.data();
            std::size_t next = 0;
            for (const auto& seg : segments) {
                for (auto k = seg.begin; k < seg.end; ++k) {
                    const auto mask = masks[k];
                    changed_b[next] = candidates[k] + seg.to_b;
                    masks[next] = mask;
                    next += mask != 0 ? 1U : 0U;
                }
            }
            const auto kept = static_cast<std::ptrdiff_t>(next);
            cd.changed.assign(changed_b.begin(), changed_b.begin() + kept);
            cd.masks.assign(work.masks.begin(), work.masks.begin() + kept);
            continue;
        }
        const auto n = ids->size();
        if (work.masks.size() < n) {
            work.masks.resize(n);
        }
        for (std::size_t f = 0; f < fields.size(); ++f) {
            auto& residual = work.residuals[f];
            if (residual.size() < n) {
                residual.resize(n);
            }
            const bool linear = fields[f].predict == prediction::linear && predict;
            tcols[f].visit([&](const auto& tv) {
                using T = typename std::decay_t<decltype(tv)>::value_type;
                const T* bv = static_cast<const T*>(bcols[f].raw());
                const T* pv =
                    linear ? static_cast<const T*>(second->components[comp].fields[f].raw()) : nullptr;
                for (const auto& r : *runs) {
                    const bool extrapolated = linear && r.p != no_second;
                    residual_run<T>(tv.data() + r.t, bv + r.b, extrapolated ? pv + r.p : nullptr,
                                    residual.data() + r.t, work.masks.data() + r.t, r.length, extrapolated, x,
                                    fields[f].bits, static_cast<unsigned>(f), f == 0);
                }
            });
        }
        // The changed ones, in order (runs are in target order), named by their baseline position.
        auto& changed_at = work.positions;
        changed_at.resize(n + 8);
        std::size_t count = 0;
        for (const auto& r : *runs) {
            count = compact_nonzero(work.masks.data() + r.t, r.t, r.length, changed_at.data(), count);
        }
        changed_at.resize(count);
        cd.changed.resize(count);
        cd.masks.resize(count);
        std::size_t r = 0;
        for (std::size_t k = 0; k < count; ++k) {
            const auto pos = changed_at[k];
            while ((*runs)[r].t + (*runs)[r].length <= pos) {
                ++r;
            }
            cd.changed[k] = (*runs)[r].b + (pos - (*runs)[r].t);
            const auto mask = work.masks[pos];
            cd.masks[k] = mask;
            for (auto bits = mask; bits != 0; bits &= bits - 1) {
                const auto f = static_cast<std::size_t>(std::countr_zero(bits));
                cd.residuals[f].push_back(work.residuals[f][pos]);
            }
        }
    }
}

} // namespace ecsnet::proto
