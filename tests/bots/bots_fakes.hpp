#pragma once

// Misbehaving servers for the bots' tests, on fake_server (tests/client/client_support.hpp):
//  - welcome_only_server: welcomes every client, then never sends a snapshot (a server that stops
//    answering after the handshake);
//  - lying_server: welcomes every client, then sends one snapshot a tick: a full state, then a delta whose
//    state checksum is off by one (a desync the mirror must catch), then full states.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <asio/buffer.hpp>
#include <asio/error_code.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

#include <ecsnet/arena/components.hpp>
#include <ecsnet/proto/checksum.hpp>
#include <ecsnet/proto/encoder.hpp>
#include <ecsnet/proto/envelope.hpp>
#include <ecsnet/proto/handshake.hpp>
#include <ecsnet/proto/history.hpp>

#include "../client/client_support.hpp"

namespace ecsnet::bots::testing {

inline std::uint64_t unix_us_now() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

/// The welcome frame a fake sends: tick rate 30, epoch `epoch_unix_us`.
inline std::string welcome_frame(std::uint64_t epoch_unix_us) {
    proto::welcome_info info;
    info.client_id = 1;
    info.tick_rate = 30;
    info.server_epoch_unix_us = epoch_unix_us;
    std::string frame;
    static_cast<void>(proto::append_envelope_frame(
        frame, proto::make_server_welcome(arena::replicated_schema().layout(), info)));
    return frame;
}

/// Writes `frames` to each accepted socket, the first at once and then one every tick (33 ms), and keeps
/// the socket open afterwards without writing anything more.
class scripted_server {
public:
    explicit scripted_server(std::vector<std::string> frames)
        : frames_{std::make_shared<std::vector<std::string>>(std::move(frames))}
        , server_{[this](std::shared_ptr<asio::ip::tcp::socket> socket) { start(std::move(socket)); }} {}

    [[nodiscard]] std::uint16_t port() const { return server_.port(); }

private:
    struct session {
        std::shared_ptr<asio::ip::tcp::socket> socket;
        asio::steady_timer timer;
        std::shared_ptr<const std::vector<std::string>> frames;
        std::size_t next{0};
        std::vector<char> sink = std::vector<char>(64 * 1024);
    };

    static void write_next(const std::shared_ptr<session>& s) {
        if (s->next >= s->frames->size()) {
            return; // the socket stays open: the session lives on in the pending read
        }
        asio::async_write(*s->socket, asio::buffer((*s->frames)[s->next]),
                          [s](const asio::error_code& ec, std::size_t) {
                              if (ec) {
                                  return;
                              }
                              ++s->next;
                              s->timer.expires_after(std::chrono::milliseconds{33});
                              s->timer.async_wait([s](const asio::error_code& error) {
                                  if (!error) {
                                      write_next(s);
                                  }
                              });
                          });
    }

    static void drain(const std::shared_ptr<session>& s) {
        s->socket->async_read_some(asio::buffer(s->sink), [s](const asio::error_code& ec, std::size_t) {
            if (!ec) {
                drain(s);
            }
        });
    }

    void start(std::shared_ptr<asio::ip::tcp::socket> socket) {
        auto s = std::make_shared<session>(session{socket, asio::steady_timer{server_.io()}, frames_});
        drain(s); // reads and forgets what the client sends (hello, acks, pings, inputs)
        write_next(s);
    }

    std::shared_ptr<const std::vector<std::string>> frames_;
    client::testing::fake_server server_;
};

/// Welcomes, then silence.
inline std::vector<std::string> welcome_only_script() {
    return {welcome_frame(unix_us_now())};
}

/// Welcome; tick 1 in full; tick 2 as a delta on tick 1 with its checksum off by one; ticks 3..ticks in full.
inline std::vector<std::string> lying_script(proto::tick_type ticks = 150) {
    using namespace ecsnet::proto;
    const auto& schema = arena::replicated_schema();
    registry world;
    std::vector<entity> entities;
    for (int i = 0; i < 20; ++i) {
        const auto e = world.create();
        world.emplace<arena::Transform>(e, static_cast<float>(i), 1.0F, 0.0F, 0.0F);
        world.emplace<arena::Health>(e, std::uint16_t{100});
        world.emplace<arena::Kind>(e, std::uint8_t{1});
        entities.push_back(e);
    }
    snapshot_history history{schema, world};
    snapshot_encoder encoder{history};
    const auto epoch = unix_us_now();
    std::vector<std::string> frames{welcome_frame(epoch)};
    for (tick_type tick = 1; tick <= ticks; ++tick) {
        for (const auto e : entities) {
            world.patch<arena::Transform>(e, [](arena::Transform& t) { t.y += 0.25F; });
        }
        history.capture(tick, std::uint64_t{tick} * 1'000'000 / 30);
        if (tick != 2) {
            frames.push_back(encoder.encode(baselines{})->frame);
            continue;
        }
        v1::Envelope envelope;
        auto& s = *envelope.mutable_snapshot();
        static_cast<void>(encoder.encode(baselines{1, {}}, s));
        s.set_checksum(s.checksum() + 1);
        snapshot_header h;
        h.tick = s.tick();
        h.full_state = s.full_state();
        h.has_checksum = s.has_checksum();
        h.baseline_gap = s.baseline_gap();
        h.extrapolation_gap = s.extrapolation_gap();
        h.time_offset_us = s.time_offset_us();
        h.columns_size = static_cast<std::uint32_t>(s.columns().size());
        h.checksum = s.checksum();
        s.set_check(header_check(h)); // a consistent header: only the state checksum lies
        std::string frame;
        static_cast<void>(append_envelope_frame(frame, envelope));
        frames.push_back(std::move(frame));
    }
    return frames;
}

} // namespace ecsnet::bots::testing
