// libFuzzer target: the connect token decoders on arbitrary bytes (docs/protocol.md 10.2). The input is
// read as a 2,048-byte token, as printable base64 text, and as a private part's plaintext; the private
// part is also opened with the development key. Nothing may crash, assert or leak, and whatever decodes
// must encode back to the same bytes (each token has exactly one serialized form).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/dev_key.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ecsnet::transport;
    const std::span<const std::uint8_t> input{data, size};

    if (const auto token = read_token(input)) {
        const auto again = serialize(*token);
        if (!std::equal(again.begin(), again.end(), input.begin(), input.end())) {
            __builtin_trap(); // a token read from bytes writes other bytes
        }
        const auto reread = read_token_base64(to_base64(*token));
        if (!reread || serialize(*reread) != again) {
            __builtin_trap();
        }
        static_cast<void>(open_private_token(
            {token->protocol_id, token->expire_timestamp, token->nonce, token->encrypted_private},
            dev_private_key));
    }

    const std::string_view text{reinterpret_cast<const char*>(data), size};
    if (const auto token = read_token_base64(text)) {
        if (!read_token(serialize(*token))) {
            __builtin_trap(); // what base64 decoded must read as bytes too
        }
    }

    // The private part's reader, on the input as plaintext (padded or cut to its 1,008 bytes, and as is).
    static_cast<void>(parse_private_token(input));
    std::array<std::uint8_t, private_token_bytes - mac_bytes> plaintext{};
    std::copy_n(data, std::min(size, plaintext.size()), plaintext.begin());
    if (const auto opened = parse_private_token(plaintext)) {
        if (opened->server_addresses.empty() || opened->server_addresses.size() > max_token_servers) {
            __builtin_trap();
        }
    }
    return 0;
}
