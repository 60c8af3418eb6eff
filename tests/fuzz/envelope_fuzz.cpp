// libFuzzer target: the stream decoder and the envelope decoder, on arbitrary bytes. The input is fed to a
// frame_decoder (in pieces whose sizes the input's first byte picks) with a small frame limit, and every
// frame it yields is decoded as an Envelope and, when it is a handshake message, checked against the
// arena schema. Nothing may crash, assert, leak or allocate beyond the frame limit. The whole input is also
// one envelope, whose snapshot header peek_snapshot_header must read as the parse does.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/framing.hpp"
#include "ecsnet/proto/handshake.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ecsnet::proto;
    namespace v1 = ecsnet::v1;
    if (size == 0) {
        return 0;
    }
    const std::size_t piece = 1 + data[0] % 64;
    std::string_view bytes{reinterpret_cast<const char*>(data) + 1, size - 1};
    frame_decoder decoder{64 * 1024};
    v1::Envelope envelope;
    const auto& layout = ecsnet::arena::replicated_schema().layout();
    const auto on_frame = [&](std::string_view frame) {
        if (!decode_envelope(frame, envelope)) {
            return;
        }
        switch (envelope.message_case()) {
        case v1::Envelope::kClientHello:
            static_cast<void>(check_client_hello(envelope.client_hello(), layout));
            static_cast<void>(client_name(envelope.client_hello()));
            break;
        case v1::Envelope::kServerWelcome:
            static_cast<void>(check_server_welcome(envelope.server_welcome(), layout));
            break;
        default:
            static_cast<void>(encode_envelope(envelope));
            break;
        }
    };
    while (!bytes.empty()) {
        const auto n = std::min(piece, bytes.size());
        if (!decoder.feed(bytes.substr(0, n), on_frame)) {
            break;
        }
        bytes.remove_prefix(n);
    }
    // The same bytes as one whole envelope, and its snapshot header read from the wire format (thin
    // clients), which must be what the parse reads, errors included.
    const std::string_view whole{reinterpret_cast<const char*>(data), size};
    v1::Envelope scratch;
    const auto peeked = peek_snapshot_header(whole, scratch);
    const auto parsed = parse_snapshot_header(whole, envelope);
    if (static_cast<bool>(peeked) != static_cast<bool>(parsed) ||
        (!parsed && peeked.code() != parsed.code()) ||
        (parsed && (peeked->tick != parsed->tick || peeked->time_offset_us != parsed->time_offset_us ||
                    peeked->full_state != parsed->full_state))) {
        __builtin_trap();
    }
    return 0;
}
