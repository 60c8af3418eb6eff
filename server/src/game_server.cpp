// The server's life (game_server.hpp): its ports and keys, the run and the tick timer's start, checkpoints
// (restored at start, written on the tick and at the drain), the drain on SIGTERM. The tick is in
// game_server_tick.cpp, the sessions in game_server_sessions.cpp.

#include "ecsnet/server/game_server.hpp"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <csignal>
#include <fstream>

#include <spdlog/spdlog.h>

#include <ecsnet/transport/dev_key.hpp>

#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/lag_compensation.hpp"
#include "ecsnet/server/world_replicator.hpp"

namespace ecsnet::server {

using clock = std::chrono::steady_clock;

namespace {

connection_limits limits_from(const server_options& options) {
    connection_limits limits;
    limits.handshake_timeout = options.handshake_timeout;
    limits.idle_timeout = options.idle_timeout;
    limits.max_unsent_bytes = options.max_unsent_bytes;
    limits.max_frame_size = options.max_frame_size;
    limits.close_grace = options.shutdown_grace;
    limits.write_stall_timeout = options.write_stall_timeout;
    limits.socket_send_buffer = options.socket_send_buffer;
    return limits;
}

std::unique_ptr<replicator> make_replicator(const server_options& options, game_world& world,
                                            const proto::snapshot_history& history, server_metrics& metrics) {
    const auto spatial = world.spatial();
    if (options.relevancy_radius > 0.0F && spatial) {
        interest_options interest;
        interest.radius = options.relevancy_radius;
        interest.budget_kbps = options.client_budget_kbps;
        interest.tick_rate = options.tick_rate;
        interest.relevancy_period = options.relevancy_period;
        interest.workers = options.workers;
        return std::make_unique<interest_replicator>(world, history, *spatial, interest, metrics);
    }
    return std::make_unique<world_replicator>(history, metrics);
}

// The studio's key: 64 hex digits in a file (whitespace around them ignored).
transport::key read_key(const std::string& path) {
    std::ifstream in{path};
    if (!in) {
        throw std::runtime_error("cannot read the key file '" + path + "'");
    }
    std::string text;
    in >> text;
    const auto key = transport::key_from_hex(text);
    if (!key) {
        throw std::runtime_error("the key file '" + path +
                                 "' does not hold 64 hex digits (ecsnet-token keygen)");
    }
    return *key;
}

// The addresses of this host's interfaces, with `port`: what clients may name in their tokens when the
// server listens on every interface and no --public-address says which.
std::vector<transport::net_address> interface_addresses(std::uint16_t port) {
    std::vector<transport::net_address> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) {
        return out;
    }
    for (auto* at = list; at != nullptr; at = at->ifa_next) {
        if (at->ifa_addr == nullptr) {
            continue;
        }
        if (at->ifa_addr->sa_family == AF_INET) {
            const auto* in4 = reinterpret_cast<const sockaddr_in*>(at->ifa_addr);
            std::array<std::uint8_t, 4> octets{};
            std::memcpy(octets.data(), &in4->sin_addr, 4);
            out.push_back(transport::net_address::ipv4(octets, port));
        } else if (at->ifa_addr->sa_family == AF_INET6) {
            const auto* in6 = reinterpret_cast<const sockaddr_in6*>(at->ifa_addr);
            std::array<std::uint8_t, 16> bytes{};
            std::memcpy(bytes.data(), &in6->sin6_addr, 16);
            out.push_back(transport::net_address::ipv6(bytes, port));
        }
    }
    freeifaddrs(list);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Where clients reach the server: --public-address, else the bind address, else every interface's.
std::vector<transport::net_address> public_addresses_of(const server_options& options, std::uint16_t port) {
    std::vector<transport::net_address> out;
    for (const auto& text : options.public_addresses) {
        const auto parsed = transport::net_address::parse(text);
        if (!parsed) {
            throw std::runtime_error("--public-address '" + text + "' is not an address:port");
        }
        out.push_back(*parsed);
    }
    if (!out.empty()) {
        return out;
    }
    const auto bound = asio::ip::make_address(options.bind_address);
    if (!bound.is_unspecified()) {
        const auto parsed = transport::net_address::parse(
            bound.is_v6() ? "[" + bound.to_string() + "]:" + std::to_string(port)
                          : bound.to_string() + ":" + std::to_string(port));
        if (parsed) {
            out.push_back(*parsed);
        }
        return out;
    }
    return interface_addresses(port);
}

bool listens_on(transport_kind kind, transport_kind what) {
    return kind == transport_kind::both || kind == what;
}

} // namespace

game_server::game_server(server_options options, std::unique_ptr<game_world> world)
    : options_{std::move(options)}
    , limits_{limits_from(options_)}
    , world_{std::move(world)}
    , acceptor_{io_}
    , tick_timer_{io_}
    , shutdown_timer_{io_}
    , signals_{io_}
    , history_{world_->replicated_schema(), world_->registry(),
               proto::history_options{32, options_.tick_rate}}
    , replicator_{make_replicator(options_, *world_, history_, metrics_)}
    , pacer_{static_cast<double>(options_.tick_rate), clock::now()}
    , tick_load_{options_.tick_rate}
    , snapshot_load_{options_.tick_rate}
    , snapshot_stride_{snapshot_stride_options{.max_stride = options_.max_snapshot_stride},
                       options_.tick_rate}
    , epoch_{clock::now()}
    , epoch_unix_us_{static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                    std::chrono::system_clock::now().time_since_epoch())
                                                    .count())}
    , checkpoint_log_{1, options_.log_period, [](std::string_view line) { spdlog::error("{}", line); }}
    , peer_log_{options_.log_burst, options_.log_period,
                [](std::string_view line) { spdlog::warn("{}", line); }}
    , admin_{metrics_.registry, [this] { return healthy(); }} {
    if (options_.agones.enabled) {
        agones_ = std::make_unique<agones::sdk_client>(
            options_.agones, metrics_.registry, [this] { return metrics_.ticks.value(); },
            [this](std::string game_server_json) { on_allocated(std::move(game_server_json)); });
    }
    world_->declare_saveable(saveable_);
    if (const auto spatial = world_->spatial()) {
        lag_compensation_ = std::make_unique<lag_compensation>(
            world_->replicated_schema(), *spatial,
            lag_compensation_options{options_.lag_compensation, options_.min_fire_interval,
                                     options_.tick_rate},
            &metrics_);
        world_->use_lag_compensation(lag_compensation_.get());
    }
    admin_.serve_inspector(inspector_, history_.layout(), options_.admin_token, metrics_.admin_refused);
}

game_server::~game_server() {
    if (agones_) {
        agones_->stop();
    }
    admin_.stop();
}

void game_server::open() {
    if (!options_.insecure_dev && options_.key_file.empty()) {
        throw std::runtime_error(
            "no key for connect tokens: --key-file FILE (the backend's private key, 64 hex digits; "
            "ecsnet-token keygen makes one), or --insecure-dev for local development");
    }
    // The world is whole before anyone can connect.
    if (!options_.restore_path.empty()) {
        restore_checkpoint();
    }
    if (!options_.save_path.empty()) {
        if (auto unwritable = check_checkpoint_directory(options_.save_path)) {
            // Said now rather than at the first save; the server still serves (a full or read-only disk
            // must not take a running game down), counting and logging each failed checkpoint.
            spdlog::error("--save '{}': {}; checkpoints will fail until it is writable", options_.save_path,
                          *unwritable);
        } else if (const auto stale = remove_stale_temporaries(options_.save_path); stale != 0) {
            spdlog::info("removed {} temporary checkpoint file(s) a crash left next to '{}'", stale,
                         options_.save_path);
        }
        checkpoints_ =
            std::make_unique<checkpoint_writer>(options_.save_path, options_.checkpoint_test_pause);
    } else if (options_.save_every.count() > 0) {
        spdlog::warn("--save-every without --save: no checkpoint will be written");
    }
    const auto address = asio::ip::make_address(options_.bind_address);
    // Both transports on the same port number: TCP picks it (or is told it), UDP takes the same; with port 0
    // a number free for TCP may be taken for UDP, so a few are tried.
    for (int attempt = 0;; ++attempt) {
        std::uint16_t port = options_.port;
        if (listens_on(options_.transport, transport_kind::tcp)) {
            const asio::ip::tcp::endpoint endpoint{address, options_.port};
            acceptor_.open(endpoint.protocol());
            acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address{true});
            acceptor_.bind(endpoint);
            acceptor_.listen(asio::socket_base::max_listen_connections);
            port = acceptor_.local_endpoint().port();
        }
        try {
            if (listens_on(options_.transport, transport_kind::udp)) {
                open_udp(port);
                port = udp_->port();
            }
        } catch (const std::system_error&) {
            if (options_.port != 0 || attempt >= 10 || !acceptor_.is_open()) {
                throw;
            }
            asio::error_code ignored;
            acceptor_.close(ignored);
            continue;
        }
        port_ = port;
        break;
    }
    const auto key = options_.insecure_dev ? transport::dev_private_key : read_key(options_.key_file);
    if (!options_.insecure_dev) {
        tokens_ =
            std::make_unique<token_checker>(key, options_.protocol_id, public_addresses_of(options_, port_));
    }
    admin_port_ = admin_.start(options_.admin_address, options_.admin_port);
    if (!asio::ip::make_address(options_.admin_address).is_loopback() && options_.admin_token.empty()) {
        spdlog::info("admin port on {}: /metrics and /healthz answer every host; /inspector and /api/ only "
                     "loopback (set --admin-token to open them to others)",
                     options_.admin_address);
    }
    if (options_.insecure_dev) {
        spdlog::warn(
            "--insecure-dev: connect tokens use the published development key, so anyone who can reach "
            "this server can join it; never use it on a public server");
    }
    if (options_.simulator.enabled()) {
        spdlog::warn(
            "network simulator on (UDP): {:.1f}% loss, {} ms latency, {} ms jitter, {:.1f}% duplicated, "
            "{:.1f}% reordered",
            options_.simulator.loss * 100.0, options_.simulator.latency.count() / 1000,
            options_.simulator.jitter.count() / 1000, options_.simulator.duplicate * 100.0,
            options_.simulator.reorder * 100.0);
    }
}

void game_server::restore_checkpoint() {
    const auto started = clock::now();
    const auto& path = options_.restore_path;
    std::vector<std::byte> bytes;
    checkpoint_image image;
    auto refused = read_checkpoint_file(path, bytes);
    if (!refused) {
        refused = decode_checkpoint(bytes, world_->replicated_schema(), saveable_, image);
    }
    if (!refused) {
        bytes = {};
        refused = apply_checkpoint(image, *world_, saveable_, history_);
    }
    if (refused) {
        throw std::runtime_error("--restore '" + path + "' refused (" +
                                 std::string{to_string(refused->error)} + "): " + refused->message);
    }
    tick_ = image.tick;
    spdlog::info("restored {} entities at tick {} from '{}' in {:.1f} ms", image.entities(), image.tick, path,
                 std::chrono::duration<double, std::milli>(clock::now() - started).count());
}

void game_server::take_checkpoint(clock::time_point now) {
    next_checkpoint_ = now + options_.save_every;
    if (checkpoints_->busy()) {
        metrics_.checkpoints_skipped.add(); // the disk is slower than --save-every: the next one will do
        return;
    }
    static_cast<void>(checkpoints_->submit(
        capture_checkpoint(*world_, saveable_, history_, tick_, checkpoints_->take_spare(), true)));
}

void game_server::collect_checkpoint_outcome() {
    if (!checkpoints_) {
        return;
    }
    const auto outcome = checkpoints_->take_outcome();
    if (!outcome) {
        return;
    }
    metrics_.checkpoint_last_duration.set(outcome->seconds);
    if (outcome->ok) {
        metrics_.checkpoints_written.add();
        metrics_.checkpoint_last_size.set(static_cast<double>(outcome->bytes));
        spdlog::debug("checkpoint of tick {} written: {} bytes in {:.1f} ms", outcome->tick, outcome->bytes,
                      outcome->seconds * 1000.0);
        return;
    }
    metrics_.checkpoints_failed.add();
    if (checkpoint_log_.allow("failed checkpoints", clock::now())) {
        spdlog::error("checkpoint of tick {} failed, the previous one stays: {}", outcome->tick,
                      outcome->error);
    }
}

void game_server::open_udp(std::uint16_t port) {
    transport::udp_server_options udp;
    udp.bind_address = options_.bind_address;
    udp.port = port;
    udp.config.protocol_id = options_.protocol_id;
    udp.config.private_key = options_.insecure_dev ? transport::dev_private_key : read_key(options_.key_file);
    udp.config.max_clients = options_.max_clients;
    udp.send_thread = options_.send_thread;
    udp.receive_interval = std::chrono::microseconds{options_.receive_interval_us};
    // The server sends every client a snapshot each tick: its acks wait for that ride rather than leaving
    // in ack-only datagrams (half the server's datagrams, and their encryption, at 30 Hz). The header
    // carries how long an ack waited, so the client's RTT stays exact (but for the time a datagram waited in
    // the socket for its read: up to --receive-interval-us).
    udp.config.link.max_ack_delay =
        std::chrono::microseconds{1'000'000 / std::max<std::uint32_t>(options_.tick_rate, 1)} +
        std::chrono::milliseconds{5};
    if (port != 0) {
        udp.config.public_addresses = public_addresses_of(options_, port);
    }
    if (options_.simulator.enabled()) {
        udp.simulator = options_.simulator;
    }
    udp_.reset();
    udp_ = std::make_unique<udp_listener>(
        io_, std::move(udp), static_cast<connection_handler&>(*this), options_.handshake_timeout,
        [this](transport::drop_reason reason, const transport::net_address& from) {
            if (peer_log_.allow("refused datagrams", clock::now())) {
                spdlog::warn("datagram from {} refused: {}", from.to_string(), transport::to_string(reason));
            }
        });
}

void game_server::run(bool handle_signals) {
    if (handle_signals) {
        signals_.add(SIGINT);
        signals_.add(SIGTERM);
        signals_.async_wait([this](const asio::error_code& ec, int signal) {
            if (!ec) {
                spdlog::info("signal {} received: shutting down", signal);
                begin_shutdown();
            }
        });
    }
    if (acceptor_.is_open()) {
        accept();
    }
    if (udp_) {
        udp_->start();
    }
    // Said only now, once SIGTERM drains rather than kills: whoever waits for this line may signal at once.
    const char* transports = options_.transport == transport_kind::both  ? "TCP and UDP"
                             : options_.transport == transport_kind::tcp ? "TCP"
                                                                         : "UDP";
    spdlog::info("listening for clients on {}:{} ({}), admin (/metrics, /healthz, /inspector) on {}:{}; tick "
                 "rate {} Hz",
                 options_.bind_address, port_, transports, options_.admin_address, admin_port_,
                 options_.tick_rate);
    ticking_ = true;
    last_tick_end_ns_ = clock::now().time_since_epoch().count();
    pacer_ = tick_pacer{static_cast<double>(options_.tick_rate), clock::now()};
    next_checkpoint_ = clock::now() + options_.save_every;
    schedule_tick(pacer_.next_start());
    if (agones_) {
        agones_->start();
        agones_->ready(); // the world is loaded and the game port listens
    }
    io_.run();
    ticking_ = false;
    if (agones_) {
        agones_->shutdown(); // the server ends by itself (or after SIGTERM): Agones must not wait for it
        agones_->stop(options_.agones.shutdown_wait);
    }
    admin_.stop();
    peer_log_.flush_all(clock::now());
    checkpoint_log_.flush_all(clock::now());
    spdlog::info("server stopped after {} ticks", tick_);
    spdlog::default_logger()->flush();
}

void game_server::on_allocated(std::string game_server_json) {
    asio::post(io_, [this, json = std::move(game_server_json)] {
        if (!shutting_down_) {
            world_->allocated(json);
        }
    });
}

void game_server::stop() {
    asio::post(io_, [this] { begin_shutdown(); });
}

bool game_server::healthy() const noexcept {
    if (!ticking_) {
        return false;
    }
    const auto last = clock::time_point{clock::duration{last_tick_end_ns_.load()}};
    // A stalled loop is unhealthy after ten missed periods (and never sooner than 2 s).
    const auto allowed = std::max<clock::duration>(
        std::chrono::seconds{2}, std::chrono::duration_cast<clock::duration>(
                                     std::chrono::duration<double>(10.0 / options_.tick_rate)));
    return clock::now() - last < allowed;
}

std::uint64_t game_server::server_time_us(clock::time_point at) const noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(at - epoch_).count());
}

void game_server::accept() {
    acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
        if (!acceptor_.is_open() || shutting_down_) {
            return;
        }
        if (!ec) {
            auto c = std::make_shared<tcp_connection>(
                std::move(socket), static_cast<connection_handler&>(*this), limits_,
                traffic_counters{&metrics_.sent_bytes, &metrics_.received_bytes});
            c->start();
            on_opened(std::move(c));
        } else if (ec != asio::error::operation_aborted && peer_log_.allow("failed accepts", clock::now())) {
            spdlog::warn("accept failed: {}", ec.message()); // e.g. out of file descriptors: keep serving
        }
        accept();
    });
}

void game_server::begin_shutdown() {
    if (shutting_down_) {
        return;
    }
    shutting_down_ = true;
    ticking_ = false;
    drain_deadline_ = clock::now() + options_.drain_time;
    asio::error_code ignored;
    acceptor_.close(ignored);
    tick_timer_.cancel();
    signals_.cancel();
    spdlog::info("draining: telling {} client(s) SHUTDOWN (retry in {} s), {}then exiting within {:.1f} s",
                 connections_.size(), options_.retry_after_seconds,
                 checkpoints_ ? "writing the final checkpoint, " : "",
                 std::chrono::duration<double>(options_.drain_time).count());
    const auto retry = options_.retry_after_seconds;
    connections_.for_each([retry](client_link& c) {
        c.state().retry_after_seconds = retry;
        c.disconnect(v1::SHUTDOWN, "server shutting down");
    });
    if (udp_) {
        udp_->stop(static_cast<std::uint8_t>(v1::SHUTDOWN), "server shutting down",
                   static_cast<std::uint16_t>(std::min<std::uint32_t>(retry, 65'535)));
    }
    if (connections_.empty()) {
        finish_drain();
        return;
    }
    // The clients' SHUTDOWN may take the grace period to flush, but no more than half the drain: the
    // final checkpoint needs the rest.
    shutdown_timer_.expires_after(
        std::min<clock::duration>(options_.shutdown_grace, options_.drain_time / 2));
    shutdown_timer_.async_wait([this](const asio::error_code& ec) {
        if (!ec) {
            connections_.for_each([](client_link& c) { c.abort(); });
            finish_drain();
        }
    });
}

void game_server::finish_drain() {
    if (drained_) {
        return;
    }
    drained_ = true;
    if (checkpoints_) {
        // After the clients left (their avatars gone): the world as a restart will see it. A periodic write
        // still in flight finishes first (one at a time).
        bool written = false;
        std::string why = "timed out (--drain-seconds)";
        if (checkpoints_->wait_idle(drain_deadline_)) {
            static_cast<void>(checkpoints_->take_outcome()); // the periodic one: superseded
            const auto started = clock::now();
            checkpoints_->submit(capture_checkpoint(*world_, saveable_, history_, tick_));
            if (checkpoints_->wait_idle(drain_deadline_)) {
                const auto outcome = checkpoints_->take_outcome();
                written = outcome && outcome->ok;
                if (outcome) {
                    metrics_.checkpoint_last_duration.set(outcome->seconds);
                    why = outcome->error;
                }
                if (written) {
                    metrics_.checkpoints_written.add();
                    metrics_.checkpoint_last_size.set(static_cast<double>(outcome->bytes));
                    spdlog::info("final checkpoint of tick {} written to '{}': {} bytes in {:.1f} ms", tick_,
                                 options_.save_path, outcome->bytes,
                                 std::chrono::duration<double, std::milli>(clock::now() - started).count());
                }
            }
        }
        if (!written) {
            metrics_.checkpoints_failed.add();
            exit_code_ = 1;
            spdlog::error("final checkpoint to '{}' failed: {}; the previous checkpoint, if any, stays",
                          options_.save_path, why);
        }
    }
    if (drain_hook_) {
        drain_hook_();
    }
    io_.stop();
}

std::vector<client_info> game_server::clients() {
    std::vector<client_info> out;
    connections_.for_each([&out](client_link& c) {
        const auto& s = c.state();
        const auto m = c.measures();
        out.push_back(client_info{s.id, s.name, c.remote(), std::string{c.transport()},
                                  s.state == session::phase::playing, s.avatar, s.acked, s.sent,
                                  m.unsent_bytes, m.bytes_sent, m.bytes_received, m.rtt_ms, m.loss, m.resends,
                                  s.inputs_received});
    });
    return out;
}

} // namespace ecsnet::server
