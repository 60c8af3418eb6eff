#include "ecsnet/server/tcp_connection.hpp"

#include <ecsnet/proto/handshake.hpp>

#include "ecsnet/server/metrics.hpp"

namespace ecsnet::server {

tcp_connection::tcp_connection(asio::ip::tcp::socket socket, connection_handler& handler,
                               const connection_limits& limits, traffic_counters traffic)
    : socket_{std::move(socket)}
    , handler_{handler}
    , limits_{limits}
    , traffic_{traffic}
    , decoder_{limits.max_frame_size}
    , read_buffer_(64 * 1024)
    , handshake_timer_{socket_.get_executor()}
    , idle_timer_{socket_.get_executor()}
    , stall_timer_{socket_.get_executor()}
    , grace_timer_{socket_.get_executor()} {
    asio::error_code ec;
    const auto endpoint = socket_.remote_endpoint(ec);
    remote_ =
        ec ? std::string{"unknown"} : endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
    socket_.set_option(asio::ip::tcp::no_delay{true}, ec);
    // A bounded kernel buffer keeps a client that stopped reading from hiding megabytes of backlog there.
    socket_.set_option(asio::socket_base::send_buffer_size{limits.socket_send_buffer}, ec);
}

void tcp_connection::start() {
    handshake_timer_.expires_after(limits_.handshake_timeout);
    handshake_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec && self->session_.state == session::phase::handshaking) {
            self->disconnect(v1::HANDSHAKE_TIMEOUT,
                             "no handshake within " +
                                 std::to_string(self->limits_.handshake_timeout.count()) + " ms");
        }
    });
    read();
}

void tcp_connection::handshake_done() {
    handshake_timer_.cancel();
    arm_idle();
}

void tcp_connection::arm_idle() {
    idle_timer_.expires_after(limits_.idle_timeout);
    idle_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec && self->session_.state == session::phase::playing) {
            self->disconnect(v1::TIMEOUT,
                             "no traffic for " + std::to_string(self->limits_.idle_timeout.count()) + " ms");
        }
    });
}

void tcp_connection::read() {
    socket_.async_read_some(asio::buffer(read_buffer_),
                            [self = shared_from_this()](const asio::error_code& ec, std::size_t count) {
                                if (self->closed_) {
                                    return;
                                }
                                if (ec) {
                                    self->lost(ec);
                                    return;
                                }
                                self->on_read(count);
                            });
}

void tcp_connection::lost(const asio::error_code& ec) {
    if (!closing_) { // a disconnect we started keeps its own reason
        session_.closed_by_peer = true;
        session_.close_reason = v1::CLIENT_QUIT;
        session_.close_message =
            ec == asio::error::eof ? "connection closed by the client" : "connection lost: " + ec.message();
    }
    close();
}

void tcp_connection::on_read(std::size_t count) {
    received_ += count;
    if (traffic_.received != nullptr) {
        traffic_.received->add(count);
    }
    if (closing_) {
        read(); // draining until the client closes or the grace period ends
        return;
    }
    if (session_.state == session::phase::playing) {
        arm_idle();
    }
    const auto status =
        decoder_.feed(std::string_view{read_buffer_.data(), count}, [this](std::string_view payload) {
            if (auto decoded = proto::decode_envelope(payload, message_); !decoded) {
                disconnect(v1::PROTOCOL_ERROR, "malformed message: " + std::string{decoded.message()});
                return false;
            }
            handler_.on_message(*this, message_);
            return !closing_ && !closed_;
        });
    if (!status && !closing_) {
        disconnect(v1::PROTOCOL_ERROR, std::string{status.message()});
    }
    if (!closed_) {
        read();
    }
}

void tcp_connection::send(std::shared_ptr<const std::string> frame) {
    if (closing_ || closed_ || frame == nullptr) {
        return;
    }
    if (unsent_ + frame->size() > limits_.max_unsent_bytes) {
        disconnect(v1::SLOW_CONSUMER, std::to_string(unsent_ + frame->size()) +
                                          " bytes waiting to be sent exceed " +
                                          std::to_string(limits_.max_unsent_bytes));
        return;
    }
    unsent_ += frame->size();
    queue_.push_back(std::move(frame));
    write();
}

void tcp_connection::send(const v1::Envelope& message) {
    auto frame = std::make_shared<std::string>();
    if (proto::append_envelope_frame(*frame, message)) {
        send(std::move(frame));
    }
}

void tcp_connection::want_snapshot() {
    snapshot_wanted_ = true;
    write();
}

void tcp_connection::write() {
    if (writing_ || closed_) {
        return;
    }
    if (queue_.empty() && snapshot_wanted_ && !closing_ && session_.state == session::phase::playing) {
        snapshot_wanted_ = false;
        // Encoded now, when the socket can take it: against the newest baseline this client acked.
        if (auto snapshot = handler_.next_snapshot(*this)) {
            unsent_ += snapshot->frame->size();
            queue_.push_back(std::move(snapshot->frame));
        }
    }
    if (queue_.empty()) {
        stall_timer_.cancel();
        if (closing_) {
            linger();
        }
        return;
    }
    writing_ = true;
    arm_stall();
    const auto& front = *queue_.front();
    socket_.async_write_some(asio::buffer(front.data() + front_offset_, front.size() - front_offset_),
                             [self = shared_from_this()](const asio::error_code& ec, std::size_t count) {
                                 self->writing_ = false;
                                 if (self->closed_) {
                                     return;
                                 }
                                 if (ec) {
                                     self->lost(ec);
                                     return;
                                 }
                                 self->on_write(count);
                             });
}

void tcp_connection::on_write(std::size_t count) {
    sent_ += count;
    if (traffic_.sent != nullptr) {
        traffic_.sent->add(count);
    }
    unsent_ -= count;
    front_offset_ += count;
    if (front_offset_ == queue_.front()->size()) {
        queue_.pop_front();
        front_offset_ = 0;
    }
    write();
}

void tcp_connection::arm_stall() {
    stall_timer_.expires_after(limits_.write_stall_timeout);
    stall_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec && self->writing_ && !self->closing_) {
            self->disconnect(v1::SLOW_CONSUMER,
                             "no write progress for " +
                                 std::to_string(self->limits_.write_stall_timeout.count()) + " ms (" +
                                 std::to_string(self->unsent_) + " bytes waiting)");
        }
    });
}

void tcp_connection::disconnect(v1::DisconnectReason reason, std::string message) {
    if (closing_ || closed_) {
        return;
    }
    session_.close_reason = reason;
    session_.close_message = std::move(message);
    session_.state = session::phase::closing;
    handshake_timer_.cancel();
    idle_timer_.cancel();
    snapshot_wanted_ = false;
    auto frame = std::make_shared<std::string>();
    static_cast<void>(proto::append_envelope_frame(
        *frame, proto::make_disconnect(reason, session_.close_message, session_.retry_after_seconds)));
    unsent_ += frame->size();
    queue_.push_back(std::move(frame)); // past the limit on purpose: the reason is worth the bytes
    closing_ = true;
    leave();
    grace_timer_.expires_after(limits_.close_grace);
    grace_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec) {
            self->close();
        }
    });
    write();
}

link_measures tcp_connection::measures() const {
    link_measures out;
    out.unsent_bytes = unsent_;
    out.bytes_sent = sent_;
    out.bytes_received = received_;
    return out;
}

void tcp_connection::linger() {
    if (lingering_) {
        return;
    }
    lingering_ = true;
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

void tcp_connection::leave() {
    if (!left_) {
        left_ = true;
        handler_.on_left(*this);
    }
}

void tcp_connection::abort() {
    if (!closing_) {
        closing_ = true;
        session_.state = session::phase::closing;
    }
    close();
}

void tcp_connection::close() {
    if (closed_) {
        return;
    }
    closed_ = true;
    session_.state = session::phase::closing;
    handshake_timer_.cancel();
    idle_timer_.cancel();
    stall_timer_.cancel();
    grace_timer_.cancel();
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    queue_.clear();
    unsent_ = 0;
    leave();
    handler_.on_closed(*this);
}

} // namespace ecsnet::server
