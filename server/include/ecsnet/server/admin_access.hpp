#pragma once

// Who may read what on the admin endpoint (docs/inspector.md, "Security"):
//   /metrics, /healthz           anyone who can reach the port (Prometheus and probes come from outside the
//                                pod; the port listens on loopback unless --admin-address says otherwise)
//   /inspector..., /api/...      loopback peers; other peers only with the --admin-token bearer token
//                                ("Authorization: Bearer T", or "?access_token=T" where a browser cannot set
//                                a header: the page's own requests and its event stream); without a token
//                                configured, other peers are refused (403). A loopback peer without the
//                                token must also name a loopback host (Host: localhost, 127.x.y.z, [::1]):
//                                a web page whose name was rebound to 127.0.0.1 (DNS rebinding) is refused
// Everything is read-only: the admin endpoint answers GET (and HEAD) only.
// Tokens are compared in constant time (hashes of both, then sodium_memcmp), whatever their lengths.

#include <string>
#include <string_view>

namespace ecsnet::server {

struct admin_decision {
    int status{200}; // 200: allowed; 401: a token is needed or wrong; 403: refused from this peer
    std::string reason;
    [[nodiscard]] bool allowed() const noexcept { return status == 200; }
};

/// True for 127.0.0.0/8, ::1 and IPv4-mapped loopback (::ffff:127.x.y.z).
[[nodiscard]] bool is_loopback_address(std::string_view address) noexcept;

/// True for "localhost", a loopback address, "[::1]", each with or without ":port".
[[nodiscard]] bool is_loopback_host(std::string_view host) noexcept;

/// Whether a request for `path` from `peer` may be answered. `host`: the Host header; `authorization`: the
/// Authorization header (may be empty); `query_token`: the access_token query parameter (may be empty);
/// `token`: --admin-token (empty: none configured).
[[nodiscard]] admin_decision decide_admin_access(std::string_view path, std::string_view peer,
                                                 std::string_view host, std::string_view authorization,
                                                 std::string_view query_token, std::string_view token);

/// Constant-time comparison of a presented token with the configured one (false when either is empty).
[[nodiscard]] bool token_matches(std::string_view presented, std::string_view expected) noexcept;

} // namespace ecsnet::server
