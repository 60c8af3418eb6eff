#include "ecsnet/server/token_checker.hpp"

#include <algorithm>
#include <span>

namespace ecsnet::server {

token_checker::token_checker(transport::key key, std::uint64_t protocol_id,
                             std::vector<transport::net_address> addresses, std::size_t max_used)
    : key_{key}
    , protocol_id_{protocol_id}
    , addresses_{std::move(addresses)}
    , max_used_{std::max<std::size_t>(max_used, 1)} {}

std::optional<std::string> token_checker::check(std::string_view token, std::uint64_t now_unix,
                                                std::uint64_t* client_id) {
    if (token.empty()) {
        return "no connect token (this server is not in development mode)";
    }
    const std::span<const std::uint8_t> bytes{reinterpret_cast<const std::uint8_t*>(token.data()),
                                              token.size()};
    auto read = transport::read_token(bytes);
    if (!read) {
        read = transport::read_token_base64(token);
    }
    if (!read) {
        return "unreadable connect token: " + std::string{transport::to_string(read.error())};
    }
    const auto& public_part = read.value();
    if (public_part.protocol_id != protocol_id_) {
        return "connect token for another protocol";
    }
    if (public_part.expire_timestamp <= now_unix) {
        return "expired connect token";
    }
    const transport::sealed_private_token sealed{
        public_part.protocol_id, public_part.expire_timestamp,
        std::span<const std::uint8_t, transport::token_nonce_bytes>{public_part.nonce},
        std::span<const std::uint8_t, transport::private_token_bytes>{public_part.encrypted_private}};
    const auto opened = transport::open_private_token(sealed, key_);
    if (!opened) {
        return "forged connect token (" + std::string{transport::to_string(opened.error())} + ")";
    }
    const auto& named = opened.value().server_addresses;
    const bool ours = std::any_of(named.begin(), named.end(), [this](const transport::net_address& a) {
        return std::find(addresses_.begin(), addresses_.end(), a) != addresses_.end();
    });
    if (!ours) {
        return "connect token for another server";
    }
    // Forget expired tokens, then refuse a used one.
    std::erase_if(used_, [now_unix](const auto& entry) { return entry.second <= now_unix; });
    const auto mac = public_part.mac();
    std::string key{reinterpret_cast<const char*>(mac.data()), mac.size()};
    if (used_.contains(key)) {
        return "connect token already used";
    }
    if (used_.size() >= max_used_) {
        // The soonest to expire goes: a token it forgets could connect twice before it expires.
        const auto oldest = std::min_element(
            used_.begin(), used_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        used_.erase(oldest);
    }
    used_.emplace(std::move(key), public_part.expire_timestamp);
    if (client_id != nullptr) {
        *client_id = opened.value().client_id;
    }
    return std::nullopt;
}

} // namespace ecsnet::server
