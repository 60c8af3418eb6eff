#include "ecsnet/proto/client_view.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <limits>

#include <ecsnet/ecs/config.hpp>
#include <ecsnet/ecs/prefetch.hpp>

#include "ecsnet/proto/bit_lists.hpp"
#include "ecsnet/proto/checksum.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "little_endian_writer.hpp"

namespace ecsnet::proto {

namespace {

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

// The newest view's entry of an entity, if any, for the in-flight check of the few entities a write codes
// or enters (a few per client and tick, among a view of a couple of hundred). The newest view holds about
// the base's entries, shifted by what entered and left since: the entity at base position p is near
// p + drift, drift being that shift where the last lookup ended, and a walk from there takes an entry or
// two. A walk from the view's start instead read the whole newest view, cold, for every client and tick
// (4% of the replication's instructions, and as many bytes as the copy of the base).
class newest_lookup {
public:
    explicit newest_lookup(std::span<const view_entry> entries) noexcept
        : entries_{entries} {}

    const view_entry* find(std::size_t base_position, std::uint32_t index) noexcept {
        const view_entry* data = entries_.data();
        const auto size = static_cast<std::ptrdiff_t>(entries_.size());
        if (size == 0) {
            return nullptr;
        }
        auto i = std::clamp<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(base_position) + drift_, 0, size - 1);
        if (data[i].index < index) {
            do {
                ++i;
            } while (i < size && data[i].index < index);
        } else {
            while (i > 0 && data[i - 1].index >= index) {
                --i;
            }
        }
        drift_ = i - static_cast<std::ptrdiff_t>(base_position);
        return i < size && data[i].index == index ? data + i : nullptr;
    }

private:
    std::span<const view_entry> entries_;
    std::ptrdiff_t drift_{0}; // newest position - base position where the last lookup ended
};

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
    bool taken{}; // admitted: sent (an update changed, a refresh refreshed, an entry entered), else deferred
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
    std::vector<ranked> optional; // candidates not in flight, admitted by priority
    // The base's entries as they became, by base position, when some left or entered: the merge writes
    // them into the new view's own array at their base positions, which is the view itself when none did
    // (four writes in ten in the arena, whose NPCs despawn and spawn), and is otherwise copied here from the
    // first that moves and placed back around what left and what entered. (A view was once made from the base
    // in a second pass over a list of the entries edited, copying the short runs between them: 6% more of the
    // replication's instructions; then through this buffer every tick, a copy of the whole view each time.)
    std::vector<view_entry> next;
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

// Admission of a view's candidates: those in flight (mandatory) whatever the budget, then the others by
// priority while `budget` bits last (the highest even alone over it, if there is any budget: nothing
// starves). Marks each taken or not, codes the entering ones taken and lists them by index in
// sc.selected_entering. Returns how many mandatory ones were taken.
std::size_t admit_candidates(write_scratch& sc, view_encoder& encoder, std::int64_t budget) {
    bool admitted_one = false;
    std::size_t mandatory = 0;
    sc.selected_entering.clear();
    const auto admit = [&](std::uint32_t id, bool take) {
        auto& c = sc.candidates[id];
        c.taken = take;
        if (take) {
            budget -= c.cost;
            mandatory += c.mandatory ? 1 : 0;
            if (c.what == kind::enter) {
                c.code = encoder.row(c.index);
                sc.selected_entering.push_back(id);
            }
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
        const auto lower = [](const ranked& a, const ranked& b) { return a.key < b.key; };
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
    std::sort(
        sc.selected_entering.begin(), sc.selected_entering.end(),
        [&sc](std::uint32_t a, std::uint32_t b) { return sc.candidates[a].index < sc.candidates[b].index; });
    return mandatory;
}

// The body of a view snapshot (docs/protocol.md, "Interest-managed snapshots") into sc.body: the tables if
// they follow, the lists, then the codes of what entered, was refreshed and changed. Returns the bits
// copied from the encoder's shared codes.
std::size_t write_view_body(write_scratch& sc, const view_encoder& encoder, const row_layout& layout,
                            bool tables_follow) {
    auto& body = sc.body;
    body.clear();
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
        if (c.what == kind::refresh && c.taken) {
            copy(c.code);
        }
    }
    for (const auto& c : sc.candidates) {
        if (c.what == kind::update && c.taken) {
            copy(c.code);
        }
    }
    return shared;
}

// The new view: the base's entries as the merge left them in frame.entries (`base_size` of them, by base
// position) placed again less those that left, with those that entered in index order; adds the terms of
// those that entered to `checksum`, and lists their indices in sc.entered. The entries before the first
// that left or the first that entered stay where they are (all of them when none did): only the rest goes
// through sc.next.
void place_around_changes(write_scratch& sc, view_frame& frame, std::size_t base_size, tick_type tick,
                          const row_history& rows, std::uint64_t& checksum) {
    if (sc.left.empty() && sc.selected_entering.empty()) {
        frame.entries.resize(base_size); // the merge's writes are the view (four writes in ten in the arena)
        return;
    }
    std::size_t first = base_size; // the first base position that moves
    if (!sc.left.empty()) {
        first = sc.left.front();
    }
    if (!sc.selected_entering.empty()) { // by index, hence by position
        first = std::min<std::size_t>(first, sc.candidates[sc.selected_entering.front()].position);
    }
    sc.next.assign(frame.entries.begin() + static_cast<std::ptrdiff_t>(first),
                   frame.entries.begin() + static_cast<std::ptrdiff_t>(base_size));
    // Written in place through a cursor: a push_back per entry was a tenth of the writing (an out-of-line
    // call and a capacity check per entry, for a size known in advance).
    const auto most = base_size + sc.selected_entering.size();
    if (frame.entries.size() < most) {
        frame.entries.resize(most);
    }
    view_entry* kept = frame.entries.data() + first;
    std::size_t from = first; // base positions [from, ...) not placed yet; sc.next holds [first, base_size)
    const auto keep_until = [&](std::size_t end) {
        kept = std::copy(sc.next.data() + (from - first), sc.next.data() + (end - first), kept);
        from = end;
    };
    // The entering entities that go before base entry `position` (by index).
    std::size_t s = 0;
    const auto enter_before = [&](std::size_t position) {
        for (; s < sc.selected_entering.size() && sc.candidates[sc.selected_entering[s]].position <= position;
             ++s) {
            const auto& c = sc.candidates[sc.selected_entering[s]];
            keep_until(c.position);
            *kept = view_entry::make(c.index, c.generation, tick, no_tick, tick, rows.term(c.index));
            checksum += kept->term;
            ++kept;
            sc.entered.push_back(c.index);
        }
    };
    for (const auto p : sc.left) {
        enter_before(p);
        keep_until(p);
        from = p + 1;
    }
    enter_before(base_size);
    keep_until(base_size);
    // An index may leave (old occupant) and enter (new one) at once: the entry order stays by index
    // because the left entry is not kept.
    frame.entries.resize(static_cast<std::size_t>(kept - frame.entries.data()));
}

} // namespace

std::uint16_t view_header_check(tick_type tick, bool full_state, bool has_checksum,
                                std::uint32_t baseline_gap, std::int64_t time_offset_us,
                                std::uint32_t body_size, std::uint64_t checksum) noexcept {
    // 25 bytes (docs/protocol.md, 12.2): the checksum's low four only (it is compared whole with the
    // mirror's anyway).
    std::array<std::uint8_t, 4 + 1 + 4 + 8 + 4 + 4> bytes{};
    little_endian_writer out{bytes.data()};
    out.put<4>(tick);
    out.put<1>((full_state ? 1U : 0U) | (has_checksum ? 2U : 0U));
    out.put<4>(baseline_gap);
    out.put<8>(static_cast<std::uint64_t>(time_offset_us));
    out.put<4>(body_size);
    out.put<4>(checksum);
    return crc16(bytes.data(), bytes.size());
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
    if (const view_frame* base = this->base(); base != nullptr) {
        prefetch_view(base->entries);
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
    // Room for the new view is made before the base and the newest are looked at: making it may move them.
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
    if (base != nullptr) {
        report.base = base->tick;
    }

    // The new view, written by base position as the merge goes (see write_scratch::next). Until it is whole,
    // it must not be taken for one sent: an exception below gives its slot back.
    view_frame& frame = frames_.push_back(); // a dropped view's buffers: the slot was reserved above
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
    if (frame.entries.size() < base_entries.size()) {
        frame.entries.resize(base_entries.size());
    }
    view_entry* const next = frame.entries.data();

    sc.candidates.clear();
    sc.reference.resize(layout.width());
    // The sum of the new view's terms: the base's, less the terms of the entries that change or leave,
    // plus those of what replaces them and of what enters.
    std::uint64_t checksum = base != nullptr ? base->checksum : 0;
    sc.left.clear();
    sc.left_reasons.clear();
    next_waiting_.clear();

    // One pass over the base and the relevant set, both by index; the newest view (what is in flight) is
    // looked at only for the entities coded or entering.
    std::size_t b = 0;
    std::size_t r = 0;
    newest_lookup in_newest{newest_entries};
    std::size_t w_at = 0;
    std::size_t stale = 0; // members of the set whose occupant is gone
    // Whether a member of the set is still the entity its index holds: the set may be a few ticks old (a
    // server recomputes it every few ticks), and an entity destroyed since is skipped.
    const std::span<const tick_type> since_of = rows.since_all();
    const std::span<const std::uint32_t> generation_of = rows.generations();
    const auto still_there = [since_of, generation_of](std::uint32_t index, std::uint32_t generation) {
        return index < since_of.size() && since_of[index] != no_tick && generation_of[index] == generation;
    };
    // An entry advanced to the tick: its value now is its reference, exactly.
    const auto advance = [&](const view_entry& e, view_entry& into) {
        into = e.advanced_to(tick, rows.term(e.index));
        checksum += into.term - e.term;
    };
    const auto add_entering = [&](const net_entity& id, float weight) {
        if (!still_there(id.index, id.generation)) {
            ++stale;
            return;
        }
        const auto* in_flight = in_newest.find(b, id.index);
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
        // Most of a view: the same entity in the base and in the relevant set, either unchanged since its
        // last value (its entry stays as it is), or since the value before it (its entry stays, without the
        // value before), or moving on the line the client extrapolates from its two values (its entry
        // advances to the tick, with nothing to send). Stepped over in a loop of its own, over two plain
        // pointers and one bound, without the general case's three-way comparison and its look at the
        // encoder (taking the moving entities here too made the replication 5% fewer instructions,
        // bench/RESULTS.md, twenty-eighth pass).
        // An entity destroyed since (its `since` is no_tick) or whose index holds another (a later `since`,
        // and a line that starts then) stops the loop: the general case below sees it gone.
        {
            const view_entry* const first = base_entries.data() + b;
            const view_entry* const last = first + std::min(base_entries.size() - b, relevant.size() - r);
            const net_entity* id = relevant.data() + r;
            const tick_type* since = since_of.data();
            const view_entry* e = first;
            view_entry* kept = next + b;
            std::uint64_t advanced = 0;
            for (; e != last && same_entity(*e, *id); ++e, ++id, ++kept) {
                prefetch_ahead(e);
                const tick_type changed = since[e->index];
                if (e->previous_gap == 0) {
                    if (changed > e->tick) {
                        break;
                    }
                    *kept = *e;
                    continue;
                }
                const tick_type previous = e->tick - e->previous_gap;
                if (changed <= previous) {
                    *kept = *e;
                    kept->previous_gap = 0;
                    continue;
                }
                if (!encoder.on_line(e->index, e->tick, previous)) {
                    break;
                }
                advance(*e, *kept);
                ++advanced;
            }
            encoder.count_on_line(advanced);
            const auto k = static_cast<std::size_t>(e - first);
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
            checksum -= e.term;
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
        // In the base, still relevant, and changed since the value before its last one (the walk above
        // took it otherwise: unchanged, or on its line).
        const auto& e = base_entries[b];
        ECSNET_ASSERT(since_of[e.index] > (e.previous() != no_tick ? e.previous() : e.tick),
                      "an entry unchanged since its value before is the walk's");
        auto code = encoder.update(e.index, e.tick, e.previous());
        kind what = kind::update;
        if (code.forgotten) {
            code = encoder.row(e.index);
            what = kind::refresh;
        }
        if (code.unchanged) {
            // Unchanged, found by coding: its last value stays, but what it showed may have been a
            // prediction (a deferred entity that stopped extrapolating), so its term is the current value's.
            next[b] = e;
            next[b].previous_gap = 0;
            next[b].term = rows.term(e.index);
            checksum += next[b].term - e.term;
        } else if (code.exact) {
            advance(e, next[b]);
        } else {
            // Changed: it becomes what admission below makes of it (the entry as it was till then).
            next[b] = e;
            const auto* in_flight = in_newest.find(b, e.index);
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
        ++b;
        ++r;
    }

    // Admission: what is in flight, then the rest by priority while the budget lasts.
    report.mandatory = admit_candidates(
        sc, encoder, budget_bits - fixed_cost - static_cast<std::int64_t>(sc.left.size()) * position_cost);

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

    // What admission made of the changed entities, in base order (the lists are ascending).
    sc.refreshed.clear();
    sc.deferred.clear();
    sc.changed.clear();
    for (const auto& c : sc.candidates) {
        if (c.what == kind::enter) {
            continue;
        }
        const auto& e = base_entries[c.position];
        view_entry& now = next[c.position];
        if (!c.taken) {
            // It keeps its last value; the client shows that value's reference at this tick.
            const auto* value = rows.at(e.index, e.tick);
            const tick_type previous_tick = e.previous();
            const bool extrapolates = layout.extrapolates(e.tick, previous_tick, tick);
            const auto* previous = extrapolates ? rows.at(e.index, previous_tick) : nullptr;
            layout.reference(value, previous, tick - e.tick, extrapolates ? e.tick - previous_tick : 0,
                             sc.reference.data());
            now.term = layout.checksum_term(e.index, e.generation, sc.reference.data());
            sc.deferred.push_back(c.position);
        } else if (c.what == kind::refresh) {
            now = view_entry::make(e.index, e.generation, tick, no_tick, tick, rows.term(e.index));
            sc.refreshed.push_back(c.position);
        } else {
            now = view_entry::make(e.index, e.generation, tick, e.tick, tick, rows.term(e.index));
            sc.changed.push_back(c.position);
        }
        checksum += now.term - e.term;
    }

    // The new view: the base's entries as they became, less those that left, with those that entered.
    sc.entered.clear();
    place_around_changes(sc, frame, base_entries.size(), tick, rows, checksum);
    frame.checksum = checksum;

    // The body (docs/protocol.md, "Interest-managed snapshots").
    const bool tables_follow = base == nullptr || base->tables_version != frame.tables_version;
    const std::size_t shared = write_view_body(sc, encoder, layout, tables_follow);
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
    sc.body.append_to(*bytes);
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
    report.body_bits = sc.body.bit_size();
    report.shared_bits = shared;

    unfinished.done = true;
    while (frames_.size() > max_frames_) {
        drop_oldest();
    }
    release_calm_surplus();
    return report;
}

} // namespace ecsnet::proto
