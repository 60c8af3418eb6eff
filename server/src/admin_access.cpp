#include "ecsnet/server/admin_access.hpp"

#include <array>

#include <arpa/inet.h>
#include <sodium.h>

namespace ecsnet::server {

namespace {

bool open_path(std::string_view path) noexcept {
    return path == "/metrics" || path == "/healthz";
}

} // namespace

bool is_loopback_address(std::string_view address) noexcept {
    if (address.empty() || address.size() >= INET6_ADDRSTRLEN) {
        return false;
    }
    std::array<char, INET6_ADDRSTRLEN> text{};
    address.copy(text.data(), address.size());
    in_addr v4{};
    if (inet_pton(AF_INET, text.data(), &v4) == 1) {
        return (ntohl(v4.s_addr) >> 24) == 127;
    }
    in6_addr v6{};
    if (inet_pton(AF_INET6, text.data(), &v6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&v6)) {
            return true;
        }
        return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
    }
    return false;
}

bool is_loopback_host(std::string_view host) noexcept {
    if (host.starts_with('[')) { // [v6]:port
        const auto close = host.find(']');
        return close != std::string_view::npos && is_loopback_address(host.substr(1, close - 1));
    }
    if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
        host = host.substr(0, colon);
    }
    return host == "localhost" || is_loopback_address(host);
}

bool token_matches(std::string_view presented, std::string_view expected) noexcept {
    if (presented.empty() || expected.empty() || sodium_init() < 0) {
        return false;
    }
    // Hashing first makes the comparison independent of the lengths as well as of the contents.
    std::array<unsigned char, crypto_generichash_BYTES> a{};
    std::array<unsigned char, crypto_generichash_BYTES> b{};
    crypto_generichash(a.data(), a.size(), reinterpret_cast<const unsigned char*>(presented.data()),
                       presented.size(), nullptr, 0);
    crypto_generichash(b.data(), b.size(), reinterpret_cast<const unsigned char*>(expected.data()),
                       expected.size(), nullptr, 0);
    return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

admin_decision decide_admin_access(std::string_view path, std::string_view peer, std::string_view host,
                                   std::string_view authorization, std::string_view query_token,
                                   std::string_view token) {
    if (open_path(path)) {
        return {};
    }
    constexpr std::string_view bearer = "Bearer ";
    std::string_view presented = query_token;
    if (authorization.substr(0, bearer.size()) == bearer) {
        presented = authorization.substr(bearer.size());
    }
    if (is_loopback_address(peer)) {
        if (is_loopback_host(host) || token_matches(presented, token)) {
            return {};
        }
        return {403, "a loopback request must name a loopback host (Host: localhost or 127.0.0.1), or carry "
                     "the admin token"};
    }
    if (token.empty()) {
        return {403, "the inspector and the API answer loopback only; set --admin-token to reach them from "
                     "other hosts"};
    }
    if (presented.empty()) {
        return {401, "a bearer token is needed (Authorization: Bearer TOKEN, or ?access_token=TOKEN)"};
    }
    if (!token_matches(presented, token)) {
        return {401, "wrong token"};
    }
    return {};
}

} // namespace ecsnet::server
