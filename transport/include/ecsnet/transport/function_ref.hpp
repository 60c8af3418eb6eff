#pragma once

// A callable borrowed for the length of a call, as C++26's std::function_ref: two pointers, never an
// allocation. link::write_packets hands every body it writes to one, and the server's input_buffer::take
// every input it applies; a std::function there allocated per packet (per client and tick) whenever the
// caller's lambda captured more than two pointers. (ecs/delegate.hpp is the same idea for signals, bound to
// named functions; the transport does not depend on ecs/.)

#include <functional>
#include <type_traits>
#include <utility>

namespace ecsnet::transport {

template<typename Signature>
class function_ref;

namespace detail {
template<typename F, typename Ref, typename Result, typename... Args>
concept callable_through =
    !std::is_same_v<std::remove_cvref_t<F>, Ref> && std::is_invocable_r_v<Result, F&, Args...>;
} // namespace detail

template<typename Result, typename... Args>
class function_ref<Result(Args...)> {
public:
    /// Refers to `f`, which must outlive every call through this reference. Implicit, as std::function's.
    template<detail::callable_through<function_ref, Result, Args...> F>
    function_ref(F&& f) noexcept
        : object_{const_cast<void*>(static_cast<const void*>(&f))}
        , call_{[](void* object, Args... args) -> Result {
            return std::invoke(*static_cast<std::remove_reference_t<F>*>(object),
                               std::forward<Args>(args)...);
        }} {}

    Result operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    Result (*call_)(void*, Args...);
};

} // namespace ecsnet::transport
