#pragma once

// A non-owning, allocation-free callable: a function pointer and a payload pointer. Two words, copied by
// value, invoked with one indirect call; what signals store so that publishing costs no std::function.

#include <functional>
#include <type_traits>
#include <utility>

namespace ecsnet {

template<typename>
class delegate;

template<typename Ret, typename... Args>
class delegate<Ret(Args...)> {
public:
    using function_type = Ret(const void*, Args...);

    constexpr delegate() noexcept = default;
    constexpr delegate(function_type* function, const void* payload) noexcept
        : function_{function}
        , payload_{payload} {}

    /// Binds a free function (or a captureless constant) callable with Args...
    template<auto Candidate>
    [[nodiscard]] static constexpr delegate create() noexcept {
        static_assert(std::is_invocable_r_v<Ret, decltype(Candidate), Args...>, "candidate not invocable");
        return delegate{[](const void*, Args... args) -> Ret {
                            return static_cast<Ret>(std::invoke(Candidate, std::forward<Args>(args)...));
                        },
                        nullptr};
    }

    /// Binds a member function of `instance`, or a free function taking `instance` first.
    template<auto Candidate, typename Type>
    [[nodiscard]] static constexpr delegate create(Type& instance) noexcept {
        static_assert(std::is_invocable_r_v<Ret, decltype(Candidate), Type&, Args...>,
                      "candidate not invocable");
        return delegate{[](const void* payload, Args... args) -> Ret {
                            auto* self = static_cast<Type*>(const_cast<void*>(payload));
                            return static_cast<Ret>(
                                std::invoke(Candidate, *self, std::forward<Args>(args)...));
                        },
                        &instance};
    }

    Ret operator()(Args... args) const { return function_(payload_, std::forward<Args>(args)...); }

    [[nodiscard]] explicit operator bool() const noexcept { return function_ != nullptr; }
    [[nodiscard]] const void* payload() const noexcept { return payload_; }
    [[nodiscard]] bool operator==(const delegate&) const noexcept = default;

private:
    function_type* function_{};
    const void* payload_{};
};

} // namespace ecsnet
