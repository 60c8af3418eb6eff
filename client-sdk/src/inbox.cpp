#include "inbox.hpp"

#include <algorithm>

namespace ecsnet::client::detail {

inbox::inbox(std::size_t max_snapshots)
    : max_snapshots_{std::max<std::size_t>(max_snapshots, 1)} {}

void inbox::push_welcome(std::uint64_t session, const v1::ServerWelcome& welcome) {
    std::lock_guard lock{mutex_};
    inbound event;
    event.what = inbound::kind::welcome;
    event.session = session;
    event.welcome = welcome;
    events_.push_back(std::move(event));
}

bool inbox::push_snapshot(std::uint64_t session, std::string_view envelope) {
    std::lock_guard lock{mutex_};
    bool dropped = false;
    if (snapshots_ >= max_snapshots_) {
        const auto oldest = std::find_if(events_.begin(), events_.end(),
                                         [](const inbound& e) { return e.what == inbound::kind::snapshot; });
        if (oldest != events_.end()) {
            events_.erase(oldest);
            --snapshots_;
            dropped = true;
        }
    }
    inbound event;
    event.what = inbound::kind::snapshot;
    event.session = session;
    event.snapshot.assign(envelope);
    events_.push_back(std::move(event));
    ++snapshots_;
    return dropped;
}

void inbox::push_disconnected(std::uint64_t session, disconnect_info info) {
    std::lock_guard lock{mutex_};
    inbound event;
    event.what = inbound::kind::disconnected;
    event.session = session;
    event.disconnect = std::move(info);
    events_.push_back(std::move(event));
}

void inbox::take(std::deque<inbound>& out) {
    out.clear();
    std::lock_guard lock{mutex_};
    out.swap(events_);
    snapshots_ = 0;
}

} // namespace ecsnet::client::detail
