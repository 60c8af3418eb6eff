#include "ecsnet/server/udp_listener.hpp"

namespace ecsnet::server {

udp_listener::udp_listener(asio::io_context& io, transport::udp_server_options options,
                           connection_handler& handler, std::chrono::milliseconds handshake_timeout,
                           drop_sink on_drop)
    : io_{io}
    , handler_{handler}
    , handshake_timeout_{handshake_timeout}
    , on_drop_{std::move(on_drop)}
    , server_{io, std::move(options), *this} {}

udp_listener::~udp_listener() = default;

void udp_listener::start() {
    server_.start();
}

void udp_listener::stop(std::uint8_t code, std::string_view message, std::uint16_t retry_after_s) {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    server_.disconnect_all(code, message, retry_after_s);
    server_.stop();
}

void udp_listener::on_connected(const transport::connection_info& info) {
    auto c = std::make_shared<udp_connection>(io_, *this, handler_, info.id, info.remote.to_string(),
                                              handshake_timeout_);
    connections_.emplace(info.id, c);
    c->start();
    handler_.on_opened(c);
}

void udp_listener::on_message(transport::connection_id id, transport::channel ch,
                              std::span<const std::byte> message) {
    const auto found = connections_.find(id);
    if (found != connections_.end()) {
        const auto keep = found->second; // the handler may close it
        keep->received(ch, message);
    }
}

void udp_listener::on_disconnected(transport::connection_id id, const transport::disconnect_info& info) {
    const auto found = connections_.find(id);
    if (found == connections_.end()) {
        return;
    }
    const auto keep = found->second;
    connections_.erase(found);
    keep->closed(info);
}

void udp_listener::on_dropped(transport::drop_reason reason, const transport::net_address& from) {
    if (on_drop_) {
        on_drop_(reason, from);
    }
}

} // namespace ecsnet::server
