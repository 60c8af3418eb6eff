#pragma once

// The server's open client links (TCP and UDP), so that they can be visited each tick and all closed at
// shutdown.

#include <cstddef>
#include <memory>
#include <vector>

#include "client_link.hpp"

namespace ecsnet::server {

class connection_manager {
public:
    void add(std::shared_ptr<client_link> c) { connections_.push_back(std::move(c)); }

    /// Forgets a closed link. O(links).
    void remove(const client_link& c) {
        std::erase_if(connections_,
                      [&c](const std::shared_ptr<client_link>& held) { return held.get() == &c; });
    }

    [[nodiscard]] std::size_t size() const noexcept { return connections_.size(); }
    [[nodiscard]] bool empty() const noexcept { return connections_.empty(); }

    /// Calls func(client_link&) for each link; func may close links (a copy is visited).
    template<typename Func>
    void for_each(Func func) {
        const auto snapshot = connections_;
        for (const auto& c : snapshot) {
            func(*c);
        }
    }

private:
    std::vector<std::shared_ptr<client_link>> connections_;
};

} // namespace ecsnet::server
