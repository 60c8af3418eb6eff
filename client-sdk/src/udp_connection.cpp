#include "udp_connection.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <ecsnet/transport/dev_key.hpp>
#include <ecsnet/transport/endpoint.hpp>

namespace ecsnet::client::detail {

namespace {

transport::channel channel_of(outgoing kind) noexcept {
    switch (kind) {
    case outgoing::hello:
        return transport::channel::reliable;
    case outgoing::input:
        return transport::channel::redundant;
    case outgoing::ack:
    case outgoing::ping:
        break;
    }
    return transport::channel::unreliable;
}

std::string join(const std::vector<transport::net_address>& addresses) {
    std::string out;
    for (const auto& address : addresses) {
        out += (out.empty() ? "" : ", ") + address.to_string();
    }
    return out;
}

std::string named(transport::client_error error) {
    return " (" + std::string{transport::to_string(error)} + ")";
}

std::optional<std::chrono::seconds> retry_hint(std::uint32_t seconds) {
    return seconds == 0 ? std::nullopt : std::optional{std::chrono::seconds{seconds}};
}

// Why a connection attempt or a connection ended, as the session reports it.
disconnect_info to_disconnect(transport::client_error error, const transport::disconnect_info& info,
                              const std::string& servers) {
    using transport::client_error;
    switch (error) {
    case client_error::disconnected_by_server:
        return {from_wire(static_cast<v1::DisconnectReason>(info.code)), true, info.message,
                retry_hint(info.retry_after_s)};
    case client_error::denied_server_full:
        return {disconnect_reason::server_full, true, "server full: no free slot" + named(error),
                std::nullopt};
    case client_error::denied_client_id_in_use:
        return {disconnect_reason::connect_failed, true,
                "the server already has a connection for this token's client id" + named(error),
                std::nullopt};
    case client_error::token_invalid:
        return {disconnect_reason::connect_failed, false, "the connect token does not read" + named(error),
                std::nullopt};
    case client_error::token_expired:
        return {disconnect_reason::connect_failed, false,
                "the connect token has expired" + named(error) + ": ask the backend for a new one",
                std::nullopt};
    case client_error::request_timed_out:
        return {disconnect_reason::connect_failed, false,
                "no answer to the connection requests from " + servers + named(error) +
                    ": no server there, or one refusing this token without a word (a server answers only "
                    "tokens of its protocol id and key, and development tokens only with --insecure-dev)",
                std::nullopt};
    case client_error::response_timed_out:
        return {disconnect_reason::connect_failed, false,
                "challenged by " + servers + " but never connected" + named(error), std::nullopt};
    case client_error::timed_out:
        return {disconnect_reason::timeout, false, info.message + named(error), std::nullopt};
    case client_error::stalled:
        return {disconnect_reason::connection_lost, false, info.message + named(error), std::nullopt};
    case client_error::protocol_error:
        return {disconnect_reason::protocol_error, false, info.message + named(error), std::nullopt};
    case client_error::none:
        break;
    }
    return {disconnect_reason::connection_lost, false, "the transport ended the connection" + named(error),
            std::nullopt};
}

} // namespace

udp_connection::udp_connection(handler_executor executor, const client_options& options,
                               std::weak_ptr<connection_events> events)
    : executor_{std::move(executor)}
    , connect_timeout_{options.connect_timeout}
    , idle_timeout_{options.idle_timeout}
    , close_grace_{options.close_grace}
    , protocol_id_{options.protocol_id}
    , simulated_{options.simulator.enabled()}
    , events_{std::move(events)}
    , resolver_{executor_}
    , close_timer_{executor_}
    , lifetime_{executor_} {
    if (simulated_) {
        client_options_.simulator = options.simulator;
    }
}

udp_connection::~udp_connection() = default;

void udp_connection::simulate(const transport::sim_config& config) {
    client_options_.simulator = config;
    simulated_ = simulated_ || config.enabled(); // datagrams may still be held: the close waits for them
    if (client_) {
        client_->configure_simulator(config);
    }
}

void udp_connection::open(const connect_target& target) {
    // The connection holds itself through a wait that only teardown() ends: its handler then destroys the
    // udp_client, on the handler executor and outside the client's own handlers. An io_context destroyed
    // first destroys the waiting handler, and with it the connection, its socket included.
    lifetime_.expires_at(asio::steady_timer::time_point::max());
    lifetime_.async_wait([self = shared_from_this()](const asio::error_code&) { self->client_.reset(); });
    if (target.token) {
        start(*target.token);
        return;
    }
    // No token: a development token for the host's addresses.
    resolving_ = true;
    resolver_.async_resolve(
        target.host, std::to_string(target.port),
        [self = shared_from_this(), host = target.host](
            const asio::error_code& ec, const asio::ip::udp::resolver::results_type& results) {
            self->resolving_ = false;
            if (self->closed_) {
                return;
            }
            std::vector<transport::net_address> addresses;
            if (!ec) {
                for (const auto& entry : results) {
                    const auto address = transport::from_endpoint(entry.endpoint());
                    if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
                        addresses.push_back(address);
                    }
                }
            }
            // IPv4 first: a development server usually listens on 127.0.0.1 or 0.0.0.0.
            std::stable_partition(addresses.begin(), addresses.end(), [](const transport::net_address& a) {
                return a.family == transport::address_family::ipv4;
            });
            addresses.resize(std::min<std::size_t>(addresses.size(), transport::max_token_servers));
            if (addresses.empty()) {
                auto events = self->events_.lock();
                self->closed_ = true;
                self->events_.reset();
                self->teardown();
                if (events) {
                    events->on_closed(
                        {disconnect_reason::connect_failed, false,
                         "cannot resolve '" + host + "': " + (ec ? ec.message() : std::string{"no address"}),
                         std::nullopt});
                }
                return;
            }
            transport::dev_token_params params;
            params.protocol_id = self->protocol_id_;
            params.server_addresses = std::move(addresses);
            const auto connect_s = std::chrono::ceil<std::chrono::seconds>(self->connect_timeout_).count();
            params.expire_seconds =
                static_cast<std::uint32_t>(std::clamp<std::int64_t>(connect_s + 60, 60, 86'400));
            const auto idle_s = std::chrono::ceil<std::chrono::seconds>(self->idle_timeout_).count();
            params.timeout_seconds = static_cast<std::uint32_t>(
                std::clamp<std::int64_t>(idle_s, 1, transport::max_token_timeout_seconds));
            const auto token = transport::make_dev_token(params);
            if (!token) {
                auto events = self->events_.lock();
                self->closed_ = true;
                self->events_.reset();
                self->teardown();
                if (events) {
                    events->on_closed({disconnect_reason::connect_failed, false,
                                       "cannot make a development token: " +
                                           std::string{transport::to_string(token.error())},
                                       std::nullopt});
                }
                return;
            }
            self->start(*token);
        });
}

void udp_connection::start(const transport::connect_token& token) {
    servers_ = join(token.server_addresses);
    // The connect timeout is shared between the token's addresses (each step of each address gets its part).
    const auto addresses = std::max<std::size_t>(token.server_addresses.size(), 1);
    client_options_.config.handshake_timeout =
        std::max(std::chrono::milliseconds{100},
                 connect_timeout_ / static_cast<std::chrono::milliseconds::rep>(addresses));
    client_ = std::make_unique<transport::udp_client>(executor_, client_options_, *this);
    // A refusal at once (an expired token...) arrives through on_disconnected.
    static_cast<void>(client_->connect(token));
}

void udp_connection::on_connected(const transport::net_address& server) {
    servers_ = server.to_string();
    report_traffic();
    tell([](connection_events& events) { events.on_open(); });
}

void udp_connection::on_message(transport::channel ch, std::span<const std::byte> message) {
    if (closed_) {
        return;
    }
    const std::string_view envelope{reinterpret_cast<const char*>(message.data()), message.size()};
    tell([&](connection_events& events) { events.on_message(envelope, ch == transport::channel::reliable); });
}

void udp_connection::on_delivered() {
    // Once per received datagram, after what its messages' handlers sent (an ack, an input) has left: a
    // report per message and per send took a lock and read the clock three times a tick, and missed the
    // packet that leaves at the delivery's end.
    if (!closed_) {
        report_traffic();
    }
}

void udp_connection::on_disconnected(transport::client_error error, const transport::disconnect_info& info) {
    if (closed_) {
        return;
    }
    auto events = events_.lock();
    closed_ = true;
    events_.reset();
    auto why = to_disconnect(error, info, servers_);
    teardown();
    if (events) {
        events->on_closed(std::move(why));
    }
}

void udp_connection::send(outgoing kind, const v1::Envelope& message) {
    if (closed_ || !client_ || client_->state() != transport::client_state::connected) {
        return;
    }
    scratch_.clear();
    if (!message.AppendToString(&scratch_)) {
        return;
    }
    const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(scratch_.data()),
                                           scratch_.size()};
    static_cast<void>(client_->send(channel_of(kind), bytes)); // a full queue loses what a datagram would
    // Inside a delivery the transport waits for its end, so that the acks and inputs a received snapshot
    // causes leave together in one packet.
    client_->flush();
    if (!client_->delivering()) { // else on_delivered() reports it, once it has left
        report_traffic();
    }
}

void udp_connection::report_traffic() {
    if (!client_) {
        return;
    }
    const auto stats = client_->stats();
    transport_figures figures;
    if (stats.link.min_rtt.count() > 0) {
        figures.rtt = stats.link.rtt;
        figures.rtt_variance = stats.link.rtt_var;
        figures.rtt_min = stats.link.min_rtt;
    }
    figures.packet_loss = stats.link.loss;
    figures.packets_sent = stats.link.packets_sent;
    figures.packets_received = stats.link.packets_received;
    figures.packets_lost = stats.link.packets_lost;
    figures.resends = stats.link.resends;
    figures.inputs_overflowed = stats.link.redundant_overflow;
    figures.messages_dropped = stats.link.messages_dropped;
    const auto in = stats.bytes_received - std::min(stats.bytes_received, reported_in_);
    const auto out = stats.bytes_sent - std::min(stats.bytes_sent, reported_out_);
    reported_in_ = stats.bytes_received;
    reported_out_ = stats.bytes_sent;
    tell([&](connection_events& events) { events.on_traffic(in, out, &figures); });
}

void udp_connection::close(int reason, std::string_view message, bool tell_server,
                           std::function<void()> quiet) {
    quiet_ = std::move(quiet);
    if (closed_) {
        if (torn_down_ && quiet_) {
            std::exchange(quiet_, nullptr)();
        }
        return;
    }
    closed_ = true;
    events_.reset();
    resolver_.cancel();
    const bool connected = client_ && client_->state() == transport::client_state::connected;
    if (client_) {
        // Redundant disconnect packets when connected (the transport cuts the message at 127 bytes);
        // otherwise it only ends the attempt.
        client_->disconnect(tell_server ? static_cast<std::uint8_t>(reason) : std::uint8_t{0},
                            tell_server ? message : std::string_view{});
    }
    if (tell_server && connected && simulated_) {
        // The simulator still holds the disconnect packets: let them leave.
        close_timer_.expires_after(close_grace_);
        close_timer_.async_wait([self = shared_from_this()](const asio::error_code&) { self->teardown(); });
        return;
    }
    teardown();
}

void udp_connection::abort() {
    closed_ = true;
    events_.reset();
    resolver_.cancel();
    teardown();
}

void udp_connection::teardown() {
    if (torn_down_) {
        return;
    }
    torn_down_ = true;
    close_timer_.cancel();
    if (client_) {
        client_->close(); // the socket and the timers: nothing more leaves
    }
    lifetime_.cancel(); // not destroyed here: this may run inside one of the udp_client's own handlers
    if (quiet_) {
        std::exchange(quiet_, nullptr)();
    }
}

std::string udp_connection::pending_detail() const {
    if (resolving_) {
        return ": still resolving the server's name";
    }
    if (!client_) {
        return {};
    }
    switch (client_->state()) {
    case transport::client_state::sending_request:
        return ": " + to_disconnect(transport::client_error::request_timed_out, {}, servers_).message;
    case transport::client_state::sending_response:
        return ": " + to_disconnect(transport::client_error::response_timed_out, {}, servers_).message;
    default:
        return {};
    }
}

} // namespace ecsnet::client::detail
