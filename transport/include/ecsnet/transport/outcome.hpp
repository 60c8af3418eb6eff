#pragma once

// Errors as values for the transport's decoders: outcome<T, E> is either a T or an error code E (an enum
// whose to_string gives its name). Nothing that reads network bytes throws or asserts on bad input.

#include <utility>
#include <variant>

namespace ecsnet::transport {

template<typename T, typename E>
class [[nodiscard]] outcome {
public:
    outcome(T value) // NOLINT(google-explicit-constructor): a value converts to a success
        : data_{std::in_place_index<0>, std::move(value)} {}
    outcome(E error) // NOLINT(google-explicit-constructor): so does an error code
        : data_{std::in_place_index<1>, error} {}

    [[nodiscard]] bool has_value() const noexcept { return data_.index() == 0; }
    [[nodiscard]] explicit operator bool() const noexcept { return has_value(); }

    [[nodiscard]] T& value() & { return std::get<0>(data_); }
    [[nodiscard]] const T& value() const& { return std::get<0>(data_); }
    [[nodiscard]] T&& value() && { return std::get<0>(std::move(data_)); }
    [[nodiscard]] T& operator*() & { return value(); }
    [[nodiscard]] const T& operator*() const& { return value(); }
    [[nodiscard]] T* operator->() { return &value(); }
    [[nodiscard]] const T* operator->() const { return &value(); }

    /// The error code; E{} when there is a value.
    [[nodiscard]] E error() const noexcept { return has_value() ? E{} : std::get<1>(data_); }

private:
    std::variant<T, E> data_;
};

} // namespace ecsnet::transport
