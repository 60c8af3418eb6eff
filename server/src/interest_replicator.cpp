#include "ecsnet/server/interest_replicator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <ecsnet/ecs/prefetch.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/framing.hpp>

#include "ecsnet/server/relevance.hpp"

namespace ecsnet::server {

namespace {

// An entity leaves a client's set beyond this multiple of the radius (hysteresis).
constexpr float leave_factor = 1.1F;
// Priority weights: full within a tenth of the radius, falling with the square of the distance beyond,
// clamped to [1, 8].
constexpr interest::weight_range weights{1.0F, 8.0F};
// A token bucket holds at most this many ticks of budget: a quiet client may burst, not hoard.
constexpr std::int64_t bucket_ticks = 4;
// Bytes a snapshot takes besides its entities: framing, header, lists.
constexpr std::size_t snapshot_overhead = 48;

interest::grid_bounds bounds_of(const spatial_layout& layout) {
    return {layout.min_x, layout.min_y, layout.max_x, layout.max_y};
}

float cell_size_for(const spatial_layout& layout, float radius) {
    // Half the radius: the fastest queries in bench/interest_bench (0.4 to 0.6). Never so small the grid
    // explodes.
    const float extent = std::max(layout.max_x - layout.min_x, layout.max_y - layout.min_y);
    return std::max({radius * 0.5F, extent / 2048.0F, 1.0F});
}

} // namespace

struct interest_replicator::client_state final : client_replication {
    client_state(proto::view_encoder& encoder, std::size_t encoder_at, std::size_t max_entering)
        : view{encoder}
        , relevancy{max_entering}
        , encoder_at{encoder_at} {}

    client_id id{};
    entity avatar{null_entity};
    proto::client_view view;
    interest::client_relevancy relevancy;
    // Sorted by index, as at the last recomputation: members destroyed since are still in it, and each
    // snapshot skips them (client_view::write checks each against the rows, where it meets them anyway).
    std::vector<proto::net_entity> relevant;
    std::vector<float> weights;     // parallel
    std::int64_t budget_per_tick{}; // bits
    std::int64_t bucket{};          // bits
    std::size_t position{};         // in clients_
    std::size_t encoder_at{};       // in encoders_ (group_by_place() may move it)
    bool fresh{true};               // recompute its set at the next tick, whatever the schedule
    bool jumped{false};             // its avatar jumped: recompute before its turn (as soon as there is room)
    // Where its set was last recomputed around (its avatar then), if it had one.
    std::optional<interest::grid_position> focus;
    // Written by prepare() for the tick `prepared_at`, handed out by snapshot().
    std::optional<outgoing_snapshot> prepared;
    proto::tick_type prepared_at{};
    // The last snapshot's frame, written again in place by the next once its link let go of it (a datagram
    // link copies it at once): a fresh string per client per tick was two allocations, made on a worker
    // and freed on the io thread, the slowest way through malloc.
    std::shared_ptr<std::string> frame;
};

interest_replicator::interest_replicator(game_world& world, const proto::snapshot_history& history,
                                         const spatial_layout& layout, interest_options options,
                                         server_metrics& metrics)
    : world_{&world}
    , asks_may_see_{layout.asks_may_see}
    , history_{&history}
    , options_{options}
    , metrics_{&metrics}
    , rows_{history.layout(), 64}
    , grid_{bounds_of(layout), cell_size_for(layout, options.radius)}
    , schedule_{std::max<std::uint32_t>(options.relevancy_period, 1)}
    , weight_{std::max(options.radius / 10.0F, 1.0F), weights}
    , jump_squared_{[&options] {
        const float jump = options.radius * (leave_factor - 1.0F) * 0.5F;
        return jump * jump;
    }()}
    , scratch_(std::max<std::size_t>(options.workers, 1)) {
    if (options.workers > 1) {
        pool_ = std::make_unique<thread_pool>(options.workers);
    }
    for (std::size_t i = 0; i < scratch_.size(); ++i) {
        // Tables versions far apart: a client moved to another encoder must be sent its tables.
        proto::view_encoder_options coding;
        coding.first_tables_version =
            1 + static_cast<std::uint32_t>(i * (std::uint64_t{1} << 32) / scratch_.size());
        encoders_.push_back(std::make_unique<encoder_slot>(rows_, coding, metrics.snapshot_budget_use));
    }
    const auto& schema = history.layout();
    const auto component = schema.find(layout.component);
    if (!component) {
        throw std::invalid_argument("spatial layout: no replicated component '" + layout.component + "'");
    }
    component_ = *component;
    const auto& fields = schema[component_].fields;
    const auto field = [&](const std::string& name) {
        const auto found = std::find_if(fields.begin(), fields.end(),
                                        [&](const proto::field_info& f) { return f.name == name; });
        if (found == fields.end() || found->encoding != proto::field_encoding::fixed_point) {
            throw std::invalid_argument("spatial layout: '" + layout.component + "." + name +
                                        "' is not a fixed-point field");
        }
        return static_cast<std::size_t>(found - fields.begin());
    };
    const auto x = field(layout.x_field);
    const auto y = field(layout.y_field);
    x_at_ = rows_.layout().offset(component_) + x;
    y_at_ = rows_.layout().offset(component_) + y;
    x_min_ = fields[x].min;
    x_step_ = fields[x].step;
    y_min_ = fields[y].min;
    y_step_ = fields[y].step;
    if (schema.size() > proto::max_view_components) {
        throw std::invalid_argument("interest management supports schemas of at most 64 components");
    }
}

interest_replicator::~interest_replicator() = default;

std::optional<interest::grid_position> interest_replicator::position_of(std::uint32_t index) const noexcept {
    if (!rows_.alive(index)) {
        return std::nullopt;
    }
    const auto* row = rows_.current(index);
    if (!proto::row_layout::has(row, component_)) {
        return std::nullopt;
    }
    return interest::grid_position{static_cast<float>(x_min_ + row[x_at_] * x_step_),
                                   static_cast<float>(y_min_ + row[y_at_] * y_step_)};
}

void interest_replicator::move_grid() {
    // Indices that lost their occupant at this tick leave the grid (a new occupant enters with a new grid
    // generation, so relevant sets see a destroy and a create). The rows are updated every tick before
    // this, so their list of removals is every index to take out.
    for (const auto index : rows_.removed()) {
        if (index < in_grid_.size() && in_grid_[index] != 0) {
            grid_.erase(index);
            in_grid_[index] = 0;
        }
    }
    for (const auto index : rows_.alive()) {
        if (index >= in_grid_.size()) {
            in_grid_.resize(std::max<std::size_t>(std::size_t{index} + 1, in_grid_.size() * 2), 0);
        }
        if (in_grid_[index] != 0 && rows_.since(index) != tick_) {
            continue; // in the grid, where its unchanged row puts it (most entities, most ticks)
        }
        const auto position = position_of(index);
        if (!position) {
            if (in_grid_[index] != 0) {
                grid_.erase(index);
                in_grid_[index] = 0;
            }
            continue;
        }
        if (in_grid_[index] == 0) {
            grid_.insert(index, position->x, position->y);
            in_grid_[index] = rows_.generation(index) + 1;
        } else {
            grid_.move(index, position->x, position->y); // its row changed this tick
        }
    }
}

void interest_replicator::read_relevance_marks() {
    for (const auto index : marked_) {
        if (index < vetoed_.size()) {
            vetoed_[index] = 0;
            priority_[index] = 1.0F;
        }
    }
    marked_.clear();
    always_.clear();
    owned_.clear();
    auto& reg = world_->registry();
    const auto* marks = reg.try_storage<relevance>();
    if (marks == nullptr) {
        return;
    }
    for (const auto e : *marks) {
        const auto index = entity_traits::to_index(e);
        if (!rows_.alive(index)) {
            continue;
        }
        if (index >= vetoed_.size()) {
            const auto size = std::max<std::size_t>(std::size_t{index} + 1, vetoed_.size() * 2);
            vetoed_.resize(size, 0);
            owner_of_.resize(size, 0);
            priority_.resize(size, 1.0F);
        }
        const auto& mark = reg.get<relevance>(e);
        marked_.push_back(index);
        priority_[index] = std::max(mark.priority, 0.0F);
        switch (mark.mode) {
        case relevance_mode::spatial:
            break;
        case relevance_mode::always:
            always_.push_back(index);
            break;
        case relevance_mode::owner_only:
            vetoed_[index] = 1;
            owner_of_[index] = mark.owner;
            owned_.emplace_back(mark.owner, index);
            break;
        case relevance_mode::hidden:
            vetoed_[index] = 1;
            owner_of_[index] = 0;
            break;
        }
    }
    std::sort(always_.begin(), always_.end());
    std::sort(owned_.begin(), owned_.end());
}

void interest_replicator::tick(proto::tick_type tick, std::uint64_t server_time_us,
                               const std::function<void()>& alongside) {
    tick_ = tick;
    time_offset_us_ = static_cast<std::int64_t>(server_time_us) -
                      static_cast<std::int64_t>(std::uint64_t{tick} * 1000000ULL / options_.tick_rate);
    const auto update_tables = [this] {
        rows_.update(*history_);
        for (auto& slot : encoders_) {
            slot->encoder.begin_tick();
        }
        move_grid();
        read_relevance_marks();
    };
    if (pool_ && alongside) {
        // Neither writes what the other reads: the tables are the replicator's, `alongside` reads only the
        // registry and the history, which nothing writes until the next tick.
        pool_->parallel_for(2, [&](std::size_t part) {
            if (part == 0) {
                update_tables();
            } else {
                alongside();
            }
        });
    } else {
        update_tables();
        if (alongside) {
            alongside();
        }
    }
    due_.clear();
    // A client whose avatar jumped (a teleport, a respawn) would see the place it left until its turn: its
    // set is recomputed before it, at most half a turn's share of such clients a tick (the others on the
    // next ticks, first come first served), so a thousand teleported at once spread over the ticks and no
    // tick recomputes more than 1.5 times its usual share (with a whole share, every client teleported at
    // once made the ticks after it peak at 31 ms instead of 20: bench/RESULTS.md, twentieth pass).
    std::size_t room_for_jumps = clients_.size() / schedule_.period() / 2 + 1;
    for (auto* c : clients_) {
        c->bucket = std::min(c->bucket + c->budget_per_tick, bucket_ticks * c->budget_per_tick);
        if (c->fresh || schedule_.due(tick, c->position)) {
            c->fresh = false;
            c->jumped = false;
            due_.push_back(c);
            continue;
        }
        c->jumped = c->jumped || focus_jumped(*c);
        if (c->jumped && room_for_jumps > 0) {
            --room_for_jumps;
            c->jumped = false;
            due_.push_back(c);
            metrics_->relevancy_jumps.add();
        }
    }
    // Each client's set depends on the grid, the rows and the marks alone, all read-only here, so the
    // clients due are split between the workers (each costs tens of microseconds, a wake-up a few).
    if (pool_ && due_.size() >= 4) {
        pool_->parallel_for(due_.size(), [this](std::size_t i) {
            update_relevancy(*due_[i], scratch_[thread_pool::current_worker()]);
        });
    } else {
        for (auto* c : due_) {
            update_relevancy(*c, scratch_[0]);
        }
    }
    for (const auto* c : due_) {
        metrics_->relevant_entities.observe(static_cast<double>(c->relevant.size()));
    }
}

bool interest_replicator::focus_jumped(const client_state& c) const noexcept {
    if (!c.focus || c.avatar == null_entity) {
        return false;
    }
    const auto index = entity_traits::to_index(c.avatar);
    if (!rows_.alive(index) || rows_.since(index) != tick_) {
        return false; // gone (its set keeps what is always relevant), or still where it was
    }
    const auto at = position_of(index);
    return at && interest::distance_squared(at->x, at->y, c.focus->x, c.focus->y) > jump_squared_;
}

void interest_replicator::update_relevancy(client_state& c, relevancy_scratch& scratch) const {
    // Always relevant to this client: its avatar, what it owns, what everyone sees.
    auto& always_for = scratch.always_for;
    auto& changes = scratch.changes;
    always_for.clear();
    const auto avatar_index = entity_traits::to_index(c.avatar);
    if (c.avatar != null_entity && rows_.alive(avatar_index)) {
        always_for.push_back(avatar_index);
    }
    const auto owned =
        std::equal_range(owned_.begin(), owned_.end(), std::pair<client_id, std::uint32_t>{c.id, 0},
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto it = owned.first; it != owned.second; ++it) {
        always_for.push_back(it->second);
    }
    always_for.insert(always_for.end(), always_.begin(), always_.end());

    const auto center = c.avatar != null_entity ? position_of(avatar_index) : std::nullopt;
    c.focus = center;
    const float cx = center ? center->x : 0.0F;
    const float cy = center ? center->y : 0.0F;
    const float radius = center ? options_.radius : 0.0F; // no avatar: only what is always relevant
    changes.clear();
    if (++scratch.stamp == 0) { // wrapped: forget every old distance
        std::fill(scratch.found.begin(), scratch.found.end(), relevancy_scratch::found_distance{0, 0.0F});
        scratch.stamp = 1;
    }
    if (scratch.found.size() < in_grid_.size()) {
        scratch.found.resize(in_grid_.size(), {0, 0.0F});
    }
    auto& found = scratch.found;
    const auto stamp = scratch.stamp;
    auto& reg = world_->registry();
    c.relevancy.update(
        grid_, cx, cy, radius, radius * leave_factor, always_for, changes,
        [&](interest::id_type index) {
            if (index < vetoed_.size() && vetoed_[index] != 0) {
                return false; // hidden, or another client's
            }
            if (!asks_may_see_) {
                return true;
            }
            const auto candidate =
                entity_traits::construct(index, rows_.generation(index) & entity_traits::version_mask);
            return reg.valid(candidate) ? world_->may_see(c.id, c.avatar, candidate) : true;
        },
        [&](interest::id_type index, float d2) {
            if (index < found.size()) {
                found[index] = {stamp, d2};
            }
        });

    // The set sorted by index, updated by what left and what entered rather than sorted whole again (a
    // sort of ~200 members per client was a fifth of the recomputation).
    auto& left = scratch.left;
    left.clear();
    for (const auto& gone : changes.left) {
        left.push_back(gone.id);
    }
    std::sort(left.begin(), left.end());
    auto& entered = scratch.entered;
    entered.clear();
    for (const auto index : changes.entered) {
        if (rows_.alive(index)) {
            entered.push_back({index, rows_.generation(index)});
        }
    }
    std::sort(entered.begin(), entered.end(),
              [](const proto::net_entity& a, const proto::net_entity& b) { return a.index < b.index; });
    // Written through a cursor into room made once (a push_back per member, with its capacity check,
    // was most of this merge's instructions).
    auto& merged = scratch.merged;
    merged.resize(c.relevant.size() + entered.size());
    proto::net_entity* out = merged.data();
    std::size_t l = 0;
    std::size_t e = 0;
    for (auto id : c.relevant) {
        while (l < left.size() && left[l] < id.index) {
            ++l;
        }
        if (l < left.size() && left[l] == id.index) {
            continue; // left (its index may enter again below, with its new occupant)
        }
        if (id.index >= found.size() || found[id.index].stamp != stamp) {
            // Not in the query: always relevant, and maybe not in the grid at all, where the set does not
            // see a new occupant of the index; take the current one.
            if (!rows_.alive(id.index)) {
                continue;
            }
            id.generation = rows_.generation(id.index);
        }
        while (e < entered.size() && entered[e].index < id.index) {
            *out++ = entered[e++];
        }
        *out++ = id;
    }
    out = std::copy(entered.begin() + static_cast<std::ptrdiff_t>(e), entered.end(), out);
    merged.resize(static_cast<std::size_t>(out - merged.data()));
    c.relevant.swap(merged);

    c.weights.resize(c.relevant.size());
    float* weight = c.weights.data();
    for (const auto& id : c.relevant) {
        float w = weights.max;
        if (center) {
            if (id.index < found.size() && found[id.index].stamp == stamp) {
                w = weight_(found[id.index].d2);
            } else if (const auto p = position_of(id.index)) { // always relevant, beyond the query
                w = weight_(interest::distance_squared(p->x, p->y, cx, cy));
            }
        }
        if (id.index < priority_.size()) {
            w *= priority_[id.index];
        }
        *weight++ = std::max(w, 1e-3F);
    }
}

std::unique_ptr<client_replication> interest_replicator::join(client_id client, entity avatar,
                                                              const v1::ClientHello& hello,
                                                              std::optional<refusal>& refused) {
    std::uint32_t kbps = options_.budget_kbps;
    if (hello.max_receive_kbps() != 0) {
        kbps = std::min(kbps, hello.max_receive_kbps());
    }
    const std::int64_t per_tick = std::int64_t{kbps} * 1000 / std::max<std::uint32_t>(options_.tick_rate, 1);
    // The client's own avatar must fit one snapshot: its whole row, the snapshot's overhead, the wire's.
    std::int64_t avatar_bits = 64;
    for (const auto& component : history_->layout().components()) {
        for (const auto& field : component.fields) {
            avatar_bits += field.bits;
        }
    }
    const auto needed =
        avatar_bits + static_cast<std::int64_t>(snapshot_overhead + options_.wire_overhead) * 8;
    if (per_tick < needed) {
        refused = refusal{v1::BUDGET_TOO_SMALL,
                          "a budget of " + std::to_string(kbps) + " kbps (" + std::to_string(per_tick / 8) +
                              " bytes a tick) cannot carry this client's own avatar (about " +
                              std::to_string((needed + 7) / 8) + " bytes a tick)"};
        return nullptr;
    }
    // The least loaded encoder, until group_by_place() finds its place.
    const auto slot = std::min_element(encoders_.begin(), encoders_.end(),
                                       [](const auto& a, const auto& b) { return a->clients < b->clients; });
    ++(*slot)->clients;
    auto state = std::make_unique<client_state>(
        (*slot)->encoder, static_cast<std::size_t>(slot - encoders_.begin()), options_.max_entering);
    state->id = client;
    state->avatar = avatar;
    state->budget_per_tick = per_tick;
    state->bucket = per_tick;
    state->position = clients_.size();
    clients_.push_back(state.get());
    return state;
}

void interest_replicator::leave(client_replication& client) {
    auto& c = static_cast<client_state&>(client);
    --encoders_[c.encoder_at]->clients;
    const auto at = c.position;
    if (at < clients_.size() && clients_[at] == &c) {
        clients_[at] = clients_.back();
        clients_[at]->position = at;
        clients_.pop_back();
    }
}

void interest_replicator::welcome(client_replication& client, v1::ServerWelcome& welcome) {
    const auto& c = static_cast<client_state&>(client);
    welcome.set_interest_managed(true);
    welcome.set_budget_bytes_per_tick(static_cast<std::uint32_t>(c.budget_per_tick / 8));
}

void interest_replicator::on_ack(client_replication& client, const v1::Ack& ack) {
    static_cast<client_state&>(client).view.on_ack(ack.tick(), ack.full_state_requested());
}

void interest_replicator::prepare(std::span<client_replication* const> clients) {
    if (!pool_ || clients.size() < 2) {
        return; // one thread: each is written when asked, as without workers
    }
    if (tick_ % regroup_period == 0) {
        group_by_place(clients);
    }
    for (auto& slot : encoders_) {
        slot->batch.clear();
    }
    for (auto* client : clients) {
        auto& c = static_cast<client_state&>(*client);
        // A fresh one recomputes its set first, on scratch_[0]: left to snapshot(). One prepared for this
        // tick already is kept (a view is written once a tick).
        if (!c.fresh && !(c.prepared && c.prepared_at == tick_)) {
            encoders_[c.encoder_at]->batch.push_back(&c);
        }
    }
    // Each encoder's clients on one worker: the encoder, its envelope and their states are that worker's
    // alone; the rows, removals, sets and marks only tick() changes; metrics are atomics.
    pool_->parallel_for(encoders_.size(), [this](std::size_t at) {
        auto& slot = *encoders_[at];
        // Each client's state is cold (a thousand were written since its last snapshot) and write() starts
        // with a chain of misses through it: the state, its views' records, their entries. Asked for a
        // step ahead each, while the clients before are written.
        const auto& batch = slot.batch;
        const auto prefetch_state = [](const client_state& c) { prefetch_bytes(&c, sizeof c); };
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (i + 3 < batch.size()) {
                prefetch_state(*batch[i + 3]);
            }
            if (i + 2 < batch.size()) {
                batch[i + 2]->view.prefetch_records();
                __builtin_prefetch(batch[i + 2]->relevant.data());
                __builtin_prefetch(batch[i + 2]->weights.data());
            }
            if (i + 1 < batch.size()) {
                batch[i + 1]->view.prefetch_entries();
            }
            auto* c = batch[i];
            if (c->prepared) {
                // Written for an earlier tick and never taken (its link was closing): the view recorded
                // it as sent, so the client_view takes it as in flight, never acked, and sends what it
                // held again (the cost of a resend, never a wrong mirror).
                metrics_->snapshots_discarded.add();
            }
            c->prepared = write_snapshot(*c, slot);
            c->prepared_at = tick_;
        }
    });
    for (auto& slot : encoders_) {
        count_written(*slot);
    }
}

void interest_replicator::group_by_place(std::span<client_replication* const> clients) {
    // Encoder k takes the k-th of n equal shares of the clients ordered by their avatar's x: neighbours
    // see the same entities, so an encoder's cached codes serve its clients as one encoder's served all of
    // them (with a random split, each entity was coded by every encoder). A client stays with its
    // encoder while within a margin of its share's stretch: one walking along a border does not go back
    // and forth (each move sends its tables again, some tens of bytes).
    const auto n = encoders_.size();
    by_x_.clear();
    for (auto* client : clients) {
        auto& c = static_cast<client_state&>(*client);
        if (c.avatar == null_entity) {
            continue;
        }
        if (const auto at = position_of(entity_traits::to_index(c.avatar))) {
            by_x_.emplace_back(at->x, &c);
        }
    }
    if (n < 2 || by_x_.size() < 2 * n) {
        return;
    }
    std::sort(by_x_.begin(), by_x_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    x_bounds_.clear();
    for (std::size_t k = 1; k < n; ++k) {
        const auto first = k * by_x_.size() / n; // the first client of share k
        x_bounds_.push_back((by_x_[first - 1].first + by_x_[first].first) * 0.5F);
    }
    const float margin = options_.radius * 0.25F;
    for (const auto& [x, c] : by_x_) {
        const auto share = static_cast<std::size_t>(std::upper_bound(x_bounds_.begin(), x_bounds_.end(), x) -
                                                    x_bounds_.begin());
        const auto now = c->encoder_at;
        if (share == now) {
            continue;
        }
        const bool above_start = now == 0 || x >= x_bounds_[now - 1] - margin;
        const bool below_end = now == n - 1 || x < x_bounds_[now] + margin;
        if (above_start && below_end) {
            continue; // near its stretch: stays
        }
        --encoders_[now]->clients;
        ++encoders_[share]->clients;
        c->encoder_at = share;
        c->view.use_encoder(encoders_[share]->encoder);
        metrics_->encoder_moves.add();
    }
}

std::optional<outgoing_snapshot> interest_replicator::snapshot(client_replication& client) {
    auto& c = static_cast<client_state&>(client);
    if (c.prepared) {
        auto prepared = std::exchange(c.prepared, std::nullopt);
        if (c.prepared_at == tick_) {
            metrics_->snapshots_prepared.add();
            return prepared;
        }
        metrics_->snapshots_discarded.add(); // older: harmless, as in prepare()
    }
    if (c.fresh) {
        update_relevancy(c, scratch_[0]); // joined since the last tick
        metrics_->relevant_entities.observe(static_cast<double>(c.relevant.size()));
        c.fresh = false;
    }
    auto& slot = *encoders_[c.encoder_at];
    auto written = write_snapshot(c, slot);
    count_written(slot);
    return written;
}

outgoing_snapshot interest_replicator::write_snapshot(client_state& c, encoder_slot& slot) const {
    const auto budget = c.bucket - static_cast<std::int64_t>(snapshot_overhead + options_.wire_overhead) * 8;
    const auto report = c.view.write(c.relevant, c.weights, budget, time_offset_us_, slot.envelope);
    slot.deferred += report.deferred + report.waiting;

    // use_count() is 1 only once every holder let go: the io thread, before it asked for this tick's
    // snapshots (a link that still queues it, TCP, gets a new string).
    if (!c.frame || c.frame.use_count() != 1) {
        c.frame = std::make_shared<std::string>();
    }
    auto& frame = c.frame;
    frame->clear();
    proto::serialize_into(slot.envelope, slot.encoded);
    frame->reserve(proto::framed_size(slot.encoded.size()));
    proto::append_length_prefix(*frame, slot.encoded.size());
    const auto offset = frame->size();
    frame->append(slot.encoded);
    const auto per_tick_bytes = static_cast<double>(std::max<std::int64_t>(c.budget_per_tick / 8, 1));
    slot.budget_use.observe(static_cast<double>(frame->size() + options_.wire_overhead) / per_tick_bytes);
    return outgoing_snapshot{frame, offset, report.tick, report.full_state};
}

void interest_replicator::count_written(encoder_slot& slot) const {
    const auto& now = slot.encoder.stats();
    auto& was = slot.counted;
    metrics_->view_cache_lookups.add(now.lookups - was.lookups);
    metrics_->view_cache_hits.add(now.hits - was.hits);
    // Bytes, as Prometheus wants them: what the bits make, the remainders carried to the next call.
    metrics_->view_bytes_coded.add(now.bits_coded / 8 - was.bits_coded / 8);
    metrics_->view_bytes_copied.add(now.bits_copied / 8 - was.bits_copied / 8);
    was = now;
    metrics_->deferred_entities.add(std::exchange(slot.deferred, 0));
    metrics_->snapshot_budget_use.add(slot.budget_use);
}

void interest_replicator::sent(client_replication& client, std::size_t wire_bytes) {
    auto& c = static_cast<client_state&>(client);
    c.bucket -= static_cast<std::int64_t>(wire_bytes) * 8;
}

std::size_t interest_replicator::encoder_of(const client_replication& client) const noexcept {
    return static_cast<const client_state&>(client).encoder_at;
}

proto::view_encoder_stats interest_replicator::encoder_stats() const noexcept {
    proto::view_encoder_stats sum;
    for (const auto& slot : encoders_) {
        const auto& s = slot->encoder.stats();
        sum.lookups += s.lookups;
        sum.hits += s.hits;
        sum.on_line += s.on_line;
        sum.bits_coded += s.bits_coded;
        sum.bits_copied += s.bits_copied;
    }
    return sum;
}

std::vector<std::uint32_t> interest_replicator::relevant_of(const client_replication& client) const {
    const auto& c = static_cast<const client_state&>(client);
    std::vector<std::uint32_t> out;
    for (const auto& id : c.relevant) {
        out.push_back(id.index);
    }
    return out;
}

} // namespace ecsnet::server
