// tun_wire: a virtual wire between two network namespaces that drops and delays IP packets, so that loss
// and latency are in the kernel's path and TCP (retransmissions, head-of-line blocking, congestion control)
// meets them as it would on a real network, next to UDP on the same wire (issue 14; this kernel has no
// netem). Everything stays on the machine. bench/transport_compare drives it.
//
// Design
//   - The caller makes two named network namespaces (`ip netns add`). tun_wire enters each in turn
//     (setns() on /var/run/netns/<name>), opens /dev/net/tun there and creates a TUN device (IFF_TUN |
//     IFF_NO_PI: one read or write is one bare IP packet), then returns to its own namespace: it holds both
//     devices' descriptors while living outside both. The devices are not persistent: they vanish with the
//     process, whatever ends it. Once both exist it prints a "ready" line, and the caller gives them
//     addresses and brings them up (`ip -n <ns> addr add 10.9.0.1/24 dev ecsnet0`, `link set ... up`): each
//     namespace then routes the other's subnet into its device, i.e. to this process.
//   - One thread, one ppoll() loop over both devices and a signalfd. Each packet read from one device goes
//     to that direction's `wire_direction` (bench/wire/): counted, then the transport's network simulator
//     (transport/net_simulator.hpp: loss, a fixed latency, optional jitter, duplication, reordering;
//     deterministic for the seed, each direction its own stream; at most --queue-packets held, more are
//     dropped and counted as overflow) decides its fate; due packets are written to the other device. The
//     poll timeout is the next due time (nanosecond resolution), so the added delay is the configured one
//     plus the loop's wake-up lateness, which is measured and reported (--realtime makes it small on a
//     loaded machine: the wire stands for a network, which does not wait for a CPU).
//   - Counts per direction, of whole IP packets (headers included): offered (read), lost, overflow,
//     delivered (written), write failures, by transport protocol (TCP, UDP, ICMP, other). Printed as one
//     JSON line on SIGUSR1 (event "counters", the run goes on), and at the end (event "final") on
//     SIGINT/SIGTERM/SIGHUP, after --duration, or when the parent dies (PR_SET_PDEATHSIG).
//   - Direction "a_to_b" carries what the namespace of --netns-a sends to --netns-b.
//
// Usage (root, or CAP_NET_ADMIN and CAP_SYS_ADMIN):
//   ip netns add ecsnet-srv; ip netns add ecsnet-cli
//   tun_wire --netns-a ecsnet-srv --netns-b ecsnet-cli --loss 0.05 --delay-ms 50 &
//   (after its "ready" line) ip -n ecsnet-srv addr add 10.9.0.1/24 dev ecsnet0; ip -n ecsnet-srv link set
//   ecsnet0 up; the same with 10.9.0.2/24 in ecsnet-cli; then ip netns exec ecsnet-cli ping 10.9.0.1

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "wire/wire_direction.hpp"

namespace {

using ecsnet::bench::wire::clock;
using ecsnet::bench::wire::direction_counters;
using ecsnet::bench::wire::ip_protocol_count;
using ecsnet::bench::wire::ip_protocol_names;
using ecsnet::bench::wire::traffic;
using ecsnet::bench::wire::wire_direction;

// A file descriptor, closed with its owner.
class unique_fd {
public:
    explicit unique_fd(int fd = -1) noexcept
        : fd_{fd} {}
    unique_fd(unique_fd&& other) noexcept
        : fd_{std::exchange(other.fd_, -1)} {}
    unique_fd& operator=(unique_fd&& other) noexcept {
        if (this != &other) {
            reset(std::exchange(other.fd_, -1));
        }
        return *this;
    }
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }

    [[nodiscard]] int get() const noexcept { return fd_; }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = fd;
    }

private:
    int fd_;
};

[[noreturn]] void fail(const std::string& what) {
    throw std::system_error{errno, std::generic_category(), what};
}

struct side {
    std::string netns; // a name under /var/run/netns, or a path (e.g. /proc/<pid>/ns/net)
    std::string device{"ecsnet0"};
    double loss{0.0}; // of the packets this side sends
    double delay_ms{0.0};
    double jitter_ms{0.0};
};

struct options {
    side a;
    side b;
    double duplicate{0.0};
    double reorder{0.0};
    std::size_t queue_packets{10'000};
    std::uint64_t seed{1};
    double duration_s{0.0};   // 0: until a signal
    int realtime_priority{0}; // SCHED_FIFO priority; 0: the default scheduler
};

std::string netns_path(const std::string& netns) {
    return netns.find('/') == std::string::npos ? "/var/run/netns/" + netns : netns;
}

// Creates a TUN device named `device` inside the namespace `netns` and returns its descriptor; the calling
// thread is back in its own namespace when this returns (or throws).
unique_fd open_tun_in(const std::string& netns, const std::string& device) {
    if (device.empty() || device.size() >= IFNAMSIZ) {
        errno = EINVAL;
        fail("device name '" + device + "'");
    }
    const unique_fd home{::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)};
    if (home.get() < 0) {
        fail("open /proc/self/ns/net");
    }
    const auto path = netns_path(netns);
    const unique_fd target{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (target.get() < 0) {
        fail("open " + path + " (make it with `ip netns add`)");
    }
    if (::setns(target.get(), CLONE_NEWNET) != 0) {
        fail("setns " + path);
    }
    // The device belongs to the namespace current when it is created: this one.
    unique_fd tun{::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)};
    const int open_errno = errno;
    int ioctl_errno = 0;
    if (tun.get() >= 0) {
        ifreq request{};
        request.ifr_flags = IFF_TUN | IFF_NO_PI;
        std::memcpy(request.ifr_name, device.c_str(), device.size());
        if (::ioctl(tun.get(), TUNSETIFF, &request) != 0) {
            ioctl_errno = errno;
        }
    }
    if (::setns(home.get(), CLONE_NEWNET) != 0) {
        fail("setns back to the wire's own namespace");
    }
    if (tun.get() < 0) {
        errno = open_errno;
        fail("open /dev/net/tun in " + netns);
    }
    if (ioctl_errno != 0) {
        errno = ioctl_errno;
        fail("TUNSETIFF " + device + " in " + netns + " (a device of that name already there?)");
    }
    return tun;
}

ecsnet::transport::sim_config direction_config(const options& o, const side& from, std::uint64_t stream) {
    ecsnet::transport::sim_config c;
    c.loss = from.loss;
    c.latency = std::chrono::microseconds{static_cast<std::int64_t>(from.delay_ms * 1000.0)};
    c.jitter = std::chrono::microseconds{static_cast<std::int64_t>(from.jitter_ms * 1000.0)};
    c.duplicate = o.duplicate;
    c.reorder = o.reorder;
    c.max_datagrams = o.queue_packets;
    c.seed = o.seed * 2 + stream; // one stream per direction, each fixed by the seed
    return c;
}

std::string json_string(const std::string& text) {
    std::string out{"\""};
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string json(const traffic& t) {
    return "{\"packets\":" + std::to_string(t.packets) + ",\"bytes\":" + std::to_string(t.bytes) + "}";
}

std::string json(const wire_direction& d, const side& from, const side& to) {
    const direction_counters& c = d.counters();
    const auto& config = d.config();
    std::string by_protocol;
    for (std::size_t p = 0; p < ip_protocol_count; ++p) {
        by_protocol += (p == 0 ? "" : ",") + json_string(std::string{ip_protocol_names[p]}) + ":" +
                       json(c.offered_by_protocol[p]);
    }
    char numbers[256];
    std::snprintf(numbers, sizeof numbers,
                  "\"loss\":%.6g,\"delay_ms\":%.6g,\"jitter_ms\":%.6g,\"measured_loss\":%.6f", config.loss,
                  static_cast<double>(config.latency.count()) / 1000.0,
                  static_cast<double>(config.jitter.count()) / 1000.0,
                  c.offered.packets == 0
                      ? 0.0
                      : static_cast<double>(c.lost.packets) / static_cast<double>(c.offered.packets));
    return "{\"from\":" + json_string(from.netns + "/" + from.device) +
           ",\"to\":" + json_string(to.netns + "/" + to.device) + "," + numbers +
           ",\"offered\":" + json(c.offered) + ",\"lost\":" + json(c.lost) +
           ",\"overflow\":" + json(c.overflow) + ",\"delivered\":" + json(c.delivered) +
           ",\"write_failed\":" + json(c.write_failed) + ",\"in_flight\":" + std::to_string(d.in_flight()) +
           ",\"max_in_flight\":" + std::to_string(c.max_in_flight) + ",\"offered_by_protocol\":{" +
           by_protocol + "},\"lateness_us\":{\"wakes\":" + std::to_string(c.lateness.count()) +
           ",\"p50_bound\":" + std::to_string(c.lateness.quantile_bound_us(0.50)) +
           ",\"p99_bound\":" + std::to_string(c.lateness.quantile_bound_us(0.99)) +
           ",\"max\":" + std::to_string(c.lateness.max_us()) + "}}";
}

void print_event(const char* event, double elapsed_s, const options& o, const wire_direction& a_to_b,
                 const wire_direction& b_to_a) {
    const auto line = std::string{"{\"event\":\""} + event + "\",\"elapsed_s\":" + std::to_string(elapsed_s) +
                      ",\"a_to_b\":" + json(a_to_b, o.a, o.b) + ",\"b_to_a\":" + json(b_to_a, o.b, o.a) +
                      "}\n";
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
}

// Reads every packet the device has (at most `budget`, so that the other direction gets its turn).
void drain(int fd, wire_direction& direction, clock::time_point now, std::vector<std::byte>& buffer) {
    constexpr int budget = 1024;
    for (int i = 0; i < budget; ++i) {
        const auto n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                return;
            }
            fail("read from a TUN device");
        }
        direction.offer(std::span<const std::byte>{buffer.data(), static_cast<std::size_t>(n)}, now);
    }
}

void release(wire_direction& direction, int to_fd, clock::time_point now) {
    direction.release_due(now, [to_fd](std::span<const std::byte> packet) {
        // A TUN write hands the packet to the namespace's stack at once; it fails only if the device is down
        // or the packet malformed (counted, like any lost packet).
        return ::write(to_fd, packet.data(), packet.size()) == static_cast<ssize_t>(packet.size());
    });
}

timespec until(clock::time_point deadline, clock::time_point now) {
    const auto wait = std::max(deadline - now, clock::duration::zero());
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

int run(const options& o) {
    sigset_t signals;
    sigemptyset(&signals);
    for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) {
        sigaddset(&signals, s);
    }
    if (::sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) {
        fail("sigprocmask");
    }
    const unique_fd signal_fd{::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC)};
    if (signal_fd.get() < 0) {
        fail("signalfd");
    }
    // Whoever started the wire owns the namespaces; if it dies, the wire ends (and its devices vanish).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() == 1) {
        return 1; // the parent died before the line above
    }

    if (o.realtime_priority > 0) {
        // A network does not wait for a CPU: under load the wire's delays stay the configured ones. It sleeps
        // in ppoll between packets, so it takes little of the core it is first in line for.
        sched_param param{};
        param.sched_priority = o.realtime_priority;
        if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
            std::fprintf(stderr, "tun_wire: SCHED_FIFO refused (%s): running with the default scheduler\n",
                         std::strerror(errno));
        }
    }
    const auto tun_a = open_tun_in(o.a.netns, o.a.device);
    const auto tun_b = open_tun_in(o.b.netns, o.b.device);
    wire_direction a_to_b{direction_config(o, o.a, 0)};
    wire_direction b_to_a{direction_config(o, o.b, 1)};

    const auto started = clock::now();
    const auto elapsed = [started] { return std::chrono::duration<double>(clock::now() - started).count(); };
    std::printf(
        "{\"event\":\"ready\",\"a\":{\"netns\":%s,\"device\":%s},\"b\":{\"netns\":%s,\"device\":%s}}\n",
        json_string(o.a.netns).c_str(), json_string(o.a.device).c_str(), json_string(o.b.netns).c_str(),
        json_string(o.b.device).c_str());
    std::fflush(stdout);

    const std::optional<clock::time_point> end =
        o.duration_s > 0 ? std::optional{started + std::chrono::duration_cast<clock::duration>(
                                                       std::chrono::duration<double>(o.duration_s))}
                         : std::nullopt;
    std::vector<std::byte> buffer(65'536);
    std::array<pollfd, 3> fds{pollfd{tun_a.get(), POLLIN, 0}, pollfd{tun_b.get(), POLLIN, 0},
                              pollfd{signal_fd.get(), POLLIN, 0}};
    bool stop = false;
    while (!stop) {
        std::optional<clock::time_point> deadline = end;
        for (const auto& due : {a_to_b.next_due(), b_to_a.next_due()}) {
            if (due && (!deadline || *due < *deadline)) {
                deadline = due;
            }
        }
        timespec timeout{};
        if (deadline) {
            timeout = until(*deadline, clock::now());
        }
        if (::ppoll(fds.data(), fds.size(), deadline ? &timeout : nullptr, nullptr) < 0 && errno != EINTR) {
            fail("ppoll");
        }
        const auto now = clock::now();
        for (std::size_t i = 0; i < 2; ++i) {
            if ((fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
                errno = EIO;
                fail("a TUN device went away");
            }
        }
        if ((fds[0].revents & POLLIN) != 0) {
            drain(tun_a.get(), a_to_b, now, buffer);
        }
        if ((fds[1].revents & POLLIN) != 0) {
            drain(tun_b.get(), b_to_a, now, buffer);
        }
        release(a_to_b, tun_b.get(), now);
        release(b_to_a, tun_a.get(), now);
        if ((fds[2].revents & POLLIN) != 0) {
            signalfd_siginfo info{};
            while (::read(signal_fd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
                if (info.ssi_signo == SIGUSR1) {
                    print_event("counters", elapsed(), o, a_to_b, b_to_a);
                } else {
                    stop = true;
                }
            }
        }
        if (end && now >= *end) {
            stop = true;
        }
    }
    print_event("final", elapsed(), o, a_to_b, b_to_a);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"tun_wire: a virtual wire with loss and latency between two network namespaces (issue 14)"};
    options o;
    double loss = 0.0;
    double delay_ms = 0.0;
    double jitter_ms = 0.0;
    app.add_option("--netns-a", o.a.netns, "first namespace (a name under /var/run/netns, or a path)")
        ->required();
    app.add_option("--netns-b", o.b.netns, "second namespace")->required();
    app.add_option("--dev-a", o.a.device, "TUN device to create in the first namespace")
        ->capture_default_str();
    app.add_option("--dev-b", o.b.device, "TUN device to create in the second namespace")
        ->capture_default_str();
    const auto probability = CLI::Range(0.0, 1.0);
    const auto milliseconds = CLI::Range(0.0, 60'000.0);
    auto* loss_option =
        app.add_option("--loss", loss, "fraction of packets lost, each way")->check(probability);
    auto* delay_option =
        app.add_option("--delay-ms", delay_ms, "one-way latency added, each way")->check(milliseconds);
    auto* jitter_option = app.add_option("--jitter-ms", jitter_ms,
                                         "each packet's delay drawn uniformly in delay +- jitter (reorders)")
                              ->check(milliseconds);
    auto* loss_a =
        app.add_option("--loss-ab", o.a.loss, "loss from a to b (overrides --loss)")->check(probability);
    auto* loss_b = app.add_option("--loss-ba", o.b.loss, "loss from b to a")->check(probability);
    auto* delay_a = app.add_option("--delay-ab-ms", o.a.delay_ms, "latency from a to b")->check(milliseconds);
    auto* delay_b = app.add_option("--delay-ba-ms", o.b.delay_ms, "latency from b to a")->check(milliseconds);
    auto* jitter_a =
        app.add_option("--jitter-ab-ms", o.a.jitter_ms, "jitter from a to b")->check(milliseconds);
    auto* jitter_b =
        app.add_option("--jitter-ba-ms", o.b.jitter_ms, "jitter from b to a")->check(milliseconds);
    app.add_option("--duplicate", o.duplicate, "fraction of packets delivered twice, each way")
        ->check(probability);
    app.add_option("--reorder", o.reorder, "fraction of packets held back 20 ms, each way")
        ->check(probability);
    app.add_option("--queue-packets", o.queue_packets, "packets held at once per direction; more are dropped")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
        ->capture_default_str();
    app.add_option("--seed", o.seed, "seed of the loss and jitter draws")->capture_default_str();
    app.add_option("--duration", o.duration_s, "seconds before the wire ends by itself (0: at a signal)")
        ->check(CLI::Range(0.0, 86'400.0));
    app.add_option(
           "--realtime", o.realtime_priority,
           "run under SCHED_FIFO at this priority (1 to 99), so that the load of the machine does not add "
           "to the delays")
        ->check(CLI::Range(0, 99));
    CLI11_PARSE(app, argc, argv);

    const auto both = [](CLI::Option* shared, CLI::Option* own, double shared_value, double& value) {
        if (*shared && !*own) {
            value = shared_value;
        }
    };
    both(loss_option, loss_a, loss, o.a.loss);
    both(loss_option, loss_b, loss, o.b.loss);
    both(delay_option, delay_a, delay_ms, o.a.delay_ms);
    both(delay_option, delay_b, delay_ms, o.b.delay_ms);
    both(jitter_option, jitter_a, jitter_ms, o.a.jitter_ms);
    both(jitter_option, jitter_b, jitter_ms, o.b.jitter_ms);

    try {
        return run(o);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "tun_wire: %s\n", error.what());
        return 1;
    }
}
