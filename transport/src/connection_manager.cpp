#include "ecsnet/transport/connection_manager.hpp"

namespace ecsnet::transport {

server_connection* connection_manager::find(connection_id id) const {
    const auto found = by_id_.find(id);
    return found == by_id_.end() ? nullptr : found->second.get();
}

server_connection* connection_manager::find(const net_address& remote) const {
    const auto found = by_address_.find(remote);
    return found == by_address_.end() ? nullptr : found->second;
}

server_connection& connection_manager::add(std::unique_ptr<server_connection> connection) {
    auto& added = *connection;
    by_address_[added.remote()] = &added;
    by_client_[added.client_id()] = added.id();
    all_.push_back(&added);
    by_id_.emplace(added.id(), std::move(connection));
    return added;
}

void connection_manager::remove(connection_id id) {
    const auto found = by_id_.find(id);
    if (found == by_id_.end()) {
        return;
    }
    by_address_.erase(found->second->remote());
    by_client_.erase(found->second->client_id());
    found->second->removed = true;
    std::erase(all_, found->second.get());
    removed_.push_back(std::move(found->second));
    by_id_.erase(found);
}

} // namespace ecsnet::transport
