#pragma once

// The client side of an interest-managed connection: a registry mirroring the client's view of the server's
// world, fed with ViewSnapshots (docs/protocol.md, "Interest-managed snapshots"). The counterpart of
// mirror.hpp for servers that manage interest: the same registry contract (one local entity per server
// entity, a net_id component emplaced after the replicated components, on_construct / on_update /
// on_destroy signals), plus the reason an entity left: removal_reason_of(local) inside on_destroy<net_id>
// tells a destroyed entity from one that is no longer relevant to this client.
//
// Each applied view is kept as a frame: per entity, its last received value and tick, the value and tick
// before (for extrapolation), and what the registry shows (the reference of the last value at the frame's
// tick). Rows are shared between frames (row_pool.hpp): an entity a view leaves as it was costs its frame an
// entry, not a copy of its rows. Applying is atomic: the header check, the base view, the body (lists,
// tables, every entity's bits) and the checksum of the whole new view are checked before the registry
// changes. Frames older than the base of the last applied snapshot are dropped (a server only moves a
// client's base forward). Memory: an entry per entity per kept frame, and a row per value received still
// referred to. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checksum.hpp"
#include "ecsnet/ecs/registry.hpp"
#include "ecsnet/v1/envelope.pb.h"
#include "entity_row.hpp"
#include "replica.hpp"
#include "result.hpp"
#include "row_pool.hpp"
#include "schema.hpp"
#include "view_frame.hpp"
#include "view_tables.hpp"

namespace ecsnet::proto {

struct view_mirror_options {
    /// The most views kept as bases.
    std::size_t depth{32};
    std::uint32_t tick_rate{30};
    /// The most entities a view may hold.
    std::size_t max_entities{std::size_t{1} << 20};
};

class view_mirror final : public replica {
public:
    /// A view mirror with a registry of its own.
    explicit view_mirror(const schema& schema, view_mirror_options options = {});
    /// A view mirror writing into `registry`, which must outlive it (and hold no other net_id entities).
    view_mirror(const schema& schema, ecsnet::registry& registry, view_mirror_options options = {});

    [[nodiscard]] ecsnet::registry& registry() noexcept override { return registry_; }
    [[nodiscard]] const ecsnet::registry& registry() const noexcept override { return registry_; }
    [[nodiscard]] const schema& replicated_schema() const noexcept override { return *schema_; }

    void welcome(const v1::ServerWelcome& welcome) override;

    /// Applies a view snapshot, atomically.
    result<applied_snapshot> apply(const v1::ViewSnapshot& snapshot);
    /// Decodes an Envelope holding a ViewSnapshot (canonical bytes only) and applies it.
    result<applied_snapshot> apply_envelope(std::string_view envelope_bytes) override;

    [[nodiscard]] std::optional<tick_type> newest_tick() const noexcept override;
    /// The newest view as columns (built on first use after each apply).
    [[nodiscard]] const replicated_state* newest_state() const override;
    [[nodiscard]] bool full_state_needed() const noexcept override { return full_state_needed_; }
    [[nodiscard]] v1::Ack make_ack() const override;

    [[nodiscard]] entity find(net_entity id) const noexcept override;
    [[nodiscard]] entity find_index(std::uint32_t index) const noexcept;
    /// Inside on_destroy<net_id> (or any on_destroy of a replicated component) fired by apply(): why the
    /// entity leaves. removal_reason::none otherwise.
    [[nodiscard]] removal_reason removal_reason_of(entity local) const noexcept override;

    /// Entities in the newest view.
    [[nodiscard]] std::size_t size() const noexcept;
    /// Rows held for the views kept (shared between views that hold the same), for tests and tools.
    [[nodiscard]] std::size_t rows_in_use() const noexcept { return pool_.used(); }
    /// The newest view's entities: index, generation, and what the registry shows (rows of
    /// row_layout()), for tests and tools.
    [[nodiscard]] std::vector<std::pair<net_entity, std::vector<std::uint32_t>>> contents() const;
    [[nodiscard]] const row_layout& layout() const noexcept { return layout_; }
    /// The newest view as a replicated state (columns), e.g. for interpolation.
    void to_state(replicated_state& out) const;

    /// Recomputes the newest view's checksum from what the registry shows (proves the mirror exact).
    [[nodiscard]] bool verify() const override;
    /// Destroys every mirrored entity and forgets every view.
    void clear() override;

private:
    // `external` or, when null, own_registry_ (bound after it is constructed: it is declared first).
    view_mirror(const schema& schema, ecsnet::registry* external, view_mirror_options options);

    // An entity of a view: its rows are slots of the pool, shared with the other views that hold the same.
    struct entry {
        std::uint32_t index{};
        std::uint32_t generation{};
        tick_type tick{};
        tick_type previous{no_tick};
        std::uint32_t values{row_pool::none}; // the last value received
        std::uint32_t before{row_pool::none}; // the value before it (when previous != no_tick)
        std::uint32_t shown{row_pool::none};  // what the registry shows, when not `values` (a prediction)
        // The registry's entity, in the newest view (update_registry sets it; older views may hold stale
        // ones): the merge reads it with the entry instead of a lookup by server index in cold memory.
        entity local{null_entity};

        [[nodiscard]] std::uint32_t shown_slot() const noexcept {
            return shown != row_pool::none ? shown : values;
        }
    };
    struct frame {
        tick_type tick{};
        std::uint64_t checksum{};
        std::uint64_t server_time_us{};
        view_tables tables;
        std::vector<entry> entries;
    };

    result<applied_snapshot> refuse(errc code, std::string message, bool need_full);
    const frame* find_frame(tick_type tick) const noexcept;
    // An entry of the view being made that the registry must write (before_slot: what it showed) or create
    // (before_slot none), at its place in the view, in index order.
    struct registry_edit {
        std::uint32_t position{};
        std::uint32_t before_slot{};
    };
    /// Writes what differs from `from` (the newest view, or null) to `to` into the registry: `edits`, when
    /// `to` was made from `from` (apply listed what differs); otherwise a merge of the two views.
    void update_registry(const frame* from, frame& to, std::optional<std::span<const registry_edit>> edits,
                         applied_snapshot& report);
    /// Writes into the registry the components that differ from `before` (null: none); false when none does
    /// (the rows are equal: absent components' fields are 0 in every row).
    bool write_row(entity local, const std::uint32_t* before, const std::uint32_t* after);
    std::uint64_t checksum_of(const frame& f) const;
    /// Lets go of a view's rows (its entries are left as they were: use the frame as a buffer only).
    void release(frame& f);

    const schema* schema_;
    view_mirror_options options_;
    row_layout layout_;
    checksum_weights weights_;
    ecsnet::registry own_registry_;
    ecsnet::registry& registry_;
    row_pool pool_;
    std::deque<frame> frames_;         // oldest first
    mutable replicated_state columns_; // newest_state()
    mutable bool columns_valid_{false};
    frame scratch_;
    bool full_state_needed_{false};

    std::vector<entity> locals_; // by server index, for find()
    std::vector<std::uint32_t> local_generations_;
    std::vector<removal_reason> left_reason_; // by server index, during an apply
    entity removing_{null_entity};
    removal_reason removing_reason_{removal_reason::none};

    // scratch
    std::vector<std::uint32_t> left_;
    std::vector<std::uint32_t> entered_;
    std::vector<std::uint32_t> refreshed_;
    std::vector<std::uint32_t> deferred_;
    std::vector<std::uint32_t> changed_;
    std::vector<std::uint8_t> action_;
    std::vector<std::uint8_t> destroyed_;
    std::vector<std::uint32_t> rows_;        // entered, refreshed and changed rows read (scratch)
    std::vector<std::uint32_t> generations_; // of the entered and refreshed rows
    std::vector<std::uint32_t> reference_;
    std::vector<registry_edit> edits_;
    v1::Envelope envelope_;
    std::string canonical_;
};

} // namespace ecsnet::proto
