#include "ecsnet/transport/packets.hpp"

#include <algorithm>
#include <cstring>

#include "wire_io.hpp"

namespace ecsnet::transport {

namespace {

using detail::wire_reader;
using detail::wire_writer;

// Length of the well-formed UTF-8 character starting at text[i], or 0 if none starts there.
std::size_t utf8_char_length(std::string_view text, std::size_t i) noexcept {
    const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
    const auto continuation = [&](std::size_t at) { return at < text.size() && (byte(at) & 0xC0) == 0x80; };
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
        return 1;
    }
    if (lead >= 0xC2 && lead <= 0xDF) {
        return continuation(i + 1) ? 2 : 0;
    }
    if (lead >= 0xE0 && lead <= 0xEF) {
        if (!continuation(i + 1) || !continuation(i + 2)) {
            return 0;
        }
        const unsigned char second = byte(i + 1);
        if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F)) {
            return 0; // overlong, or a UTF-16 surrogate
        }
        return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        if (!continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) {
            return 0;
        }
        const unsigned char second = byte(i + 1);
        if ((lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F)) {
            return 0; // overlong, or above U+10FFFF
        }
        return 4;
    }
    return 0;
}

// `text` with every byte that does not start a well-formed character replaced by '?'.
std::string sanitize_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto length = utf8_char_length(text, i);
        if (length == 0) {
            out.push_back('?');
            ++i;
        } else {
            out.append(text.substr(i, length));
            i += length;
        }
    }
    return out;
}

} // namespace

bool valid_utf8(std::string_view text) noexcept {
    for (std::size_t i = 0; i < text.size();) {
        const auto length = utf8_char_length(text, i);
        if (length == 0) {
            return false;
        }
        i += length;
    }
    return true;
}

std::string_view truncate_utf8(std::string_view text, std::size_t max_bytes) noexcept {
    if (text.size() <= max_bytes) {
        return text;
    }
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
        --cut; // text[cut] continues a character: cut before that character starts
    }
    return text.substr(0, cut);
}

std::string_view to_string(denial_reason reason) noexcept {
    switch (reason) {
    case denial_reason::server_full:
        return "server_full";
    case denial_reason::client_id_in_use:
        return "client_id_in_use";
    }
    return "unknown";
}

connection_request_bytes_t write_connection_request(const connect_token& token) {
    connection_request_bytes_t bytes{};
    wire_writer out{bytes};
    out.u8(static_cast<std::uint8_t>(packet_type::connection_request));
    out.bytes(version_info);
    out.u64(token.protocol_id);
    out.u64(token.expire_timestamp);
    out.bytes(token.nonce);
    out.bytes(token.encrypted_private);
    return bytes;
}

outcome<connection_request_view, drop_reason>
read_connection_request(std::span<const std::uint8_t> datagram) noexcept {
    if (datagram.empty() || datagram[0] != static_cast<std::uint8_t>(packet_type::connection_request)) {
        return drop_reason::bad_prefix;
    }
    if (datagram.size() != connection_request_bytes) {
        return drop_reason::malformed;
    }
    if (!std::equal(version_info.begin(), version_info.end(), datagram.begin() + 1)) {
        return drop_reason::wrong_version;
    }
    wire_reader in{datagram.subspan(1 + version_info.size())};
    const auto protocol_id = in.u64();
    const auto expire_timestamp = in.u64();
    const auto nonce = in.bytes(token_nonce_bytes);
    const auto encrypted = in.bytes(private_token_bytes);
    return connection_request_view{
        protocol_id, expire_timestamp,
        std::span<const std::uint8_t, token_nonce_bytes>{nonce.data(), token_nonce_bytes},
        std::span<const std::uint8_t, private_token_bytes>{encrypted.data(), private_token_bytes}};
}

outcome<denial_reason, drop_reason> read_denied(std::span<const std::uint8_t> data) noexcept {
    if (data.size() != 1) {
        return drop_reason::malformed;
    }
    const auto reason = static_cast<denial_reason>(data[0]);
    if (reason != denial_reason::server_full && reason != denial_reason::client_id_in_use) {
        return drop_reason::malformed;
    }
    return reason;
}

std::array<std::uint8_t, challenge_data_bytes> write_challenge(const challenge_data& challenge) {
    std::array<std::uint8_t, challenge_data_bytes> bytes{};
    wire_writer out{bytes};
    out.u64(challenge.challenge_sequence);
    out.bytes(challenge.salt);
    out.bytes(challenge.token);
    out.u8(challenge.ciphers);
    return bytes;
}

outcome<challenge_data, drop_reason> read_challenge(std::span<const std::uint8_t> data) noexcept {
    if (data.size() != challenge_data_bytes) {
        return drop_reason::malformed;
    }
    wire_reader in{data};
    challenge_data challenge;
    challenge.challenge_sequence = in.u64();
    in.copy_to(challenge.salt);
    in.copy_to(challenge.token);
    challenge.ciphers = in.u8();
    if ((challenge.ciphers & cipher_bit(packet_cipher::chacha20_poly1305)) == 0 ||
        (challenge.ciphers & ~known_ciphers) != 0) {
        return drop_reason::malformed;
    }
    return challenge;
}

std::array<std::uint8_t, response_data_bytes> write_response(const response_data& response) {
    std::array<std::uint8_t, response_data_bytes> bytes{};
    wire_writer out{bytes};
    out.u64(response.challenge_sequence);
    out.bytes(response.token);
    out.u8(static_cast<std::uint8_t>(response.cipher));
    return bytes;
}

outcome<response_data, drop_reason> read_response(std::span<const std::uint8_t> data) noexcept {
    if (data.size() != response_data_bytes) {
        return drop_reason::malformed;
    }
    wire_reader in{data};
    response_data response;
    response.challenge_sequence = in.u64();
    in.copy_to(response.token);
    const auto cipher = in.u8();
    if (cipher > static_cast<std::uint8_t>(packet_cipher::aes256_gcm)) {
        return drop_reason::malformed;
    }
    response.cipher = static_cast<packet_cipher>(cipher);
    return response;
}

std::size_t write_disconnect(std::uint8_t code, std::string_view message, std::span<std::uint8_t> out,
                             std::uint16_t retry_after_s) noexcept {
    if (out.size() < 2 + max_disconnect_message_bytes + (retry_after_s != 0 ? 2U : 0U)) {
        return 0;
    }
    // Invalid bytes become '?' (the receiver would do the same) before the cut at a character boundary.
    std::string clean;
    try {
        clean = sanitize_utf8(message.substr(0, 4 * max_disconnect_message_bytes));
    } catch (...) {
        clean.clear(); // out of memory for a 508-byte string: send the code alone
    }
    const auto text = truncate_utf8(clean, max_disconnect_message_bytes);
    out[0] = code;
    out[1] = static_cast<std::uint8_t>(text.size());
    std::memcpy(out.data() + 2, text.data(), text.size());
    if (retry_after_s == 0) {
        return 2 + text.size(); // the packet as before the hint existed
    }
    out[2 + text.size()] = static_cast<std::uint8_t>(retry_after_s & 0xFF);
    out[3 + text.size()] = static_cast<std::uint8_t>(retry_after_s >> 8);
    return 4 + text.size();
}

outcome<disconnect_data, drop_reason> read_disconnect(std::span<const std::uint8_t> data) {
    if (data.size() < 2 || data[1] > max_disconnect_message_bytes ||
        (data.size() != 2 + std::size_t{data[1]} && data.size() != 4 + std::size_t{data[1]})) {
        return drop_reason::malformed;
    }
    const std::string_view text{reinterpret_cast<const char*>(data.data() + 2), data[1]};
    std::uint16_t retry_after_s = 0;
    if (data.size() == 4 + std::size_t{data[1]}) {
        retry_after_s = static_cast<std::uint16_t>(data[2 + data[1]] | (data[3 + data[1]] << 8));
    }
    return disconnect_data{data[0], sanitize_utf8(text), retry_after_s};
}

} // namespace ecsnet::transport
