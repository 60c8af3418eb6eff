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
    const auto size = sealed_size(sequence, data.size());
    if (out.size() < size || (available_ciphers() & cipher_bit(cipher)) == 0) {
        return 0;
    }
    const auto header_size = write_header(type, sequence, out.data());
    std::array<std::uint8_t, base_ad_bytes> ad{};
    write_base_ad(ad.data(), protocol_id, out[0]);
    const auto nonce = nonce_of(sequence);
    unsigned long long written = 0;
    if (cipher == packet_cipher::aes256_gcm) {
        crypto_aead_aes256gcm_encrypt(out.data() + header_size, &written, data.data(), data.size(), ad.data(),
                                      ad.size(), nullptr, nonce.data(), k.data());
    } else {
        crypto_aead_chacha20poly1305_ietf_encrypt(out.data() + header_size, &written, data.data(),
                                                  data.size(), ad.data(), ad.size(), nullptr, nonce.data(),
                                                  k.data());
    }
    return size;
}

std::optional<std::size_t> open_packet(const datagram_header& header, std::span<const std::uint8_t> datagram,
                                       const key& k, std::uint64_t protocol_id, std::span<std::uint8_t> out,
                                       packet_cipher cipher) noexcept {
    if (datagram.size() < header.size + mac_bytes || datagram.size() > max_datagram_bytes ||
        out.size() < datagram.size() - header.size - mac_bytes ||
        (available_ciphers() & cipher_bit(cipher)) == 0) {
        return std::nullopt;
    }
    const auto cipher_size = datagram.size() - header.size;
    std::array<std::uint8_t, base_ad_bytes> ad{};
    write_base_ad(ad.data(), protocol_id, header.prefix);
    const auto nonce = nonce_of(header.sequence);
    unsigned long long opened = 0;
    const int failed =
        cipher == packet_cipher::aes256_gcm
            ? crypto_aead_aes256gcm_decrypt(out.data(), &opened, nullptr, datagram.data() + header.size,
                                            cipher_size, ad.data(), ad.size(), nonce.data(), k.data())
            : crypto_aead_chacha20poly1305_ietf_decrypt(out.data(), &opened, nullptr,
                                                        datagram.data() + header.size, cipher_size, ad.data(),
                                                        ad.size(), nonce.data(), k.data());
    if (failed != 0) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(opened);
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
