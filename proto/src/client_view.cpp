#include "ecsnet/proto/client_view.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <limits>

#include <ecsnet/ecs/prefetch.hpp>

#include "ecsnet/proto/bit_lists.hpp"
#include "ecsnet/proto/checksum.hpp"
#include "ecsnet/proto/envelope.hpp"

namespace ecsnet::proto {

namespace {

// What becomes of a base entry: `unchanged` keeps its last value and its tick (its reference is that value,
// which is the current one) and forgets the value before; `advance` takes its reference, which the current
// value equals, at this tick.
// `settled` is `unchanged` found by coding: the entry stays, but what it shows may have been a prediction
// (a deferred entity that stopped extrapolating), so its term is the current value's.
// Not a plain byte: a store of a character type may alias anything, and the merge below reloaded every
// vector's bounds after each one.
enum base_action : std::uint8_t {
    advance = 0,
    deferred = 1,
    changed = 2,
    refreshed = 3,
    gone = 4,
    unchanged = 5,
    settled = 6
};

// Bits a list entry costs, roughly: what the budget charges besides the entity's own bits.
constexpr std::uint32_t position_cost = 6;
constexpr std::uint32_t index_cost = 14;
// Header and empty lists, roughly.
constexpr std::int64_t fixed_cost = 40 * 8;

// How far ahead the walks over a view ask for its entries: views are cold (a thousand clients were written
// since), and a walk stalls on each new line of one.
constexpr std::size_t prefetch_distance = 8;

// Asks for the cache line of the entry prefetch_distance after `e`, without waiting for it. That may be past
// the view's end: the address is computed as a number, not as a pointer into the view, and a prefetch
// never faults, so the walks do not check a bound for it (a compare and a branch an entry).
// Non-temporal: a view is read once a tick, and a thousand of them streaming through the caches pushed out
// the per-entity arrays every client reads at random (the rows' ticks, generations and terms, the encoder's
// heads), which are most of the write's stalls (bench/RESULTS.md, twelfth pass: 3% of the replication's
// time).
void prefetch_ahead(const view_entry* e) noexcept {
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(e) +
                                                     prefetch_distance * sizeof(view_entry)),
                       0, 0);
}

// A sorted list of entries by index: the entry of `index`, if any, from a cursor that only moves forward.
// A plain walk: a bisection touches fewer of a cold view's lines, but each one a miss the prefetcher does
// not see coming (measured slower, bench/server_replication_callgrind at 1,000 clients); the walk asks for
// the lines prefetch_distance entries ahead.
const view_entry* seek_entry(std::span<const view_entry> entries, std::size_t& at,
                             std::uint32_t index) noexcept {
    const view_entry* data = entries.data();
    const std::size_t size = entries.size();
    std::size_t i = at;
    while (i < size && data[i].index < index) {
        prefetch_ahead(data + i);
        ++i;
    }
    at = i;
    return i < size && data[i].index == index ? data + i : nullptr;
}

// Whether a view entry is of the entity `id`: index and generation compared as one word (the two compares
// and branches of each were a fifth of the loop over a view's unchanged entries).
bool same_entity(const view_entry& e, const net_entity& id) noexcept {
    static_assert(offsetof(view_entry, generation) == offsetof(view_entry, index) + 4);
    static_assert(offsetof(net_entity, generation) == offsetof(net_entity, index) + 4);
    std::uint64_t entry_id = 0;
    std::uint64_t wanted = 0;
    std::memcpy(&entry_id, &e.index, sizeof entry_id);
    std::memcpy(&wanted, &id.index, sizeof wanted);
    return entry_id == wanted;
}

// The first lines of a view's entries, read once a tick: non-temporal (see prefetch_ahead).
void prefetch_view(std::span<const view_entry> entries) noexcept {
    prefetch_bytes<0>(entries.data(), std::min<std::size_t>(entries.size_bytes(), 512));
}

enum class kind : std::uint8_t { update, refresh, enter };

struct candidate {
    std::uint32_t index{};
    std::uint32_t generation{};
    std::uint32_t position{}; // in the base (update, refresh), or the base entry it goes before (enter)
    kind what{};
    bool mandatory{};
    entity_code code;
    float priority{};
    std::uint32_t cost{}; // estimated bits, lists included
};

struct ranked {
    std::uint64_t key{}; // priority, then index: larger first
    std::uint32_t id{};  // in candidates
};

// What client_view::write works in, kept from one call to the next only for its buffers. One per thread,
// shared by every client written on it, so it stays in cache where a thousand clients' own would not.
struct write_scratch {
    std::vector<candidate> candidates;
    std::vector<ranked> optional;             // candidates not in flight, admitted by priority
    std::vector<base_action> action;          // per base entry
    std::vector<std::uint32_t> edited;        // base positions whose entry does not stay as it is, ascending
    std::vector<std::uint32_t> left;          // base positions
    std::vector<removal_reason> left_reasons; // parallel to left
    std::vector<std::uint32_t> entered;       // indices
    std::vector<std::uint32_t> refreshed;     // base positions
    std::vector<std::uint32_t> deferred;      // likewise
    std::vector<std::uint32_t> changed;       // likewise
    std::vector<std::uint32_t> gaps;
    std::vector<std::uint32_t> selected_entering; // candidate ids
    std::vector<std::uint32_t> reference;
    bit_writer body;
};

write_scratch& thread_scratch() {
    thread_local write_scratch scratch;
    return scratch;
}

} // namespace

std::uint16_t view_header_check(tick_type tick, bool full_state, bool has_checksum,
                                std::uint32_t baseline_gap, std::int64_t time_offset_us,
                                std::uint32_t body_size, std::uint64_t checksum) noexcept {
    std::array<std::uint8_t, 25> bytes{};
    std::size_t at = 0;
    const auto put = [&bytes, &at](std::uint64_t value, std::size_t count) {
        for (std::size_t i = 0; i < count && at < bytes.size(); ++i) {
            bytes[at++] = static_cast<std::uint8_t>(value >> (8 * i));
        }
    };
    put(tick, 4);
    put((full_state ? 1U : 0U) | (has_checksum ? 2U : 0U), 1);
    put(baseline_gap, 4);
    put(static_cast<std::uint64_t>(time_offset_us), 8);
    put(body_size, 4);
    put(checksum, 8);
    return crc16(bytes.data(), at);
}

client_view::client_view(view_encoder& encoder, std::size_t max_frames)
    : encoder_{&encoder}
    , max_frames_{std::max<std::size_t>(max_frames, 2)} {}

void client_view::reset() {
    frames_.clear();
    acked_.reset();
    unsettled_count_ = 0;
    waiting_.clear();
}

void client_view::on_ack(tick_type tick, bool full_state_requested) {
    if (full_state_requested) {
        acked_.reset();
        frames_.clear();
        unsettled_count_ = 0;
        return;
    }
    if (acked_ && tick <= *acked_) {
        return; // baselines only move forward
    }
    if (unsettled_count_ == unsettled_acks_.size()) {
        settle_acks();
    }
    unsettled_acks_[unsettled_count_++] = tick;
}

void client_view::settle_acks() noexcept {
    for (std::size_t i = 0; i < unsettled_count_; ++i) {
        const tick_type tick = unsettled_acks_[i];
        if (acked_ && tick <= *acked_) {
            continue;
        }
        std::size_t found = 0;
        while (found < frames_.size() && frames_[found].tick != tick) {
            ++found;
        }
        if (found == frames_.size()) {
            continue; // not a view we keep: the next snapshot uses the base we have
        }
        acked_ = tick;
        // Views older than the base are never used again.
        for (; found > 0; --found) {
            frames_.pop_front();
        }
    }
    unsettled_count_ = 0;
}

void client_view::drop_oldest() noexcept {
    if (acked_ && frames_.front().tick == *acked_) {
        acked_.reset(); // the client is far behind: its next snapshot is a full state
    }
    frames_.pop_front();
}

// Views kept beyond what a client has needed at once for a while: what a burst of lost acks (up to
// max_frames views, a few kilobytes each) made it keep goes back once its acks have been steady again
// for about half a minute at 30 Hz.
void client_view::release_calm_surplus() {
    constexpr std::uint32_t calm_writes = 1024;
    most_in_flight_ = std::max(most_in_flight_, frames_.size());
    if (++writes_since_release_ < calm_writes) {
        return;
    }
    const std::size_t keep = std::max<std::size_t>(2 * most_in_flight_, 8);
    if (frames_.capacity() > 2 * keep) {
        frames_.release_spare(keep);
    }
    most_in_flight_ = frames_.size();
    writes_since_release_ = 0;
}

const view_frame* client_view::base() const noexcept {
    if (!acked_ || frames_.empty() || frames_.front().tick != *acked_) {
        return nullptr;
    }
    return &frames_.front();
}

void client_view::prefetch_records() const noexcept {
    if (!frames_.empty()) {
        __builtin_prefetch(&frames_.front());
        __builtin_prefetch(&frames_.back());
    }
    __builtin_prefetch(waiting_.data());
}

void client_view::prefetch_entries() noexcept {
    settle_acks();
    const view_frame* base = this->base();
    const view_frame* newest = this->newest();
    if (base != nullptr) {
        prefetch_view(base->entries);
    }
    if (newest != nullptr && newest != base) {
        prefetch_view(newest->entries);
    }
}

view_write_report client_view::write(std::span<const net_entity> relevant, std::span<const float> weights,
                                     std::int64_t budget_bits, std::int64_t time_offset_us,
                                     v1::Envelope& out) {
    settle_acks();
    auto& encoder = *encoder_;
    auto& sc = thread_scratch();
    const auto& rows = encoder.rows();
    const auto& layout = rows.layout();
    const tick_type tick = encoder.tick();
    // The new view's slot is made before the base and the newest are looked at: making it may move them.
    // At most max_frames_ views are kept, and the one written before the oldest is dropped.
    frames_.reserve(frames_.size() + 1, max_frames_ + 1);
    const view_frame* base = this->base();
    const view_frame* newest = this->newest();
    // Spans, like the rows' arrays below: copies of a vector's bounds the compiler may keep in registers,
    // where the vector's own are reloaded after each store of the merge.
    const std::span<const view_entry> base_entries =
        base != nullptr ? std::span<const view_entry>{base->entries} : std::span<const view_entry>{};
    // What is in flight: nothing when the newest view is the base (an entry of it sent since the base is
    // in no other view), and the walks for it are skipped.
    const std::span<const view_entry> newest_entries = newest != nullptr && newest != base
                                                           ? std::span<const view_entry>{newest->entries}
                                                           : std::span<const view_entry>{};

    view_write_report report;
    report.tick = tick;
    report.full_state = base == nullptr;
    // Everything of this client is cold in cache (a thousand clients were written since): the weights,
    // read only for the few candidates, at random, are fetched ahead while the merge runs, instead of a
    // miss per candidate; so are the first lines of the views the merge walks, before the hardware
    // prefetcher picks their streams up.
    prefetch_bytes(weights.data(), weights.size_bytes());
    prefetch_view(base_entries);
    prefetch_view(newest_entries);
    if (base != nullptr) {
        report.base = base->tick;
    }

    sc.candidates.clear();
    sc.action.assign(base_entries.size(), advance);
    sc.reference.resize(layout.width());
    sc.edited.clear();
    sc.left.clear();
    sc.left_reasons.clear();
    next_waiting_.clear();

    // One pass over the base, the newest view (what is in flight) and the relevant set, all by index.
    std::size_t b = 0;
    std::size_t r = 0;
    std::size_t n_at = 0;
    std::size_t w_at = 0;
    std::size_t stale = 0; // members of the set whose occupant is gone
    // Whether a member of the set is still the entity its index holds: the set may be a few ticks old (a
    // server recomputes it every few ticks), and an entity destroyed since is skipped.
    const std::span<const tick_type> since_of = rows.since_all();
    const std::span<const std::uint32_t> generation_of = rows.generations();
    const auto still_there = [since_of, generation_of](std::uint32_t index, std::uint32_t generation) {
        return index < since_of.size() && since_of[index] != no_tick && generation_of[index] == generation;
    };
    const auto add_entering = [&](const net_entity& id, float weight) {
        if (!still_there(id.index, id.generation)) {
            ++stale;
            return;
        }
        const auto* in_flight = seek_entry(newest_entries, n_at, id.index);
        const bool mandatory = in_flight != nullptr && in_flight->generation == id.generation;
        tick_type since = tick;
        while (w_at < waiting_.size() && waiting_[w_at].index < id.index) {
            ++w_at;
        }
        if (w_at < waiting_.size() && waiting_[w_at].index == id.index) {
            since = waiting_[w_at].since;
        }
        candidate c;
        c.index = id.index;
        c.generation = id.generation;
        c.position = static_cast<std::uint32_t>(b); // it goes before that base entry
        c.what = kind::enter;
        c.mandatory = mandatory;
        // Coded only if admitted (entering entities may wait many ticks under a small budget): the cost
        // until then is the row's full width.
        c.code.bits = encoder.row_bits_estimate(id.index);
        // Entering waits count double: a new entity matters more than a refinement of a known one.
        c.priority = weight * 2.0F * static_cast<float>(tick - since + 1);
        c.cost = c.code.bits + index_cost;
        sc.candidates.push_back(c);
        next_waiting_.push_back({id.index, since});
    };
    while (b < base_entries.size() || r < relevant.size()) {
        // Most of a view: the same entity in the base and in the relevant set, with no value before its last
        // one and unchanged since: its entry stays as it is (copied in blocks below). Stepped over in a
        // loop of its own, without the general case's three-way comparison, over plain pointers and one
        // bound: 19 instructions an entry, where two bounds and `since` reached through the history took 25.
        // An entity destroyed since (its `since` is no_tick) or whose index holds another (a later `since`)
        // stops the loop: the general case below sees it gone.
        {
            const std::size_t steps = std::min(base_entries.size() - b, relevant.size() - r);
            const view_entry* e = base_entries.data() + b;
            const net_entity* id = relevant.data() + r;
            const tick_type* since = since_of.data();
            std::size_t k = 0;
            for (; k < steps; ++k) {
                if (!same_entity(e[k], id[k]) || e[k].previous_gap != 0 || since[e[k].index] > e[k].tick) {
                    break;
                }
                prefetch_ahead(e + k);
            }
            b += k;
            r += k;
        }
        if (b == base_entries.size() && r == relevant.size()) {
            break;
        }
        prefetch_ahead(base_entries.data() + b);
        const auto base_index = b < base_entries.size() ? base_entries[b].index : 0xFFFFFFFFU;
        const auto relevant_index = r < relevant.size() ? relevant[r].index : 0xFFFFFFFFU;
        if (base_index < relevant_index ||
            (base_index == relevant_index && (base_entries[b].generation != relevant[r].generation ||
                                              !still_there(base_index, base_entries[b].generation)))) {
            // Not in the set any more, or gone from the world (or, at an equal index, replaced).
            const auto& e = base_entries[b];
            const bool destroyed = !still_there(e.index, e.generation);
            sc.action[b] = gone;
            sc.edited.push_back(static_cast<std::uint32_t>(b));
            sc.left.push_back(static_cast<std::uint32_t>(b));
            sc.left_reasons.push_back(destroyed ? removal_reason::destroyed
                                                : removal_reason::out_of_relevancy);
            if (base_index == relevant_index) { // a new occupant of the index enters; a stale one is skipped
                add_entering(relevant[r], weights[r]);
                ++r;
            }
            ++b;
            continue;
        }
        if (relevant_index < base_index) {
            add_entering(relevant[r], weights[r]);
            ++r;
            continue;
        }
        // In the base and still relevant.
        const auto& e = base_entries[b];
        // Unchanged since the value before its last one (or since its last one, when it has none before):
        // every reference of it is that value, which it shows already. Nothing to code, its term stays; with
        // no value before, its entry stays as it is (most of a view, copied in blocks below).
        const tick_type previous = e.previous();
        if (since_of[e.index] <= (previous != no_tick ? previous : e.tick)) {
            if (previous != no_tick) {
                sc.action[b] = unchanged;
                sc.edited.push_back(static_cast<std::uint32_t>(b));
            }
        } else {
            sc.edited.push_back(static_cast<std::uint32_t>(b));
            auto code = encoder.update(e.index, e.tick, previous);
            kind what = kind::update;
            if (code.forgotten) {
                code = encoder.row(e.index);
                what = kind::refresh;
            }
            if (code.unchanged) {
                sc.action[b] = settled;
            } else if (!code.exact) {
                const auto* in_flight = seek_entry(newest_entries, n_at, e.index);
                candidate c;
                c.index = e.index;
                c.generation = e.generation;
                c.position = static_cast<std::uint32_t>(b);
                c.what = what;
                // Sent in a view still in flight: sent again, or the client would step back to its base.
                // A refresh is never held back: the server no longer knows the base value to predict from.
                c.mandatory =
                    what == kind::refresh || (in_flight != nullptr && in_flight->generation == e.generation &&
                                              in_flight->sent() > e.sent());
                c.code = code;
                c.priority = weights[r] * static_cast<float>(tick - e.tick);
                c.cost = code.bits + position_cost;
                sc.candidates.push_back(c);
            }
        }
        ++b;
        ++r;
    }

    // Admission: what is in flight, then the rest by priority while the budget lasts.
    std::int64_t budget =
        budget_bits - fixed_cost - static_cast<std::int64_t>(sc.left.size()) * position_cost;
    bool admitted_one = false;
    sc.selected_entering.clear();
    const auto admit = [&](std::uint32_t id, bool take) {
        auto& c = sc.candidates[id];
        if (take) {
            budget -= c.cost;
            report.mandatory += c.mandatory ? 1 : 0;
        }
        switch (c.what) {
        case kind::enter:
            if (take) {
                c.code = encoder.row(c.index);
                sc.selected_entering.push_back(id);
            }
            break;
        case kind::update:
            sc.action[c.position] = take ? changed : deferred;
            break;
        case kind::refresh:
            sc.action[c.position] = take ? refreshed : deferred;
            break;
        }
    };
    std::int64_t wanted = 0;
    for (const auto& c : sc.candidates) {
        wanted += c.cost;
    }
    // When everything fits, everything is taken and the order does not matter: most snapshots under a
    // sensible budget.
    const bool everything_fits = budget > 0 && wanted <= budget;
    sc.optional.clear();
    std::int64_t cheapest = std::numeric_limits<std::int64_t>::max(); // of the optional candidates
    for (std::uint32_t id = 0; id < sc.candidates.size(); ++id) {
        const auto& c = sc.candidates[id];
        if (everything_fits || c.mandatory) {
            admit(id, true);
        } else {
            // Priorities are positive floats, whose bits order as they do: the key orders by priority,
            // then by index (the smaller first); indices are distinct among the candidates.
            const auto key =
                (std::uint64_t{std::bit_cast<std::uint32_t>(c.priority)} << 32) | (0xFFFFFFFFU - c.index);
            sc.optional.push_back({key, id});
            cheapest = std::min<std::int64_t>(cheapest, c.cost);
        }
    }
    if (!everything_fits) {
        // Highest priority first, taken from a heap while the budget lasts, and no further once even the
        // cheapest cannot fit (a client joining has a couple of hundred entities waiting to enter, a
        // tenth of which a snapshot takes: sorting them all was a tenth of the writing).
        const auto lower = [](const ranked& a, const ranked& b2) { return a.key < b2.key; };
        std::make_heap(sc.optional.begin(), sc.optional.end(), lower);
        auto end = sc.optional.end();
        for (; end != sc.optional.begin() && budget > 0 && !(admitted_one && budget < cheapest); --end) {
            std::pop_heap(sc.optional.begin(), end, lower);
            const auto id = (end - 1)->id;
            const bool take = !admitted_one || budget >= static_cast<std::int64_t>(sc.candidates[id].cost);
            admitted_one = admitted_one || take;
            admit(id, take);
        }
        for (auto rest = sc.optional.begin(); rest != end; ++rest) {
            admit(rest->id, false);
        }
    }
    std::sort(sc.selected_entering.begin(), sc.selected_entering.end(),
              [&sc](std::uint32_t a, std::uint32_t b2) {
                  return sc.candidates[a].index < sc.candidates[b2].index;
              });

    // Entities still waiting to enter keep the tick they started waiting at.
    waiting_.clear();
    {
        std::size_t s = 0;
        for (const auto& w : next_waiting_) {
            while (s < sc.selected_entering.size() &&
                   sc.candidates[sc.selected_entering[s]].index < w.index) {
                ++s;
            }
            if (s < sc.selected_entering.size() && sc.candidates[sc.selected_entering[s]].index == w.index) {
                continue;
            }
            waiting_.push_back(w);
        }
    }

    // The new view, and the lists.
    view_frame& frame = frames_.push_back(); // a dropped view's buffers, if the queue kept one here
    // Until it is whole, a view must not be taken for one sent: an exception below gives its slot back.
    struct unfinished_view {
        recycling_queue<view_frame>& frames;
        bool done{false};
        ~unfinished_view() {
            if (!done) {
                frames.pop_back();
            }
        }
    } unfinished{frames_};
    frame.tick = tick;
    frame.tables_version = encoder.tables_version();
    // Written in place through a cursor: a push_back per entry was a tenth of the writing (an out-of-line
    // call and a capacity check per entry, for a size known in advance).
    const auto most = base_entries.size() + sc.selected_entering.size();
    if (frame.entries.size() < most) {
        frame.entries.resize(most);
    }
    view_entry* kept = frame.entries.data();
    // The sum of the kept entries' terms: the base's, less the terms of the entries edited, plus those of
    // what replaces them.
    std::uint64_t checksum = base != nullptr ? base->checksum : 0;
    const auto keep = [&](const view_entry& e) {
        *kept++ = e;
        checksum += e.term;
    };
    sc.entered.clear();
    sc.refreshed.clear();
    sc.deferred.clear();
    sc.changed.clear();
    const auto shown_term = [&](const view_entry& e) {
        const auto* value = rows.at(e.index, e.tick);
        const tick_type previous_tick = e.previous();
        const bool extrapolates = layout.extrapolates(e.tick, previous_tick, tick);
        const auto* previous = extrapolates ? rows.at(e.index, previous_tick) : nullptr;
        layout.reference(value, previous, tick - e.tick, extrapolates ? e.tick - previous_tick : 0,
                         sc.reference.data());
        return layout.checksum_term(rows.weights(), e.index, e.generation, sc.reference.data());
    };
    // Base entries [from, end) that stay as they are (their terms are in the checksum already).
    std::size_t from = 0;
    const auto keep_base_until = [&](std::size_t end) {
        kept = std::copy(base_entries.begin() + static_cast<std::ptrdiff_t>(from),
                         base_entries.begin() + static_cast<std::ptrdiff_t>(end), kept);
        from = end;
    };
    // The entering entities that go before base entry `position` (by index).
    std::size_t s = 0;
    const auto enter_before = [&](std::size_t position) {
        for (; s < sc.selected_entering.size() && sc.candidates[sc.selected_entering[s]].position <= position;
             ++s) {
            const auto& c = sc.candidates[sc.selected_entering[s]];
            keep_base_until(c.position);
            keep(view_entry::make(c.index, c.generation, tick, no_tick, tick, rows.term(c.index)));
            sc.entered.push_back(c.index);
        }
    };
    for (const auto p : sc.edited) {
        enter_before(p);
        keep_base_until(p);
        from = p + 1;
        const auto& e = base_entries[p];
        checksum -= e.term;
        switch (sc.action[p]) {
        case gone:
            break;
        case deferred: {
            // It keeps its last value; the client shows that value's reference at this tick.
            auto held = e;
            held.term = shown_term(e);
            keep(held);
            sc.deferred.push_back(p);
            break;
        }
        case refreshed:
            keep(view_entry::make(e.index, e.generation, tick, no_tick, tick, rows.term(e.index)));
            sc.refreshed.push_back(p);
            break;
        case changed:
            keep(view_entry::make(e.index, e.generation, tick, e.tick, tick, rows.term(e.index)));
            sc.changed.push_back(p);
            break;
        case unchanged: { // its last value stays, and the value before is of no use any more
            auto same = e;
            same.previous_gap = 0;
            keep(same);
            break;
        }
        case settled: {
            auto same = e;
            same.previous_gap = 0;
            same.term = rows.term(e.index);
            keep(same);
            break;
        }
        default: // advance: its value now is its reference, exactly
            keep(e.advanced_to(tick, rows.term(e.index)));
            break;
        }
    }
    enter_before(base_entries.size());
    keep_base_until(base_entries.size());
    // An index may leave (old occupant) and enter (new one) at once: the entry order stays by index
    // because the left entry is not kept.
    frame.entries.resize(static_cast<std::size_t>(kept - frame.entries.data()));
    frame.checksum = checksum;

    // The body (docs/protocol.md, "Interest-managed snapshots").
    auto& body = sc.body;
    body.clear();
    const bool tables_follow = base == nullptr || base->tables_version != frame.tables_version;
    body.put_bit(tables_follow);
    if (tables_follow) {
        encoder.tables().write(layout, body);
    }
    write_ascending(body, sc.left, sc.gaps);
    for (const auto reason : sc.left_reasons) {
        body.put_bit(reason == removal_reason::destroyed);
    }
    write_ascending(body, sc.entered, sc.gaps);
    write_ascending(body, sc.refreshed, sc.gaps);
    write_ascending(body, sc.deferred, sc.gaps);
    write_ascending(body, sc.changed, sc.gaps);
    std::size_t shared = 0;
    const auto copy = [&](const entity_code& code) {
        body.append(encoder.arena(), code.offset, code.bits);
        shared += code.bits;
    };
    for (const auto id : sc.selected_entering) {
        copy(sc.candidates[id].code);
    }
    // Refreshed and changed codes in position order: the candidates of the base are in position order.
    for (const auto& c : sc.candidates) {
        if (c.what == kind::refresh && sc.action[c.position] == refreshed) {
            copy(c.code);
        }
    }
    for (const auto& c : sc.candidates) {
        if (c.what == kind::update && sc.action[c.position] == changed) {
            copy(c.code);
        }
    }
    encoder.count_copied(shared);

    auto& snapshot = *out.mutable_view_snapshot();
    snapshot.Clear();
    snapshot.set_tick(tick);
    const std::uint32_t gap = base == nullptr ? 0 : tick - 1 - base->tick;
    snapshot.set_full_state(base == nullptr);
    snapshot.set_baseline_gap(gap);
    snapshot.set_time_offset_us(time_offset_us);
    auto* bytes = snapshot.mutable_body();
    bytes->clear();
    body.append_to(*bytes);
    const bool has_checksum = base == nullptr || base->checksum != checksum;
    if (has_checksum) {
        snapshot.set_checksum(checksum);
    }
    snapshot.set_check(view_header_check(tick, base == nullptr, has_checksum, gap, time_offset_us,
                                         static_cast<std::uint32_t>(bytes->size()), checksum));

    report.relevant = relevant.size() - stale;
    report.view_size = frame.entries.size();
    report.left = sc.left.size();
    report.entered = sc.entered.size();
    report.changed = sc.changed.size();
    report.refreshed = sc.refreshed.size();
    report.deferred = sc.deferred.size();
    report.waiting = waiting_.size();
    report.body_bits = body.bit_size();
    report.shared_bits = shared;

    unfinished.done = true;
    while (frames_.size() > max_frames_) {
        drop_oldest();
    }
    release_calm_surplus();
    return report;
}

} // namespace ecsnet::proto
