#include "ecsnet/server/udp_connection.hpp"

#include <algorithm>

#include "ecsnet/server/udp_listener.hpp"

namespace ecsnet::server {

namespace {

// Bytes a datagram adds to what it carries: IPv4 and UDP headers (28), the transport's prefix, sequence and
// MAC (at most 25), and the link's packet header and chunk header (about 10).
constexpr std::size_t datagram_overhead = 28 + 25 + 10;
// What one datagram carries of a message split in fragments.
constexpr std::size_t fragment_payload = 1100;

std::span<const std::byte> as_bytes(std::string_view bytes) noexcept {
    return {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()};
}

} // namespace

udp_connection::udp_connection(asio::io_context& io, udp_listener& listener, connection_handler& handler,
                               transport::connection_id id, std::string remote,
                               std::chrono::milliseconds handshake_timeout)
    : listener_{listener}
    , handler_{handler}
    , id_{id}
    , handshake_timeout_{handshake_timeout}
    , handshake_timer_{io} {
    remote_ = std::move(remote);
}

void udp_connection::start() {
    handshake_timer_.expires_after(handshake_timeout_);
    handshake_timer_.async_wait([weak = weak_from_this()](const asio::error_code& ec) {
        const auto self = weak.lock();
        if (!ec && self && self->session_.state == session::phase::handshaking) {
            self->disconnect(v1::HANDSHAKE_TIMEOUT, "no handshake within " +
                                                        std::to_string(self->handshake_timeout_.count()) +
                                                        " ms");
        }
    });
}

void udp_connection::handshake_done() {
    handshake_timer_.cancel();
}

void udp_connection::send_bytes(transport::channel ch, std::string_view bytes) {
    if (closing_ || closed_) {
        return;
    }
    switch (listener_.server().send(id_, ch, as_bytes(bytes))) {
    case transport::send_status::queued:
        return;
    case transport::send_status::queue_full:
        disconnect(v1::SLOW_CONSUMER,
                   "the client does not acknowledge what it is sent (reliable queue full)");
        return;
    case transport::send_status::too_big:
        disconnect(v1::PROTOCOL_ERROR, "a message of " + std::to_string(bytes.size()) +
                                           " bytes is larger than the transport carries");
        return;
    }
}

void udp_connection::send(const v1::Envelope& message) {
    proto::serialize_into(message, scratch_);
    // Pongs and input statuses are worth nothing once late: unreliable. An input status leaves with the
    // snapshot that follows it (the tick flushes then), one datagram for both when they fit.
    const bool status = message.has_input_status();
    send_bytes(message.has_pong() || status ? transport::channel::unreliable : transport::channel::reliable,
               scratch_);
    if (!status) {
        listener_.server().flush(id_);
    }
}

void udp_connection::want_snapshot() {
    if (closing_ || closed_ || session_.state != session::phase::playing) {
        return;
    }
    auto snapshot = handler_.next_snapshot(*this);
    if (!snapshot) {
        return;
    }
    send_bytes(snapshot->full_state ? transport::channel::reliable : transport::channel::unreliable,
               snapshot->envelope());
    if (!closed_) {
        listener_.server().flush(id_);
    }
}

void udp_connection::prefetch_send() const noexcept {
    listener_.server().prefetch_send(id_);
}

void udp_connection::received(transport::channel, std::span<const std::byte> bytes) {
    if (closing_ || closed_) {
        return;
    }
    const std::string_view view{reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    auto decoder = listener_.borrow_decoder();
    if (auto decoded = decoder->decode(view); !decoded) {
        disconnect(v1::PROTOCOL_ERROR, "malformed message: " + std::string{decoded.message()});
        return;
    }
    handler_.on_message(*this, decoder->message());
}

void udp_connection::leave() {
    if (!left_) {
        left_ = true;
        handshake_timer_.cancel();
        handler_.on_left(*this);
    }
}

void udp_connection::disconnect(v1::DisconnectReason reason, std::string message) {
    if (closing_ || closed_) {
        return;
    }
    closing_ = true;
    session_.close_reason = reason;
    session_.close_message = std::move(message);
    session_.state = session::phase::closing;
    leave();
    // The transport tells the client (redundant disconnect packets) and calls closed() back.
    listener_.server().disconnect(
        id_, static_cast<std::uint8_t>(reason), session_.close_message,
        static_cast<std::uint16_t>(std::min<std::uint32_t>(session_.retry_after_seconds, 65'535)));
}

void udp_connection::abort() {
    if (closing_ || closed_) {
        return;
    }
    closing_ = true;
    session_.state = session::phase::closing;
    leave();
    listener_.server().disconnect(id_, static_cast<std::uint8_t>(v1::CLIENT_QUIT), "");
}

void udp_connection::closed(const transport::disconnect_info& info) {
    if (closed_) {
        return;
    }
    closed_ = true;
    if (!closing_) {
        // The transport or the client decided: a timeout, a broken link, or the client's own disconnect.
        session_.closed_by_peer = info.by == transport::closed_by::peer;
        const auto code = static_cast<v1::DisconnectReason>(info.code);
        session_.close_reason = info.by == transport::closed_by::peer     ? v1::CLIENT_QUIT
                                : v1::DisconnectReason_IsValid(info.code) ? code
                                                                          : v1::PROTOCOL_ERROR;
        session_.close_message = info.by == transport::closed_by::peer
                                     ? "client quit: " + info.message.substr(0, 200)
                                     : "transport: " + info.message.substr(0, 200);
    }
    closing_ = true;
    session_.state = session::phase::closing;
    leave();
    handler_.on_closed(*this);
}

link_measures udp_connection::measures() const {
    link_measures out;
    if (const auto stats = listener_.server().stats(id_)) {
        out.bytes_sent = stats->bytes_sent;
        out.bytes_received = stats->bytes_received;
        out.rtt_ms = std::chrono::duration<double, std::milli>(stats->link.rtt).count();
        out.loss = stats->link.loss;
        out.resends = stats->link.resends;
    }
    return out;
}

std::size_t udp_connection::wire_bytes(const outgoing_snapshot& snapshot) const noexcept {
    const auto payload = snapshot.envelope().size();
    const auto datagrams = std::max<std::size_t>(1, (payload + fragment_payload - 1) / fragment_payload);
    return payload + datagrams * datagram_overhead;
}

} // namespace ecsnet::server
