// What decoding a client's messages costs the server per client and tick (issue 15), without sockets: each
// of N clients sends, per tick, an Input (a 16-byte payload, the arena's move) and an Ack, and the server
// decodes each into that client's reused message and keeps the Input's payload, as udp_connection and
// game_server::handle_input do. Two ways, each a function of its own:
//   plain_envelopes  a plain v1::Envelope per client (protobuf frees the message and allocates the next)
//   arena_decoders   an envelope_decoder per client (the message on an arena in the decoder's own block)
// Under
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/msg.cg build/bench/server_messages_callgrind
//   callgrind_annotate --inclusive=yes /tmp/msg.cg | grep -E "plain_envelopes|arena_decoders"
// their inclusive counts divided by clients x ticks give the instructions per client per tick; run plainly it
// prints their thread CPU time per client per tick, alternated round by round. Flags: --clients N (default
// 500), --ticks T (default 60), --rounds R (default 5).

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/server/envelope_decoder.hpp"

#include "count_flags.hpp"
#include "thread_cpu_clock.hpp"

namespace {

using namespace ecsnet;
using ecsnet::bench::thread_cpu_seconds;

struct datagrams {
    std::vector<std::string> inputs; // per tick
    std::vector<std::string> acks;
};

datagrams messages(int ticks) {
    datagrams out;
    for (int t = 0; t < ticks; ++t) {
        v1::Envelope input;
        input.mutable_input()->set_client_tick(static_cast<std::uint32_t>(t + 3));
        input.mutable_input()->set_sequence(static_cast<std::uint32_t>(t + 1));
        input.mutable_input()->set_payload(std::string(16, static_cast<char>('a' + t % 26)));
        out.inputs.push_back(proto::encode_envelope(input));
        v1::Envelope ack;
        ack.mutable_ack()->set_tick(static_cast<std::uint32_t>(t));
        out.acks.push_back(proto::encode_envelope(ack));
    }
    return out;
}

// What the server keeps of an Input: its payload (input_buffer), replaced tick after tick.
std::size_t keep(v1::Envelope& message, std::string& kept) {
    if (message.has_input()) {
        kept = std::move(*message.mutable_input()->mutable_payload());
        return kept.size();
    }
    return message.ack().tick();
}

[[gnu::noinline]] std::size_t plain_envelopes(std::vector<v1::Envelope>& envelopes,
                                              std::vector<std::string>& kept, const datagrams& sent) {
    std::size_t sum = 0;
    for (std::size_t t = 0; t < sent.inputs.size(); ++t) {
        for (std::size_t c = 0; c < envelopes.size(); ++c) {
            for (const auto* bytes : {&sent.inputs[t], &sent.acks[t]}) {
                if (!proto::decode_envelope(*bytes, envelopes[c])) {
                    std::abort();
                }
                sum += keep(envelopes[c], kept[c]);
            }
        }
    }
    return sum;
}

[[gnu::noinline]] std::size_t arena_decoders(std::vector<server::envelope_decoder>& decoders,
                                             std::vector<std::string>& kept, const datagrams& sent) {
    std::size_t sum = 0;
    for (std::size_t t = 0; t < sent.inputs.size(); ++t) {
        for (std::size_t c = 0; c < decoders.size(); ++c) {
            for (const auto* bytes : {&sent.inputs[t], &sent.acks[t]}) {
                if (!decoders[c].decode(*bytes)) {
                    std::abort();
                }
                sum += keep(decoders[c].message(), kept[c]);
            }
        }
    }
    return sum;
}

} // namespace

int main(int argc, char** argv) {
    long clients_flag = 500;
    long ticks_flag = 60;
    long rounds_flag = 5;
    if (!ecsnet::bench::read_count_flags(
            argc, argv,
            {{"--clients", 1, &clients_flag}, {"--ticks", 1, &ticks_flag}, {"--rounds", 1, &rounds_flag}})) {
        std::fprintf(stderr, "usage: %s [--clients N] [--ticks T] [--rounds R]\n", argv[0]);
        return 2;
    }
    const auto clients = static_cast<std::size_t>(clients_flag);
    const auto ticks = static_cast<int>(ticks_flag);
    const auto rounds = static_cast<int>(rounds_flag);
    const auto sent = messages(ticks);
    std::vector<v1::Envelope> envelopes(clients);
    std::vector<server::envelope_decoder> decoders(clients);
    std::vector<std::string> kept_plain(clients);
    std::vector<std::string> kept_arena(clients);
    double plain = 0;
    double arena = 0;
    std::size_t check_plain = 0;
    std::size_t check_arena = 0;
    for (int r = 0; r < rounds; ++r) {
        double at = thread_cpu_seconds();
        check_plain += plain_envelopes(envelopes, kept_plain, sent);
        double next = thread_cpu_seconds();
        plain += next - at;
        at = next;
        check_arena += arena_decoders(decoders, kept_arena, sent);
        arena += thread_cpu_seconds() - at;
    }
    if (check_plain != check_arena) {
        std::fprintf(stderr, "the two ways decoded differently\n");
        return 1;
    }
    const auto per = [&](double seconds) {
        return seconds * 1e6 / static_cast<double>(clients) / ticks / rounds;
    };
    std::printf("clients %zu, ticks %d, rounds %d: an Input and an Ack decoded per client per tick: plain "
                "envelopes %.3f us, arena decoders %.3f us (ratio %.2f; thread CPU)\n",
                clients, ticks, rounds, per(plain), per(arena), arena / plain);
    return 0;
}
