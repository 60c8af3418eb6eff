#include "ecsnet/transport/connect_token.hpp"

#include <sodium.h>

#include <algorithm>
#include <chrono>

#include "sodium_init.hpp"
#include "wire_io.hpp"

namespace ecsnet::transport {

namespace {

using detail::wire_reader;
using detail::wire_writer;

constexpr std::size_t private_plaintext_bytes = private_token_bytes - mac_bytes; // 1,008

// version info, protocol id, expire timestamp: what the private part's seal binds without carrying.
std::array<std::uint8_t, 13 + 8 + 8> private_associated_data(std::uint64_t protocol_id,
                                                             std::uint64_t expire_timestamp) {
    std::array<std::uint8_t, 13 + 8 + 8> ad{};
    wire_writer out{ad};
    out.bytes(version_info);
    out.u64(protocol_id);
    out.u64(expire_timestamp);
    return ad;
}

bool valid_address(const net_address& address) noexcept {
    return address.is_set() && address.port != 0;
}

token_error read_addresses(wire_reader& in, std::vector<net_address>& out) {
    const auto count = in.u32();
    if (!in.ok() || count == 0 || count > max_token_servers) {
        return token_error::bad_address_count;
    }
    out.clear();
    out.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        const auto address = in.address();
        if (!in.ok() || !valid_address(address)) {
            return token_error::bad_address;
        }
        out.push_back(address);
    }
    return token_error::none;
}

void write_addresses(wire_writer& out, const std::vector<net_address>& addresses) {
    out.u32(static_cast<std::uint32_t>(addresses.size()));
    for (const auto& address : addresses) {
        out.address(address);
    }
}

bool valid_timeout(std::uint32_t seconds) noexcept {
    return seconds >= 1 && seconds <= max_token_timeout_seconds;
}

} // namespace

std::string_view to_string(token_error error) noexcept {
    switch (error) {
    case token_error::none:
        return "none";
    case token_error::wrong_size:
        return "wrong_size";
    case token_error::bad_base64:
        return "bad_base64";
    case token_error::bad_version:
        return "bad_version";
    case token_error::bad_timestamps:
        return "bad_timestamps";
    case token_error::bad_timeout:
        return "bad_timeout";
    case token_error::bad_address_count:
        return "bad_address_count";
    case token_error::bad_address:
        return "bad_address";
    case token_error::bad_padding:
        return "bad_padding";
    case token_error::decrypt_failed:
        return "decrypt_failed";
    case token_error::expired:
        return "expired";
    case token_error::bad_parameters:
        return "bad_parameters";
    }
    return "unknown";
}

std::uint64_t unix_now() noexcept {
    const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count());
}

outcome<connect_token, token_error> issue_token(const token_params& params, const key& private_key) {
    ensure_sodium();
    if (params.server_addresses.empty() || params.server_addresses.size() > max_token_servers) {
        return token_error::bad_address_count;
    }
    if (!std::all_of(params.server_addresses.begin(), params.server_addresses.end(), valid_address)) {
        return token_error::bad_address;
    }
    if (!valid_timeout(params.timeout_seconds)) {
        return token_error::bad_timeout;
    }
    if (params.expire_seconds == 0) {
        return token_error::expired;
    }

    connect_token token;
    token.protocol_id = params.protocol_id;
    token.create_timestamp = params.now_unix.value_or(unix_now());
    token.expire_timestamp = token.create_timestamp + params.expire_seconds;
    token.timeout_seconds = params.timeout_seconds;
    for (const auto& address : params.server_addresses) {
        token.server_addresses.push_back(address.normalized());
    }
    randombytes_buf(token.nonce.data(), token.nonce.size());
    token.client_to_server_key = generate_key();
    token.server_to_client_key = generate_key();

    std::array<std::uint8_t, private_plaintext_bytes> plaintext{};
    wire_writer out{plaintext};
    out.u64(params.client_id);
    out.u32(token.timeout_seconds);
    write_addresses(out, token.server_addresses);
    out.bytes(token.client_to_server_key);
    out.bytes(token.server_to_client_key);
    out.bytes(params.user_data);
    if (!out.ok()) {
        return token_error::bad_parameters; // cannot happen: 32 IPv6 addresses fit with room to spare
    }

    const auto ad = private_associated_data(token.protocol_id, token.expire_timestamp);
    unsigned long long sealed_size = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(token.encrypted_private.data(), &sealed_size, plaintext.data(),
                                               plaintext.size(), ad.data(), ad.size(), nullptr,
                                               token.nonce.data(), private_key.data());
    sodium_memzero(plaintext.data(), plaintext.size());
    return token;
}

std::array<std::uint8_t, connect_token_bytes> serialize(const connect_token& token) {
    std::array<std::uint8_t, connect_token_bytes> bytes{};
    wire_writer out{bytes};
    out.bytes(version_info);
    out.u64(token.protocol_id);
    out.u64(token.create_timestamp);
    out.u64(token.expire_timestamp);
    out.bytes(token.nonce);
    out.bytes(token.encrypted_private);
    out.u32(token.timeout_seconds);
    write_addresses(out, token.server_addresses);
    out.bytes(token.client_to_server_key);
    out.bytes(token.server_to_client_key);
    return bytes;
}

std::string to_base64(const connect_token& token) {
    ensure_sodium();
    const auto bytes = serialize(token);
    constexpr auto variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
    std::string text(sodium_base64_ENCODED_LEN(connect_token_bytes, variant), '\0');
    sodium_bin2base64(text.data(), text.size(), bytes.data(), bytes.size(), variant);
    text.pop_back(); // the terminating zero
    return text;
}

outcome<connect_token, token_error> read_token(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != connect_token_bytes) {
        return token_error::wrong_size;
    }
    wire_reader in{bytes};
    const auto version = in.bytes(version_info.size());
    if (!std::equal(version.begin(), version.end(), version_info.begin())) {
        return token_error::bad_version;
    }
    connect_token token;
    token.protocol_id = in.u64();
    token.create_timestamp = in.u64();
    token.expire_timestamp = in.u64();
    in.copy_to(token.nonce);
    in.copy_to(token.encrypted_private);
    token.timeout_seconds = in.u32();
    if (token.create_timestamp > token.expire_timestamp) {
        return token_error::bad_timestamps;
    }
    if (!valid_timeout(token.timeout_seconds)) {
        return token_error::bad_timeout;
    }
    if (const auto error = read_addresses(in, token.server_addresses); error != token_error::none) {
        return error;
    }
    in.copy_to(token.client_to_server_key);
    in.copy_to(token.server_to_client_key);
    if (!in.ok()) {
        return token_error::wrong_size; // cannot happen: 32 IPv6 addresses leave room for the keys
    }
    if (!in.rest_is_zero()) {
        return token_error::bad_padding;
    }
    return token;
}

outcome<connect_token, token_error> read_token_base64(std::string_view text) {
    ensure_sodium();
    // The longest text that can hold 2,048 bytes plus generous whitespace; more is not a token.
    constexpr std::size_t max_text = 4 * connect_token_bytes;
    if (text.size() > max_text) {
        return token_error::wrong_size;
    }
    // The alphabet is checked here, not left to libsodium: its 1.0.18 decoder takes bytes above 0x7F for
    // letters and NUL for ignorable whitespace.
    std::string compact;
    compact.reserve(text.size());
    for (const char c : text) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '_') {
            compact.push_back(c);
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            return token_error::bad_base64;
        }
    }
    // Room for whatever max_text decodes to, so that a long input reads whole and fails on its size.
    std::array<std::uint8_t, max_text / 4 * 3> bytes{};
    std::size_t written = 0;
    const char* end = nullptr;
    if (sodium_base642bin(bytes.data(), bytes.size(), compact.data(), compact.size(), nullptr, &written, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        end != compact.data() + compact.size()) {
        return token_error::bad_base64; // a length no base64 text has, or non-zero trailing bits
    }
    return read_token(std::span{bytes}.first(written));
}

outcome<private_token, token_error> parse_private_token(std::span<const std::uint8_t> plaintext) {
    if (plaintext.size() != private_plaintext_bytes) {
        return token_error::wrong_size;
    }
    wire_reader in{plaintext};
    private_token token;
    token.client_id = in.u64();
    token.timeout_seconds = in.u32();
    if (!valid_timeout(token.timeout_seconds)) {
        return token_error::bad_timeout;
    }
    if (const auto error = read_addresses(in, token.server_addresses); error != token_error::none) {
        return error;
    }
    in.copy_to(token.client_to_server_key);
    in.copy_to(token.server_to_client_key);
    in.copy_to(token.user_data);
    if (!in.ok()) {
        return token_error::wrong_size;
    }
    if (!in.rest_is_zero()) {
        return token_error::bad_padding;
    }
    return token;
}

outcome<private_token, token_error> open_private_token(const sealed_private_token& sealed,
                                                       const key& private_key) {
    ensure_sodium();
    const auto ad = private_associated_data(sealed.protocol_id, sealed.expire_timestamp);
    std::array<std::uint8_t, private_plaintext_bytes> plaintext{};
    unsigned long long opened_size = 0;
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(
            plaintext.data(), &opened_size, nullptr, sealed.encrypted.data(), sealed.encrypted.size(),
            ad.data(), ad.size(), sealed.nonce.data(), private_key.data()) != 0 ||
        opened_size != plaintext.size()) {
        return token_error::decrypt_failed;
    }
    auto token = parse_private_token(plaintext);
    sodium_memzero(plaintext.data(), plaintext.size());
    return token;
}

} // namespace ecsnet::transport
