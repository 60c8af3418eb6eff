#include "ecsnet/server/game_server.hpp"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include <ecsnet/transport/dev_key.hpp>

#include <ecsnet/proto/handshake.hpp>

#include "ecsnet/server/interest_replicator.hpp"
#include "ecsnet/server/lag_compensation.hpp"
#include "ecsnet/server/predicted_by.hpp"
#include "ecsnet/server/world_replicator.hpp"

namespace ecsnet::server {

using clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t max_input_payload = 1024;

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

std::string describe(const client_link& c) {
    const auto& s = c.state();
    if (s.id == 0) {
        return "connection from " + c.remote();
    }
    return "client " + std::to_string(s.id) + " '" + s.name + "' (" + c.remote() + ")";
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
    const char* transports = options_.transport == transport_kind::both  ? "TCP and UDP"
                             : options_.transport == transport_kind::tcp ? "TCP"
                                                                         : "UDP";
    spdlog::info("listening for clients on {}:{} ({}), admin (/metrics, /healthz, /inspector) on {}:{}; tick "
                 "rate {} Hz",
                 options_.bind_address, port_, transports, options_.admin_address, admin_port_,
                 options_.tick_rate);
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

void game_server::on_opened(std::shared_ptr<client_link> link) {
    auto& c = *link;
    connections_.add(std::move(link));
    if (shutting_down_) {
        c.disconnect(v1::SHUTDOWN, "server shutting down");
        return;
    }
    // Overloaded: the ticks are over the limit, or they fit only because each client gets fewer snapshots
    // (snapshot_stride.hpp): a newcomer would be served at the expense of those already playing.
    if (const auto load = tick_load_.fraction_of(pacer_.period());
        options_.max_tick_load > 0.0 && (load > options_.max_tick_load || snapshot_stride_.stride() > 1)) {
        metrics_.overload_refusals.add();
        const auto why =
            snapshot_stride_.stride() > 1
                ? fmt::format("each client gets a snapshot every {} ticks", snapshot_stride_.stride())
                : fmt::format("its ticks take {:.0f}% of the tick period", 100.0 * load);
        if (peer_log_.allow("overload refusals", clock::now())) {
            spdlog::warn("{} refused: server overloaded ({}; tick limit {:.0f}%)", describe(c), why,
                         100.0 * options_.max_tick_load);
        }
        c.state().retry_after_seconds = options_.retry_after_seconds;
        c.disconnect(v1::SERVER_FULL,
                     fmt::format("server overloaded: {}; retry in {} s", why, options_.retry_after_seconds));
        return;
    }
    if (admitted_ >= options_.max_clients) {
        if (peer_log_.allow("SERVER_FULL refusals", clock::now())) {
            spdlog::warn("{} refused: server full ({} clients)", describe(c), admitted_);
        }
        c.disconnect(v1::SERVER_FULL, "server full: " + std::to_string(options_.max_clients) + " clients");
        return;
    }
    c.state().admitted = true;
    ++admitted_;
    metrics_.connected_clients.set(static_cast<double>(admitted_));
}

void game_server::schedule_tick(clock::time_point at) {
    tick_timer_.expires_at(at);
    tick_timer_.async_wait([this](const asio::error_code& ec) {
        if (!ec && !shutting_down_) {
            tick();
        }
    });
}

void game_server::tick() {
    const auto started = clock::now();
    // Each part's time goes to its counter as the part ends (ecsnet_tick_phase_seconds_total).
    auto part_started = started;
    const auto part_ended = [&part_started](counter& part, clock::time_point now = clock::now()) {
        part.add(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(now - part_started).count()));
        part_started = now;
    };

    // 1. The inputs for this tick (input_buffer.hpp), each client's to its own avatar only. Shots among
    // them are checked against the clock of this tick (lag_compensation.hpp). What the UDP socket holds is
    // read first: between two of its reads the server lets datagrams gather (--receive-interval-us), and
    // those that came meanwhile belong to this tick.
    if (udp_) {
        udp_->server().receive_waiting();
    }
    const auto this_tick = tick_ + 1; // the tick this step produces
    if (lag_compensation_) {
        lag_compensation_->set_now(static_cast<std::int64_t>(server_time_us(started)));
    }
    connections_.for_each([this, started, this_tick](client_link& c) {
        auto& s = c.state();
        if (s.state != session::phase::playing) {
            return;
        }
        const bool dry = s.inputs.take(this_tick, [&](const client_input& taken) {
            if (!taken.repeated) {
                metrics_.inputs.add();
            }
            auto input = taken;
            input.predicting = s.wants_input_status;
            if (auto refused = world_->apply_input(s.id, s.avatar, input)) {
                metrics_.refused_inputs.add();
                if (peer_log_.allow("refused inputs", started)) {
                    spdlog::warn("{}: input {} refused: {}", describe(c), input.sequence, *refused);
                }
            }
        });
        if (dry) {
            metrics_.inputs_dry.add();
        }
    });
    part_ended(metrics_.tick_inputs_ns);

    // 2. Systems.
    world_->update(1.0 / static_cast<double>(options_.tick_rate));
    part_ended(metrics_.tick_systems_ns);

    // 3. Capture the replicated state.
    ++tick_;
    history_.capture(tick_, server_time_us(started));
    replicator_->tick(tick_, server_time_us(started));
    if (lag_compensation_) { // with the snapshot's time: what clients interpolate is what shots rewind to
        lag_compensation_->record(world_->registry(), tick_,
                                  static_cast<std::int64_t>(server_time_us(started)), &history_.newest());
        metrics_.hit_history_bytes.set(static_cast<double>(lag_compensation_->history().memory_bytes()));
    }
    if (tick_observer_) {
        tick_observer_(tick_, history_);
    }
    if (checkpoints_) {
        collect_checkpoint_outcome();
        if (options_.save_every.count() > 0 && started >= next_checkpoint_) {
            take_checkpoint(started);
        }
    }
    part_ended(metrics_.tick_capture_ns);
    const auto snapshots_started = part_started; // prepare and send: the part the snapshot stride scales

    // 4. Every playing client wants this tick; sent now where the socket is idle. A client that predicts
    // gets its InputStatus first (unreliable over UDP, in the same datagram as the snapshot when it fits).
    // The replicator may write ahead, on its workers, the snapshots the loop below sends: those of UDP links
    // next_snapshot() would serve now (a datagram link sends at once; a TCP link writes its snapshot when
    // its socket is idle, maybe later in the tick or not at all, so it is left to write it when it can).
    to_prepare_.clear();
    connections_.for_each([this](client_link& c) {
        auto& s = c.state();
        if (s.state == session::phase::playing && s.replication && c.transport() == "udp" &&
            gate(s) == snapshot_gate::open) {
            to_prepare_.push_back(s.replication.get());
        }
    });
    replicator_->prepare(to_prepare_);
    part_ended(metrics_.tick_prepare_ns);
    const auto predicted = predicted_entities();
    // Each link's transport state is cold here (a thousand were sent to since): asked for two links ahead.
    constexpr std::size_t send_lookahead = 2;
    const auto ask_ahead = [](const client_link& c) { c.prefetch_send(); };
    connections_.for_each_ahead(send_lookahead, ask_ahead, [this, &predicted](client_link& c) {
        auto& s = c.state();
        if (s.state != session::phase::playing) {
            return;
        }
        if (s.wants_input_status) {
            auto& st = *input_status_.mutable_input_status();
            st.Clear();
            st.set_tick(tick_);
            st.set_applied_sequence(s.inputs.applied_sequence());
            st.set_applied_client_tick(s.inputs.applied_client_tick());
            if (const auto lead = s.inputs.lead()) {
                st.set_lead_ticks(*lead);
            }
            st.set_ran_dry(static_cast<std::uint32_t>(s.inputs.ran_dry()));
            add_predicted(s, predicted, st);
            c.send(input_status_);
        }
        c.want_snapshot();
    });
    part_ended(metrics_.tick_send_ns);
    snapshot_load_.add(part_started - snapshots_started);

    if (udp_) {
        export_transport_metrics(tick_ % options_.tick_rate == 0); // clients' RTT and loss once a second
    }
    const auto ended = clock::now();
    feed_inspector(started, ended);
    peer_log_.flush(ended);
    checkpoint_log_.flush(ended);
    metrics_.ticks.add();
    part_ended(metrics_.tick_other_ns, ended);
    metrics_.tick_duration.observe(std::chrono::duration<double>(ended - started).count());
    tick_load_.add(ended - started);
    metrics_.entities.set(static_cast<double>(world_->registry().alive()));
    last_tick_end_ns_ = ended.time_since_epoch().count();

    const auto next = pacer_.tick_ended(ended);
    if (next.overrun) {
        metrics_.tick_overruns.add();
        const auto overruns = metrics_.tick_overruns.value();
        if (overruns <= 10 || overruns % 100 == 0) { // a struggling server must not drown in its own logs
            spdlog::warn(
                "tick {} overran: {:.2f} ms for a {:.2f} ms period, {} slot(s) skipped ({} overruns so far)",
                tick_, std::chrono::duration<double, std::milli>(ended - started).count(),
                std::chrono::duration<double, std::milli>(pacer_.period()).count(), next.skipped_slots,
                overruns);
        }
    }
    if (const auto before = snapshot_stride_.stride();
        snapshot_stride_.tick_ended(next.overrun, tick_load_.fraction_of(pacer_.period()),
                                    snapshot_load_.fraction_of(pacer_.period()))) {
        const auto stride = snapshot_stride_.stride();
        metrics_.snapshot_stride.set(static_cast<double>(stride));
        if (peer_log_.allow("snapshot stride", ended)) {
            spdlog::warn(
                "{}: the last second's ticks took {:.0f}% of the period; each client now gets a snapshot "
                "every {} tick(s){}",
                stride > before ? "overloaded" : "catching up", 100.0 * snapshot_stride_.last_load(), stride,
                stride > before && snapshot_stride_.hold_windows() > 1
                    ? fmt::format(" for {} s at least (the rate was raised too early before)",
                                  snapshot_stride_.hold_windows())
                    : std::string{});
        }
    }
    schedule_tick(next.next_start);
}

std::unordered_map<client_id, std::vector<proto::net_entity>> game_server::predicted_entities() {
    std::unordered_map<client_id, std::vector<proto::net_entity>> out;
    const auto* markers = world_->registry().try_storage<predicted_by>();
    if (markers == nullptr || markers->empty()) {
        return out;
    }
    const auto* entities = markers->data();
    const auto* marks = markers->raw();
    for (std::size_t i = 0; i < markers->size(); ++i) {
        out[marks[i].client].push_back(history_.to_net(entities[i]));
    }
    for (auto& [client, list] : out) {
        std::sort(list.begin(), list.end(), [](const proto::net_entity& a, const proto::net_entity& b) {
            return a.index != b.index ? a.index < b.index : a.generation < b.generation;
        });
    }
    return out;
}

void game_server::add_predicted(session& s,
                                const std::unordered_map<client_id, std::vector<proto::net_entity>>& all,
                                v1::InputStatus& status) const {
    static const std::vector<proto::net_entity> none;
    const auto found = all.find(s.id);
    const auto& now = found != all.end() ? found->second : none;
    if (now != s.predicted) {
        s.predicted = now;
        s.predicted_changed_at = tick_;
    }
    // Sent for a few ticks after a change (a lost status is covered by the next ones) and once a second.
    constexpr proto::tick_type resend_ticks = 8;
    const bool recent = tick_ - s.predicted_changed_at < resend_ticks;
    const bool never = s.predicted.empty() && s.predicted_changed_at == 0; // a game that marks nothing
    if (never || (!recent && tick_ % std::max<std::uint32_t>(options_.tick_rate, 1) != 0)) {
        return;
    }
    auto& out = *status.mutable_predicted();
    for (const auto& e : s.predicted) {
        auto& id = *out.add_entities();
        id.set_index(e.index);
        id.set_generation(e.generation);
    }
}

void game_server::feed_inspector(clock::time_point started, clock::time_point ended) {
    // The frame: only while someone looks, a few times a second (inspector_feed.hpp). Its cost is part of
    // this tick's duration (measured in bench/inspector_tick_p99).
    if (inspector_.wants_frame(ended)) {
        const auto copy_started = clock::now();
        auto next = inspector_.take_spare();
        inspector::feed::copy_newest(history_, *next);
        next->clients.clear();
        connections_.for_each([this, &next](client_link& c) {
            const auto& s = c.state();
            const auto m = c.measures();
            inspector::client_summary summary;
            summary.id = s.id;
            summary.name = s.name;
            summary.remote = c.remote();
            summary.transport = std::string{c.transport()};
            summary.playing = s.state == session::phase::playing;
            if (s.avatar != null_entity) {
                summary.avatar = entity_traits::to_index(s.avatar);
            }
            summary.rtt_ms = m.rtt_ms;
            summary.loss = m.loss;
            summary.bytes_sent = m.bytes_sent;
            summary.bytes_received = m.bytes_received;
            if (s.acked) {
                summary.ticks_behind = tick_ - *s.acked;
            }
            summary.full_state_requests = s.full_state_requests;
            summary.inputs_received = s.inputs_received;
            summary.unsent_bytes = m.unsent_bytes;
            next->clients.push_back(std::move(summary));
        });
        next->relevancy_radius = dynamic_cast<interest_replicator*>(replicator_.get()) != nullptr
                                     ? options_.relevancy_radius
                                     : 0.0F;
        next->tick_rate = options_.tick_rate;
        next->copy_ms = std::chrono::duration<double, std::milli>(clock::now() - copy_started).count();
        inspector_.publish(std::move(next), ended);
        metrics_.inspector_frames.add();
    }

    // Server-only components of the entities open in an inspector's panel (a few, on request).
    if (inspector_.server_only_wanted()) {
        for (const auto index : inspector_.take_server_only_requests()) {
            inspector::server_only_view view;
            view.tick = tick_;
            view.index = index;
            const auto e = world_->registry().current(index);
            if (e != null_entity) {
                view.version = entity_traits::to_version(e);
                view.components = world_->inspect(e);
            }
            inspector_.answer_server_only(std::move(view));
        }
    }

    // The time series: one sample a second, always (a few numbers).
    auto& second = inspector_second_;
    const double tick_ms = std::chrono::duration<double, std::milli>(ended - started).count();
    if (second.ticks == 0 && second.start == clock::time_point{}) {
        second.start = started;
        second.bytes_out = metrics_.sent_bytes.value();
        second.bytes_in = metrics_.received_bytes.value();
    }
    second.sum_ms += tick_ms;
    second.max_ms = std::max(second.max_ms, tick_ms);
    ++second.ticks;
    const double elapsed = std::chrono::duration<double>(ended - second.start).count();
    if (elapsed >= 1.0) {
        const auto out = metrics_.sent_bytes.value();
        const auto in = metrics_.received_bytes.value();
        inspector::series_sample sample;
        sample.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        sample.tick_ms_mean = second.sum_ms / second.ticks;
        sample.tick_ms_max = second.max_ms;
        sample.ticks = second.ticks;
        sample.clients = static_cast<std::uint32_t>(admitted_);
        sample.bytes_out_per_s = static_cast<double>(out - second.bytes_out) / elapsed;
        sample.bytes_in_per_s = static_cast<double>(in - second.bytes_in) / elapsed;
        sample.entities = history_.empty() ? 0 : history_.newest().entities.size();
        inspector_.add_sample(sample);
        second = {};
        second.start = ended;
        second.bytes_out = out;
        second.bytes_in = in;
    }
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

void game_server::export_transport_metrics(bool per_client) {
    // The UDP transport counts its datagrams' bytes; the traffic metrics, which TCP connections add to as
    // they write and read, get what it counted since the last tick.
    const auto& counters = udp_->server().counters();
    const auto sent = counters.bytes_sent.load(std::memory_order_relaxed);
    const auto received = counters.bytes_received.load(std::memory_order_relaxed);
    metrics_.sent_bytes.add(sent - udp_bytes_seen_.sent);
    metrics_.received_bytes.add(received - udp_bytes_seen_.received);
    udp_bytes_seen_ = {sent, received};

    const auto& dropped = counters.dropped;
    dropped.for_each([this](transport::drop_reason reason, std::uint64_t count) {
        const auto at = static_cast<std::size_t>(reason);
        if (at >= dropped_seen_.size()) {
            dropped_seen_.resize(at + 1, 0);
        }
        if (count > dropped_seen_[at]) {
            metrics_.packets_dropped.with(transport::to_string(reason)).add(count - dropped_seen_[at]);
            dropped_seen_[at] = count;
        }
    });
    if (!per_client) {
        return;
    }
    std::uint64_t resends = 0;
    connections_.for_each([&](client_link& c) {
        const auto m = c.measures();
        resends += m.resends;
        if (m.rtt_ms && c.state().state == session::phase::playing) {
            metrics_.client_rtt.observe(*m.rtt_ms / 1000.0);
            metrics_.client_loss.observe(m.loss.value_or(0.0));
        }
    });
    metrics_.resends.set(static_cast<double>(resends));
}

void game_server::on_message(client_link& from, v1::Envelope& message) {
    auto& s = from.state();
    switch (message.message_case()) {
    case v1::Envelope::kClientHello:
        if (s.state != session::phase::handshaking) {
            from.disconnect(v1::PROTOCOL_ERROR, "ClientHello after the handshake");
            return;
        }
        handle_hello(from, message.client_hello());
        return;
    case v1::Envelope::kPing: {
        v1::Envelope pong;
        pong.mutable_pong()->set_ping_sent_us(message.ping().sent_us());
        pong.mutable_pong()->set_responder_time_us(server_time_us(clock::now()));
        from.send(pong);
        return;
    }
    case v1::Envelope::kDisconnect:
        s.closed_by_peer = true;
        s.close_reason = v1::CLIENT_QUIT;
        s.close_message = "client quit: " + message.disconnect().message().substr(0, 200);
        from.abort();
        return;
    case v1::Envelope::kAck:
    case v1::Envelope::kInput:
        if (s.state != session::phase::playing) {
            from.disconnect(v1::PROTOCOL_ERROR,
                            std::string{proto::message_name(message)} + " before the handshake completed");
            return;
        }
        if (message.message_case() == v1::Envelope::kAck) {
            handle_ack(from, message.ack());
        } else {
            handle_input(from, *message.mutable_input());
        }
        return;
    default:
        from.disconnect(v1::PROTOCOL_ERROR,
                        "unexpected " + std::string{proto::message_name(message)} + " from a client");
        return;
    }
}

void game_server::handle_hello(client_link& from, const v1::ClientHello& hello) {
    auto& s = from.state();
    // UDP clients proved their token to the transport; TCP ones prove it here (unless in development mode).
    if (tokens_ && from.transport() == "tcp") {
        const auto now_unix =
            static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
        if (auto refused = tokens_->check(hello.connect_token(), now_unix)) {
            if (peer_log_.allow("handshake refusals", clock::now())) {
                spdlog::warn("{} refused at handshake: {}", describe(from), *refused);
            }
            from.disconnect(v1::AUTHENTICATION_FAILED, *refused);
            return;
        }
    }
    if (auto accepted = proto::check_client_hello(hello, history_.layout()); !accepted) {
        if (peer_log_.allow("handshake refusals", clock::now())) {
            spdlog::warn("{} refused at handshake: {}", describe(from), accepted.message());
        }
        from.disconnect(proto::reason_for(accepted.error_value()), std::string{accepted.message()});
        return;
    }
    s.id = next_client_id_++;
    s.name = std::string{proto::client_name(hello)};
    s.avatar = world_->client_joined(s.id, s.name);
    std::optional<refusal> refused;
    s.replication = replicator_->join(s.id, s.avatar, hello, refused);
    if (refused) {
        if (peer_log_.allow("handshake refusals", clock::now())) {
            spdlog::warn("{} refused at handshake: {}", describe(from), refused->message);
        }
        world_->client_left(s.id, s.avatar);
        s.avatar = null_entity;
        s.id = 0;
        from.disconnect(refused->reason, refused->message);
        return;
    }
    s.state = session::phase::playing;
    s.wants_input_status = hello.wants_input_status();
    from.handshake_done();
    if (agones_) {
        agones_->player_connected(std::to_string(s.id));
    }

    proto::welcome_info info;
    info.client_id = s.id;
    info.tick_rate = options_.tick_rate;
    info.current_tick = tick_;
    if (s.avatar != null_entity) {
        info.own_entity = history_.to_net(s.avatar);
    }
    info.server_epoch_unix_us = epoch_unix_us_;
    info.history_ticks = static_cast<std::uint32_t>(history_.depth());
    auto welcome = proto::make_server_welcome(history_.layout(), info);
    replicator_->welcome(*s.replication, *welcome.mutable_server_welcome());
    from.send(welcome);
    if (peer_log_.allow("joins", clock::now())) {
        spdlog::info("{} joined", describe(from));
    }
    from.want_snapshot(); // the newest tick, as a full state
}

void game_server::handle_ack(client_link& from, const v1::Ack& ack) {
    auto& s = from.state();
    if (!ack.full_state_requested() && (!s.sent || ack.tick() > *s.sent)) {
        from.disconnect(v1::PROTOCOL_ERROR,
                        "ack of tick " + std::to_string(ack.tick()) + ", which was never sent");
        return;
    }
    if (s.full_state_in_flight && ack.tick() < *s.full_state_in_flight) {
        // Sent before the full state arrived (a repeat, a duplicate, a reordered datagram; a request names
        // the tick it refused): the full state answers it already.
        metrics_.stale_acks.add();
        return;
    }
    if (ack.full_state_requested()) {
        ++s.full_state_requests;
    }
    replicator_->on_ack(*s.replication, ack);
    if (!ack.full_state_requested() && (!s.acked || ack.tick() > *s.acked)) {
        s.acked = ack.tick();
    }
    s.full_state_in_flight.reset();
    if (ack.full_state_requested()) {
        s.sent.reset(); // resend the newest tick, in full
        s.ack_anchor.reset();
        from.want_snapshot();
        return;
    }
    if (!s.ack_anchor || ack.tick() > *s.ack_anchor) {
        s.ack_anchor = ack.tick();
        from.want_snapshot(); // a client held back by flow control may take the newest tick now
    } else if (window_full(s)) {
        s.nudged = true;
        from.want_snapshot();
    }
}

game_server::snapshot_gate game_server::gate(const session& s) const noexcept {
    if (history_.empty() || (s.sent && *s.sent >= history_.newest_tick())) {
        return snapshot_gate::nothing_new;
    }
    if (!snapshot_stride_.sends_at(history_.newest_tick(), s.id)) {
        return snapshot_gate::skipped; // overloaded: this client's turn is a later tick
    }
    if (s.full_state_in_flight) {
        return snapshot_gate::held; // one at a time: the client's ack (or full-state request) sends the next
    }
    if (window_full(s) && !s.nudged) {
        return snapshot_gate::held; // resumed by its next ack (handle_ack)
    }
    return snapshot_gate::open;
}

bool game_server::window_full(const session& s) const noexcept {
    // Measured from the acked tick, not from what was sent since: the views in flight stay bounded however
    // late the acks arrive (a window that restarted at each ack's arrival let them outgrow what a
    // client_view keeps, over TCP at 20% loss).
    return s.sent && s.ack_anchor && *s.sent - *s.ack_anchor >= options_.max_unacked_ticks;
}

void game_server::handle_input(client_link& from, v1::Input& input) {
    auto& s = from.state();
    if (input.payload().size() > max_input_payload) {
        from.disconnect(v1::PROTOCOL_ERROR, "input payload of " + std::to_string(input.payload().size()) +
                                                " bytes exceeds " + std::to_string(max_input_payload));
        return;
    }
    if (input.sequence() <= s.last_input_sequence) {
        return; // a duplicate or a late one: inputs are applied in sequence order only
    }
    s.last_input_sequence = input.sequence();
    ++s.inputs_received;
    const client_input kept{input.client_tick(), input.sequence(), {}};
    switch (s.inputs.offer(kept, std::move(*input.mutable_payload()), tick_ + 1, options_.tick_rate)) {
    case input_buffer::verdict::kept:
        return;
    case input_buffer::verdict::late:
        metrics_.inputs_late.add(); // applied at the next tick
        return;
    case input_buffer::verdict::future:
        metrics_.inputs_future.add();
        if (peer_log_.allow("future inputs", clock::now())) {
            spdlog::warn("{}: input {} refused: for tick {}, more than {} ticks ahead of {}", describe(from),
                         input.sequence(), input.client_tick(), input_buffer::max_lead, tick_ + 1);
        }
        return;
    case input_buffer::verdict::flood:
        metrics_.inputs_flood.add();
        if (peer_log_.allow("input floods", clock::now())) {
            spdlog::warn("{}: input {} refused: more than {} inputs for one tick", describe(from),
                         input.sequence(), input_buffer::max_per_tick);
        }
        return;
    }
}

std::optional<outgoing_snapshot> game_server::next_snapshot(client_link& to) {
    auto& s = to.state();
    switch (gate(s)) {
    case snapshot_gate::nothing_new:
    case snapshot_gate::skipped:
        return std::nullopt;
    case snapshot_gate::held:
        metrics_.snapshots_held.add();
        return std::nullopt;
    case snapshot_gate::open:
        break;
    }
    if (window_full(s)) {
        s.nudged = false; // the nudge is spent on this one
    }
    auto snapshot = replicator_->snapshot(*s.replication);
    if (!snapshot) {
        return std::nullopt;
    }
    s.sent = snapshot->tick;
    if (!s.ack_anchor) {
        s.ack_anchor = snapshot->tick;
    }
    if (snapshot->full_state) {
        s.full_state_in_flight = snapshot->tick;
    }
    replicator_->sent(*s.replication, to.wire_bytes(*snapshot));
    metrics_.snapshot_size.observe(static_cast<double>(snapshot->frame->size()));
    return snapshot;
}

void game_server::on_left(client_link& left) {
    auto& s = left.state();
    if (s.admitted) {
        s.admitted = false;
        --admitted_;
        metrics_.connected_clients.set(static_cast<double>(admitted_));
    }
    if (s.id != 0) {
        if (s.replication) {
            replicator_->leave(*s.replication);
        }
        world_->client_left(s.id, s.avatar);
        s.avatar = null_entity;
        if (lag_compensation_) {
            lag_compensation_->forget(s.id);
        }
        if (agones_) { // s.id is set once the handshake completed: the id is in the players List
            agones_->player_disconnected(std::to_string(s.id));
        }
    }
    const auto reason = v1::DisconnectReason_Name(s.close_reason);
    metrics_.disconnects.with(reason).add();
    {
        const auto m = left.measures();
        inspector_.add_disconnect(inspector::disconnect_record{s.id, s.name, left.remote(), reason,
                                                               s.close_message.substr(0, 200), 0,
                                                               m.bytes_sent, m.bytes_received});
    }
    if (peer_log_.allow(reason + " disconnects", clock::now())) {
        const auto m = left.measures();
        spdlog::info("{} disconnected: {} ({}); {} bytes in, {} bytes out", describe(left), reason,
                     s.close_message, m.bytes_received, m.bytes_sent);
    }
}

void game_server::on_closed(client_link& closed) {
    connections_.remove(closed);
    if (shutting_down_ && connections_.empty()) {
        shutdown_timer_.cancel();
        finish_drain();
    }
}

} // namespace ecsnet::server
