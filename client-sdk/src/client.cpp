// The client's public face: which io_context it runs on and who runs it (client.hpp, "Three ways to
// run"), and the calls handed to its session (session.hpp), which does the work.

#include "ecsnet/client/client.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include <asio/post.hpp>

#include "ecsnet/client/server_clock.hpp"
#include "session.hpp"

namespace ecsnet::client {

client::client(const proto::schema& schema, client_options options)
    : own_io_{std::make_unique<asio::io_context>(1)} {
    work_.emplace(own_io_->get_executor());
    session_ = std::make_shared<detail::session>(*own_io_, schema, std::move(options), false);
    if (session_->options().mode == threading::own_thread) {
        thread_ = std::thread{[io = own_io_.get()] { io->run(); }};
    }
}

client::client(asio::io_context& io, const proto::schema& schema, client_options options)
    : session_{std::make_shared<detail::session>(io, schema, std::move(options), true)} {}

client::~client() {
    session_->detach();
    if (!own_io_) {
        return; // the application's io_context runs the rest; the session lives until its handlers are done
    }
    const auto deadline =
        std::chrono::steady_clock::now() + session_->options().close_grace + std::chrono::milliseconds{100};
    if (thread_.joinable()) {
        while (!session_->quiet() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds{1});
        }
        asio::post(session_->executor(), [s = session_] { s->shutdown(); });
        work_.reset();
        thread_.join();
    } else {
        session_->set_poll_thread();
        while (!session_->quiet() && std::chrono::steady_clock::now() < deadline) {
            own_io_->run_one_for(std::chrono::milliseconds{5});
        }
        session_->shutdown();
        work_.reset();
        own_io_->restart();
        own_io_->run(); // every handler completes (cancelled); nothing holds the session afterwards
    }
    session_.reset();
}

bool client::connect(std::string host, std::uint16_t port) {
    return session_->connect(std::move(host), port);
}

bool client::connect(std::string_view token) {
    return session_->connect(token);
}

void client::close(std::string message) {
    session_->close(std::move(message));
}

client_state client::state() const {
    return session_->status().state();
}

client::reason_type client::disconnect_reason() const {
    return session_->status().last_disconnect().reason;
}

std::string client::disconnect_message() const {
    return session_->status().last_disconnect().message;
}

disconnect_info client::last_disconnect() const {
    return session_->status().last_disconnect();
}

client_stats client::stats() const {
    return session_->status().stats();
}

bool client::send_input(std::string_view payload) {
    return session_->send_input(payload);
}

bool client::send_input(std::string_view payload, std::uint32_t client_tick) {
    return session_->send_input(payload, client_tick);
}

std::uint32_t client::lead_tick(double margin_ticks) const {
    const auto s = stats();
    const auto rate = std::max<std::uint32_t>(tick_rate(), 1);
    // Counted from the newest applied tick, not from the server's epoch, by the rule the SDK's own inputs
    // use (server_clock.hpp, next_tick_at): the input must arrive half a round trip from now, plus the
    // margin.
    const std::uint32_t anchor_tick = s.newest_tick ? *s.newest_tick : 0;
    const std::int64_t anchor_us =
        s.newest_tick ? static_cast<std::int64_t>(s.newest_tick_server_time_us) : 0;
    const auto arrives_us = std::max(std::max<std::int64_t>(server_time_us(), 0) + s.rtt_smoothed.count() / 2,
                                     anchor_us); // a lagging clock estimate: the anchor's tick still runs
    const auto margin_us = static_cast<std::int64_t>(std::clamp(margin_ticks, 0.0, 1.0e6) * 1e6 / rate);
    return next_tick_at(anchor_tick, anchor_us, arrives_us + margin_us, rate);
}

void client::report_prediction(const prediction_stats& stats) {
    session_->status().update([&stats](client_stats& s) { s.prediction = stats; });
}

void client::set_simulator(const transport::sim_config& config) {
    session_->simulate(config);
}

std::size_t client::poll() {
    if (!own_io_) {
        return 0;
    }
    if (thread_.joinable()) {
        return session_->drain_inbox();
    }
    session_->set_poll_thread();
    own_io_->poll();
    return session_->take_applied();
}

ecsnet::registry& client::registry() noexcept {
    return session_->replica().registry();
}
const ecsnet::registry& client::registry() const noexcept {
    return session_->replica().registry();
}
proto::replica& client::mirror() noexcept {
    return session_->replica().mirror();
}
const proto::replica& client::mirror() const noexcept {
    return session_->replica().mirror();
}
bool client::interest_managed() const noexcept {
    return session_->replica().interest_managed();
}

entity client::own_entity() const noexcept {
    const auto& own = session_->replica().own_net();
    return own ? session_->replica().mirror().find(*own) : null_entity;
}

std::optional<proto::net_entity> client::own_net_entity() const noexcept {
    return session_->replica().own_net();
}
std::uint32_t client::client_id() const noexcept {
    return session_->replica().client_id();
}
std::uint32_t client::tick_rate() const noexcept {
    return session_->replica().tick_rate();
}
std::uint64_t client::server_epoch_unix_us() const noexcept {
    return session_->replica().epoch_unix_us();
}
const state_buffer& client::interpolation_buffer() const noexcept {
    return session_->replica().interpolation();
}

std::int64_t client::server_time_us() const {
    return session_->status().server_time_us(std::chrono::steady_clock::now());
}

std::int64_t client::render_time_us() const {
    return server_time_us() - static_cast<std::int64_t>(session_->options().interpolation_delay.count());
}

interpolation_window client::window(std::int64_t render_time_us) const {
    return find_window(session_->replica().interpolation(), render_time_us);
}

void client::on_connected(std::function<void()> callback) {
    session_->on_connected_ = std::move(callback);
}

void client::on_snapshot(std::function<void(const proto::applied_snapshot&)> callback) {
    session_->on_snapshot_ = std::move(callback);
}

void client::on_disconnected(std::function<void(const disconnect_info&)> callback) {
    session_->on_disconnected_ = std::move(callback);
}

void client::on_snapshot_first(std::function<void(const proto::applied_snapshot&)> callback) {
    session_->set_snapshot_first(std::move(callback));
}

void client::on_snapshot_refused(std::function<void(const proto::error&)> callback) {
    session_->on_refused_ = std::move(callback);
}

client::executor_type client::get_executor() const noexcept {
    return session_->strand();
}

const client_options& client::options() const noexcept {
    return session_->options();
}

} // namespace ecsnet::client
