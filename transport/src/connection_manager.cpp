#include "ecsnet/transport/connection_manager.hpp"

#include <algorithm>

namespace ecsnet::transport {

server_connection* connection_manager::find(const net_address& remote) const {
    const auto* found = by_address_.find(remote);
    return found == nullptr ? nullptr : *found;
}

connection_id connection_manager::next_id() const noexcept {
    if (!free_.empty()) {
        const auto slot = free_.back();
        return make_connection_id(slot, connection_generation(slots_[slot].id) + 1);
    }
    return make_connection_id(static_cast<std::uint32_t>(slots_.size()), 1);
}

server_connection& connection_manager::add(std::unique_ptr<server_connection> connection) {
    auto& added = *connection;
    const auto slot = connection_slot(added.id());
    if (!free_.empty() && free_.back() == slot) {
        free_.pop_back();
    } else {
        slots_.resize(std::max<std::size_t>(slots_.size(), std::size_t{slot} + 1));
    }
    by_address_.insert_or_assign(added.remote(), &added);
    by_client_[added.client_id()] = added.id();
    all_.push_back(&added);
    slots_[slot] = {added.id(), std::move(connection)};
    return added;
}

void connection_manager::remove(connection_id id) {
    auto* connection = find(id);
    if (connection == nullptr) {
        return;
    }
    by_address_.erase(connection->remote());
    by_client_.erase(connection->client_id());
    connection->removed = true;
    std::erase(all_, connection);
    const auto slot = connection_slot(id);
    removed_.push_back(std::move(slots_[slot].connection));
    free_.push_back(slot);
}

} // namespace ecsnet::transport
