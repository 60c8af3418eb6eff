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

udp_listener::borrowed_decoder::borrowed_decoder(udp_listener& listener)
    : listener_{listener} {
    if (listener_.decoder_in_use_) {
        own_ = std::make_unique<envelope_decoder>();
    } else {
        listener_.decoder_in_use_ = true;
    }
}

udp_listener::borrowed_decoder::~borrowed_decoder() {
    if (!own_) {
        listener_.decoder_in_use_ = false;
    }
}

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
    const auto at = transport::connection_slot(info.id);
    if (connections_.size() <= at) {
        connections_.resize(std::size_t{at} + 1);
    }
    connections_[at] = {info.id, c};
    c->start();
    handler_.on_opened(c);
}

udp_listener::slot* udp_listener::find(transport::connection_id id) noexcept {
    const auto at = transport::connection_slot(id);
    return at < connections_.size() && connections_[at].id == id ? &connections_[at] : nullptr;
}

void udp_listener::on_message(transport::connection_id id, transport::channel ch,
                              std::span<const std::byte> message) {
    if (auto* found = find(id)) {
        const auto keep = found->connection; // the handler may close it
        keep->received(ch, message);
    }
}

void udp_listener::on_disconnected(transport::connection_id id, const transport::disconnect_info& info) {
    auto* found = find(id);
    if (found == nullptr) {
        return;
    }
    const auto keep = std::move(found->connection);
    *found = {};
    keep->closed(info);
}

void udp_listener::on_dropped(transport::drop_reason reason, const transport::net_address& from) {
    if (on_drop_) {
        on_drop_(reason, from);
    }
}

} // namespace ecsnet::server
