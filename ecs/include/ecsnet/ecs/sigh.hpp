#pragma once

// Signals: a list of delegates called in connection order, a sink to connect to it, and connections to
// disconnect. Publishing an empty signal is one comparison, so an unobserved registry pays nothing.
//
// Listeners may connect new listeners while a signal publishes (they are called in the same publish) and
// may disconnect any listener (it is skipped from then on). A connection must not outlive its signal.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "delegate.hpp"

namespace ecsnet {

template<typename>
class sigh;
template<typename>
class sink;

/// A handle to one connected listener; release() disconnects it. Copyable; releasing twice is harmless.
class connection {
public:
    connection() noexcept = default;

    [[nodiscard]] explicit operator bool() const noexcept { return signal_ != nullptr; }

    void release() {
        if (signal_ != nullptr) {
            disconnect_(signal_, id_);
            signal_ = nullptr;
        }
    }

private:
    template<typename>
    friend class sink;

    connection(void* signal, std::uint64_t id, bool (*disconnect)(void*, std::uint64_t)) noexcept
        : signal_{signal}
        , id_{id}
        , disconnect_{disconnect} {}

    void* signal_{};
    std::uint64_t id_{};
    bool (*disconnect_)(void*, std::uint64_t){};
};

/// Disconnects on destruction.
class scoped_connection {
public:
    scoped_connection() noexcept = default;
    scoped_connection(connection conn) noexcept // NOLINT(google-explicit-constructor): adopts a connection
        : conn_{conn} {}
    scoped_connection(const scoped_connection&) = delete;
    scoped_connection& operator=(const scoped_connection&) = delete;
    scoped_connection(scoped_connection&& other) noexcept
        : conn_{std::exchange(other.conn_, {})} {}
    scoped_connection& operator=(scoped_connection&& other) noexcept {
        if (this != &other) {
            conn_.release();
            conn_ = std::exchange(other.conn_, {});
        }
        return *this;
    }
    ~scoped_connection() { conn_.release(); }

    void release() { conn_.release(); }
    [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(conn_); }

private:
    connection conn_;
};

template<typename... Args>
class sigh<void(Args...)> {
public:
    using delegate_type = delegate<void(Args...)>;

    sigh() = default;
    // Connections point at the signal: it stays where it is.
    sigh(const sigh&) = delete;
    sigh& operator=(const sigh&) = delete;

    [[nodiscard]] bool empty() const noexcept { return slots_.empty(); }
    [[nodiscard]] std::size_t size() const noexcept { return slots_.size(); }

    /// Calls every listener with `args`, in connection order.
    void publish(Args... args) {
        if (slots_.empty()) {
            return;
        }
        ++publishing_;
        for (std::size_t at = 0; at < slots_.size(); ++at) {
            const auto call = slots_[at].call; // copied: a listener may connect and reallocate slots_
            if (call) {
                call(args...);
            }
        }
        if (--publishing_ == 0 && dead_ != 0) {
            std::erase_if(slots_, [](const slot& s) { return !s.call; });
            dead_ = 0;
        }
    }

    void disconnect_all() noexcept {
        if (publishing_ != 0) {
            for (auto& s : slots_) {
                s.call = {};
            }
            dead_ = slots_.size();
        } else {
            slots_.clear();
        }
    }

private:
    template<typename>
    friend class sink;

    struct slot {
        delegate_type call;
        std::uint64_t id{};
        std::unique_ptr<void, void (*)(void*)> owned{nullptr, [](void*) {}};
    };

    std::uint64_t connect(delegate_type call, std::unique_ptr<void, void (*)(void*)> owned) {
        const auto id = next_id_++;
        slots_.push_back(slot{call, id, std::move(owned)});
        return id;
    }

    bool disconnect(std::uint64_t id) noexcept {
        for (auto it = slots_.begin(); it != slots_.end(); ++it) {
            if (it->id == id && it->call) {
                if (publishing_ != 0) {
                    it->call = {};
                    ++dead_;
                } else {
                    slots_.erase(it);
                }
                return true;
            }
        }
        return false;
    }

    std::vector<slot> slots_;
    std::uint64_t next_id_{1};
    std::size_t publishing_{};
    std::size_t dead_{};
};

template<typename... Args>
class sink<sigh<void(Args...)>> {
    using signal_type = sigh<void(Args...)>;
    using delegate_type = typename signal_type::delegate_type;

public:
    explicit sink(signal_type& signal) noexcept
        : signal_{&signal} {}

    /// Connects a free function callable with Args...
    template<auto Candidate>
    connection connect() {
        return make(delegate_type::template create<Candidate>(), {nullptr, [](void*) {}});
    }

    /// Connects a member function of `instance` (or a free function taking it first).
    template<auto Candidate, typename Type>
    connection connect(Type& instance) {
        return make(delegate_type::template create<Candidate>(instance), {nullptr, [](void*) {}});
    }

    /// Connects any callable; the signal keeps a copy of it.
    template<typename Func>
    connection connect(Func&& func) {
        using callable = std::decay_t<Func>;
        static_assert(std::is_invocable_v<callable&, Args...>,
                      "listener not invocable with the signal's arguments");
        auto* copy = new callable(std::forward<Func>(func));
        std::unique_ptr<void, void (*)(void*)> owned{copy, [](void* p) { delete static_cast<callable*>(p); }};
        return make(delegate_type::template create<&sink::invoke_owned<callable>>(*copy), std::move(owned));
    }

    [[nodiscard]] bool empty() const noexcept { return signal_->empty(); }

private:
    template<typename Callable>
    static void invoke_owned(Callable& callable, Args... args) {
        callable(args...);
    }

    connection make(delegate_type call, std::unique_ptr<void, void (*)(void*)> owned) {
        const auto id = signal_->connect(call, std::move(owned));
        return connection{signal_, id, [](void* signal, std::uint64_t slot_id) {
                              return static_cast<signal_type*>(signal)->disconnect(slot_id);
                          }};
    }

    signal_type* signal_;
};

template<typename... Args>
sink(sigh<void(Args...)>&) -> sink<sigh<void(Args...)>>;

} // namespace ecsnet
