// Writes the seed corpora of the fuzz targets: valid envelopes of every kind (envelope_fuzz) and valid
// snapshots for the fuzz world, whole and as wrapped columns (snapshot_fuzz).
//   fuzz_corpus_generator tests/fuzz/corpus

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/framing.hpp"
#include "ecsnet/proto/handshake.hpp"
#include "fuzz_world.hpp"

namespace {

void write(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out{path, std::ios::binary};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

} // namespace

int main(int argc, char** argv) {
    using namespace ecsnet;
    using namespace ecsnet::proto;
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_corpus_generator <corpus directory>\n");
        return 2;
    }
    const std::filesystem::path root{argv[1]};
    std::filesystem::create_directories(root / "envelope_fuzz");
    std::filesystem::create_directories(root / "snapshot_fuzz");

    // envelope_fuzz: framed envelopes of every kind, after a byte choosing the piece size.
    const auto& layout = arena::replicated_schema().layout();
    fuzz::fuzz_world w;
    std::vector<v1::Envelope> messages;
    messages.push_back(make_client_hello(layout, "token", "player"));
    messages.push_back(
        make_server_welcome(layout, welcome_info{3, 30, 100, net_entity{5, 1}, 1700000000000000, 32}));
    messages.push_back(make_disconnect(v1::SCHEMA_MISMATCH, "component 'Transform' differs"));
    v1::Envelope ack;
    ack.mutable_ack()->set_tick(42);
    messages.push_back(ack);
    v1::Envelope input;
    input.mutable_input()->set_client_tick(43);
    input.mutable_input()->set_sequence(7);
    input.mutable_input()->set_payload("move");
    messages.push_back(input);
    v1::Envelope ping;
    ping.mutable_ping()->set_sent_us(123456);
    messages.push_back(ping);
    v1::Envelope snapshot;
    w.encoder.encode(baselines{3, 2}, *snapshot.mutable_snapshot());
    messages.push_back(snapshot);
    std::string all{"\x07"};
    for (std::size_t i = 0; i < messages.size(); ++i) {
        std::string framed{static_cast<char>(i * 9 + 1)};
        if (!append_envelope_frame(framed, messages[i])) {
            return 1;
        }
        write(root / "envelope_fuzz" / ("message-" + std::to_string(i)), framed);
        all += framed.substr(1);
    }
    write(root / "envelope_fuzz" / "stream", all);

    // snapshot_fuzz: whole envelopes (even first byte) and wrapped columns (odd first byte).
    int n = 0;
    for (const auto& wanted :
         {baselines{}, baselines{3, {}}, baselines{3, 2}, baselines{2, 1}, baselines{1, {}}}) {
        v1::Envelope e;
        const auto used = w.encoder.encode(wanted, *e.mutable_snapshot());
        write(root / "snapshot_fuzz" / ("envelope-" + std::to_string(n)),
              std::string{"\x00", 1} + encode_envelope(e));
        const auto& s = e.snapshot();
        // selector: gap = 4 - 1 - baseline, extrapolation gap, full (7 mod 8)
        unsigned selector = 0;
        if (!used.baseline) {
            selector = 7;
        } else {
            selector = (3 - *used.baseline) | ((used.second ? *used.baseline - *used.second : 0) << 2);
        }
        write(root / "snapshot_fuzz" / ("columns-" + std::to_string(n)),
              std::string{static_cast<char>(selector << 1 | 1)} + s.columns());
        ++n;
    }
    std::printf("corpus written under %s\n", root.c_str());
    return 0;
}
