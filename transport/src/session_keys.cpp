#include "ecsnet/transport/session_keys.hpp"

#include <sodium.h>

#include <algorithm>

namespace ecsnet::transport {

namespace {

constexpr std::array<std::uint8_t, 16> c2s_label{'e', 'c', 's', 'n', 'e', 't', ' ', 'c',
                                                 '2', 's', ' ', 'k', 'e', 'y', ' ', '1'};
constexpr std::array<std::uint8_t, 16> s2c_label{'e', 'c', 's', 'n', 'e', 't', ' ', 's',
                                                 '2', 'c', ' ', 'k', 'e', 'y', ' ', '1'};

key derive(const key& token_key, const std::array<std::uint8_t, 16>& label,
           const session_salt& salt) noexcept {
    std::array<std::uint8_t, 16 + session_salt_bytes> message{};
    std::copy(label.begin(), label.end(), message.begin());
    std::copy(salt.begin(), salt.end(), message.begin() + 16);
    key out{};
    crypto_generichash(out.data(), out.size(), message.data(), message.size(), token_key.data(),
                       token_key.size());
    return out;
}

} // namespace

session_keys derive_session_keys(const key& token_client_to_server, const key& token_server_to_client,
                                 const session_salt& salt) noexcept {
    return {derive(token_client_to_server, c2s_label, salt), derive(token_server_to_client, s2c_label, salt)};
}

} // namespace ecsnet::transport
