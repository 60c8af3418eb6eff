#include "ecsnet/transport/packet_crypto.hpp"

#include <sodium.h>

#include <array>
#include <cstring>

namespace ecsnet::transport {

namespace {

constexpr std::size_t base_ad_bytes = 13 + 8 + 1;
constexpr std::size_t max_ad_bytes = base_ad_bytes + max_datagram_bytes;

std::array<std::uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES>
nonce_of(std::uint64_t sequence) noexcept {
    std::array<std::uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> nonce{};
    for (std::size_t i = 0; i < 8; ++i) {
        nonce[4 + i] = static_cast<std::uint8_t>(sequence >> (8 * i));
    }
    return nonce;
}

// version info, protocol id (little-endian), prefix byte: 22 bytes written at `out`.
void write_base_ad(std::uint8_t* out, std::uint64_t protocol_id, std::uint8_t prefix) noexcept {
    std::memcpy(out, version_info.data(), version_info.size());
    for (std::size_t i = 0; i < 8; ++i) {
        out[13 + i] = static_cast<std::uint8_t>(protocol_id >> (8 * i));
    }
    out[21] = prefix;
}

// Writes prefix and sequence; returns the header's size.
std::size_t write_header(packet_type type, std::uint64_t sequence, std::uint8_t* out) noexcept {
    const auto count = sequence_bytes(sequence);
    out[0] = static_cast<std::uint8_t>((count << 4) | static_cast<std::uint8_t>(type));
    for (std::size_t i = 0; i < count; ++i) {
        out[1 + i] = static_cast<std::uint8_t>(sequence >> (8 * i));
    }
    return 1 + count;
}

// The packet layout around the AEAD call, shared by the key-taking and the prepared-key functions.
// encrypt(sealed, written, ad, ad_size, nonce) writes ciphertext and MAC.
template<typename Encrypt>
std::size_t seal_with(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                      std::uint64_t protocol_id, std::span<std::uint8_t> out, bool cipher_usable,
                      Encrypt encrypt) noexcept {
    const auto size = sealed_size(sequence, data.size());
    if (out.size() < size || !cipher_usable) {
        return 0;
    }
    const auto header_size = write_header(type, sequence, out.data());
    std::array<std::uint8_t, base_ad_bytes> ad{};
    write_base_ad(ad.data(), protocol_id, out[0]);
    const auto nonce = nonce_of(sequence);
    unsigned long long written = 0;
    encrypt(out.data() + header_size, &written, ad.data(), ad.size(), nonce.data());
    return size;
}

// decrypt(opened_data, opened, sealed, sealed_size, ad, ad_size, nonce) returns libsodium's 0 / -1.
template<typename Decrypt>
std::optional<std::size_t> open_with(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                     std::uint64_t protocol_id, std::span<std::uint8_t> out,
                                     bool cipher_usable, Decrypt decrypt) noexcept {
    if (datagram.size() < header.size + mac_bytes || datagram.size() > max_datagram_bytes ||
        out.size() < datagram.size() - header.size - mac_bytes || !cipher_usable) {
        return std::nullopt;
    }
    std::array<std::uint8_t, base_ad_bytes> ad{};
    write_base_ad(ad.data(), protocol_id, header.prefix);
    const auto nonce = nonce_of(header.sequence);
    unsigned long long opened = 0;
    if (decrypt(out.data(), &opened, datagram.data() + header.size, datagram.size() - header.size, ad.data(),
                ad.size(), nonce.data()) != 0) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(opened);
}

static_assert(sizeof(crypto_aead_aes256gcm_state) == 512 && alignof(crypto_aead_aes256gcm_state) == 16,
              "packet_key holds libsodium's AES-256-GCM state in place");

crypto_aead_aes256gcm_state* aes_state(std::array<unsigned char, 512>& bytes) noexcept {
    return reinterpret_cast<crypto_aead_aes256gcm_state*>(bytes.data());
}
const crypto_aead_aes256gcm_state* aes_state(const std::array<unsigned char, 512>& bytes) noexcept {
    return reinterpret_cast<const crypto_aead_aes256gcm_state*>(bytes.data());
}

static_assert(crypto_aead_aes256gcm_KEYBYTES == crypto_aead_chacha20poly1305_IETF_KEYBYTES &&
                  crypto_aead_aes256gcm_NPUBBYTES == crypto_aead_chacha20poly1305_IETF_NPUBBYTES &&
                  crypto_aead_aes256gcm_ABYTES == crypto_aead_chacha20poly1305_IETF_ABYTES,
              "the two ciphers share the packet layout");

} // namespace

std::uint8_t available_ciphers() noexcept {
    static const std::uint8_t ciphers = [] {
        std::uint8_t set = cipher_bit(packet_cipher::chacha20_poly1305);
        if (sodium_init() >= 0 && crypto_aead_aes256gcm_is_available() != 0) {
            set |= cipher_bit(packet_cipher::aes256_gcm);
        }
        return set;
    }();
    return ciphers;
}

outcome<datagram_header, drop_reason> read_datagram_header(std::span<const std::uint8_t> datagram) noexcept {
    if (datagram.empty() || datagram.size() > max_datagram_bytes) {
        return drop_reason::malformed;
    }
    const auto prefix = datagram[0];
    const auto type = static_cast<std::uint8_t>(prefix & 0x0F);
    const auto count = static_cast<std::size_t>(prefix >> 4);
    if (type == 0 || type >= packet_type_count || count < 1 || count > 8) {
        return drop_reason::bad_prefix;
    }
    if (datagram.size() < 1 + count + mac_bytes) {
        return drop_reason::malformed;
    }
    std::uint64_t sequence = 0;
    for (std::size_t i = 0; i < count; ++i) {
        sequence |= std::uint64_t{datagram[1 + i]} << (8 * i);
    }
    return datagram_header{static_cast<packet_type>(type), prefix, sequence, 1 + count};
}

std::size_t seal_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                        const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out,
                        packet_cipher cipher) noexcept {
    return seal_with(type, sequence, data, protocol_id, out, (available_ciphers() & cipher_bit(cipher)) != 0,
                     [&](std::uint8_t* sealed, unsigned long long* written, const std::uint8_t* ad,
                         std::size_t ad_size, const std::uint8_t* nonce) {
                         if (cipher == packet_cipher::aes256_gcm) {
                             crypto_aead_aes256gcm_encrypt(sealed, written, data.data(), data.size(), ad,
                                                           ad_size, nullptr, nonce, k.data());
                         } else {
                             crypto_aead_chacha20poly1305_ietf_encrypt(sealed, written, data.data(),
                                                                       data.size(), ad, ad_size, nullptr,
                                                                       nonce, k.data());
                         }
                     });
}

std::optional<std::size_t> open_packet(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                       const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out,
                                       packet_cipher cipher) noexcept {
    return open_with(
        header, datagram, protocol_id, out, (available_ciphers() & cipher_bit(cipher)) != 0,
        [&](std::uint8_t* opened_data, unsigned long long* opened, const std::uint8_t* sealed,
            std::size_t sealed_size, const std::uint8_t* ad, std::size_t ad_size, const std::uint8_t* nonce) {
            return cipher == packet_cipher::aes256_gcm
                       ? crypto_aead_aes256gcm_decrypt(opened_data, opened, nullptr, sealed, sealed_size, ad,
                                                       ad_size, nonce, k.data())
                       : crypto_aead_chacha20poly1305_ietf_decrypt(opened_data, opened, nullptr, sealed,
                                                                   sealed_size, ad, ad_size, nonce, k.data());
        });
}

packet_key::packet_key(const key& k, packet_cipher cipher) noexcept
    : key_{k}
    , cipher_{cipher}
    , usable_{(available_ciphers() & cipher_bit(cipher)) != 0} {
    if (usable_ && cipher == packet_cipher::aes256_gcm) {
        usable_ = crypto_aead_aes256gcm_beforenm(aes_state(aes_state_), key_.data()) == 0;
    }
}

packet_key::~packet_key() {
    sodium_memzero(key_.data(), key_.size());
    sodium_memzero(aes_state_.data(), aes_state_.size());
}

std::size_t seal_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                        const packet_key& k, std::uint64_t protocol_id,
                        std::span<std::uint8_t> out) noexcept {
    return seal_with(
        type, sequence, data, protocol_id, out, k.usable_,
        [&](std::uint8_t* sealed, unsigned long long* written, const std::uint8_t* ad, std::size_t ad_size,
            const std::uint8_t* nonce) {
            if (k.cipher_ == packet_cipher::aes256_gcm) {
                crypto_aead_aes256gcm_encrypt_afternm(sealed, written, data.data(), data.size(), ad, ad_size,
                                                      nullptr, nonce, aes_state(k.aes_state_));
            } else {
                crypto_aead_chacha20poly1305_ietf_encrypt(sealed, written, data.data(), data.size(), ad,
                                                          ad_size, nullptr, nonce, k.key_.data());
            }
        });
}

std::optional<std::size_t> open_packet(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                       const packet_key& k, std::uint64_t protocol_id,
                                       std::span<std::uint8_t> out) noexcept {
    return open_with(
        header, datagram, protocol_id, out, k.usable_,
        [&](std::uint8_t* opened_data, unsigned long long* opened, const std::uint8_t* sealed,
            std::size_t sealed_size, const std::uint8_t* ad, std::size_t ad_size, const std::uint8_t* nonce) {
            return k.cipher_ == packet_cipher::aes256_gcm
                       ? crypto_aead_aes256gcm_decrypt_afternm(opened_data, opened, nullptr, sealed,
                                                               sealed_size, ad, ad_size, nonce,
                                                               aes_state(k.aes_state_))
                       : crypto_aead_chacha20poly1305_ietf_decrypt(opened_data, opened, nullptr, sealed,
                                                                   sealed_size, ad, ad_size, nonce,
                                                                   k.key_.data());
        });
}

std::size_t seal_clear_packet(packet_type type, std::uint64_t sequence, std::span<const std::uint8_t> data,
                              const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out) noexcept {
    const auto size = sealed_size(sequence, data.size());
    if (out.size() < size || data.size() > max_datagram_bytes) {
        return 0;
    }
    const auto header_size = write_header(type, sequence, out.data());
    std::memcpy(out.data() + header_size, data.data(), data.size());
    std::array<std::uint8_t, max_ad_bytes> ad{};
    write_base_ad(ad.data(), protocol_id, out[0]);
    std::memcpy(ad.data() + base_ad_bytes, data.data(), data.size());
    const auto nonce = nonce_of(sequence);
    unsigned long long mac_size = 0;
    std::uint8_t empty = 0; // libsodium wants real pointers for the (empty) message and ciphertext
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        &empty, out.data() + header_size + data.size(), &mac_size, &empty, 0, ad.data(),
        base_ad_bytes + data.size(), nullptr, nonce.data(), k.data());
    return size;
}

bool verify_clear_packet(const datagram_header& header, std::span<const std::uint8_t> datagram, const key& k,
                         std::uint64_t protocol_id) noexcept {
    if (datagram.size() < header.size + mac_bytes || datagram.size() > max_datagram_bytes) {
        return false;
    }
    const auto data_size = datagram.size() - header.size - mac_bytes;
    std::array<std::uint8_t, max_ad_bytes> ad{};
    write_base_ad(ad.data(), protocol_id, header.prefix);
    std::memcpy(ad.data() + base_ad_bytes, datagram.data() + header.size, data_size);
    const auto nonce = nonce_of(header.sequence);
    std::uint8_t empty = 0;
    return crypto_aead_chacha20poly1305_ietf_decrypt_detached(
               &empty, nullptr, &empty, 0, datagram.data() + header.size + data_size, ad.data(),
               base_ad_bytes + data_size, nonce.data(), k.data()) == 0;
}

} // namespace ecsnet::transport
