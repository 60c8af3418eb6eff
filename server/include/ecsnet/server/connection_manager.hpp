#pragma once

// The server's open client links (TCP and UDP), so that they can be visited each tick and all closed at
// shutdown.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "client_link.hpp"

namespace ecsnet::server {

class connection_manager {
public:
    void add(std::shared_ptr<client_link> c) {
        connections_.push_back(std::move(c));
        ++live_;
    }

    /// Forgets a closed link. O(links). During a visit the link is kept alive until the visit ends (the
    /// visit may be inside one of its own calls).
    void remove(const client_link& c) {
        const auto held = std::find_if(connections_.begin(), connections_.end(),
                                       [&c](const std::shared_ptr<client_link>& l) { return l.get() == &c; });
        if (held == connections_.end()) {
            return;
        }
        --live_;
        if (visiting_ > 0) {
            closed_during_visit_.push_back(std::move(*held)); // its place stays, empty, until the visit ends
        } else {
            connections_.erase(held);
        }
    }

    [[nodiscard]] std::size_t size() const noexcept { return live_; }
    [[nodiscard]] bool empty() const noexcept { return live_ == 0; }

    /// Calls func(client_link&) for each link open when the visit starts and not closed since; func may
    /// open and close links. No copy of the list: a copy of a thousand shared_ptrs was two atomic
    /// operations on a cold line per link, several times a tick.
    template<typename Func>
    void for_each(Func func) {
        for_each_ahead(
            0, [](const client_link&) {}, func);
    }

    /// As for_each, and first asks for the links ahead, whose state is cold in cache in a visit of a
    /// thousand: the objects of the link `2 * distance` places further, then ahead(link) for the one
    /// `distance` further (whose object has arrived by then, so that ahead() may read it to find what
    /// to ask for next). ahead must only ask (prefetch), never change anything. Distance 0: no asking.
    template<typename Ahead, typename Func>
    void for_each_ahead(std::size_t distance, Ahead ahead, Func func) {
        const visit guard{*this};
        const auto count = connections_.size();
        for (std::size_t i = 0; i < count; ++i) {
            if (distance > 0 && i + 2 * distance < count) {
                if (const auto* later = connections_[i + 2 * distance].get()) {
                    later->prefetch_object();
                }
            }
            if (distance > 0 && i + distance < count) {
                if (const auto* next = connections_[i + distance].get()) {
                    ahead(*next);
                }
            }
            if (auto* link = connections_[i].get()) {
                func(*link);
            }
        }
    }

private:
    // Counts the visits under way; the outermost one, as it ends, drops the links closed during it.
    struct visit {
        explicit visit(connection_manager& m) noexcept
            : manager{m} {
            ++manager.visiting_;
        }
        visit(const visit&) = delete;
        visit& operator=(const visit&) = delete;
        ~visit() {
            if (--manager.visiting_ == 0 && !manager.closed_during_visit_.empty()) {
                std::erase(manager.connections_, nullptr);
                manager.closed_during_visit_.clear();
            }
        }
        connection_manager& manager;
    };

    std::vector<std::shared_ptr<client_link>> connections_; // nullptr: closed during a visit
    std::vector<std::shared_ptr<client_link>> closed_during_visit_;
    std::size_t live_{0};
    int visiting_{0};
};

} // namespace ecsnet::server
