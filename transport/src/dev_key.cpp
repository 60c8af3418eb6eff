#include "ecsnet/transport/dev_key.hpp"

#include <sodium.h>

#include "sodium_init.hpp"

namespace ecsnet::transport {

bool is_dev_key(const key& k) noexcept {
    return sodium_memcmp(k.data(), dev_private_key.data(), k.size()) == 0;
}

outcome<connect_token, token_error> make_dev_token(const dev_token_params& params) {
    ensure_sodium();
    token_params token;
    token.protocol_id = params.protocol_id;
    token.client_id = params.client_id;
    while (token.client_id == 0) {
        randombytes_buf(&token.client_id, sizeof token.client_id);
    }
    token.server_addresses = params.server_addresses;
    token.expire_seconds = params.expire_seconds;
    token.timeout_seconds = params.timeout_seconds;
    token.user_data = params.user_data;
    return issue_token(token, dev_private_key);
}

} // namespace ecsnet::transport
