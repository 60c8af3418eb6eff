#include "ecsnet/transport/udp_client.hpp"

#include <asio/ip/address.hpp>

#include "byte_spans.hpp"
#include "ecsnet/transport/endpoint.hpp"

namespace ecsnet::transport {

using detail::as_bytes_of;
using detail::as_u8;

udp_client::udp_client(asio::any_io_executor executor, udp_client_options options, client_handler& handler)
    : executor_{std::move(executor)}
    , options_{std::move(options)}
    , socket_{executor_}
    , timer_{executor_}
    , core_{options_.config, handler,
            [this](const net_address& to, std::span<const std::uint8_t> datagram) { transmit(to, datagram); }}
    , alive_{std::make_shared<bool>(true)} {
    if (options_.simulator && options_.simulator->enabled()) {
        configure_simulator(*options_.simulator);
    }
}

void udp_client::configure_simulator(const sim_config& config) {
    auto incoming = config;
    incoming.seed = incoming.seed * 0x9E3779B97F4A7C15ULL + 1; // the two paths draw apart
    if (sim_out_) {
        sim_out_->configure(config);
        sim_in_->configure(incoming);
    } else {
        sim_out_.emplace(config);
        sim_in_.emplace(incoming);
    }
}

udp_client::~udp_client() {
    *alive_ = false;
    asio::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
}

bool udp_client::connect(std::span<const std::uint8_t> token_bytes) {
    const auto token = read_token(token_bytes);
    if (!token) {
        return core_.connect(token_bytes, clock::now()); // reports token_invalid
    }
    return connect(*token);
}

bool udp_client::connect_base64(std::string_view token_text) {
    const auto token = read_token_base64(token_text);
    if (!token) {
        return core_.connect(std::span<const std::uint8_t>{}, clock::now()); // reports token_invalid
    }
    return connect(*token);
}

bool udp_client::connect(const connect_token& token) {
    // The socket exists before the first request goes out (the core sends from inside connect()).
    if (!token.server_addresses.empty()) {
        ensure_socket(token.server_addresses.front());
    }
    const bool ok = core_.connect(token, clock::now());
    started();
    return ok;
}

void udp_client::started() {
    if (!timer_running_) {
        timer_running_ = true;
        arm_timer();
    }
}

void udp_client::ensure_socket(const net_address& server) {
    const auto protocol = server.family == address_family::ipv6 ? asio::ip::udp::v6() : asio::ip::udp::v4();
    if (socket_.is_open() && socket_protocol_ == protocol) {
        return;
    }
    asio::error_code ec;
    socket_.close(ec);
    ++socket_generation_;
    socket_.open(protocol, ec);
    if (ec) {
        return; // sends fail and are counted; the handshake times out with a clear error
    }
    socket_protocol_ = protocol;
    socket_.set_option(asio::socket_base::receive_buffer_size{options_.receive_buffer_bytes}, ec);
    socket_.set_option(asio::socket_base::send_buffer_size{options_.send_buffer_bytes}, ec);
    asio::ip::udp::endpoint local{protocol, 0};
    if (!options_.bind_address.empty()) {
        const auto ip = asio::ip::make_address(options_.bind_address, ec);
        if (!ec && (ip.is_v6() == (protocol == asio::ip::udp::v6()))) {
            local = asio::ip::udp::endpoint{ip, 0};
        }
    }
    socket_.bind(local, ec);
    socket_.non_blocking(true, ec);
    receive();
}

void udp_client::receive() {
    socket_.async_receive_from(
        asio::buffer(receive_buffer_), sender_,
        [this, alive = std::weak_ptr<bool>{alive_},
         generation = socket_generation_](const asio::error_code& ec, std::size_t size) {
            if (alive.expired() || generation != socket_generation_) {
                return; // the client is gone, or this was an earlier socket
            }
            if (!ec) {
                const auto from = from_endpoint(sender_);
                const std::span<const std::uint8_t> datagram{receive_buffer_.data(), size};
                const auto now = clock::now();
                receiving_ = true;
                if (sim_in_) {
                    sim_in_->submit(as_bytes_of(datagram), now, from);
                } else {
                    core_.receive(datagram, from, now);
                }
                receiving_ = false;
                if (timer_running_) {
                    send_due();
                    arm_timer(); // an ack may now be owed, or the state changed
                }
            }
            if (socket_.is_open() && generation == socket_generation_ &&
                ec != asio::error::operation_aborted) {
                receive();
            }
        });
}

void udp_client::arm_timer() {
    // Sleep until the core or a simulator has something to do, and never longer than update_interval: a
    // client that polled every few milliseconds would cost thousands of wake-ups a second in a process
    // running a thousand of them.
    const auto now = clock::now();
    auto due = now + clock::duration{options_.update_interval};
    if (const auto wakeup = core_.next_wakeup(now)) {
        due = std::min(due, *wakeup);
    }
    for (const auto* sim : {sim_in_ ? &*sim_in_ : nullptr, sim_out_ ? &*sim_out_ : nullptr}) {
        if (sim != nullptr) {
            if (const auto sim_due = sim->next_due()) {
                due = std::min(due, *sim_due);
            }
        }
    }
    due = std::max(due, now);
    if (timer_armed_ && due >= timer_due_) {
        return; // the timer already wakes up in time
    }
    timer_armed_ = true;
    timer_due_ = due;
    timer_.expires_at(due); // cancels a later wait
    timer_.async_wait([this, alive = std::weak_ptr<bool>{alive_}](const asio::error_code& ec) {
        if (alive.expired() || ec == asio::error::operation_aborted || !timer_running_) {
            return;
        }
        timer_armed_ = false;
        on_timer();
        arm_timer();
    });
}

void udp_client::on_timer() {
    const auto now = clock::now();
    if (sim_in_) {
        sim_in_->deliver_due(now, [&](std::span<const std::byte> bytes, const net_address& from) {
            core_.receive(as_u8(bytes), from, now);
        });
    }
    core_.update(now);
    if (sim_out_) {
        sim_out_->deliver_due(now, [&](std::span<const std::byte> bytes, const net_address& to) {
            send_now(to, as_u8(bytes));
        });
    }
}

// What a datagram's handlers queued (a snapshot's ack, an input) goes out at once, in one packet, rather
// than through the timer armed for now: re-arming the timer earlier cancels its pending wait (a handler
// run) and its wake-up is another, per datagram, for hundreds of clients in a bots process.
void udp_client::send_due() {
    const auto now = clock::now();
    if (const auto wakeup = core_.next_wakeup(now); wakeup && *wakeup <= now) {
        on_timer();
    }
}

void udp_client::transmit(const net_address& to, std::span<const std::uint8_t> datagram) {
    ensure_socket(to); // the next server address may be of the other family
    if (sim_out_) {
        sim_out_->submit(as_bytes_of(datagram), clock::now(), to);
        return;
    }
    send_now(to, datagram);
}

void udp_client::send_now(const net_address& to, std::span<const std::uint8_t> datagram) {
    asio::error_code ec;
    const auto protocol = to.family == address_family::ipv6 ? asio::ip::udp::v6() : asio::ip::udp::v4();
    const auto endpoint = to_endpoint(to, protocol);
    if (endpoint && socket_.is_open()) {
        socket_.send_to(asio::buffer(datagram.data(), datagram.size()), *endpoint, 0, ec);
    }
    if (!endpoint || !socket_.is_open() || ec) {
        ++send_failures_;
    }
}

send_status udp_client::send(channel ch, std::span<const std::byte> message) {
    const auto status = core_.send(ch, message, clock::now());
    if (timer_running_ && !receiving_) {
        arm_timer(); // what was queued may want sending before the timer's wake-up
    }
    return status;
}

void udp_client::flush() {
    core_.flush(clock::now());
    if (timer_running_) {
        arm_timer();
    }
}

void udp_client::disconnect(std::uint8_t code, std::string_view message) {
    core_.disconnect(code, message, clock::now());
    if (timer_running_) {
        arm_timer();
    }
}

void udp_client::close() {
    timer_running_ = false;
    timer_armed_ = false;
    asio::error_code ignored;
    timer_.cancel();
    ++socket_generation_;
    socket_.close(ignored);
}

std::optional<net_address> udp_client::local_address() const {
    asio::error_code ec;
    if (!socket_.is_open()) {
        return std::nullopt;
    }
    const auto endpoint = socket_.local_endpoint(ec);
    if (ec) {
        return std::nullopt;
    }
    return from_endpoint(endpoint);
}

} // namespace ecsnet::transport
