#include "token_text.hpp"

#include <span>

namespace ecsnet::client::detail {

transport::outcome<transport::connect_token, transport::token_error>
read_any_token(std::string_view bytes_or_text) {
    if (bytes_or_text.size() == transport::connect_token_bytes) {
        return transport::read_token(
            std::span{reinterpret_cast<const std::uint8_t*>(bytes_or_text.data()), bytes_or_text.size()});
    }
    return transport::read_token_base64(bytes_or_text);
}

std::string hello_token_bytes(std::string_view bytes_or_text) {
    if (bytes_or_text.empty()) {
        return {};
    }
    const auto token = read_any_token(bytes_or_text);
    if (!token) {
        return std::string{bytes_or_text};
    }
    const auto bytes = transport::serialize(*token);
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

} // namespace ecsnet::client::detail
