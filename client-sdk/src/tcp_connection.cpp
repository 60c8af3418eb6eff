#include "tcp_connection.hpp"

#include <asio/connect.hpp>
#include <asio/write.hpp>

#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/handshake.hpp>

namespace ecsnet::client::detail {

namespace {

asio::ip::tcp::endpoint to_tcp(const transport::net_address& address) {
    if (address.family == transport::address_family::ipv4) {
        return {asio::ip::address_v4{{address.ip[0], address.ip[1], address.ip[2], address.ip[3]}},
                address.port};
    }
    return {asio::ip::address_v6{address.ip}, address.port};
}

} // namespace

tcp_connection::tcp_connection(handler_executor executor, const client_options& options,
                               std::weak_ptr<connection_events> events)
    : close_grace_{options.close_grace}
    , events_{std::move(events)}
    , resolver_{executor}
    , socket_{executor}
    , close_timer_{executor}
    , decoder_{options.max_frame_size}
    , read_buffer_(64 * 1024) {}

void tcp_connection::open(const connect_target& target) {
    if (target.host.empty()) {
        // The token's servers, tried in order.
        std::vector<asio::ip::tcp::endpoint> endpoints;
        std::string where;
        if (target.token) {
            for (const auto& address : target.token->server_addresses) {
                endpoints.push_back(to_tcp(address));
                where += (where.empty() ? "" : ", ") + address.to_string();
            }
        }
        if (endpoints.empty()) {
            fail(disconnect_reason::connect_failed, "no server address to connect to");
            return;
        }
        connect_to(endpoints, where);
        return;
    }
    resolver_.async_resolve(
        target.host, std::to_string(target.port),
        [self = shared_from_this(), host = target.host, port = target.port](
            const asio::error_code& ec, const asio::ip::tcp::resolver::results_type& results) {
            if (self->closed_) {
                return;
            }
            if (ec) {
                self->fail(disconnect_reason::connect_failed,
                           "cannot resolve '" + host + "': " + ec.message());
                return;
            }
            const std::vector<asio::ip::tcp::endpoint> endpoints(results.begin(), results.end());
            self->connect_to(endpoints, host + ":" + std::to_string(port));
        });
}

void tcp_connection::connect_to(const std::vector<asio::ip::tcp::endpoint>& endpoints, std::string where) {
    asio::async_connect(socket_, endpoints,
                        [self = shared_from_this(), where = std::move(where)](
                            const asio::error_code& ec, const asio::ip::tcp::endpoint&) {
                            if (self->closed_) {
                                return;
                            }
                            if (ec) {
                                self->fail(disconnect_reason::connect_failed,
                                           "cannot connect to " + where + ": " + ec.message());
                                return;
                            }
                            self->on_connected();
                        });
}

void tcp_connection::on_connected() {
    connected_ = true;
    asio::error_code ignored;
    socket_.set_option(asio::ip::tcp::no_delay{true}, ignored);
    read();
    tell([](connection_events& events) { events.on_open(); });
}

void tcp_connection::read() {
    socket_.async_read_some(asio::buffer(read_buffer_),
                            [self = shared_from_this()](const asio::error_code& ec, std::size_t count) {
                                self->on_read(ec, count);
                            });
}

void tcp_connection::on_read(const asio::error_code& ec, std::size_t count) {
    if (closed_) {
        return;
    }
    if (ec) {
        fail(disconnect_reason::connection_lost, ec == asio::error::eof
                                                     ? std::string{"the server closed the connection"}
                                                     : "connection lost: " + ec.message());
        return;
    }
    // Kept alive by this handler even if the session lets go of it from inside a callback below.
    tell([count](connection_events& events) { events.on_traffic(count, 0, nullptr); });
    const auto status =
        decoder_.feed(std::string_view{read_buffer_.data(), count}, [this](std::string_view payload) {
            tell([payload](connection_events& events) { events.on_message(payload, true); });
            return !closed_;
        });
    if (closed_) {
        return;
    }
    if (!status) {
        tell([&status](connection_events& events) {
            events.on_malformed("bad frame from the server: " + std::string{status.message()});
        });
        return;
    }
    read();
}

void tcp_connection::send(outgoing kind, const v1::Envelope& message) {
    static_cast<void>(kind); // one stream: every kind alike
    if (closed_ || finished_) {
        return;
    }
    if (!proto::append_envelope_frame(pending_, message)) {
        return; // larger than a frame may be: nothing the session builds is
    }
    flush();
}

std::size_t tcp_connection::unsent_bytes() const {
    return pending_.size() + (write_in_flight_ ? writing_.size() : 0);
}

void tcp_connection::flush() {
    if (write_in_flight_ || pending_.empty() || finished_ || !connected_) {
        return;
    }
    writing_.swap(pending_);
    pending_.clear();
    write_in_flight_ = true;
    // Held by the write: a closing connection still wants its Disconnect written.
    asio::async_write(socket_, asio::buffer(writing_),
                      [self = shared_from_this()](const asio::error_code& ec, std::size_t count) {
                          self->on_written(ec, count);
                      });
}

void tcp_connection::on_written(const asio::error_code& ec, std::size_t count) {
    write_in_flight_ = false;
    if (!closed_) {
        tell([count](connection_events& events) { events.on_traffic(0, count, nullptr); });
    }
    if (ec) {
        if (closed_) {
            finish();
        } else {
            fail(disconnect_reason::connection_lost, "connection lost: " + ec.message());
        }
        return;
    }
    writing_.clear();
    if (closing_ && pending_.empty()) {
        finish();
        return;
    }
    flush();
}

void tcp_connection::close(int reason, std::string_view message, bool tell_server,
                           std::function<void()> quiet) {
    quiet_ = std::move(quiet);
    if (closed_) {
        if (finished_ && quiet_) {
            std::exchange(quiet_, nullptr)();
        }
        return;
    }
    closed_ = true;
    events_.reset();
    resolver_.cancel();
    if (!tell_server || !connected_ || finished_) {
        finish();
        return;
    }
    pending_.clear(); // inputs and acks not yet written are moot: the reason goes first
    static_cast<void>(proto::append_envelope_frame(
        pending_, proto::make_disconnect(static_cast<v1::DisconnectReason>(reason),
                                         std::string{message.substr(0, 1024)})));
    closing_ = true;
    close_timer_.expires_after(close_grace_);
    close_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec) {
            self->finish();
        }
    });
    flush();
}

void tcp_connection::abort() {
    closed_ = true;
    events_.reset();
    resolver_.cancel();
    finish();
}

void tcp_connection::fail(disconnect_reason reason, std::string message) {
    closed_ = true;
    auto events = events_.lock();
    events_.reset();
    finish();
    if (events) {
        events->on_closed({reason, false, std::move(message), std::nullopt});
    }
}

void tcp_connection::finish() {
    if (finished_) {
        return;
    }
    finished_ = true;
    closing_ = false;
    close_timer_.cancel();
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    pending_.clear();
    if (quiet_) {
        std::exchange(quiet_, nullptr)();
    }
}

} // namespace ecsnet::client::detail
