#pragma once

// What a system gets when it runs: access to exactly the components its signature declares, its
// iteration, and a command buffer for structural changes.
//
// - view(), each(func), parallel_each(func): the signature's view, registry.view<W..., const
// R...>(exclude<X...>),
//   so written types come as `T&` and read types as `const T&`.
// - view<T...>(), get<T>(e), try_get<T>(e): any subset of the declared types, with the same constness. A type
//   the signature does not declare is refused at compile time (the functions are constrained, so the error
//   names the constraint `declared<T>`), and a read-only type never comes out mutable.
// - valid(e), all_of<T...>(e), any_of<T...>(e): membership, for any type; memberships do not change while a
//   phase runs, so reading them is always safe.
// - commands(): the command buffer of the calling thread. Create, destroy, emplace, remove, replace and patch
//   go there and are applied at the end of the phase in a deterministic order (command_buffer.hpp).
//
// What a system may do from a worker thread: read and write, in place, the components handed out here.
// It must not call the registry's mutating functions (emplace, remove, destroy, patch, replace...): they
// change pools other systems may be reading, and fire signals (on_update...) concurrently with other
// systems. ctx.commands().replace/patch are the way to change a component *with* its on_update signal: they
// run at the end of the phase, on the thread that called run_tick(). In-place writes fire no signal; an
// observer that needs them compares columns once per tick.
//
// The context is valid only during the system's update() call, and commands() only on the thread running
// the system or one of its parallel_each chunks.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "command_buffer.hpp"
#include "entity.hpp"
#include "system.hpp"
#include "thread_pool.hpp"
#include "type_list.hpp"
#include "view_chunks.hpp"

namespace ecsnet {

/// The tick being run.
struct tick_info {
    std::uint64_t index{};  ///< 1 for the first tick
    double delta_seconds{}; ///< what run_tick() was given
};

namespace detail {

/// The state a running system reads through its context; owned by the scheduler, one per system run.
template<typename Registry>
struct system_runtime {
    Registry* registry{};
    thread_pool* pool{};
    basic_command_buffer<Registry>* buffers{}; // one per worker thread
    const tick_info* tick{};
    std::string_view name;
    std::uint32_t rank{};         // the system's position in the canonical order
    std::uint32_t next_segment{}; // command segments the system has used so far
    std::size_t chunk_size{};     // default granularity of parallel_each
};

/// Commands are applied by (system rank, segment): a system's own segments, then its chunks', in order.
[[nodiscard]] constexpr std::uint64_t segment_key(std::uint32_t rank, std::uint32_t segment) noexcept {
    return (std::uint64_t{rank} << 32) | segment;
}

template<typename Registry, typename Write, typename Read, typename Exclude>
struct signature_view;
template<typename Registry, typename... Write, typename... Read, typename... Exclude>
struct signature_view<Registry, type_list<Write...>, type_list<Read...>, type_list<Exclude...>> {
    static auto make(Registry& registry) {
        return registry.template view<Write..., const Read...>(exclude_t<Exclude...>{});
    }
    using chunks = view_chunks<Registry, type_list<Write..., const Read...>, type_list<Exclude...>>;
};

/// The same for a system with owning_group: the full-owning group of its types, cut into chunks of
/// consecutive members.
template<typename Registry, typename Write, typename Read, typename Exclude>
struct signature_group;
template<typename Registry, typename... Write, typename... Read, typename... Exclude>
struct signature_group<Registry, type_list<Write...>, type_list<Read...>, type_list<Exclude...>> {
    static auto make(Registry& registry) {
        return registry.template group<Write..., const Read...>(exclude_t<Exclude...>{});
    }

    class chunks {
    public:
        chunks(Registry& registry, std::size_t chunk_size)
            : group_{make(registry)}
            , chunk_size_{chunk_size == 0 ? 1 : chunk_size} {}

        [[nodiscard]] std::size_t chunk_count() const noexcept {
            return (group_.size() + chunk_size_ - 1) / chunk_size_;
        }
        template<typename Func>
        void each_in(std::size_t chunk, Func& func) const {
            group_.each_in(chunk * chunk_size_, (chunk + 1) * chunk_size_, func);
        }

    private:
        decltype(make(std::declval<Registry&>())) group_;
        std::size_t chunk_size_;
    };
};

} // namespace detail

template<typename Registry, typename Signature>
class system_context {
    using read_list = typename Signature::read_list;
    using write_list = typename Signature::write_list;
    using exclude_list = typename Signature::exclude_list;
    using signature_view =
        std::conditional_t<Signature::is_owning_group,
                           detail::signature_group<Registry, write_list, read_list, exclude_list>,
                           detail::signature_view<Registry, write_list, read_list, exclude_list>>;
    static constexpr bool iterates = Signature::access_list::size != 0;

    template<typename Type>
    static constexpr bool writable = detail::in_list<std::remove_const_t<Type>, write_list>::value;

    // Written types as asked (T or const T), read types always const.
    template<typename Type>
    using access_t =
        std::conditional_t<writable<Type> && !std::is_const_v<Type>, Type, const std::remove_const_t<Type>>;

public:
    using registry_type = Registry;
    using signature = Signature;
    using command_buffer_type = basic_command_buffer<Registry>;

    /// Whether the signature excludes Type (exclude_t<...>).
    template<typename Type>
    static constexpr bool excludes = detail::in_list<std::remove_const_t<Type>, exclude_list>::value;

    /// Whether the signature declares Type (read or written).
    template<typename Type>
    static constexpr bool declared =
        writable<Type> || detail::in_list<std::remove_const_t<Type>, read_list>::value;

    explicit system_context(detail::system_runtime<Registry>& runtime) noexcept
        : runtime_{&runtime} {}

    /// Creates (or finds) the group of an owning_group signature; the scheduler calls it at build().
    static auto make_group(Registry& registry) requires Signature::is_owning_group {
        return signature_view::make(registry);
    }

    /// The signature's view (or, with owning_group, its group): written types mutable, read types const,
    /// excluded types left out.
    [[nodiscard]] auto view() const requires iterates { return signature_view::make(*runtime_->registry); }

    /// A view of some declared types (read-only ones come out const), optionally without entities having
    /// some declared or excluded types (the pools the scheduler prepared: no other can be created mid-phase).
    template<typename... Type>
    requires(sizeof...(Type) > 0 && (declared<Type> && ...)) [[nodiscard]] auto view() const {
        return runtime_->registry->template view<access_t<Type>...>();
    }
    template<typename... Type, typename... Exclude>
    requires(sizeof...(Type) > 0 && (declared<Type> && ...) &&
             ((declared<Exclude> || excludes<Exclude>)&&...))
        [[nodiscard]] auto view(exclude_t<Exclude...> filter) const {
        return runtime_->registry->template view<access_t<Type>...>(filter);
    }

    /// The Type of an entity that has one: `Type&` if written, `const Type&` if read-only.
    template<typename Type>
    requires declared<Type>
    [[nodiscard]] access_t<Type>& get(entity e) const {
        return runtime_->registry->template get<std::remove_const_t<Type>>(e);
    }

    /// The Type of `e`, or nullptr if it has none or is not valid.
    template<typename Type>
    requires declared<Type>
    [[nodiscard]] access_t<Type>* try_get(entity e) const {
        return runtime_->registry->template try_get<std::remove_const_t<Type>>(e);
    }

    [[nodiscard]] bool valid(entity e) const noexcept { return runtime_->registry->valid(e); }
    template<typename... Type>
    [[nodiscard]] bool all_of(entity e) const noexcept {
        return std::as_const(*runtime_->registry).template all_of<Type...>(e);
    }
    template<typename... Type>
    [[nodiscard]] bool any_of(entity e) const noexcept {
        return std::as_const(*runtime_->registry).template any_of<Type...>(e);
    }

    /// Calls func(entity, components...) or func(components...) for every entity of the signature's view,
    /// on this thread.
    template<typename Func>
    void each(Func&& func) const requires iterates {
        view().each(std::forward<Func>(func));
    }

    /// each(), split in chunks of `chunk_size` entities (0: the scheduler's default) that the pool's threads
    /// run concurrently; returns when all are done. Needs `per_entity` in the signature: func must write only
    /// the components of the entity it is given, and is called from several threads at once. The split does
    /// not depend on the number of threads, nor do the commands each chunk records.
    template<typename Func>
    void parallel_each(Func&& func, std::size_t chunk_size = 0) const requires iterates {
        static_assert(
            Signature::is_per_entity,
            "parallel_each needs per_entity in the system's signature: it promises that the function "
            "writes only the components of the entity it visits");
        auto& runtime = *runtime_;
        const typename signature_view::chunks chunks{*runtime.registry,
                                                     chunk_size != 0 ? chunk_size : runtime.chunk_size};
        const auto first_segment = runtime.next_segment;
        const auto count = chunks.chunk_count();
        runtime.pool->parallel_for(count, [&runtime, &chunks, &func, first_segment](std::size_t chunk) {
            auto& buffer = runtime.buffers[thread_pool::current_worker()];
            const segment_scope scope{
                buffer, detail::segment_key(runtime.rank, first_segment + static_cast<std::uint32_t>(chunk))};
            chunks.each_in(chunk, func);
        });
        // What the system records after this call comes after every chunk's commands.
        runtime.next_segment = first_segment + static_cast<std::uint32_t>(count) + 1;
        commands().begin_segment(detail::segment_key(runtime.rank, runtime.next_segment - 1));
    }

    /// The calling thread's command buffer: structural changes, applied at the end of the phase.
    [[nodiscard]] command_buffer_type& commands() const noexcept {
        return runtime_->buffers[thread_pool::current_worker()];
    }

    [[nodiscard]] const tick_info& tick() const noexcept { return *runtime_->tick; }
    [[nodiscard]] std::string_view name() const noexcept { return runtime_->name; }
    /// The index of the thread running the system (0: the thread that called run_tick()).
    [[nodiscard]] static std::size_t worker() noexcept { return thread_pool::current_worker(); }

private:
    struct segment_scope {
        segment_scope(command_buffer_type& target, std::uint64_t key) noexcept
            : buffer{target}
            , saved{target.segment_key()} {
            buffer.begin_segment(key);
        }
        segment_scope(const segment_scope&) = delete;
        segment_scope& operator=(const segment_scope&) = delete;
        ~segment_scope() { buffer.begin_segment(saved); }
        command_buffer_type& buffer;
        std::uint64_t saved;
    };

    detail::system_runtime<Registry>* runtime_;
};

} // namespace ecsnet
