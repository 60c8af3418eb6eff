#include "client_replica.hpp"

#include <algorithm>

#include <ecsnet/proto/envelope.hpp>

namespace ecsnet::client::detail {

client_replica::client_replica(const proto::schema& schema, const client_options& options)
    : thin_{options.thin}
    , world_mirror_{schema, registry_, proto::mirror_options{std::max<std::size_t>(options.mirror_depth, 2)}}
    , view_mirror_{schema, registry_,
                   proto::view_mirror_options{std::max<std::size_t>(options.mirror_depth, 2)}}
    , interpolation_{options.interpolation_states} {}

void client_replica::welcome(const v1::ServerWelcome& welcome) {
    thin_newest_.reset();
    world_mirror_.clear();
    view_mirror_.clear();
    mirror_ = welcome.interest_managed() ? static_cast<proto::replica*>(&view_mirror_) : &world_mirror_;
    mirror_->welcome(welcome);
    interest_managed_ = welcome.interest_managed();
    interpolation_.clear();
    client_id_ = welcome.client_id();
    tick_rate_ = welcome.tick_rate();
    epoch_unix_us_ = welcome.server_epoch_unix_us();
    own_net_.reset();
    if (welcome.has_own_entity()) {
        own_net_ = proto::net_entity{welcome.own_entity().index(), welcome.own_entity().generation()};
    }
}

snapshot_outcome client_replica::apply(std::string_view envelope) {
    if (thin_) {
        return ack_header(envelope);
    }
    snapshot_outcome out;
    auto applied = mirror_->apply_envelope(envelope);
    if (!applied &&
        (applied.code() == proto::errc::malformed_message || applied.code() == proto::errc::empty_envelope ||
         applied.code() == proto::errc::unexpected_message)) {
        out.what = snapshot_outcome::kind::malformed;
        out.error = applied.error_value();
        return out;
    }
    if (applied) {
        if (const auto* newest = interpolation_.capacity() > 0 ? mirror_->newest_state() : nullptr) {
            interpolation_.push(*newest);
        }
        out.what = snapshot_outcome::kind::applied;
        out.applied = applied.value();
    } else {
        out.what = snapshot_outcome::kind::refused;
        out.error = applied.error_value();
    }
    // The newest applied tick, or a full-state request when the mirror needs one.
    *out.ack.mutable_ack() = mirror_->make_ack();
    return out;
}

// The header only: the server's work for a thin client is a full client's, the client's almost none.
snapshot_outcome client_replica::ack_header(std::string_view envelope) {
    snapshot_outcome out;
    const auto header = proto::peek_snapshot_header(envelope, thin_envelope_);
    if (!header) {
        out.what = snapshot_outcome::kind::malformed;
        out.error = header.error_value();
        return out;
    }
    if (thin_newest_ && header->tick <= *thin_newest_) {
        return out; // a stale one: acks only move forward
    }
    thin_newest_ = header->tick;
    out.what = snapshot_outcome::kind::applied;
    out.applied.tick = header->tick;
    out.applied.server_time_us = static_cast<std::uint64_t>(
        static_cast<std::int64_t>(std::uint64_t{header->tick} * 1000000ULL / std::max(tick_rate_, 1U)) +
        header->time_offset_us);
    out.applied.full_state = header->full_state;
    out.ack.mutable_ack()->set_tick(header->tick);
    return out;
}

} // namespace ecsnet::client::detail
