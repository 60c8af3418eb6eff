#pragma once

// Deferred structural changes: create, destroy, emplace, remove, replace... recorded now, applied later to a
// registry by one thread, in a deterministic order.
//
// The registry is not thread-safe for structural changes, so systems running in parallel record them here
// (one buffer per worker thread, no sharing, no lock) and the scheduler applies every buffer at the end of
// the phase. Commands are grouped in segments, each tagged with a 64-bit key (the scheduler uses the
// system's rank in its canonical order and the chunk of its iteration); apply_in_order() applies segments by
// ascending key, and each segment's commands in the order they were recorded. So the result depends on what
// was recorded, never on which thread recorded it or when.
//
// Applying never trusts what the buffer says: a command naming an entity that is no longer valid by the
// time it applies (destroyed by an earlier command, say), an emplace of a component the entity already has,
// or a replace/patch of one it does not have, is dropped and counted in command_stats::dropped, instead of
// breaking a registry precondition. Registry signals (on_construct, on_update, on_destroy) fire during
// apply, on the applying thread.
//
// create() cannot know the entity's identifier before the registry makes it: it returns a deferred_entity,
// which emplace() accepts; it means "the entity that create() will have made" and belongs to this buffer
// (another buffer refuses it at once, and a buffer's deferred entities end with its next apply or clear).
//
// Storage: commands and their arguments live in blocks reused from one apply to the next, so a buffer that
// has reached its working size records without allocating. Complexity: recording O(1) amortised; applying
// O(commands + segments log segments) plus the registry's own costs.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "config.hpp"
#include "entity.hpp"

namespace ecsnet {

/// An entity that a command buffer's create() will make when the buffer is applied. Only that buffer
/// accepts it (another one throws std::invalid_argument when asked to record with it).
struct deferred_entity {
    std::uint32_t index;
    const void* buffer;
};

/// What applying buffers did.
struct command_stats {
    std::size_t applied{}; ///< commands that took effect
    std::size_t dropped{}; ///< commands refused: invalid entity, component already present or missing
    command_stats& operator+=(const command_stats& other) noexcept {
        applied += other.applied;
        dropped += other.dropped;
        return *this;
    }
};

template<typename Registry>
class basic_command_buffer {
public:
    using registry_type = Registry;
    using key_type = std::uint64_t;

    basic_command_buffer() = default;
    basic_command_buffer(const basic_command_buffer&) = delete;
    basic_command_buffer& operator=(const basic_command_buffer&) = delete;
    basic_command_buffer(basic_command_buffer&& other) noexcept
        : blocks_{std::move(other.blocks_)}
        , block_{std::exchange(other.block_, 0)}
        , offset_{std::exchange(other.offset_, 0)}
        , records_{std::move(other.records_)}
        , segments_{std::move(other.segments_)}
        , created_{std::move(other.created_)}
        , key_{other.key_} {}
    basic_command_buffer& operator=(basic_command_buffer&&) = delete;
    ~basic_command_buffer() { clear(); }

    // ---- recording ----------------------------------------------------------------------------------

    /// Commands recorded from now on belong to the segment `key` (see apply_in_order).
    void begin_segment(key_type key) noexcept { key_ = key; }
    [[nodiscard]] key_type segment_key() const noexcept { return key_; }

    /// Creates an entity when applied.
    [[nodiscard]] deferred_entity create() {
        const auto index = static_cast<std::uint32_t>(created_.size());
        created_.push_back(null_entity);
        struct payload {
            std::uint32_t index;
        };
        record<payload>(
            [](payload& p, Registry& registry, basic_command_buffer& self, command_stats& stats) {
                self.created_[p.index] = registry.create();
                ++stats.applied;
            },
            payload{index});
        return deferred_entity{index, this};
    }

    /// Destroys `e` when applied (dropped if it is no longer valid then).
    void destroy(entity e) {
        record<entity>(
            [](entity& target, Registry& registry, basic_command_buffer&, command_stats& stats) {
                if (!registry.valid(target)) {
                    ++stats.dropped;
                    return;
                }
                registry.destroy(target);
                ++stats.applied;
            },
            e);
    }

    /// Gives `e` a Type built now from args (dropped if `e` is invalid or has a Type by then).
    template<typename Type, typename... Args>
    void emplace(entity e, Args&&... args) {
        record_component<Type>(
            [](entity target, auto& value, Registry& registry, command_stats& stats) {
                if (!registry.valid(target) || registry.template all_of<Type>(target)) {
                    ++stats.dropped;
                    return;
                }
                emplace_into<Type>(registry, target, value);
                ++stats.applied;
            },
            e, std::forward<Args>(args)...);
    }

    /// Gives the entity that create() returned `e` for a Type built now from args.
    template<typename Type, typename... Args>
    void emplace(deferred_entity e, Args&&... args) {
        if (e.buffer != this || e.index >= created_.size()) {
            // In a parallel phase each thread has its own buffer: a deferred entity cannot change threads.
            throw std::invalid_argument("deferred_entity used with a command buffer that did not create it");
        }
        struct payload {
            std::uint32_t index;
            stored_t<Type> value;
        };
        record<payload>(
            [](payload& p, Registry& registry, basic_command_buffer& self, command_stats& stats) {
                const auto target = p.index < self.created_.size() ? self.created_[p.index] : null_entity;
                if (!registry.valid(target) || registry.template all_of<Type>(target)) {
                    ++stats.dropped;
                    return;
                }
                emplace_into<Type>(registry, target, p.value);
                ++stats.applied;
            },
            payload{e.index, make_value<Type>(std::forward<Args>(args)...)});
    }

    /// Emplaces or replaces (firing on_update then) a Type built now from args; dropped if `e` is invalid.
    template<typename Type, typename... Args>
    void emplace_or_replace(entity e, Args&&... args) {
        record_component<Type>(
            [](entity target, auto& value, Registry& registry, command_stats& stats) {
                if (!registry.valid(target)) {
                    ++stats.dropped;
                    return;
                }
                if (registry.template all_of<Type>(target)) {
                    assign<Type>(registry, target, value);
                } else {
                    emplace_into<Type>(registry, target, value);
                }
                ++stats.applied;
            },
            e, std::forward<Args>(args)...);
    }

    /// Replaces the Type of `e` with one built now from args, firing on_update (dropped if it has none).
    template<typename Type, typename... Args>
    void replace(entity e, Args&&... args) {
        static_assert(!std::is_empty_v<Type>, "a tag has no value to replace");
        record_component<Type>(
            [](entity target, auto& value, Registry& registry, command_stats& stats) {
                if (!registry.valid(target) || !registry.template all_of<Type>(target)) {
                    ++stats.dropped;
                    return;
                }
                assign<Type>(registry, target, value);
                ++stats.applied;
            },
            e, std::forward<Args>(args)...);
    }

    /// Calls func(Type&) on the Type of `e` when applied, through registry.patch (so on_update fires).
    template<typename Type, typename Func>
    void patch(entity e, Func&& func) {
        static_assert(!std::is_empty_v<Type>, "a tag has no value to patch");
        using func_type = std::decay_t<Func>;
        static_assert(std::is_invocable_v<func_type&, Type&>, "patch takes func(Type&)");
        struct payload {
            entity target;
            func_type func;
        };
        record<payload>(
            [](payload& p, Registry& registry, basic_command_buffer&, command_stats& stats) {
                if (!registry.valid(p.target) || !registry.template all_of<Type>(p.target)) {
                    ++stats.dropped;
                    return;
                }
                registry.template patch<Type>(p.target, p.func);
                ++stats.applied;
            },
            payload{e, std::forward<Func>(func)});
    }

    /// Removes the given components of `e` where present (dropped if `e` is invalid).
    template<typename... Type>
    void remove(entity e) {
        static_assert(sizeof...(Type) > 0, "remove<Types...>(e) needs at least one type");
        record<entity>(
            [](entity& target, Registry& registry, basic_command_buffer&, command_stats& stats) {
                if (!registry.valid(target)) {
                    ++stats.dropped;
                    return;
                }
                static_cast<void>(registry.template remove<Type...>(target));
                ++stats.applied;
            },
            e);
    }

    /// Calls func(registry) when applied: for what the other commands do not cover. It runs on the applying
    /// thread with the registry to itself, and must not assume the entities it captured are still valid.
    template<typename Func>
    void enqueue(Func&& func) {
        using func_type = std::decay_t<Func>;
        static_assert(std::is_invocable_v<func_type&, Registry&>, "enqueue takes func(registry&)");
        record<func_type>(
            [](func_type& f, Registry& registry, basic_command_buffer&, command_stats& stats) {
                f(registry);
                ++stats.applied;
            },
            std::forward<Func>(func));
    }

    // ---- state and application ----------------------------------------------------------------------

    /// Commands recorded and not applied yet.
    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }

    /// Applies this buffer's commands (segments by ascending key) to `registry`, then empties the buffer.
    command_stats apply(Registry& registry) {
        basic_command_buffer* self = this;
        return apply_in_order(registry, std::span<basic_command_buffer* const>{&self, 1});
    }

    /// Applies several buffers as one: every segment of every buffer, by ascending key (ties: by buffer
    /// order in `buffers`), each segment's commands in recording order; then empties them all. If a command
    /// throws (a registry listener, a full fixed-capacity registry...), the exception propagates, the
    /// commands not applied yet are discarded, and `failed_key` (if given) receives the segment's key.
    static command_stats apply_in_order(Registry& registry, std::span<basic_command_buffer* const> buffers,
                                        key_type* failed_key = nullptr) {
        struct ordered_segment {
            key_type key;
            std::size_t buffer;
            std::size_t segment;
        };
        std::vector<ordered_segment> order;
        for (std::size_t b = 0; b < buffers.size(); ++b) {
            for (std::size_t s = 0; s < buffers[b]->segments_.size(); ++s) {
                order.push_back({buffers[b]->segments_[s].key, b, s});
            }
        }
        std::stable_sort(order.begin(), order.end(),
                         [](const ordered_segment& l, const ordered_segment& r) { return l.key < r.key; });

        command_stats stats;
        try {
            for (const auto& at : order) {
                if (failed_key != nullptr) {
                    *failed_key = at.key;
                }
                auto& buffer = *buffers[at.buffer];
                const auto& segment = buffer.segments_[at.segment];
                for (auto r = segment.first; r != segment.last; ++r) {
                    auto& rec = buffer.records_[r];
                    rec.apply(rec.payload, registry, buffer, stats);
                    rec.destroy(rec.payload);
                    rec.destroy = nullptr;
                }
            }
        } catch (...) {
            for (auto* buffer : buffers) {
                buffer->clear();
            }
            throw;
        }
        for (auto* buffer : buffers) {
            buffer->clear();
        }
        return stats;
    }

    /// Discards every command without applying it. The memory is kept for the next recordings.
    void clear() noexcept {
        for (auto& rec : records_) {
            if (rec.destroy != nullptr) {
                rec.destroy(rec.payload);
            }
        }
        records_.clear();
        segments_.clear();
        created_.clear();
        block_ = 0;
        offset_ = 0;
    }

private:
    // A tag is stored as nothing; any other component as a value moved into the registry when applied.
    struct no_value {};
    template<typename Type>
    using stored_t = std::conditional_t<std::is_empty_v<Type>, no_value, Type>;

    struct record_entry {
        void (*apply)(void* payload, Registry&, basic_command_buffer&, command_stats&);
        void (*destroy)(void* payload) noexcept;
        void* payload;
    };
    struct segment {
        key_type key;
        std::size_t first;
        std::size_t last;
    };
    struct block {
        std::unique_ptr<std::byte[]> bytes;
        std::size_t size;
    };
    static constexpr std::size_t block_size = 16 * 1024;

    template<typename Type, typename... Args>
    static stored_t<Type> make_value(Args&&... args) {
        if constexpr (std::is_empty_v<Type>) {
            static_cast<void>(Type{std::forward<Args>(args)...});
            return no_value{};
        } else if constexpr (std::is_aggregate_v<Type>) {
            return Type{std::forward<Args>(args)...};
        } else {
            return Type(std::forward<Args>(args)...);
        }
    }

    template<typename Type>
    static void emplace_into(Registry& registry, entity e, stored_t<Type>& value) {
        if constexpr (std::is_empty_v<Type>) {
            registry.template emplace<Type>(e);
        } else {
            registry.template emplace<Type>(e, std::move(value));
        }
    }

    template<typename Type>
    static void assign(Registry& registry, entity e, stored_t<Type>& value) {
        if constexpr (!std::is_empty_v<Type>) {
            registry.template patch<Type>(e, [&value](Type& component) { component = std::move(value); });
        } else {
            static_cast<void>(registry);
            static_cast<void>(e);
            static_cast<void>(value);
        }
    }

    // A command on an existing entity with a component value: `op(entity, value, registry, stats)`.
    template<typename Type, typename Op, typename... Args>
    void record_component(Op, entity e, Args&&... args) {
        static_assert(std::is_empty_v<Op>, "operations are captureless");
        struct payload {
            entity target;
            stored_t<Type> value;
        };
        record<payload>([](payload& p, Registry& registry, basic_command_buffer&,
                           command_stats& stats) { Op{}(p.target, p.value, registry, stats); },
                        payload{e, make_value<Type>(std::forward<Args>(args)...)});
    }

    template<typename Payload, typename Apply, typename... Args>
    void record(Apply, Args&&... args) {
        static_assert(std::is_empty_v<Apply>, "operations are captureless");
        void* memory = allocate(sizeof(Payload), alignof(Payload));
        auto* payload = ::new (memory) Payload{std::forward<Args>(args)...};
        try {
            if (segments_.empty() || segments_.back().key != key_) {
                segments_.push_back({key_, records_.size(), records_.size()});
            }
            records_.push_back(record_entry{
                [](void* p, Registry& registry, basic_command_buffer& self, command_stats& stats) {
                    Apply{}(*static_cast<Payload*>(p), registry, self, stats);
                },
                [](void* p) noexcept { static_cast<Payload*>(p)->~Payload(); }, payload});
        } catch (...) {
            payload->~Payload();
            throw;
        }
        ++segments_.back().last;
    }

    void* allocate(std::size_t size, std::size_t align) {
        for (;;) {
            if (block_ < blocks_.size()) {
                auto& current = blocks_[block_];
                auto* base = current.bytes.get();
                const auto start =
                    (reinterpret_cast<std::uintptr_t>(base) + offset_ + align - 1) & ~(align - 1);
                const auto used = start - reinterpret_cast<std::uintptr_t>(base);
                if (used + size <= current.size) {
                    offset_ = used + size;
                    return base + used;
                }
                ++block_;
                offset_ = 0;
                continue;
            }
            const auto bytes = std::max(block_size, size + align);
            blocks_.push_back(block{std::make_unique<std::byte[]>(bytes), bytes});
            // loop again: the new block is blocks_[block_]
        }
    }

    std::vector<block> blocks_;
    std::size_t block_{};
    std::size_t offset_{};
    std::vector<record_entry> records_;
    std::vector<segment> segments_;
    std::vector<entity> created_;
    key_type key_{};
};

} // namespace ecsnet
