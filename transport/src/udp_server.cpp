#include "ecsnet/transport/udp_server.hpp"

#include <stdexcept>
#include <system_error>
#include <utility>

#include <asio/ip/address.hpp>
#include <asio/ip/v6_only.hpp>

#include <asio/post.hpp>

#include "byte_spans.hpp"
#include "ecsnet/transport/batch_sender.hpp"
#include "ecsnet/transport/datagram_batch.hpp"
#include "ecsnet/transport/endpoint.hpp"

namespace ecsnet::transport {

using detail::as_bytes_of;
using detail::as_u8;

udp_server::udp_server(asio::io_context& io, udp_server_options options, server_handler& handler)
    : options_{std::move(options)}
    , socket_{reads_on_timer() ? quiet_io_ : io} // options_ is set: declared first
    , timer_{io}
    , receive_timer_{io}
    , incoming_{std::make_unique<incoming_batch>()}
    , outgoing_{std::make_unique<outgoing_batch>()}
    , alive_{std::make_shared<bool>(true)} {
    const auto bind_ip = asio::ip::make_address(options_.bind_address);
    const asio::ip::udp::endpoint bind_endpoint{bind_ip, options_.port};
    socket_.open(bind_endpoint.protocol());
    if (bind_ip.is_v6()) {
        socket_.set_option(asio::ip::v6_only{false}); // dual-stack: IPv4 clients too
    }
    asio::error_code ignored;
    socket_.set_option(asio::socket_base::receive_buffer_size{options_.receive_buffer_bytes}, ignored);
    socket_.set_option(asio::socket_base::send_buffer_size{options_.send_buffer_bytes}, ignored);
    socket_.bind(bind_endpoint);
    socket_.non_blocking(true);
    local_ = from_endpoint(socket_.local_endpoint());
    protocol_ = bind_endpoint.protocol();
#if defined(__linux__)
    if (options_.send_thread) {
        sender_ = std::make_unique<batch_sender>(socket_.native_handle());
    }
#endif

    auto config = options_.config;
    if (config.public_addresses.empty()) {
        if (bind_ip.is_unspecified()) {
            throw std::invalid_argument{
                "udp_server: bound to " + options_.bind_address +
                ": name the address clients reach it at in server_config::public_addresses"};
        }
        config.public_addresses = {local_};
    }
    if (options_.simulator && options_.simulator->enabled()) {
        // Two simulators with different seeds, so that the two directions do not lose the same datagrams.
        auto incoming = *options_.simulator;
        incoming.seed = incoming.seed * 0x9E3779B97F4A7C15ULL + 1;
        sim_out_.emplace(*options_.simulator);
        sim_in_.emplace(incoming);
    }
    core_ = std::make_unique<server_core>(
        std::move(config), handler,
        [this](const net_address& to, std::span<const std::uint8_t> datagram) { transmit(to, datagram); },
        clock::now());
}

udp_server::~udp_server() {
    *alive_ = false;
    stop_sending();
    asio::error_code ignored;
    timer_.cancel();
    receive_timer_.cancel();
    socket_.close(ignored);
}

void udp_server::start() {
    if (running_) {
        return;
    }
    running_ = true;
    receive();
    arm_timer();
}

void udp_server::stop() {
    running_ = false;
    stop_sending(); // the goodbyes queued before
    asio::error_code ignored;
    timer_.cancel();
    receive_timer_.cancel();
    socket_.close(ignored);
}

void udp_server::receive() {
    if (reads_on_timer()) {
        read_after(options_.receive_interval);
        return;
    }
    socket_.async_wait(asio::socket_base::wait_read,
                       [this, alive = std::weak_ptr<bool>{alive_}](const asio::error_code& ec) {
                           if (alive.expired() || !running_) {
                               return;
                           }
                           if (!ec) {
                               read_waiting();
                               flush_outgoing(); // the replies (challenges, acks) go now, in one call
                           }
                           // Errors on a UDP socket (an ICMP port unreachable reported for an earlier send, a
                           // datagram too big for the buffer) concern one datagram: keep receiving. A closed
                           // socket stops.
                           if (socket_.is_open() && ec != asio::error::operation_aborted) {
                               receive();
                           }
                       });
}

void udp_server::read_after(std::chrono::microseconds delay) {
    receive_timer_.expires_after(delay);
    receive_timer_.async_wait([this, alive = std::weak_ptr<bool>{alive_}](const asio::error_code& ec) {
        if (alive.expired() || !running_ || ec == asio::error::operation_aborted || !socket_.is_open()) {
            return;
        }
        const auto read = read_waiting();
        flush_outgoing();
        empty_reads_ = read == 0 ? empty_reads_ + 1 : 0;
        auto next = options_.receive_interval;
        if (read == read_rounds * incoming_batch::capacity) {
            next = std::chrono::microseconds::zero(); // more wait: after the other handlers' turn
        } else if (empty_reads_ >= idle_after_empty_reads) {
            next = std::max<std::chrono::microseconds>(options_.update_interval, next);
        }
        read_after(next);
    });
}

void udp_server::receive_waiting() {
    if (!running_ || !socket_.is_open()) {
        return;
    }
    read_waiting();
    flush_outgoing();
}

std::size_t udp_server::read_waiting() {
    const auto now = clock::now();
    std::size_t read = 0;
    for (std::size_t round = 0; round < read_rounds; ++round) {
        const auto received = incoming_->receive(
            socket_,
            [&](std::span<const std::uint8_t> datagram, const asio::ip::udp::endpoint& sender) {
                const auto from = from_endpoint(sender);
                if (sim_in_) {
                    sim_in_->submit(as_bytes_of(datagram), now, from);
                } else {
                    core_->receive(datagram, from, now);
                }
            },
            [&](const asio::ip::udp::endpoint& next) {
                if (!sim_in_) {
                    core_->prefetch(from_endpoint(next));
                }
            });
        read += received;
        if (received < incoming_batch::capacity) {
            break;
        }
    }
    return read;
}

void udp_server::arm_timer() {
    auto interval = clock::duration{options_.update_interval};
    const auto now = clock::now();
    for (const auto* sim : {sim_in_ ? &*sim_in_ : nullptr, sim_out_ ? &*sim_out_ : nullptr}) {
        if (sim != nullptr) {
            if (const auto due = sim->next_due()) {
                interval = std::min(interval, std::max(clock::duration{}, *due - now));
            }
        }
    }
    timer_.expires_after(interval);
    timer_.async_wait([this, alive = std::weak_ptr<bool>{alive_}](const asio::error_code& ec) {
        if (alive.expired() || !running_ || ec == asio::error::operation_aborted) {
            return;
        }
        on_timer();
        arm_timer();
    });
}

void udp_server::on_timer() {
    const auto now = clock::now();
    if (sim_in_) {
        sim_in_->deliver_due(now, [&](std::span<const std::byte> bytes, const net_address& from) {
            core_->receive(as_u8(bytes), from, now);
        });
    }
    core_->update(now);
    flush_outgoing();
    if (sim_out_) {
        sim_out_->deliver_due(now, [&](std::span<const std::byte> bytes, const net_address& to) {
            send_now(to, as_u8(bytes));
        });
    }
}

void udp_server::transmit(const net_address& to, std::span<const std::uint8_t> datagram) {
    if (sim_out_) {
        sim_out_->submit(as_bytes_of(datagram), clock::now(), to);
        return;
    }
    const auto endpoint = to_endpoint(to, protocol_);
    if (!endpoint || !socket_.is_open()) {
        core_->count_send_failure();
        return;
    }
    if (outgoing_->full()) {
        set_aside_full_batch();
    }
    if (!outgoing_->add(*endpoint, datagram)) {
        core_->count_send_failure(); // bigger than any datagram the core writes
        return;
    }
    // Everything queued while the current handler runs (a tick's snapshots) leaves once it returns.
    if (!flush_posted_) {
        flush_posted_ = true;
        asio::post(socket_.get_executor(), [this, alive = std::weak_ptr<bool>{alive_}] {
            if (alive.expired()) {
                return;
            }
            flush_posted_ = false;
            flush_outgoing();
        });
    }
}

void udp_server::send_now(const net_address& to, std::span<const std::uint8_t> datagram) {
    const auto endpoint = to_endpoint(to, protocol_);
    asio::error_code ec;
    if (endpoint && socket_.is_open()) {
        socket_.send_to(asio::buffer(datagram.data(), datagram.size()), *endpoint, 0, ec);
    }
    if (!endpoint || !socket_.is_open() || ec) {
        core_->count_send_failure();
    }
}

// A tick's snapshots fill a batch every 64 datagrams. Handed to the sending thread as each filled, they woke
// it (and, on one machine, their receivers) while the tick still ran, on the cores the tick needed: at 500
// clients and their bots on two cores, the tick's sends took about 6 ms at the p99 instead of under 2
// (bench/RESULTS.md, twenty-fifth pass). Kept until the handler returns, they leave together, as a
// smaller handler's datagrams always did; the first clients' snapshots wait for the tick's last, about a
// millisecond at 500 clients.
void udp_server::set_aside_full_batch() {
    if (sender_) {
        if (auto next = sender_->take_empty()) {
            filled_.push_back(std::exchange(outgoing_, std::move(next)));
            return;
        }
    }
    flush_outgoing(); // no sending thread, or every batch taken: what is set aside goes now, in order
}

void udp_server::flush_outgoing() {
    std::size_t lost = 0;
    if (sender_) {
        lost += sender_->take_lost();
        for (auto& batch : filled_) {
            sender_->submit(std::move(batch));
        }
        filled_.clear();
        if (!outgoing_->empty()) {
            if (auto next = sender_->take_empty()) {
                sender_->submit(std::exchange(outgoing_, std::move(next)));
            } else {
                lost += outgoing_->flush(socket_); // every batch is queued: this one goes from here
            }
        }
    } else {
        lost += outgoing_->flush(socket_);
    }
    for (; lost > 0; --lost) {
        core_->count_send_failure();
    }
}

void udp_server::stop_sending() {
    flush_outgoing();
    if (sender_) {
        sender_->stop(); // sends what is queued: the socket closes next
        for (auto lost = sender_->take_lost(); lost > 0; --lost) {
            core_->count_send_failure();
        }
        sender_.reset(); // what is sent later goes through the socket object, which knows it is closed
    }
}

send_status udp_server::send(connection_id id, channel ch, std::span<const std::byte> message) {
    return core_->send(id, ch, message, clock::now());
}

void udp_server::flush(connection_id id) {
    core_->flush(id, clock::now());
}

void udp_server::flush_all() {
    core_->flush_all(clock::now());
}

bool udp_server::disconnect(connection_id id, std::uint8_t code, std::string_view message,
                            std::uint16_t retry_after_s) {
    return core_->disconnect(id, code, message, clock::now(), retry_after_s);
}

void udp_server::disconnect_all(std::uint8_t code, std::string_view message, std::uint16_t retry_after_s) {
    core_->disconnect_all(code, message, clock::now(), retry_after_s);
}

std::optional<connection_stats> udp_server::stats(connection_id id) const {
    return core_->stats(id, clock::now());
}

} // namespace ecsnet::transport
