#pragma once

// The server's open connections, so that they can be visited each tick and all closed at shutdown.

#include <cstddef>
#include <memory>
#include <vector>

#include "connection.hpp"

namespace ecsnet::server {

class connection_manager {
public:
    void add(std::shared_ptr<connection> c) { connections_.push_back(std::move(c)); }

    /// Forgets a closed connection. O(connections).
    void remove(const connection& c) {
        std::erase_if(connections_,
                      [&c](const std::shared_ptr<connection>& held) { return held.get() == &c; });
    }

    [[nodiscard]] std::size_t size() const noexcept { return connections_.size(); }
    [[nodiscard]] bool empty() const noexcept { return connections_.empty(); }

    /// Calls func(connection&) for each connection; func may close connections (a copy is visited).
    template<typename Func>
    void for_each(Func func) {
        const auto snapshot = connections_;
        for (const auto& c : snapshot) {
            func(*c);
        }
    }

private:
    std::vector<std::shared_ptr<connection>> connections_;
};

} // namespace ecsnet::server
