// What the server's transport spends per client and tick, without sockets (issue 15): a server_core with
// N connected client_cores, datagrams passed in memory. Per tick (30 Hz) each client sends a 24-byte input
// (unreliable, its link's acks riding along) and the server
//   server_receives  takes every client's datagram (server_core::receive: lookup, decryption, link)
//   server_sends     queues a 70-byte snapshot for each client and flushes it (link, encryption)
//   server_timers    runs its timer as udp_server does, at 200 Hz (server_core::update, ~7 per tick)
// and the clients receive their snapshots (not counted). Each phase is a function of its own, so under
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/tr.cg build/bench/server_transport_callgrind
//   callgrind_annotate --inclusive=yes /tmp/tr.cg | grep -E "server_receives|server_sends|server_timers"
// their inclusive counts, divided by clients x ticks (warm-up included: --warmup ticks more), give the
// instructions per client per tick. Run plainly it prints the thread CPU time of the three phases per
// client per tick. The send function only copies each datagram into a reused buffer (the kernel's part,
// sendmmsg and recvmmsg, is not here). The server receives in batches of 8, as udp_server does, asking for
// the next datagram's connection while it handles one (server_core::prefetch). Flags: --clients N (default
// 500), --ticks T (default 60), --warmup W (default 30), --evict-mb M (default 0: before each tick, lines
// written all over M MiB, as the rest of a server's tick pushes the connections out of the caches), and
// --compare-prefetch 1 (every other tick without the prefetch hint: both receive times, and their ratio).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ecsnet/transport/client_core.hpp"
#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/server_core.hpp"

#include "count_flags.hpp"
#include "thread_cpu_clock.hpp"

namespace {

using namespace ecsnet::transport;
using namespace std::chrono_literals;
using ecsnet::bench::thread_cpu_seconds;

constexpr std::uint64_t protocol = 0xEC5E7;

// Datagrams written by one side, waiting to be delivered: their bytes end to end in one reused buffer.
struct outbox {
    struct sent {
        net_address to;
        std::size_t offset;
        std::size_t size;
    };
    std::vector<std::uint8_t> bytes;
    std::vector<sent> datagrams;

    void add(const net_address& to, std::span<const std::uint8_t> datagram) {
        datagrams.push_back({to, bytes.size(), datagram.size()});
        bytes.insert(bytes.end(), datagram.begin(), datagram.end());
    }
    void clear() {
        bytes.clear();
        datagrams.clear();
    }
};

struct quiet_server : server_handler {
    std::vector<connection_id> connected;
    std::size_t messages{};
    void on_connected(const connection_info& info) override { connected.push_back(info.id); }
    void on_message(connection_id, channel, std::span<const std::byte>) override { ++messages; }
    void on_disconnected(connection_id, const disconnect_info&) override { std::abort(); }
    void on_dropped(drop_reason, const net_address&) override {}
};

struct quiet_client : client_handler {
    std::size_t messages{};
    void on_connected(const net_address&) override {}
    void on_message(channel, std::span<const std::byte>) override { ++messages; }
    void on_disconnected(client_error, const disconnect_info&) override { std::abort(); }
    void on_dropped(drop_reason) override {}
};

struct bench_client {
    net_address address;
    std::unique_ptr<quiet_client> events;
    std::unique_ptr<client_core> core;
    connection_id id{};
};

struct model {
    explicit model(std::size_t clients)
        : server_address{*net_address::parse("10.255.0.1:7777")}
        , private_key{generate_key()} {
        server_config config;
        config.protocol_id = protocol;
        config.private_key = private_key;
        config.max_clients = clients;
        config.public_addresses = {server_address};
        config.unix_clock = [this] { return unix_time; };
        server = std::make_unique<server_core>(
            config, server_events,
            [this](const net_address& to, std::span<const std::uint8_t> d) { from_server.add(to, d); }, now);
        for (std::size_t i = 0; i < clients; ++i) {
            connect(i);
        }
    }

    void connect(std::size_t i) {
        bench_client c;
        c.address =
            *net_address::parse("10." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ".2:5000");
        c.events = std::make_unique<quiet_client>();
        client_config config;
        config.unix_clock = [this] { return unix_time; };
        c.core = std::make_unique<client_core>(
            config, *c.events, [this, from = c.address](const net_address&, std::span<const std::uint8_t> d) {
                from_clients.add(from, d);
            });
        token_params params;
        params.protocol_id = protocol;
        params.client_id = i + 1;
        params.server_addresses = {server_address};
        params.expire_seconds = 3600;
        params.timeout_seconds = 60;
        params.now_unix = unix_time;
        if (!c.core->connect(*issue_token(params, private_key), now)) {
            std::abort();
        }
        clients.push_back(std::move(c));
        const auto before = server_events.connected.size();
        for (int round = 0; round < 20 && server_events.connected.size() == before; ++round) {
            deliver();
        }
        if (server_events.connected.size() != before + 1) {
            std::fprintf(stderr, "client %zu did not connect\n", i);
            std::abort();
        }
        clients.back().id = server_events.connected.back();
        // The client knows it is connected once the server's first packet arrives.
        deliver();
    }

    // Datagrams both ways until none is left (the handshake).
    void deliver() {
        server_inbox();
        client_inboxes();
    }
    void server_inbox() {
        // In batches, as udp_server receives them (recvmmsg), asking for the next datagram's connection
        // while one is received.
        const auto& datagrams = from_clients.datagrams;
        for (std::size_t i = 0; i < datagrams.size(); ++i) {
            if (prefetch && (i + 1) % receive_batch != 0 && i + 1 < datagrams.size()) {
                server->prefetch(datagrams[i + 1].to);
            }
            const auto& d = datagrams[i];
            server->receive(std::span{from_clients.bytes}.subspan(d.offset, d.size), d.to, now);
        }
        from_clients.clear();
    }
    void client_inboxes() {
        // Client i's address is 10.(i / 250).(i % 250).2.
        outbox pending;
        std::swap(pending, from_server);
        for (const auto& d : pending.datagrams) {
            for (auto& c : clients) {
                if (c.address == d.to) {
                    c.core->receive(std::span{pending.bytes}.subspan(d.offset, d.size), server_address, now);
                    break;
                }
            }
        }
    }

    net_address server_address;
    key private_key;
    clock::time_point now{clock::time_point{} + 1h};
    std::uint64_t unix_time{1'700'000'000};
    quiet_server server_events;
    std::unique_ptr<server_core> server;
    std::vector<bench_client> clients;
    outbox from_server;
    outbox from_clients;
    bool prefetch{true};
    // Datagrams per recvmmsg on the server at 600 to 1,000 thin bots (bench/RESULTS.md, twelfth pass).
    static constexpr std::size_t receive_batch = 8;
};

// The rest of a server's tick between two visits of a client's transport state (the world, a thousand
// clients' views): lines written all over a buffer of that size, which pushes the connections out of the
// caches as the real tick does.
struct evictor {
    std::vector<std::uint8_t> buffer;
    void run() {
        for (std::size_t at = 0; at < buffer.size(); at += 64) {
            ++buffer[at];
        }
    }
};

// The three phases, each named in callgrind's output.
[[gnu::noinline]] void server_receives(model& m) {
    m.server_inbox();
}

[[gnu::noinline]] void server_sends(model& m, std::span<const std::byte> snapshot) {
    for (const auto& c : m.clients) {
        if (m.server->send(c.id, channel::unreliable, snapshot, m.now) != send_status::queued) {
            std::abort();
        }
        m.server->flush(c.id, m.now);
    }
}

[[gnu::noinline]] void server_timers(model& m, clock::time_point until) {
    // udp_server's timer: every 5 ms.
    while (m.now + 5ms <= until) {
        m.now += 5ms;
        m.server->update(m.now);
    }
}

struct phase_times {
    double receives{};
    double sends{};
    double timers{};
    double receives_without_prefetch{}; // --compare-prefetch: the ticks received without it
};

void run_tick(model& m, std::span<const std::byte> input, std::span<const std::byte> snapshot, phase_times& t,
              evictor& rest_of_tick) {
    const auto tick_end = m.now + std::chrono::microseconds{33'333};
    for (auto& c : m.clients) {
        c.core->send(channel::unreliable, input, m.now);
        c.core->flush(m.now);
    }
    rest_of_tick.run();
    double at = thread_cpu_seconds();
    server_receives(m);
    double next = thread_cpu_seconds();
    (m.prefetch ? t.receives : t.receives_without_prefetch) += next - at;
    at = next;
    server_sends(m, snapshot);
    next = thread_cpu_seconds();
    t.sends += next - at;
    // Each client finds its datagram in order: client k's snapshot is the k-th datagram.
    if (m.from_server.datagrams.size() == m.clients.size()) {
        for (std::size_t k = 0; k < m.clients.size(); ++k) {
            const auto& d = m.from_server.datagrams[k];
            m.clients[k].core->receive(std::span{m.from_server.bytes}.subspan(d.offset, d.size),
                                       m.server_address, m.now);
        }
        m.from_server.clear();
    } else {
        m.client_inboxes();
    }
    at = thread_cpu_seconds();
    server_timers(m, tick_end);
    t.timers += thread_cpu_seconds() - at;
    for (auto& c : m.clients) {
        c.core->update(m.now);
    }
    m.client_inboxes();
    m.server_inbox(); // what the clients' timers sent (keep-alives, acks), rarely anything
}

} // namespace

int main(int argc, char** argv) {
    long clients_flag = 500;
    long ticks_flag = 60;
    long warmup_flag = 30;
    long evict_flag = 0;
    long compare_flag = 0;
    if (!ecsnet::bench::read_count_flags(argc, argv,
                                         {{"--clients", 1, &clients_flag},
                                          {"--ticks", 1, &ticks_flag},
                                          {"--warmup", 0, &warmup_flag},
                                          {"--evict-mb", 0, &evict_flag},
                                          {"--compare-prefetch", 0, &compare_flag}})) {
        std::fprintf(stderr,
                     "usage: %s [--clients N] [--ticks T] [--warmup W] [--evict-mb M] "
                     "[--compare-prefetch 0|1]\n",
                     argv[0]);
        return 2;
    }
    const auto clients = static_cast<std::size_t>(clients_flag);
    const auto ticks = static_cast<int>(ticks_flag);
    const auto warmup = static_cast<int>(warmup_flag);
    const bool compare = compare_flag != 0;
    model m{clients};
    evictor rest_of_tick{std::vector<std::uint8_t>(static_cast<std::size_t>(evict_flag) << 20)};
    std::vector<std::byte> input(24, std::byte{0x11});
    std::vector<std::byte> snapshot(70, std::byte{0x5A});
    phase_times warm;
    for (int t = 0; t < warmup; ++t) {
        run_tick(m, input, snapshot, warm, rest_of_tick);
    }
    phase_times measured;
    const auto messages_before = m.server_events.messages;
    for (int t = 0; t < ticks; ++t) {
        m.prefetch = !compare || t % 2 == 1; // compared: every other tick without the prefetch hint
        run_tick(m, input, snapshot, measured, rest_of_tick);
    }
    const auto per = [&](double seconds) { return seconds * 1e6 / static_cast<double>(clients) / ticks; };
    std::printf(
        "clients %zu, ticks %d: server transport per client per tick %.2f us (receive %.2f, send %.2f, "
        "timers %.2f; thread CPU), %zu inputs received\n",
        clients, ticks,
        per(measured.receives + measured.receives_without_prefetch + measured.sends + measured.timers),
        per(measured.receives + measured.receives_without_prefetch), per(measured.sends),
        per(measured.timers), m.server_events.messages - messages_before);
    if (compare) {
        // Each half of the ticks, per client per tick of that half.
        std::printf("receive with the prefetch hint %.3f us, without %.3f us: ratio %.3f\n",
                    2 * per(measured.receives), 2 * per(measured.receives_without_prefetch),
                    measured.receives / measured.receives_without_prefetch);
    }
    return 0;
}
