#include "ecsnet/transport/challenge_token.hpp"

#include <sodium.h>

#include "sodium_init.hpp"
#include "wire_io.hpp"

namespace ecsnet::transport {

namespace {

using detail::wire_reader;
using detail::wire_writer;

constexpr std::size_t plaintext_bytes = challenge_token_bytes - mac_bytes; // 380
static_assert(plaintext_bytes ==
              8 + 8 + 4 + 8 + mac_bytes + session_salt_bytes + 2 * key_bytes + user_data_bytes);

// version info, protocol id, the client's address (type, 16 bytes of IP zero-extended, port): 40 bytes.
std::array<std::uint8_t, 13 + 8 + 19> associated_data(std::uint64_t protocol_id, const net_address& client) {
    std::array<std::uint8_t, 13 + 8 + 19> ad{};
    wire_writer out{ad};
    out.bytes(version_info);
    out.u64(protocol_id);
    const auto address = client.normalized();
    out.u8(static_cast<std::uint8_t>(address.family));
    out.bytes(address.ip);
    out.u16(address.port);
    return ad;
}

std::array<std::uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> nonce_of(std::uint64_t sequence) {
    std::array<std::uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> nonce{};
    for (std::size_t i = 0; i < 8; ++i) {
        nonce[4 + i] = static_cast<std::uint8_t>(sequence >> (8 * i));
    }
    return nonce;
}

} // namespace

sealed_challenge seal_challenge(const challenge_contents& contents, std::uint64_t sequence,
                                const net_address& client, std::uint64_t protocol_id, const key& k) {
    std::array<std::uint8_t, plaintext_bytes> plaintext{};
    wire_writer out{plaintext};
    out.u64(contents.client_id);
    out.u64(contents.token_expire_timestamp);
    out.u32(contents.timeout_seconds);
    out.u64(contents.issued_ms);
    out.bytes(contents.mac);
    out.bytes(contents.salt);
    out.bytes(contents.client_to_server_key);
    out.bytes(contents.server_to_client_key);
    out.bytes(contents.user_data);

    const auto ad = associated_data(protocol_id, client);
    const auto nonce = nonce_of(sequence);
    sealed_challenge sealed{};
    unsigned long long written = 0;
    crypto_aead_chacha20poly1305_ietf_encrypt(sealed.data(), &written, plaintext.data(), plaintext.size(),
                                              ad.data(), ad.size(), nullptr, nonce.data(), k.data());
    sodium_memzero(plaintext.data(), plaintext.size());
    return sealed;
}

std::optional<challenge_contents> open_challenge(std::span<const std::uint8_t> sealed, std::uint64_t sequence,
                                                 const net_address& client, std::uint64_t protocol_id,
                                                 const key& k) {
    if (sealed.size() != challenge_token_bytes) {
        return std::nullopt;
    }
    const auto ad = associated_data(protocol_id, client);
    const auto nonce = nonce_of(sequence);
    std::array<std::uint8_t, plaintext_bytes> plaintext{};
    unsigned long long opened = 0;
    if (crypto_aead_chacha20poly1305_ietf_decrypt(plaintext.data(), &opened, nullptr, sealed.data(),
                                                  sealed.size(), ad.data(), ad.size(), nonce.data(),
                                                  k.data()) != 0) {
        return std::nullopt;
    }
    wire_reader in{plaintext};
    challenge_contents contents;
    contents.client_id = in.u64();
    contents.token_expire_timestamp = in.u64();
    contents.timeout_seconds = in.u32();
    contents.issued_ms = in.u64();
    in.copy_to(contents.mac);
    in.copy_to(contents.salt);
    in.copy_to(contents.client_to_server_key);
    in.copy_to(contents.server_to_client_key);
    in.copy_to(contents.user_data);
    sodium_memzero(plaintext.data(), plaintext.size());
    return contents;
}

challenge_keys::challenge_keys(std::chrono::milliseconds rotation, clock::time_point now)
    : rotation_{rotation}
    , rotated_at_{now}
    , current_{generate_key()} {}

void challenge_keys::rotate_if_due(clock::time_point now) {
    if (now - rotated_at_ < rotation_) {
        return;
    }
    previous_ = current_;
    has_previous_ = true;
    previous_first_sequence_ = current_first_sequence_;
    current_ = generate_key();
    current_first_sequence_ = next_sequence_;
    rotated_at_ = now;
}

challenge_keys::issued challenge_keys::seal(const challenge_contents& contents, const net_address& client,
                                            std::uint64_t protocol_id) {
    const auto sequence = next_sequence_++;
    return {sequence, seal_challenge(contents, sequence, client, protocol_id, current_)};
}

std::optional<challenge_contents> challenge_keys::open(std::span<const std::uint8_t> sealed,
                                                       std::uint64_t sequence, const net_address& client,
                                                       std::uint64_t protocol_id) const {
    if (sequence >= next_sequence_) {
        return std::nullopt; // never issued
    }
    if (sequence >= current_first_sequence_) {
        return open_challenge(sealed, sequence, client, protocol_id, current_);
    }
    if (has_previous_ && sequence >= previous_first_sequence_) {
        return open_challenge(sealed, sequence, client, protocol_id, previous_);
    }
    return std::nullopt; // sealed by a key already forgotten
}

} // namespace ecsnet::transport
