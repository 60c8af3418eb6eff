#pragma once

// The client's TCP transport (docs/protocol.md, section 1): resolve the host (or take the token's
// addresses, tried in order), connect, TCP_NODELAY; every Envelope a length-prefixed frame; frames read
// through the incremental frame_decoder (max_frame_size checked on the prefix, before allocating); one
// write in flight, the frames queued meanwhile sent together by the next write. close() with a word for
// the server writes its Disconnect first (dropping what had not left yet), then closes once it is written
// or after close_grace.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <ecsnet/proto/framing.hpp>

#include "connection.hpp"
#include "ecsnet/client/client_options.hpp"

namespace ecsnet::client::detail {

class tcp_connection : public connection, public std::enable_shared_from_this<tcp_connection> {
public:
    tcp_connection(handler_executor executor, const client_options& options,
                   std::weak_ptr<connection_events> events);

    void open(const connect_target& target) override;
    void send(outgoing kind, const v1::Envelope& message) override;
    void close(int reason, std::string_view message, bool tell_server, std::function<void()> quiet) override;
    void abort() override;
    [[nodiscard]] std::size_t unsent_bytes() const override;
    [[nodiscard]] std::string pending_detail() const override { return {}; }

private:
    void connect_to(const std::vector<asio::ip::tcp::endpoint>& endpoints, std::string where);
    void on_connected();
    void read();
    void on_read(const asio::error_code& ec, std::size_t count);
    void flush();
    void on_written(const asio::error_code& ec, std::size_t count);
    /// The connection failed on its own: tell the session, then close.
    void fail(disconnect_reason reason, std::string message);
    /// Closes the socket; nothing more leaves.
    void finish();

    template<typename Fn>
    void tell(Fn&& fn) {
        if (auto events = events_.lock()) {
            fn(*events);
        }
    }

    const std::chrono::milliseconds close_grace_;
    std::weak_ptr<connection_events> events_;
    asio::ip::tcp::resolver resolver_;
    asio::ip::tcp::socket socket_;
    asio::steady_timer close_timer_;
    proto::frame_decoder decoder_;
    std::vector<char> read_buffer_;
    std::string pending_; // frames waiting for the write in flight
    std::string writing_; // the write in flight
    std::function<void()> quiet_;
    bool connected_{false};
    bool write_in_flight_{false};
    bool closed_{false};   // close() or a failure: the session hears nothing more
    bool closing_{false};  // a Disconnect is queued: finish once it is written
    bool finished_{false}; // the socket is closed
};

} // namespace ecsnet::client::detail
