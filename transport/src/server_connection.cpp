#include "ecsnet/transport/server_connection.hpp"

#include <algorithm>

#include "prefetch.hpp"

namespace ecsnet::transport {

server_connection::server_connection(connection_id id, const challenge_contents& handshake,
                                     const net_address& remote, clock::duration timeout,
                                     const link_config& link_config, clock::time_point now)
    : server_connection{
          id,
          handshake,
          derive_session_keys(handshake.client_to_server_key, handshake.server_to_client_key, handshake.salt),
          remote,
          timeout,
          link_config,
          now} {}

server_connection::server_connection(connection_id id, const challenge_contents& handshake,
                                     const session_keys& keys, const net_address& remote,
                                     clock::duration timeout, const link_config& link_config,
                                     clock::time_point now)
    : id_{id}
    , timeout_{timeout}
    , last_received_{now}
    , last_sent_{now}
    , send_key_{keys.server_to_client, handshake.cipher}
    , receive_key_{keys.client_to_server, handshake.cipher}
    , link_{link_config}
    , client_id_{handshake.client_id}
    , remote_{remote}
    , user_data_{handshake.user_data}
    , mac_{handshake.mac}
    , connected_at_{now} {}

std::size_t server_connection::seal(packet_type type, std::span<const std::uint8_t> data,
                                    std::uint64_t protocol_id, std::span<std::uint8_t> out,
                                    clock::time_point now) {
    const auto size = seal_packet(type, next_sequence_, data, send_key_, protocol_id, out);
    if (size != 0) {
        ++next_sequence_;
        ++datagrams_sent_;
        bytes_sent_ += size;
        last_sent_ = now;
    }
    return size;
}

outcome<std::size_t, drop_reason>
server_connection::open(const datagram_header& header, std::span<const std::uint8_t> datagram,
                        std::uint64_t protocol_id, std::span<std::uint8_t> out, clock::time_point now) {
    if ((header.sequence & handshake_sequence_bit) != 0) {
        return drop_reason::malformed; // connection packets never use the handshake range
    }
    if (!replay_.check(header.sequence)) {
        return drop_reason::replayed;
    }
    const auto size = open_packet(header, datagram, receive_key_, protocol_id, out);
    if (!size) {
        return drop_reason::decrypt_failed;
    }
    replay_.accept(header.sequence);
    confirmed_ = true;
    last_received_ = now;
    ++datagrams_received_;
    bytes_received_ += datagram.size();
    return *size;
}

void server_connection::prefetch_receive() const noexcept {
    detail::prefetch_members(id_, replay_);
    detail::prefetch_bytes(&receive_key_, sizeof receive_key_);
    link_.prefetch_receive();
}

void server_connection::prefetch_send() const noexcept {
    detail::prefetch_members(receiving, next_sequence_);
    detail::prefetch_members(bytes_sent_, bytes_sent_);
    detail::prefetch_bytes(&send_key_, sizeof send_key_);
    detail::prefetch_bytes(&remote_, sizeof remote_);
    link_.prefetch_send();
}

clock::time_point server_connection::next_visit(clock::time_point now,
                                                clock::duration keep_alive_interval) const {
    // timed_out() and stalled() hold once strictly past their limit: one tick of the clock after it.
    constexpr clock::duration past{1};
    auto when = std::min(last_received_ + timeout_ + past, last_sent_ + keep_alive_interval);
    if (const auto oldest = link_.oldest_unacked_reliable_since()) {
        when = std::min(when, *oldest + timeout_ + past);
    }
    if (const auto send = link_.next_send_time(now)) {
        when = std::min(when, *send);
    }
    return when;
}

connection_stats server_connection::stats(clock::time_point now) const {
    connection_stats out;
    out.remote = remote_;
    out.link = link_.stats();
    out.cipher = send_key_.cipher();
    out.datagrams_sent = datagrams_sent_;
    out.datagrams_received = datagrams_received_;
    out.bytes_sent = bytes_sent_;
    out.bytes_received = bytes_received_;
    out.keep_alives_sent = keep_alives_sent_;
    out.connected_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - connected_at_);
    out.since_last_received = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_received_);
    return out;
}

} // namespace ecsnet::transport
