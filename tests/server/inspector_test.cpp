// The live inspector's server side (docs/inspector.md): who may read it (admin_access), its JSON API over a
// running server (paging a large world, bad input refused with a clear status), that no frame is copied
// while nobody looks, the clients panel's data, and that event streams are capped without starving
// /healthz or the tick. The page itself is tested in a real browser by inspector_browser.py.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "ecsnet/server/admin_access.hpp"
#include "ecsnet/server/inspector/api.hpp"
#include "server_support.hpp"

namespace inspector_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;

TEST(AdminAccess, LoopbackOpenOthersNeedTheToken) {
    using server::decide_admin_access;
    const std::string token = "0123456789abcdef-token";
    // /metrics and /healthz: anyone who reaches the port.
    EXPECT_TRUE(decide_admin_access("/metrics", "10.0.0.5", "", "", "", "").allowed());
    EXPECT_TRUE(decide_admin_access("/healthz", "203.0.113.9", "x", "", "", token).allowed());
    // Loopback peers naming a loopback host.
    EXPECT_TRUE(decide_admin_access("/api/world", "127.0.0.1", "127.0.0.1:7778", "", "", "").allowed());
    EXPECT_TRUE(decide_admin_access("/inspector/", "::1", "localhost:7778", "", "", "").allowed());
    EXPECT_TRUE(decide_admin_access("/api/world", "::ffff:127.0.0.1", "[::1]:80", "", "", "").allowed());
    // DNS rebinding: a loopback peer naming another host.
    EXPECT_EQ(decide_admin_access("/api/world", "127.0.0.1", "evil.example:7778", "", "", "").status, 403);
    // Other peers: refused without a configured token, 401 without or with a wrong one.
    EXPECT_EQ(decide_admin_access("/api/world", "10.0.0.5", "10.0.0.1:7778", "", "", "").status, 403);
    EXPECT_EQ(decide_admin_access("/api/world", "10.0.0.5", "h", "Bearer " + token, "", "").status, 403);
    EXPECT_EQ(decide_admin_access("/api/world", "10.0.0.5", "h", "", "", token).status, 401);
    EXPECT_EQ(decide_admin_access("/api/world", "10.0.0.5", "h", "Bearer wrong", "", token).status, 401);
    EXPECT_EQ(decide_admin_access("/api/world", "10.0.0.5", "h", "Bearer " + token + "x", "", token).status,
              401);
    EXPECT_EQ(decide_admin_access("/api/world", "10.0.0.5", "h", "Basic " + token, "", token).status, 401);
    EXPECT_TRUE(decide_admin_access("/api/world", "10.0.0.5", "h", "Bearer " + token, "", token).allowed());
    EXPECT_TRUE(decide_admin_access("/api/stream", "10.0.0.5", "h", "", token, token).allowed());
    EXPECT_FALSE(server::is_loopback_address("128.0.0.1"));
    EXPECT_FALSE(server::is_loopback_address("not an address"));
    EXPECT_FALSE(server::token_matches("", ""));
}

TEST(InspectorApi, CountsAndRealValues) {
    using server::inspector::parse_count;
    EXPECT_EQ(parse_count("0", 10), 0U);
    EXPECT_EQ(parse_count("10", 10), 10U);
    for (const char* bad : {"", "-1", "+1", "11", "1e3", " 1", "1 ", "0x1", "99999999999999999999"}) {
        EXPECT_FALSE(parse_count(bad, 10)) << bad;
    }
    const auto& layout = arena::replicated_schema().layout();
    const auto& x = layout[*layout.find("Transform")].fields[0];
    EXPECT_DOUBLE_EQ(server::inspector::dequantize(x, 0), -1024.0);
    EXPECT_DOUBLE_EQ(server::inspector::dequantize(x, 512 * 1024), 0.0);
    const auto& yaw = layout[*layout.find("Transform")].fields[3];
    EXPECT_NEAR(server::inspector::dequantize(yaw, 1024), 3.14159265 / 2, 1e-6);
}

// A bare HTTP/1.1 request on its own socket (the event streams stay open while the test holds them).
class raw_http {
public:
    /// `keep_alive`: asks to keep the connection open after the answer (HTTP/1.1's default), as a client
    /// that wants to hold the server's workers would.
    raw_http(std::uint16_t port, const std::string& target, bool keep_alive = false) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        timeval timeout{3, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
            return;
        }
        connected_ = true;
        const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                                    (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
        static_cast<void>(::send(fd_, request.data(), request.size(), MSG_NOSIGNAL));
    }
    raw_http(const raw_http&) = delete;
    raw_http& operator=(const raw_http&) = delete;
    ~raw_http() { ::close(fd_); }

    /// Reads until `marker` arrived (or 3 s passed, or the peer closed); returns what arrived.
    std::string read_until(std::string_view marker) {
        char buffer[4096];
        while (received_.find(marker) == std::string::npos) {
            const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
            if (n <= 0) {
                break;
            }
            received_.append(buffer, static_cast<std::size_t>(n));
        }
        return received_;
    }
    /// Reads until `n` events arrived (or 3 s passed); returns their ticks.
    std::vector<long> event_ticks(std::size_t n) {
        std::vector<long> ticks;
        constexpr std::string_view marker = "data: {\"tick\":";
        for (int reads = 0; reads < 100; ++reads) {
            ticks.clear();
            for (auto at = received_.find(marker); at != std::string::npos;
                 at = received_.find(marker, at + 1)) {
                ticks.push_back(std::atol(received_.c_str() + at + marker.size()));
            }
            if (ticks.size() >= n) {
                break;
            }
            char buffer[4096];
            const auto got = ::recv(fd_, buffer, sizeof buffer, 0);
            if (got <= 0) {
                break;
            }
            received_.append(buffer, static_cast<std::size_t>(got));
        }
        return ticks;
    }
    /// Whether the peer closed the connection (within the 3 s receive timeout), what it sent read first.
    bool closed_by_peer() {
        char buffer[4096];
        for (int reads = 0; reads < 100; ++reads) {
            const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
            if (n == 0) {
                return true;
            }
            if (n < 0) {
                return false;
            }
            received_.append(buffer, static_cast<std::size_t>(n));
        }
        return false;
    }
    [[nodiscard]] bool connected() const noexcept { return connected_; }
    [[nodiscard]] int status() {
        const auto head = read_until("\r\n");
        return head.size() > 12 ? std::atoi(head.substr(9, 3).c_str()) : 0;
    }

private:
    bool connected_{false};
    int fd_{-1};
    std::string received_;
};

int get_status(httplib::Client& http, const std::string& target) {
    const auto response = http.Get(target.c_str());
    return response ? response->status : -1;
}

TEST(Inspector, ApiPagesALargeWorldAndRefusesBadInput) {
    running_server server{test_options(20'000)};
    std::this_thread::sleep_for(300ms);
    // Nobody looked yet: no frame was copied.
    EXPECT_EQ(server.get().inspector().latest(), nullptr);
    EXPECT_EQ(server.get().metrics().inspector_frames.value(), 0U);

    httplib::Client http{"127.0.0.1", server.get().admin_port()};
    http.set_read_timeout(5, 0);
    const auto world = http.Get("/api/world");
    ASSERT_TRUE(world);
    ASSERT_EQ(world->status, 200) << world->body;
    EXPECT_EQ(world->get_header_value("Access-Control-Allow-Origin"), ""); // CORS closed
    const auto frame = server.get().inspector().latest();
    ASSERT_NE(frame, nullptr);
    EXPECT_GT(frame->entities.size(), 19'000U);
    EXPECT_NE(world->body.find("\"entities\":"), std::string::npos);

    const auto page = http.Get("/api/entities?page=3&per_page=500");
    ASSERT_TRUE(page);
    ASSERT_EQ(page->status, 200) << page->body;
    std::size_t items = 0;
    for (auto at = page->body.find("\"index\":"); at != std::string::npos;
         at = page->body.find("\"index\":", at + 1)) {
        ++items;
    }
    EXPECT_EQ(items, 500U);
    EXPECT_LT(page->body.size(), 500U * 120); // bounded by the page, not the world
    const auto beyond = http.Get("/api/entities?page=999999&per_page=500");
    ASSERT_TRUE(beyond);
    EXPECT_EQ(beyond->status, 200);
    EXPECT_NE(beyond->body.find("\"items\":[]"), std::string::npos);

    const auto one = http.Get(("/api/entity/" + std::to_string(frame->entities[7])).c_str());
    ASSERT_TRUE(one);
    EXPECT_EQ(one->status, 200);
    for (const char* part : {"\"Transform\"", "\"Health\"", "\"Kind\"", "\"quantized\":", "\"real\":"}) {
        EXPECT_NE(one->body.find(part), std::string::npos) << part;
    }

    for (const char* bad :
         {"/api/entities?page=-1", "/api/entities?page=abc", "/api/entities?per_page=0",
          "/api/entities?per_page=501", "/api/entities?page=99999999999999999999", "/api/entity/abc",
          "/api/entity/-1", "/api/entity/4294967296", "/api/stream?points=0", "/api/stream?points=-5"}) {
        EXPECT_EQ(get_status(http, bad), 400) << bad;
    }
    EXPECT_EQ(get_status(http, "/api/entity/1048000"), 404); // a valid index nobody occupies
    for (const char* missing :
         {"/api/../../etc/passwd", "/api/%2e%2e/%2e%2e/etc/passwd", "/inspector/../x",
          "/inspector/%2e%2e%2fetc%2fpasswd", "/api/nothing", "/inspector/secret.txt"}) {
        EXPECT_EQ(get_status(http, missing), 404) << missing;
    }
    EXPECT_EQ(get_status(http, "/api/entities?q=" + std::string(600, 'a')), 414);
    EXPECT_EQ(get_status(http, "/api/entities?q=" + std::string(100, 'a')), 400);
    const auto posted = http.Post("/api/world", "{}", "application/json");
    ASSERT_TRUE(posted);
    EXPECT_EQ(posted->status, 405);
    httplib::Headers rebinding{{"Host", "evil.example"}};
    const auto rebound = http.Get("/api/world", rebinding);
    ASSERT_TRUE(rebound);
    EXPECT_EQ(rebound->status, 403);
    EXPECT_EQ(get_status(http, "/healthz"), 200);
    EXPECT_GE(server.get().metrics().admin_refused.value(), 15U); // the 400s, 405, 414 and 403 above
    EXPECT_GE(server.get().metrics().inspector_frames.value(), 1U);
    const auto page_html = http.Get("/inspector/");
    ASSERT_TRUE(page_html);
    EXPECT_EQ(page_html->status, 200);
    EXPECT_NE(page_html->body.find("inspector.js"), std::string::npos);
    EXPECT_NE(page_html->get_header_value("Content-Security-Policy").find("default-src 'self'"),
              std::string::npos);
}

TEST(Inspector, ClientsAndTheirDisconnects) {
    running_server server;
    httplib::Client http{"127.0.0.1", server.get().admin_port()};
    http.set_read_timeout(5, 0);
    std::optional<std::uint32_t> avatar;
    {
        mirror_client client{server.port(), "inspected"};
        client.pump(300ms);
        avatar = client.own ? std::optional<std::uint32_t>{client.own->index} : std::nullopt;
        std::this_thread::sleep_for(300ms); // a frame newer than the handshake
        const auto clients = http.Get("/api/clients");
        ASSERT_TRUE(clients);
        ASSERT_EQ(clients->status, 200);
        EXPECT_NE(clients->body.find("\"name\":\"inspected\""), std::string::npos) << clients->body;
        EXPECT_NE(clients->body.find("\"transport\":\"tcp\""), std::string::npos);
        ASSERT_TRUE(avatar);
        const auto found = http.Get("/api/entities?q=inspec");
        ASSERT_TRUE(found);
        EXPECT_NE(found->body.find("\"index\":" + std::to_string(*avatar)), std::string::npos) << found->body;
        EXPECT_NE(found->body.find("\"total\":1"), std::string::npos);
        // The avatar's server-only components, read by the tick thread on request.
        const auto own = http.Get(("/api/entity/" + std::to_string(*avatar)).c_str());
        ASSERT_TRUE(own);
        EXPECT_NE(own->body.find("\"server_only\":{\"tick\":"), std::string::npos) << own->body;
        EXPECT_NE(own->body.find("{\"name\":\"Avatar\",\"fields\":[{\"name\":\"client\",\"value\":" +
                                 std::to_string(client.client_id)),
                  std::string::npos)
            << own->body;
    }
    bool recorded = false;
    for (int attempt = 0; attempt < 50 && !recorded; ++attempt) {
        std::this_thread::sleep_for(50ms);
        for (const auto& d : server.get().inspector().disconnects()) {
            recorded = recorded || d.name == "inspected";
        }
    }
    EXPECT_TRUE(recorded);
    const auto clients = http.Get("/api/clients");
    ASSERT_TRUE(clients);
    EXPECT_NE(clients->body.find("\"disconnects\":[{"), std::string::npos) << clients->body;
    // One sample a second (the series is kept whether or not anyone looks).
    std::string samples;
    for (int attempt = 0; attempt < 30 && samples.find("\"tick_ms_max\":") == std::string::npos; ++attempt) {
        std::this_thread::sleep_for(100ms);
        const auto series = http.Get("/api/series");
        ASSERT_TRUE(series);
        samples = series->body;
    }
    EXPECT_NE(samples.find("\"tick_ms_max\":"), std::string::npos) << samples;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

// How many connections a flood test may hold, at most `wanted`: this process holds both their ends, so the
// soft file limit is raised as far as the hard one allows.
std::size_t flood_size(std::size_t wanted) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return 200;
    }
    const rlim_t needed = 2 * wanted + 1024;
    if (limit.rlim_cur < needed) {
        limit.rlim_cur = std::min(needed, limit.rlim_max);
        static_cast<void>(::setrlimit(RLIMIT_NOFILE, &limit));
        static_cast<void>(::getrlimit(RLIMIT_NOFILE, &limit));
    }
    const auto usable = limit.rlim_cur > 1024 ? (limit.rlim_cur - 1024) / 2 : 100;
    return std::clamp<std::size_t>(static_cast<std::size_t>(usable), 100, wanted);
}

TEST(Inspector, StreamsAreCappedWithoutStarvingHealthOrTheTick) {
    running_server server{test_options(2000)};
    const auto port = server.get().admin_port();
    const auto cap = server.get().inspector().options().max_streams;
    std::vector<std::unique_ptr<raw_http>> streams;
    for (std::size_t i = 0; i < cap; ++i) {
        streams.push_back(std::make_unique<raw_http>(port, "/api/stream"));
    }
    for (auto& stream : streams) {
        const auto first = stream->read_until("\n\n");
        ASSERT_NE(first.find("200 OK"), std::string::npos) << first.substr(0, 200);
        ASSERT_NE(first.find("text/event-stream"), std::string::npos);
        ASSERT_NE(first.find("data: {\"tick\":"), std::string::npos);
    }
    EXPECT_EQ(server.get().inspector().open_streams(), cap);

    // A flood of stream requests held open (keep-alive, as a client that wants the workers would): up to
    // 10,000 at once, as many as this process may open (it holds both ends). Each is refused with 503 and a
    // reason and its connection closed by the server at once (one request per connection: a refusal holds
    // no worker), while /healthz answers and the tick keeps time.
    const auto ticks_before = server.get().metrics().ticks.value();
    const auto started = steady::now();
    const auto flood = flood_size(sanitized ? 2'000 : 10'000);
    std::vector<std::unique_ptr<raw_http>> extra;
    extra.reserve(flood);
    for (std::size_t i = 0; i < flood; ++i) {
        extra.push_back(std::make_unique<raw_http>(port, "/api/stream", true));
    }
    httplib::Client http{"127.0.0.1", port};
    http.set_read_timeout(3, 0);
    const auto health_asked = steady::now();
    EXPECT_EQ(get_status(http, "/healthz"), 200);
    EXPECT_LT(steady::now() - health_asked, 1s) << "/healthz waited behind the flood";
    std::size_t refused = 0;
    std::size_t closed = 0;
    for (auto& attempt : extra) {
        const auto answer = attempt->read_until("}");
        refused += attempt->connected() && answer.find("503") != std::string::npos &&
                   answer.find("event streams are open already") != std::string::npos;
        closed += attempt->closed_by_peer();
    }
    EXPECT_EQ(refused, extra.size());
    EXPECT_EQ(closed, extra.size());
    std::printf("%zu stream requests refused and closed in %.2f s\n", extra.size(),
                std::chrono::duration<double>(steady::now() - started).count());
    extra.clear();
    EXPECT_EQ(get_status(http, "/healthz"), 200);
    std::this_thread::sleep_until(started + 1500ms); // the tick's pace, measured with 32 viewers
    const auto elapsed = std::chrono::duration<double>(steady::now() - started).count();
    const auto ticks = server.get().metrics().ticks.value() - ticks_before;
    EXPECT_GE(static_cast<double>(ticks), elapsed * 30.0 * 0.5) << ticks << " ticks in " << elapsed << " s";

    // Values change over time on a stream: a few events a second, each of a newer tick.
    const auto ticks_seen = streams[0]->event_ticks(3);
    ASSERT_GE(ticks_seen.size(), 3U);
    EXPECT_LT(ticks_seen[0], ticks_seen[1]);
    EXPECT_LT(ticks_seen[1], ticks_seen[2]);

    // Stopping the server ends the open streams (bounded).
    const auto stopping = steady::now();
    server.stop();
    EXPECT_LT(steady::now() - stopping, 5s);
}

} // namespace

} // namespace inspector_test
