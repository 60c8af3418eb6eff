#pragma once

// The settings of a load-test run (ecsnet-bots flags, docs/bots.md). Every field has a working default.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ecsnet/client/client_options.hpp>
#include <ecsnet/transport/sim_config.hpp>

#include "behaviour.hpp"

namespace ecsnet::bots {

struct swarm_options {
    std::string host{"127.0.0.1"};
    std::uint16_t port{7777};
    /// UDP (the SDK's default: connect tokens, the link's channels) or TCP.
    client::transport_kind transport{client::transport_kind::udp};
    /// Full bots to run, each a client::client with its own mirror, checking every snapshot's checksum.
    std::size_t clients{10};
    /// Thin bots to run besides (client_options::thin): each acks every snapshot's header without
    /// mirroring, so the server does a full client's work for a fraction of the bots' CPU.
    std::size_t thin{0};
    /// Connect tokens (base64), bot i using tokens[i] (the full bots first, then the thin ones); empty: each
    /// bot makes a development token (UDP; a server started with --insecure-dev) or sends none (TCP).
    std::vector<std::string> tokens;
    /// The network simulator on each bot's UDP socket, both ways (its seed mixed with the bot's index).
    ecsnet::transport::sim_config simulator{};
    /// Connects are spread evenly over this many seconds (0: all at once).
    double ramp_seconds{0.0};
    /// Measured run, counted from the end of the ramp.
    double duration_seconds{30.0};
    behaviour_kind behaviour{behaviour_kind::wander};
    std::uint64_t seed{1};
    /// Threads, each running an io_context of its own; the bots take turns among them.
    std::size_t threads{2};
    /// Bot i is named "<name_prefix>-<i>", thin bot i "<name_prefix>-thin-<i>" (what the server logs).
    std::string name_prefix{"bot"};
    /// No progress lines (the final summary is still printed).
    bool quiet{false};
    /// Full bots predict their avatar (client_options::prediction, client-sdk prediction.hpp) and report
    /// their mispredictions.
    bool predict{false};

    std::chrono::milliseconds connect_timeout{5000};
    std::chrono::milliseconds handshake_timeout{5000};
    /// A bot that hears nothing from the server this long disconnects with `timeout`.
    std::chrono::milliseconds idle_timeout{10'000};
    /// No connected bot applied a snapshot for this long: the server stopped answering; the run ends.
    std::chrono::milliseconds stall_timeout{5000};
    /// How often a progress line is printed (and the stall check made).
    std::chrono::milliseconds progress_interval{1000};
    /// After the run, how long the bots' Disconnects may take to leave before they are dropped.
    std::chrono::milliseconds close_timeout{2000};

    /// Extra pass criteria, off at 0: the latency p99 must stay under this many milliseconds, and every
    /// bot's ticks-applied ratio must reach this (full and thin bots alike).
    double max_latency_p99_ms{0.0};
    double min_ticks_applied_ratio{0.0};

    /// How many desyncs and disconnects are logged one by one (the rest are counted only).
    std::size_t max_logged_events{20};
};

} // namespace ecsnet::bots
