#pragma once

// Errors as values: every function of the codec that reads bytes from the network returns a result<T>,
// either a T or an error (a code and a human-readable message). Nothing that reads network bytes throws,
// asserts or aborts on bad input; exceptions remain only for programming errors and std::bad_alloc.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace ecsnet::proto {

enum class errc : std::uint8_t {
    // framing
    frame_too_large = 1, // a length prefix announces more than the maximum frame size
    bad_length_prefix,   // a length prefix longer than 5 bytes or above 2^32 - 1
    // messages
    malformed_message, // bytes that do not parse as the expected protobuf message
    empty_envelope,    // an Envelope with no member of its oneof set
    unexpected_message,
    // handshake
    version_mismatch,
    schema_mismatch,
    // snapshots
    stale_snapshot,   // not newer than the newest tick already applied
    unknown_baseline, // a baseline (or second baseline) the client does not keep: ask for a full state
    bad_header,       // header fields inconsistent (checksum presence, gaps out of range...)
    header_check_failed,
    malformed_columns,  // truncated or invalid packed columns (varint, count, id out of range...)
    inconsistent_delta, // well-formed columns that do not fit the baseline (removing an absent id...)
    checksum_mismatch,  // the state rebuilt differs from the server's: ask for a full state
    limit_exceeded,     // more entities or bytes than the configured limits allow
};

/// A short stable name of the code, e.g. "unknown_baseline".
[[nodiscard]] std::string_view to_string(errc code) noexcept;

struct error {
    errc code{};
    std::string message;
};

/// Either a value or an error. Cheap to move; check with `if (r)` or has_value() before value().
template<typename T>
class [[nodiscard]] result {
public:
    result(T value) // NOLINT(google-explicit-constructor): a value converts to a successful result
        : data_{std::in_place_index<0>, std::move(value)} {}
    result(error err) // NOLINT(google-explicit-constructor): so is an error
        : data_{std::in_place_index<1>, std::move(err)} {}

    [[nodiscard]] bool has_value() const noexcept { return data_.index() == 0; }
    [[nodiscard]] explicit operator bool() const noexcept { return has_value(); }

    [[nodiscard]] T& value() & { return std::get<0>(data_); }
    [[nodiscard]] const T& value() const& { return std::get<0>(data_); }
    [[nodiscard]] T&& value() && { return std::get<0>(std::move(data_)); }
    [[nodiscard]] T& operator*() & { return value(); }
    [[nodiscard]] const T& operator*() const& { return value(); }
    [[nodiscard]] T* operator->() { return &value(); }
    [[nodiscard]] const T* operator->() const { return &value(); }

    [[nodiscard]] const error& error_value() const& { return std::get<1>(data_); }
    [[nodiscard]] errc code() const noexcept { return has_value() ? errc{} : std::get<1>(data_).code; }
    [[nodiscard]] std::string_view message() const noexcept {
        return has_value() ? std::string_view{} : std::string_view{std::get<1>(data_).message};
    }

private:
    std::variant<T, error> data_;
};

/// Success or an error, for operations without a value.
template<>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(error err) // NOLINT(google-explicit-constructor)
        : error_{std::move(err)}
        , failed_{true} {}

    [[nodiscard]] bool has_value() const noexcept { return !failed_; }
    [[nodiscard]] explicit operator bool() const noexcept { return !failed_; }
    [[nodiscard]] const error& error_value() const& { return error_; }
    [[nodiscard]] errc code() const noexcept { return failed_ ? error_.code : errc{}; }
    [[nodiscard]] std::string_view message() const noexcept {
        return failed_ ? std::string_view{error_.message} : std::string_view{};
    }

private:
    error error_{};
    bool failed_{false};
};

[[nodiscard]] inline error make_error(errc code, std::string message) {
    return error{code, std::move(message)};
}

} // namespace ecsnet::proto
