#pragma once

// What the scheduler throws.
//
// - schedule_error: the list of systems cannot be scheduled (a cycle, an unknown or duplicate name...);
//   thrown when the scheduler builds its graph, at start-up. The message names the systems involved.
// - access_violation: a system touched a component in a way its signature does not allow (wrote a type it
//   declared read-only, changed a pool's entities outside a command buffer); detected by the access checks
//   (on by default in debug builds) and thrown by run_tick(). It names the system and the component type.
// - system_failure: a system threw; run_tick() rethrows it on the calling thread as a system_failure naming
//   the system, with the original exception nested (std::rethrow_if_nested gets it back).

#include <stdexcept>
#include <string>
#include <string_view>

namespace ecsnet {

class schedule_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

class access_violation : public schedule_error {
public:
    access_violation(std::string_view system, std::string_view component, const std::string& message)
        : schedule_error{message}
        , system_{system}
        , component_{component} {}

    [[nodiscard]] const std::string& system() const noexcept { return system_; }
    [[nodiscard]] const std::string& component() const noexcept { return component_; }

private:
    std::string system_;
    std::string component_;
};

class system_failure : public std::runtime_error {
public:
    system_failure(std::string_view system, const std::string& message)
        : std::runtime_error{message}
        , system_{system} {}

    [[nodiscard]] const std::string& system() const noexcept { return system_; }

private:
    std::string system_;
};

} // namespace ecsnet
