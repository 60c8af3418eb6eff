#pragma once

// System signatures: what a system reads, what it writes, what it must run after (seed
// 001_9f36d8a5fef2b425.txt, "Component bitset creation": a system's signature is the list of component types
// it reads concatenated with the list it writes; the scheduler turns it into a set of type ids once, at
// start-up, instead of a compile-time bitset).
//
//     struct movement : ecsnet::system<ecsnet::reads<Velocity>, ecsnet::writes<Position>, ecsnet::per_entity>
//     {
//         void update(context<>& ctx) {
//             ctx.each([](Position& p, const Velocity& v) { p.x += v.dx; });
//         }
//     };
//     struct collision : ecsnet::system<ecsnet::reads<Position>, ecsnet::writes<Contact>,
//     ecsnet::after<movement>> {
//         ...
//     };
//
// Parts, in any order and each at most once:
// - reads<A, B...>    components the system reads: it gets `const A&`, never `A&`.
// - writes<C...>      components it writes in place (and may read): it gets `C&`. A type is declared once:
//                     writes<C> already allows reading C, so reads<C> with writes<C> is a compile error.
// - exclude_t<D...>   entities with any D are not iterated (membership only, never a conflict).
// - after<S...>       system types that must have finished (this tick) before this one starts.
// - per_entity        a promise that each call of the iteration function writes only the components of
//                     the entity it is given; it unlocks ctx.parallel_each().
// - owning_group      iterate the full-owning group of the accessed types instead of a view (the hot
//                     systems: plain loops over aligned arrays).
//
// Spell it `ecsnet::system`: under `using namespace ecsnet`, `system` is ambiguous with C's ::system().
//
// Two systems conflict when one writes a type the other reads or writes; the scheduler never runs
// conflicting systems at the same time, and runs them in registration order unless after<> says otherwise.
// The system's iteration (ctx.each, ctx.parallel_each, ctx.view()) is the view of its written types, its
// read types as const, without the excluded ones.

#include <cstddef>
#include <string_view>
#include <type_traits>

#include "registry.hpp"
#include "type_info.hpp"
#include "type_list.hpp"

namespace ecsnet {

/// Components a system reads (const access only).
template<typename... Component>
struct reads final : type_list<Component...> {};

/// Components a system writes in place (and may read).
template<typename... Component>
struct writes final : type_list<Component...> {};

/// Systems (types) that must finish before this one starts, within the same tick.
template<typename... System>
struct after final : type_list<System...> {};

/// The system's writes touch only the entity being visited: its iteration may be split across threads.
struct per_entity final {};

/// The system iterates the full-owning group of the types it accesses, group<W..., const
/// R...>(exclude<X...>), instead of a view: its pools are kept packed and aligned (seed 002), so iteration is
/// a plain loop over arrays. The scheduler creates the group at build(); a type can be owned by one group
/// only, so two owning systems must not share a type unless their groups nest (group_error at build()
/// otherwise).
struct owning_group final {};

template<typename Registry, typename Signature>
class system_context;

namespace detail {

template<typename... List>
struct concat;
template<>
struct concat<> {
    using type = type_list<>;
};
template<typename... A>
struct concat<type_list<A...>> {
    using type = type_list<A...>;
};
template<typename... A, typename... B, typename... Rest>
struct concat<type_list<A...>, type_list<B...>, Rest...> : concat<type_list<A..., B...>, Rest...> {};
template<typename... List>
using concat_t = typename concat<List...>::type;

template<typename>
inline constexpr bool dependent_false = false;

// What one part of a signature contributes; anything else is refused with a readable message.
template<typename Part>
struct signature_part {
    static_assert(dependent_false<Part>, "a system signature takes reads<...>, writes<...>, exclude_t<...>, "
                                         "after<...>, per_entity and owning_group");
};
struct empty_part {
    using read_list = type_list<>;
    using write_list = type_list<>;
    using exclude_list = type_list<>;
    using after_list = type_list<>;
    static constexpr std::size_t reads_parts = 0, writes_parts = 0, exclude_parts = 0, after_parts = 0;
    static constexpr std::size_t per_entity_parts = 0;
    static constexpr std::size_t owning_group_parts = 0;
};
template<typename... Type>
struct signature_part<reads<Type...>> : empty_part {
    using read_list = type_list<Type...>;
    static constexpr std::size_t reads_parts = 1;
};
template<typename... Type>
struct signature_part<writes<Type...>> : empty_part {
    using write_list = type_list<Type...>;
    static constexpr std::size_t writes_parts = 1;
};
template<typename... Type>
struct signature_part<exclude_t<Type...>> : empty_part {
    using exclude_list = type_list<Type...>;
    static constexpr std::size_t exclude_parts = 1;
};
template<typename... System>
struct signature_part<after<System...>> : empty_part {
    using after_list = type_list<System...>;
    static constexpr std::size_t after_parts = 1;
};
template<>
struct signature_part<per_entity> : empty_part {
    static constexpr std::size_t per_entity_parts = 1;
};
template<>
struct signature_part<owning_group> : empty_part {
    static constexpr std::size_t owning_group_parts = 1;
};

template<typename List>
struct all_unique;
template<>
struct all_unique<type_list<>> : std::true_type {};
template<typename First, typename... Rest>
struct all_unique<type_list<First, Rest...>>
    : std::bool_constant<!contains_v<First, Rest...> && all_unique<type_list<Rest...>>::value> {};

template<typename List, typename Other>
struct disjoint;
template<typename... A, typename... B>
struct disjoint<type_list<A...>, type_list<B...>> : std::bool_constant<!(contains_v<A, B...> || ...)> {};

template<typename List>
struct all_plain;
template<typename... Type>
struct all_plain<type_list<Type...>>
    : std::bool_constant<(std::is_same_v<Type, std::remove_cvref_t<Type>> && ...)> {};

template<typename Type, typename List>
struct in_list;
template<typename Type, typename... List>
struct in_list<Type, type_list<List...>> : std::bool_constant<contains_v<Type, List...>> {};

} // namespace detail

/// A system's signature; derive a system class from it, or pass it to scheduler.add(name, signature, func).
template<typename... Part>
struct system {
    using signature = system;
    using read_list = detail::concat_t<typename detail::signature_part<Part>::read_list...>;
    using write_list = detail::concat_t<typename detail::signature_part<Part>::write_list...>;
    using exclude_list = detail::concat_t<typename detail::signature_part<Part>::exclude_list...>;
    using after_list = detail::concat_t<typename detail::signature_part<Part>::after_list...>;
    /// Every component the system may touch: its writes, then its reads.
    using access_list = detail::concat_t<write_list, read_list>;
    static constexpr bool is_per_entity = (detail::signature_part<Part>::per_entity_parts + ... + 0) != 0;
    static constexpr bool is_owning_group = (detail::signature_part<Part>::owning_group_parts + ... + 0) != 0;

    static_assert((detail::signature_part<Part>::reads_parts + ... + 0) <= 1, "reads<...> appears twice");
    static_assert((detail::signature_part<Part>::writes_parts + ... + 0) <= 1, "writes<...> appears twice");
    static_assert((detail::signature_part<Part>::exclude_parts + ... + 0) <= 1,
                  "exclude_t<...> appears twice");
    static_assert((detail::signature_part<Part>::after_parts + ... + 0) <= 1, "after<...> appears twice");
    static_assert((detail::signature_part<Part>::per_entity_parts + ... + 0) <= 1,
                  "per_entity appears twice");
    static_assert((detail::signature_part<Part>::owning_group_parts + ... + 0) <= 1,
                  "owning_group appears twice");
    static_assert(!is_owning_group || access_list::size != 0, "owning_group needs types to own");
    static_assert(detail::all_plain<access_list>::value && detail::all_plain<exclude_list>::value,
                  "declare plain component types: reads<Position>, not reads<const Position&>");
    static_assert(detail::all_unique<read_list>::value, "a type appears twice in reads<...>");
    static_assert(detail::all_unique<write_list>::value, "a type appears twice in writes<...>");
    static_assert(
        detail::disjoint<read_list, write_list>::value,
        "a type is both read and written: writes<T> already allows reading T, drop it from reads<...>");
    static_assert(detail::disjoint<access_list, exclude_list>::value,
                  "a type is both accessed and excluded: an excluded type is never present in the iteration");

    /// The context a system of this signature receives in update().
    template<typename Registry = ecsnet::registry>
    using context = system_context<Registry, system>;
};

namespace detail {

template<typename Type>
concept named_system = requires {
    { Type::name } -> std::convertible_to<std::string_view>;
};

template<typename Type>
concept has_signature = requires {
    typename Type::signature;
};

} // namespace detail

/// A system type's name: its static `name` member if it has one, otherwise the type's name. Names identify
/// systems in after<>, in errors and in scheduler::describe(); they must be unique in a scheduler.
template<typename System>
[[nodiscard]] constexpr std::string_view system_name() noexcept {
    if constexpr (detail::named_system<System>) {
        return std::string_view{System::name};
    } else {
        return type_name<System>();
    }
}

} // namespace ecsnet
