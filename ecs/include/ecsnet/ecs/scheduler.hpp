#pragma once

// The scheduler: runs a tick's systems on a fixed pool of threads, in parallel wherever their signatures
// allow, with a result that never depends on the number of threads (seed 001_9f36d8a5fef2b425.txt: system
// signatures, the dependency DAG and its breadth-first traversal, the atomic-counter scheduler and its
// counter blockers).
//
//     ecsnet::scheduler tick{world, {.threads = 2}};
//     tick.add<input>();
//     tick.add<movement>();                                   // a class deriving from ecsnet::system<...>
//     tick.add("gravity", ecsnet::system<ecsnet::reads<Mass>, ecsnet::writes<Velocity>>{},
//              [](auto& ctx) { ctx.each([](const Mass& m, Velocity& v) { v.dy -= 9.81f * m.scale; }); })
//         .after("input");
//     tick.next_phase();                                      // what follows sees the commands applied
//     tick.add<cleanup>();
//     tick.run_tick(1.0 / 30);                                // every tick, from the tick thread
//
// Start-up (build(), or the first run_tick()): the graph of schedule_graph.hpp is built once: after<>
// edges, registration order for conflicting pairs, cycle checks, transitive reduction, chains. Every pool a
// signature names is created then (registry.prepare), so that systems running concurrently only ever read
// the registry's structure. Errors (a cycle, an unknown name...) are schedule_errors naming the systems.
//
// A tick, per phase: each system has an atomic counter of unfinished predecessors and each chain a counter
// blocker sized with its systems; the roots go to the pool's queue; a system that finishes decrements its
// successors' counters and runs the one it brought to zero itself (queueing the others), then counts down its
// chain; the phase ends when every chain has. No lock on that path: atomics only, plus a futex wake when a
// thread sleeps. Then the per-thread command buffers are applied, by the calling thread, in the canonical
// order of the graph (system rank, then segment), and the next phase starts.
//
// Threads: `threads` threads run systems, the one calling run_tick() included (it works as worker 0 until
// the tick ends), so threads = 1 starts no thread. The pool starts at build() and its threads are joined by
// the destructor. run_tick() is called by one thread at a time; systems must not call back into the
// scheduler.
//
// Failures: a system that throws stops the tick: systems not started yet are skipped, the phase's commands
// are discarded, and run_tick() throws system_failure naming the system (the original exception nested;
// if several threw, the one first in canonical order). The scheduler stays usable for the next tick.
//
// Access checks (scheduler_options::check, on by default in debug builds): `declared` hashes, around every
// system run, the bytes of the components it declared read-only and the entity lists of every pool it
// declared; a change is an access_violation naming the system and the type. It catches what the compile-time
// checks of system_context cannot: a const_cast, a registry reference captured by the system. `strict` also
// runs systems one at a time and hashes every pool, catching writes to types the system did not declare.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "command_buffer.hpp"
#include "config.hpp"
#include "counter_blocker.hpp"
#include "registry.hpp"
#include "schedule_error.hpp"
#include "schedule_graph.hpp"
#include "system.hpp"
#include "system_context.hpp"
#include "thread_pool.hpp"
#include "type_info.hpp"
#include "type_list.hpp"

namespace ecsnet {

/// How much the scheduler checks that systems keep to their signatures.
enum class access_check : std::uint8_t {
    none,     ///< nothing beyond the compile-time checks of system_context
    declared, ///< hash read-only components and declared pools' entity lists around each system
    strict,   ///< one system at a time, every pool hashed around each: catches undeclared writes too
};

struct scheduler_options {
    /// Threads that run systems, the caller of run_tick() included; at least 1.
    std::size_t threads = std::max(1U, std::thread::hardware_concurrency());
    access_check check = ECSNET_ASSERTS_ENABLED ? access_check::declared : access_check::none;
    /// Entities per chunk of parallel_each, unless the call says otherwise.
    std::size_t chunk_size = 4096;
};

template<typename Registry>
class basic_scheduler {
public:
    using registry_type = Registry;
    using command_buffer_type = basic_command_buffer<Registry>;

    /// A registered system, to add dependencies by name.
    class system_ref {
    public:
        /// This system runs after the system named `other` (same or earlier phase).
        system_ref& after(std::string_view other) {
            owner_->touch();
            owner_->nodes_[index_]->spec.after.emplace_back(other);
            return *this;
        }
        /// This system runs before the system named `other` (same or later phase).
        system_ref& before(std::string_view other) {
            owner_->touch();
            owner_->nodes_[index_]->before.emplace_back(other);
            return *this;
        }
        [[nodiscard]] const std::string& name() const noexcept { return owner_->nodes_[index_]->spec.name; }

    private:
        friend class basic_scheduler;
        system_ref(basic_scheduler* owner, std::size_t index) noexcept
            : owner_{owner}
            , index_{index} {}
        basic_scheduler* owner_;
        std::size_t index_;
    };

    explicit basic_scheduler(Registry& registry, scheduler_options options = {})
        : registry_{&registry}
        , options_{options} {
        options_.threads = std::max<std::size_t>(options_.threads, 1);
    }
    basic_scheduler(const basic_scheduler&) = delete;
    basic_scheduler& operator=(const basic_scheduler&) = delete;
    ~basic_scheduler() = default; // the pool joins its threads

    // ---- registration -------------------------------------------------------------------------------

    /// Registers a system class (deriving from ecsnet::system<...>, with update(context&)), built from args.
    /// Its name is System::name if it has one, its type's name otherwise.
    template<typename System, typename... Args>
    system_ref add(Args&&... args) {
        static_assert(detail::has_signature<System>, "a system class derives from ecsnet::system<...>");
        using signature = typename System::signature;
        static_assert(
            requires(System & s, system_context<Registry, signature> & ctx) { s.update(ctx); },
            "a system class has update(context&): void update(context<>& ctx) or void update(auto& ctx)");
        auto node = std::make_unique<system_node<signature, System, true>>(std::forward<Args>(args)...);
        node->type = type_id<System>();
        return insert<signature>(std::move(node), std::string{system_name<System>()});
    }

    /// Registers func(context&) as a system named `name` with the given signature.
    template<typename... Part, typename Func>
    system_ref add(std::string name, system<Part...>, Func&& func) {
        using signature = system<Part...>;
        using func_type = std::decay_t<Func>;
        static_assert(std::is_invocable_v<func_type&, system_context<Registry, signature>&>,
                      "a system function takes (context&): [](auto& ctx) { ... }");
        auto node = std::make_unique<system_node<signature, func_type, false>>(std::forward<Func>(func));
        return insert<signature>(std::move(node), std::move(name));
    }

    /// Systems added from now on run after every system added before has finished and its commands have
    /// been applied.
    void next_phase() {
        touch();
        ++phase_count_;
    }

    /// The instance of a system class added with add<System>().
    template<typename System>
    [[nodiscard]] System& get() {
        for (auto& node : nodes_) {
            if (node->type == type_id<System>()) {
                return *static_cast<System*>(node->instance());
            }
        }
        throw schedule_error("no system of type " + std::string{type_name<System>()} + " is registered");
    }

    // ---- start-up -----------------------------------------------------------------------------------

    /// Validates the systems and builds the graph, creates the pools they name and starts the threads.
    /// Throws schedule_error (cycle, unknown or duplicate name...). run_tick() calls it when needed.
    void build() {
        if (!dirty_) {
            return;
        }
        std::vector<system_spec> specs;
        specs.reserve(nodes_.size());
        for (const auto& node : nodes_) {
            specs.push_back(node->spec);
        }
        for (const auto& node : nodes_) {
            for (const auto& target : node->before) {
                const auto found = std::find_if(specs.begin(), specs.end(),
                                                [&target](const system_spec& s) { return s.name == target; });
                if (found == specs.end()) {
                    throw schedule_error("system '" + node->spec.name + "' runs before '" + target +
                                         "', which is not registered");
                }
                found->after.push_back(node->spec.name);
            }
        }
        schedule_graph graph{std::move(specs), phase_count_};

        for (auto& node : nodes_) {
            node->prepare(*registry_);
        }
        std::size_t widest_phase = 1;
        std::size_t most_chains = 1;
        for (const auto& phase : graph.phases()) {
            widest_phase = std::max(widest_phase, phase.order.size());
            most_chains = std::max(most_chains, phase.chains.size());
        }
        counters_ = std::make_unique<node_counter[]>(nodes_.size());
        chain_blockers_ = std::make_unique<counter_blocker[]>(most_chains);
        failures_.assign(nodes_.size(), nullptr);
        if (!pool_ || pool_->queue_capacity() < widest_phase) {
            pool_.reset();
            pool_ = std::make_unique<thread_pool>(options_.threads, std::max<std::size_t>(widest_phase, 64));
        }
        if (buffers_.size() != options_.threads) {
            buffers_.clear();
            buffers_.resize(options_.threads);
            buffer_list_.clear();
            for (auto& buffer : buffers_) {
                buffer_list_.push_back(&buffer);
            }
        }
        strict_probes_.clear();
        for (const auto& node : nodes_) {
            for (const auto& probe : node->probes) {
                const auto known =
                    std::any_of(strict_probes_.begin(), strict_probes_.end(),
                                [&probe](const pool_probe& p) { return p.type == probe.type; });
                if (!known) {
                    strict_probes_.push_back(probe);
                }
            }
        }
        graph_ = std::move(graph);
        dirty_ = false;
    }

    /// The graph as text (builds it first): phases, chains, each system's level, signature and predecessors.
    [[nodiscard]] std::string describe() {
        build();
        return graph_.describe();
    }

    /// The graph (builds it first).
    [[nodiscard]] const schedule_graph& graph() {
        build();
        return graph_;
    }

    // ---- running ------------------------------------------------------------------------------------

    /// Runs every system once, phase by phase, applying each phase's commands at its end.
    void run_tick(double delta_seconds = 0) {
        if (running_.exchange(true, std::memory_order_acquire)) {
            throw schedule_error("run_tick() called while a tick is running (from a system, or two threads)");
        }
        const running_guard guard{running_};
        build();
        tick_.index += 1;
        tick_.delta_seconds = delta_seconds;
        last_commands_ = {};
        for (std::size_t phase = 0; phase < graph_.phases().size(); ++phase) {
            if (options_.check == access_check::strict) {
                run_phase_strictly(phase);
            } else {
                run_phase(phase);
            }
            finish_phase(phase);
        }
    }

    [[nodiscard]] const tick_info& last_tick() const noexcept { return tick_; }
    /// Continues the tick count of a saved world: the next run_tick() is tick `index` + 1 (systems that
    /// draw per-tick randomness from the index then go on as the saved world would have).
    void resume_after(std::uint64_t index) noexcept { tick_.index = index; }
    /// What applying the last tick's commands did.
    [[nodiscard]] const command_stats& last_commands() const noexcept { return last_commands_; }
    [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
    [[nodiscard]] std::size_t threads() const noexcept { return options_.threads; }
    [[nodiscard]] const scheduler_options& options() const noexcept { return options_; }
    [[nodiscard]] Registry& registry() noexcept { return *registry_; }

private:
    // Hashes one declared pool: its entity list, and its component bytes where that is checked.
    struct pool_probe {
        id_type type{};
        std::string_view name;
        bool read_only{};
        std::uint64_t (*entities)(Registry&){};
        std::uint64_t (*components)(Registry&){};
    };

    struct node_base {
        virtual ~node_base() = default;
        virtual void run(detail::system_runtime<Registry>& runtime) = 0;
        virtual void prepare(Registry& registry) = 0;
        virtual void* instance() noexcept = 0;

        system_spec spec;
        std::vector<std::string> before;
        std::vector<pool_probe> probes;
        id_type type = ~id_type{};
    };

    template<typename Signature, typename Callable, bool IsClass>
    struct system_node final : node_base {
        template<typename... Args>
        explicit system_node(Args&&... args)
            : callable(std::forward<Args>(args)...) {}

        void run(detail::system_runtime<Registry>& runtime) override {
            system_context<Registry, Signature> context{runtime};
            if constexpr (IsClass) {
                callable.update(context);
            } else {
                callable(context);
            }
        }
        void prepare(Registry& registry) override {
            prepare_all(registry, typename Signature::access_list{}, typename Signature::exclude_list{});
            if constexpr (Signature::is_owning_group) {
                // Created (and filled) now, single-threaded: during ticks systems only look it up.
                static_cast<void>(system_context<Registry, Signature>::make_group(registry));
            }
        }
        void* instance() noexcept override { return std::addressof(callable); }

        template<typename... Access, typename... Exclude>
        static void prepare_all(Registry& registry, type_list<Access...>, type_list<Exclude...>) {
            registry.template prepare<Access..., Exclude...>();
        }

        Callable callable;
    };

    struct alignas(64) node_counter {
        std::atomic<std::uint32_t> remaining{0};
    };

    struct running_guard {
        explicit running_guard(std::atomic<bool>& flag) noexcept
            : running{flag} {}
        running_guard(const running_guard&) = delete;
        running_guard& operator=(const running_guard&) = delete;
        ~running_guard() { running.store(false, std::memory_order_release); }
        std::atomic<bool>& running;
    };

    void touch() {
        if (running_.load(std::memory_order_relaxed)) {
            throw schedule_error("systems cannot be added or reordered while a tick is running");
        }
        dirty_ = true;
    }

    template<typename Signature>
    system_ref insert(std::unique_ptr<node_base> node, std::string name) {
        touch();
        node->spec.name = std::move(name);
        node->spec.phase = phase_count_ - 1;
        describe_signature<Signature>(*node);
        nodes_.push_back(std::move(node));
        return system_ref{this, nodes_.size() - 1};
    }

    template<typename Signature>
    static void describe_signature(node_base& node) {
        add_accesses(node, typename Signature::write_list{}, false);
        add_accesses(node, typename Signature::read_list{}, true);
        add_after(node, typename Signature::after_list{});
        add_excluded(node, typename Signature::exclude_list{});
    }
    template<typename... Type>
    static void add_accesses(node_base& node, type_list<Type...>, bool read_only) {
        (node.probes.push_back(pool_probe{type_id<Type>(), type_name<Type>(), read_only, &hash_entities<Type>,
                                          &hash_components<Type>}),
         ...);
        auto& target = read_only ? node.spec.reads : node.spec.writes;
        (target.push_back(component_access{type_id<Type>(), type_name<Type>()}), ...);
    }
    template<typename... System>
    static void add_after(node_base& node, type_list<System...>) {
        (node.spec.after.emplace_back(system_name<System>()), ...);
    }
    // Excluded pools: only their entity lists are checked (membership is all a system reads of them).
    template<typename... Type>
    static void add_excluded(node_base& node, type_list<Type...>) {
        (node.probes.push_back(pool_probe{type_id<Type>(), type_name<Type>(), false, &hash_entities<Type>,
                                          &hash_components<Type>}),
         ...);
    }

    // ---- running a phase ----------------------------------------------------------------------------

    void run_phase(std::size_t phase) {
        const auto& plan = graph_.phases()[phase];
        if (plan.order.empty()) {
            return;
        }
        const auto& nodes = graph_.nodes();
        for (const auto i : plan.order) {
            counters_[i].remaining.store(nodes[i].predecessors, std::memory_order_relaxed);
        }
        for (std::size_t chain = 0; chain < plan.chains.size(); ++chain) {
            chain_blockers_[chain].reset(static_cast<std::uint32_t>(plan.chains[chain].size()));
        }
        phase_blocker_.reset(static_cast<std::uint32_t>(plan.chains.size()));
        failed_.store(false, std::memory_order_relaxed);
        for (const auto root : plan.roots) {
            const bool queued = pool_->submit_quietly(thread_pool::task{&run_task, this, root});
            ECSNET_ASSERT(queued, "the ready queue holds a whole phase");
            static_cast<void>(queued);
        }
        pool_->wake(plan.roots.size() - 1); // this thread takes one root itself: wake the others' takers
        pool_->run_until([this] { return phase_blocker_.done(); });
    }

    static void run_task(void* self, std::uint32_t node, std::size_t worker) noexcept {
        static_cast<basic_scheduler*>(self)->run_from(node, worker);
    }

    // Runs `node`, then releases its successors: the one it brings to zero first runs next on this thread,
    // the others go to the queue. Counts down the chain, and the phase when the chain is done.
    void run_from(std::uint32_t node, std::size_t worker) noexcept {
        const auto& nodes = graph_.nodes();
        for (auto current = node;;) {
            run_system(current, worker);
            constexpr auto none = ~std::uint32_t{};
            auto next = none;
            for (const auto successor : nodes[current].successors) {
                if (counters_[successor].remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                    if (next == none) {
                        next = successor;
                    } else {
                        const bool queued = pool_->submit(thread_pool::task{&run_task, this, successor});
                        ECSNET_ASSERT(queued, "the ready queue holds a whole phase");
                        static_cast<void>(queued);
                    }
                }
            }
            if (chain_blockers_[nodes[current].chain].count_down() && phase_blocker_.count_down() &&
                worker != 0) {
                pool_->wake_all(); // the caller may be asleep in run_until
            }
            if (next == none) {
                return;
            }
            current = next;
        }
    }

    void run_system(std::uint32_t index, std::size_t worker) noexcept {
        if (failed_.load(std::memory_order_relaxed)) {
            return; // a system failed: the tick is over, skip what had not started
        }
        auto& node = *nodes_[index];
        const auto rank = graph_.nodes()[index].rank;
        buffers_[worker].begin_segment(detail::segment_key(rank, 0));
        detail::system_runtime<Registry> runtime{
            registry_, pool_.get(), buffers_.data(), &tick_, node.spec.name, rank, 1, options_.chunk_size};
        try {
            if (options_.check == access_check::declared) {
                const auto before = snapshot(node);
                node.run(runtime);
                verify(node, before);
            } else {
                node.run(runtime);
            }
        } catch (...) {
            failures_[index] = std::current_exception();
            failed_.store(true, std::memory_order_relaxed);
        }
    }

    // One system at a time, in canonical order, every pool hashed around each.
    void run_phase_strictly(std::size_t phase) {
        const auto& plan = graph_.phases()[phase];
        failed_.store(false, std::memory_order_relaxed);
        for (const auto index : plan.order) {
            if (failed_.load(std::memory_order_relaxed)) {
                break;
            }
            auto& node = *nodes_[index];
            const auto rank = graph_.nodes()[index].rank;
            buffers_[0].begin_segment(detail::segment_key(rank, 0));
            detail::system_runtime<Registry> runtime{registry_, pool_.get(),        buffers_.data(),
                                                     &tick_,    node.spec.name,     rank,
                                                     1,         options_.chunk_size};
            try {
                const auto before = snapshot_everything();
                node.run(runtime);
                verify_everything(node, before);
            } catch (...) {
                failures_[index] = std::current_exception();
                failed_.store(true, std::memory_order_relaxed);
            }
        }
    }

    void finish_phase(std::size_t phase) {
        if (failed_.load(std::memory_order_relaxed)) {
            for (auto& buffer : buffers_) {
                buffer.clear();
            }
            rethrow_first_failure();
        }
        typename command_buffer_type::key_type failed_key{};
        try {
            last_commands_ += command_buffer_type::apply_in_order(*registry_, buffer_list_, &failed_key);
        } catch (...) {
            const auto rank = static_cast<std::uint32_t>(failed_key >> 32);
            const auto& name = nodes_[graph_.canonical()[rank]]->spec.name;
            std::throw_with_nested(system_failure{
                name, "the commands system '" + name + "' recorded in phase " + std::to_string(phase + 1) +
                          " failed to apply: " + current_message()});
        }
    }

    [[noreturn]] void rethrow_first_failure() {
        std::size_t first = failures_.size();
        for (std::size_t i = 0; i < failures_.size(); ++i) {
            if (failures_[i] &&
                (first == failures_.size() || graph_.nodes()[i].rank < graph_.nodes()[first].rank)) {
                first = i;
            }
        }
        ECSNET_ASSERT(first < failures_.size(), "a failure without its exception");
        const auto error = failures_[first];
        std::fill(failures_.begin(), failures_.end(), nullptr);
        const auto& name = nodes_[first]->spec.name;
        try {
            std::rethrow_exception(error);
        } catch (const access_violation&) {
            throw;
        } catch (...) {
            std::throw_with_nested(system_failure{name, "system '" + name + "' threw: " + current_message()});
        }
    }

    // The message of the exception being handled.
    static std::string current_message() {
        try {
            throw;
        } catch (const std::exception& error) {
            return error.what();
        } catch (...) {
            return "an exception that is not a std::exception";
        }
    }

    // ---- access checks ------------------------------------------------------------------------------

    static std::uint64_t hash_bytes(const void* data, std::size_t size, std::uint64_t hash) noexcept {
        const auto* bytes = static_cast<const unsigned char*>(data);
        constexpr std::uint64_t multiplier = 0x9E3779B97F4A7C15ULL;
        hash ^= size * multiplier;
        std::size_t at = 0;
        for (; at + 8 <= size; at += 8) {
            std::uint64_t word;
            std::memcpy(&word, bytes + at, 8);
            hash = std::rotl((hash ^ word) * multiplier, 29);
        }
        for (; at < size; ++at) {
            hash = std::rotl((hash ^ bytes[at]) * multiplier, 29);
        }
        return hash;
    }

    template<typename Type>
    static std::uint64_t hash_entities(Registry& registry) {
        const auto& pool = registry.template storage<Type>();
        return hash_bytes(pool.data(), pool.size() * sizeof(entity), 1);
    }

    template<typename Type>
    static std::uint64_t hash_components(Registry& registry) {
        const auto& pool = registry.template storage<Type>();
        if constexpr (std::remove_cvref_t<decltype(pool)>::is_tag) {
            return 0;
        } else {
            return hash_bytes(pool.raw(), pool.size() * sizeof(Type), 2);
        }
    }

    struct probe_hash {
        std::uint64_t entities;
        std::uint64_t components;
    };

    std::vector<probe_hash> snapshot(const node_base& node) const {
        std::vector<probe_hash> hashes;
        hashes.reserve(node.probes.size());
        for (const auto& probe : node.probes) {
            hashes.push_back(
                {probe.entities(*registry_), probe.read_only ? probe.components(*registry_) : 0});
        }
        return hashes;
    }

    void verify(const node_base& node, const std::vector<probe_hash>& before) const {
        for (std::size_t at = 0; at < node.probes.size(); ++at) {
            const auto& probe = node.probes[at];
            if (probe.entities(*registry_) != before[at].entities) {
                throw_membership_change(node, probe.name);
            }
            if (probe.read_only && probe.components(*registry_) != before[at].components) {
                throw access_violation(node.spec.name, probe.name,
                                       "system '" + node.spec.name + "' wrote '" + std::string{probe.name} +
                                           "', which it declared read-only: declare it in writes<...>");
            }
        }
    }

    [[noreturn]] static void throw_membership_change(const node_base& node, std::string_view type) {
        throw access_violation(node.spec.name, type,
                               "system '" + node.spec.name + "' changed which entities have '" +
                                   std::string{type} +
                                   "' while its phase ran: structural changes go through ctx.commands()");
    }

    struct world_hash {
        std::size_t alive;
        std::vector<std::uint64_t> pool_entities;    // by registry pool index
        std::vector<std::uint64_t> known_components; // by strict_probes_ index
    };

    world_hash snapshot_everything() const {
        world_hash hash{registry_->alive(), {}, {}};
        for (std::size_t i = 0; i < registry_->pool_count(); ++i) {
            const auto& pool = registry_->pool_at(i);
            hash.pool_entities.push_back(hash_bytes(pool.data(), pool.size() * sizeof(entity), 1));
        }
        for (const auto& probe : strict_probes_) {
            hash.known_components.push_back(probe.components(*registry_));
        }
        return hash;
    }

    void verify_everything(const node_base& node, const world_hash& before) const {
        const auto after = snapshot_everything();
        if (after.alive != before.alive) {
            throw access_violation(
                node.spec.name, "",
                "system '" + node.spec.name +
                    "' created or destroyed entities while its phase ran: structural changes "
                    "go through ctx.commands()");
        }
        for (std::size_t i = 0; i < after.pool_entities.size(); ++i) {
            if (i >= before.pool_entities.size() || after.pool_entities[i] != before.pool_entities[i]) {
                throw_membership_change(node, registry_->pool_name(i));
            }
        }
        for (std::size_t at = 0; at < strict_probes_.size(); ++at) {
            if (after.known_components[at] == before.known_components[at]) {
                continue;
            }
            const auto& probe = strict_probes_[at];
            const auto& writes = node.spec.writes;
            if (std::any_of(writes.begin(), writes.end(),
                            [&probe](const component_access& w) { return w.type == probe.type; })) {
                continue;
            }
            const auto& reads = node.spec.reads;
            const bool read = std::any_of(reads.begin(), reads.end(), [&probe](const component_access& r) {
                return r.type == probe.type;
            });
            throw access_violation(
                node.spec.name, probe.name,
                "system '" + node.spec.name + "' wrote '" + std::string{probe.name} +
                    (read ? "', which it declared read-only" : "', which it did not declare") +
                    ": declare it in writes<...>");
        }
    }

    Registry* registry_;
    scheduler_options options_;
    std::vector<std::unique_ptr<node_base>> nodes_;
    std::size_t phase_count_{1};
    bool dirty_{true};
    std::atomic<bool> running_{false};

    schedule_graph graph_;
    std::unique_ptr<node_counter[]> counters_;
    std::unique_ptr<counter_blocker[]> chain_blockers_;
    counter_blocker phase_blocker_;
    std::atomic<bool> failed_{false};
    std::vector<std::exception_ptr> failures_; // by system; written only by the thread running it
    std::vector<command_buffer_type> buffers_; // by worker
    std::vector<command_buffer_type*> buffer_list_;
    std::vector<pool_probe> strict_probes_;
    tick_info tick_;
    command_stats last_commands_;
    std::unique_ptr<thread_pool> pool_; // last: its threads stop before the rest goes
};

using scheduler = basic_scheduler<registry>;

} // namespace ecsnet
